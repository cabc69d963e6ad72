"""Invariants over the model corpus: what shardwise must never change or lose.

* Loading and writing without a pass gives back exactly what the reference prints for the
  input (MLIR's own printer through the bindings).
* An output file is written atomically: a failure in the middle of writing leaves neither a
  partial file nor a temporary file, and an existing file keeps its old content.
* The propagation passes never change a closed dimension of a sharding already in the input,
  and only extend an open one (its axes stay a prefix); the mesh and rank stay.
* Attributes shardwise does not know and ops of the other dialects the bindings parse come
  out unchanged: the output equals the reference's for the same pass.
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

import pytest

from shardwise import cli, passes
from shardwise.errors import InputError
from shardwise.io import mlir as mlir_io
from shardwise.io.mlir import load_text, write_file, write_text
from shardwise.io.reference import parse_and_print, run_pass
from shardwise.ir import Module, Op, func_result_types
from shardwise.sdy.shardings import get_func_result_sharding, get_sharding
from shardwise.sharding import TensorSharding
from shardwise.syntax import parse_sdy_attribute

DATA = Path(__file__).resolve().parents[1] / "models" / "data"
CORPUS = {p.stem: p.read_text() for p in sorted(DATA.glob("*.mlir"))}
CORPUS["bundled_example"] = resources.files("shardwise.examples").joinpath(cli.EXAMPLE).read_text()
PROPAGATION_PASSES = (
    "sdy-basic-propagate",
    "sdy-aggressive-propagate",
    "sdy-op-priority-propagate",
    "sdy-user-priority-propagate",
)


# -- load -> write ---------------------------------------------------------------------------


def test_load_write_without_a_pass_is_the_reference_print() -> None:
    different = [
        name
        for name, text in CORPUS.items()
        if write_text(load_text(text, f"{name}.mlir")) != parse_and_print(text)
    ]
    assert different == []


# -- atomic output ---------------------------------------------------------------------------


class _FailingFile:
    """A file whose second write fails (disk full after part of the text)."""

    def __init__(self, real: object) -> None:
        self.real = real
        self.writes = 0

    def write(self, text: str) -> int:
        self.writes += 1
        if self.writes > 1:
            raise OSError(28, "No space left on device")
        return self.real.write(text[: len(text) // 2]) or 0

    def __enter__(self) -> _FailingFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.real.close()


def _fail_in_write(monkeypatch: pytest.MonkeyPatch) -> None:
    real_fdopen = os.fdopen

    def fdopen(fd: int, *args: object, **kwargs: object) -> _FailingFile:
        failing = _FailingFile(real_fdopen(fd, *args, **kwargs))
        failing.write("")  # the first write succeeds, the next one fails
        return failing

    monkeypatch.setattr(mlir_io.os, "fdopen", fdopen)


def _fail_in_rename(monkeypatch: pytest.MonkeyPatch) -> None:
    def replace(src: object, dst: object) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(mlir_io.os, "replace", replace)


def _interrupt_in_rename(monkeypatch: pytest.MonkeyPatch) -> None:
    def replace(src: object, dst: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(mlir_io.os, "replace", replace)


@pytest.mark.parametrize(
    ("fail", "error"),
    [
        (_fail_in_write, InputError),
        (_fail_in_rename, InputError),
        (_interrupt_in_rename, KeyboardInterrupt),
    ],
    ids=["disk-full-mid-write", "rename-fails", "interrupted"],
)
@pytest.mark.parametrize("existing", [False, True], ids=["new-file", "existing-file"])
def test_output_is_written_atomically(
    fail: object, error: type[BaseException], existing: bool, tmp_path: Path, monkeypatch
) -> None:
    module = load_text(CORPUS["shard_alike"], "shard_alike.mlir")
    target = tmp_path / "out.mlir"
    if existing:
        target.write_text("old content\n")
    fail(monkeypatch)  # type: ignore[operator]
    with pytest.raises(error):
        write_file(module, target)
    assert sorted(p.name for p in tmp_path.iterdir()) == (["out.mlir"] if existing else [])
    if existing:
        assert target.read_text() == "old content\n"


def test_write_file_writes_the_whole_text(tmp_path: Path) -> None:
    module = load_text(CORPUS["shard_alike"], "shard_alike.mlir")
    write_file(module, tmp_path / "out.mlir")
    assert (tmp_path / "out.mlir").read_text() == parse_and_print(CORPUS["shard_alike"])
    assert [p.name for p in tmp_path.iterdir()] == ["out.mlir"]


# -- shardings already in the input -----------------------------------------------------------

Key = tuple[int, int, str, str, int]


def _given_shardings(module: Module) -> dict[Key, TensorSharding]:
    """Every sharding in the module by (line, col, op, where, index) of the value."""
    found: dict[Key, TensorSharding] = {}

    def put(op: Op, where: str, index: int, sharding: TensorSharding | None) -> None:
        if sharding is not None:
            found[(op.location.line, op.location.col, op.name, where, index)] = sharding

    for op in module.walk():
        for result in op.results:
            put(op, "result", result.index, get_sharding(result))
        for r, region in enumerate(op.regions):
            for block in region.blocks:
                for arg in block.args:
                    put(op, f"arg{r}", arg.index, get_sharding(arg))
    for func in module.funcs:
        for i in range(len(func_result_types(func))):
            put(func, "func-result", i, get_func_result_sharding(func, i))
    return found


def _only_extends(before: TensorSharding, after: TensorSharding | None) -> str | None:
    """Why `after` is not `before` with open dims extended (None: it is)."""
    if after is None:
        return "the sharding was dropped"
    if after.mesh_or_ref != before.mesh_or_ref or len(after.dim_shardings) != len(
        before.dim_shardings
    ):
        return f"{before} became {after}"
    for d, (old, new) in enumerate(zip(before.dim_shardings, after.dim_shardings, strict=True)):
        if old.is_closed and (new.axes != old.axes or not new.is_closed):
            return f"closed dim {d} changed: {before} became {after}"
        if not old.is_closed and new.axes[: len(old.axes)] != old.axes:
            return f"open dim {d} lost axes: {before} became {after}"
    return None


@pytest.mark.parametrize(
    ("before", "after", "ok"),
    [
        ('{"x"}, {?}', '{"x"}, {"y", ?}', True),
        ('{"x", ?}, {}', '{"x", "y", ?}, {}', True),
        ('{"x"}, {?}', '{"x", "y"}, {?}', False),
        ('{"x"}, {?}', '{"x", ?}, {?}', False),
        ('{"x", ?}, {}', '{"y", ?}, {}', False),
        ('{"x", ?}, {}', '{"x", ?}', False),
    ],
    ids=["open-grows", "open-prefix-kept", "closed-grows", "closed-opens", "open-loses", "rank"],
)
def test_only_extends_detects_changes(before: str, after: str, ok: bool) -> None:
    def sharding(dims: str) -> TensorSharding:
        return parse_sdy_attribute(f"#sdy.sharding<@mesh, [{dims}]>")

    assert (_only_extends(sharding(before), sharding(after)) is None) == ok


@pytest.mark.parametrize("pass_name", PROPAGATION_PASSES)
def test_propagation_only_extends_given_shardings(pass_name: str) -> None:
    problems = []
    for name, text in CORPUS.items():
        module = load_text(text, f"{name}.mlir")
        before = _given_shardings(module)
        passes.run_pass(module, pass_name)
        after = _given_shardings(module)
        alive = {(k[0], k[1]) for k in after} | {
            (op.location.line, op.location.col) for op in module.walk()
        }
        for key, sharding in before.items():
            if (key[0], key[1]) not in alive:
                continue  # the op was erased (dead code)
            why = _only_extends(sharding, after.get(key))
            if why is not None:
                problems.append(f"{name}.mlir:{key[0]}:{key[1]} {key[2]} {key[3]} {key[4]}: {why}")
    assert problems == []


# -- what shardwise does not know passes through ---------------------------------------------

FOREIGN = """\
module @m attributes {my.module_flag = "keep me", mhlo.frontend_attributes = {a = "1"}} {
  sdy.mesh @mesh = <["x"=2, "y"=4]> {my.mesh_note = 7 : i64}
  func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>, my.arg = [1, 2]}) -> (tensor<8x16xf32> {my.result = unit}) attributes {my.func = "f"} {
    %0 = chlo.erf %arg0 {my.op_attr = dense<[1, 2]> : tensor<2xi32>} : tensor<8x16xf32> -> tensor<8x16xf32>
    %1 = stablehlo.abs %0 {mhlo.sharding = "{replicated}", my.flag} : tensor<8x16xf32>
    %2 = stablehlo.custom_call @my_target(%1) {backend_config = "cfg", my.extra = 3 : i32} : (tensor<8x16xf32>) -> tensor<8x16xf32>
    %c = arith.constant dense<1.0> : tensor<8x16xf32>
    %3 = arith.addf %2, %c : tensor<8x16xf32>
    %4 = stablehlo.add %3, %1 {my.keep = #stablehlo<comparison_direction EQ>} : tensor<8x16xf32>
    return %4 : tensor<8x16xf32>
  }
}
"""
FOREIGN_TEXTS = (
    'my.module_flag = "keep me"',
    "my.mesh_note = 7 : i64",
    "my.arg = [1, 2]",
    "my.result",
    'my.func = "f"',
    "chlo.erf",
    "my.op_attr = dense<[1, 2]> : tensor<2xi32>",
    'mhlo.sharding = "{replicated}"',
    "my.flag",
    'backend_config = "cfg"',
    "my.extra = 3 : i32",
    "arith.addf",
    "my.keep = #stablehlo<comparison_direction EQ>",
)


@pytest.mark.parametrize(
    "pass_name", ["none", *PROPAGATION_PASSES, "sdy-populate-op-sharding-rules"]
)
def test_unknown_attributes_and_foreign_ops_pass_through(pass_name: str) -> None:
    module = passes.run_pass(load_text(FOREIGN, "foreign.mlir"), pass_name)
    out = write_text(module)
    assert [t for t in FOREIGN_TEXTS if t not in out] == []
    if pass_name == "none":
        assert out == parse_and_print(FOREIGN)
    else:
        assert out == run_pass(FOREIGN, pass_name)
