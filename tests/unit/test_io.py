"""MLIR text <-> our IR (`shardwise.io.mlir`), checked against the bindings' own printout.

The reference for a round trip is what MLIR prints for the input itself:
``Module.parse(text).get_asm(enable_debug_info=<input had loc(...)>)``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from importlib import resources
from pathlib import Path

import pytest

from shardwise import ir
from shardwise.errors import InputError, Location, ParseError, VerifyError
from shardwise.io import generic as gen
from shardwise.io import mlir

REPO = Path(__file__).resolve().parents[2]
MODEL_FILES = sorted((REPO / "tests" / "models" / "data").glob("*.mlir"))
EXAMPLE_FILES = sorted(
    Path(str(p))
    for p in resources.files("shardwise.examples").iterdir()
    if p.name.endswith(".mlir")
)


def reference_print(text: str, generic: bool = False) -> str:
    """What the bindings print for `text` (with locations iff the text has any)."""
    _, explicit = mlir.blank_locations(text)
    module = mlir._parse(text)
    return module.operation.get_asm(print_generic_op_form=generic, enable_debug_info=explicit)


# -- JAX-lowered inputs ------------------------------------------------------------------------

_LOWER_SCRIPT = r"""
import json, os, sys
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
import jax, jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
S = lambda *s: NamedSharding(mesh, P(*s))

def mlp(x, w):
    return jnp.tanh(x @ w).sum(axis=1)
def loop(x):
    return jax.lax.fori_loop(0, 3, lambda i, c: c * 2 + i, x)
def switch(x, i):
    return jax.lax.switch(i, [lambda a: a + 1, lambda a: a * 2, jnp.sin], x)
def tokens(x):
    y = jax.lax.with_sharding_constraint(x * 2, S("x", None))
    jax.debug.print("y={}", y.sum())
    return y, (y, x)
def reduces(x):
    return jax.lax.reduce(x, 0.0, lambda a, b: a + b, (0,)), jnp.argmax(x, axis=1)
def custom_call(x):
    return jnp.linalg.cholesky(x @ x.T + jnp.eye(8))
def constants(x):
    return x + jnp.arange(64.0).reshape(8, 8), jnp.int8(-3) * x.astype(jnp.int8)

x = jnp.ones((8, 8))
cases = {
    "mlp": (mlp, (x, x), (S("x", None), S(None, "y"))),
    "loop": (loop, (x,), (S("x"),)),
    "switch": (switch, (x, 1), (S(None, "y"), S())),
    "tokens": (tokens, (x,), (S(),)),
    "reduces": (reduces, (x,), (S("y"),)),
    "custom_call": (custom_call, (x,), (S(),)),
    "constants": (constants, (x,), (S("x", "y"),)),
}
out = {}
for name, (f, args, shardings) in cases.items():
    lowered = jax.jit(f, in_shardings=shardings).lower(*args)
    out[name + "-locs"] = lowered.as_text(debug_info=True)
    out[name] = lowered.as_text()
json.dump(out, sys.stdout)
"""


@pytest.fixture(scope="session")
def jax_lowered() -> dict[str, str]:
    """Small jitted functions lowered with NamedSharding on an 8-device CPU mesh.

    Lowered in a child process: the device-count flag must be set before jax is imported.
    """
    proc = subprocess.run(
        [sys.executable, "-c", _LOWER_SCRIPT],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "JAX_PLATFORMS": "cpu"},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


JAX_CASES = [
    f"{n}{s}"
    for n in ("mlp", "loop", "switch", "tokens", "reduces", "custom_call", "constants")
    for s in ("", "-locs")
]


# -- round trips -------------------------------------------------------------------------------


@pytest.mark.parametrize("path", MODEL_FILES + EXAMPLE_FILES, ids=lambda p: p.name)
def test_round_trip_corpus(path: Path) -> None:
    text = path.read_text()
    module = mlir.load_file(path)
    assert mlir.write_text(module) == reference_print(text)
    assert mlir.write_text(module, generic=True) == reference_print(text, generic=True)


@pytest.mark.parametrize("case", JAX_CASES)
def test_round_trip_jax_lowered(jax_lowered: dict[str, str], case: str) -> None:
    text = jax_lowered[case]
    module = mlir.load_text(text, f"{case}.mlir")
    assert mlir.has_explicit_locations(module) == case.endswith("-locs")
    assert mlir.write_text(module) == reference_print(text)


@pytest.mark.parametrize("path", MODEL_FILES + EXAMPLE_FILES, ids=lambda p: p.name)
def test_use_lists_match_mlir(path: Path) -> None:
    """Each value's uses are in MLIR's order (propagation visits users in that order)."""
    use_lists = pytest.importorskip("shardwise.io.use_lists")
    text = path.read_text()
    expected = use_lists.run_pass_with_use_lists(text, [])[1]
    assert use_lists.our_use_lists(mlir.load_text(text)) == expected


@pytest.mark.parametrize("case", ["mlp-locs", "tokens-locs", "switch-locs", "loop"])
def test_op_positions_point_at_the_op(jax_lowered: dict[str, str], case: str) -> None:
    """Every op's location is where its text starts in the user's file (not its loc(...))."""
    text = jax_lowered[case]
    lines = text.splitlines()
    module = mlir.load_text(text, "in.mlir")
    checked = 0
    for op in module.walk():
        loc = op.location
        assert loc.file == "in.mlir"
        if loc.line == 0:
            continue
        at = lines[loc.line - 1][loc.col - 1 :]
        short = op.name.split(".", 1)[1]
        assert short in at or op.name in at or at.startswith(("%", "(", "module", "func")), (
            op.name,
            at,
        )
        checked += 1
    assert checked >= 5
    func = module.funcs[0]
    for arg in func.regions[0].entry.args:
        assert lines[arg.location.line - 1][arg.location.col - 1 :].startswith("%arg")


def test_dense_resource_round_trip() -> None:
    """Blobs keep their names (a shared MLIR context would rename them on every reparse)."""
    text = textwrap.dedent(
        """\
        func.func @f() -> tensor<3xi32> {
          %0 = stablehlo.constant dense_resource<blob1> : tensor<3xi32>
          return %0 : tensor<3xi32>
        }
        {-#
          dialect_resources: {
            builtin: {
              blob1: "0x04000000010000000200000003000000"
            }
          }
        #-}
        """
    )
    module = mlir.load_text(text)
    for _ in range(2):
        out = mlir.write_text(module)
        assert out == reference_print(text)
        assert "dense_resource<blob1>" in out


def test_sdy_attributes_are_typed() -> None:
    pytest.importorskip("shardwise.syntax")
    from shardwise.sharding import TensorSharding

    text = (REPO / "src/shardwise/examples/gpt_block.mlir").read_text()
    module = mlir.load_text(text)
    shardings = [
        attrs["sdy.sharding"]
        for func in module.funcs
        for i in range(len(func.regions[0].entry.args))
        if (attrs := ir.func_arg_attrs(func, i)) and "sdy.sharding" in attrs
    ]
    assert shardings and all(isinstance(s, TensorSharding) for s in shardings)


def test_debug_info_without_explicit_locations_uses_file_positions() -> None:
    text = "func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {\n  return %a : tensor<2xf32>\n}\n"
    module = mlir.load_text(text, "f.mlir")
    assert not mlir.has_explicit_locations(module)
    out = mlir.write_text(module, debug_info=True)
    assert 'loc("f.mlir":2:3)' in out and 'loc("f.mlir":1:14)' in out


def test_edit_then_write() -> None:
    """A changed attribute is printed by MLIR: the writer goes through the bindings."""
    text = textwrap.dedent(
        """\
        sdy.mesh @mesh = <["x"=2]>
        func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
          %0 = stablehlo.add %a, %a : tensor<4xf32>
          return %0 : tensor<4xf32>
        }
        """
    )
    module = mlir.load_text(text)
    add = module.funcs[0].regions[0].entry.ops[0]
    add.attributes["sdy.sharding"] = ir.RawAttr('#sdy.sharding_per_value<[<@mesh, [{"x"}]>]>')
    out = mlir.write_text(module)
    expected = (
        'stablehlo.add %arg0, %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>}'
    )
    assert expected in out


def test_invalid_module_on_write_names_the_op() -> None:
    text = "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = stablehlo.abs %a : tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n"
    module = mlir.load_text(text, "w.mlir")
    abs_op = module.funcs[0].regions[0].entry.ops[0]
    abs_op.results[0].type = ir.parse_type("tensor<5xf32>")
    with pytest.raises(VerifyError) as info:
        mlir.write_text(module)
    assert info.value.location == Location("w.mlir", 2, 8)
    assert "not valid MLIR" in info.value.message
    assert "in 'stablehlo.abs'" in info.value.notes


# -- errors ------------------------------------------------------------------------------------

_BAD_INPUTS = [
    (
        "undeclared-value",
        "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  %0 = stablehlo.add %a, %b : tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n",
        ParseError,
        (2, 26),
        "use of undeclared SSA value name",
    ),
    (
        "verifier",
        "func.func @f(%a: tensor<4xf32>) -> tensor<8xf32> {\n  return %a : tensor<4xf32>\n}\n",
        VerifyError,
        (2, 3),
        "doesn't match function result type",
    ),
    (
        "verifier-with-explicit-loc",
        'func.func @f(%a: tensor<4xf32>) -> tensor<8xf32> {\n  return %a : tensor<4xf32> loc("x.py":9:9)\n}\n',
        VerifyError,
        (2, 3),
        "doesn't match function result type",
    ),
    (
        "unknown-axis",
        'sdy.mesh @mesh = <["x"=2]>\nfunc.func @f(%a: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}]>}) -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}\n',
        VerifyError,
        (2, 1),
        'unknown axis name: "y"',
    ),
    (
        "unclosed-module",
        "module {\n",
        ParseError,
        (1, 9),
        "expected operation name in quotes",
    ),
    (
        "unregistered-dialect",
        'func.func @f() {\n  "foo.bar"() : () -> ()\n  return\n}\n',
        ParseError,
        (2, 12),
        "unregistered dialect",
    ),
]


@pytest.mark.parametrize(
    ("text", "cls", "pos", "message"),
    [row[1:] for row in _BAD_INPUTS],
    ids=[row[0] for row in _BAD_INPUTS],
)
def test_load_errors(text: str, cls: type, pos: tuple[int, int], message: str) -> None:
    with pytest.raises(cls) as info:
        mlir.load_text(text, "bad.mlir")
    err = info.value
    assert type(err) is cls
    assert (err.location.file, err.location.line, err.location.col) == ("bad.mlir", *pos)
    assert message in err.message
    assert str(err).startswith(f"bad.mlir:{pos[0]}:{pos[1]}: error: ")


@pytest.mark.parametrize(
    ("content", "message", "pos"),
    [
        (None, "no such file", None),
        ("DIR", "is a directory", None),
        (b"", "empty input", None),
        (b"  \n\n", "empty input", None),
        (b"module {}\n\x00\x01", "binary file", (2, 1)),
        (b"module {\n// caf\xe9\n}", "not UTF-8", (2, 7)),
        (b"ML\xefR\rMLIR\x00", "MLIR bytecode; shardwise reads MLIR text", (1, 1)),
    ],
    ids=["missing", "directory", "empty", "blank", "binary", "latin1", "bytecode"],
)
def test_load_file_errors(
    tmp_path: Path, content: bytes | str | None, message: str, pos: tuple[int, int] | None
) -> None:
    path = tmp_path / "in.mlir"
    if content == "DIR":
        path.mkdir()
    elif content is not None:
        path.write_bytes(content)
    with pytest.raises(InputError, match=message) as info:
        mlir.load_file(path)
    assert info.value.location.file == str(path)
    if pos is not None:
        assert (info.value.location.line, info.value.location.col) == pos


def test_utf8_bom_is_skipped(tmp_path: Path) -> None:
    """Editors hide the byte-order mark: columns must not count it."""
    positions = []
    for name, prefix in [("plain.mlir", b""), ("bom.mlir", b"\xef\xbb\xbf")]:
        path = tmp_path / name
        path.write_bytes(prefix + b"module }\n")
        with pytest.raises(ParseError, match="expected '{' to begin a region") as info:
            mlir.load_file(path)
        positions.append((info.value.location.line, info.value.location.col))
    assert positions[0] == positions[1]


def test_write_file_is_atomic_and_reports_bad_targets(tmp_path: Path) -> None:
    module = mlir.load_file(EXAMPLE_FILES[0])
    target = tmp_path / "out.mlir"
    target.write_text("old")
    mlir.write_file(module, target)
    assert target.read_text() == mlir.write_text(module)
    assert [p.name for p in tmp_path.iterdir()] == ["out.mlir"]  # no temp file left behind
    umask = os.umask(0)
    os.umask(umask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~umask  # not mkstemp's 0600
    fresh = tmp_path / "fresh.mlir"
    mlir.write_file(module, fresh)
    assert fresh.stat().st_mode & 0o777 == 0o666 & ~umask
    fresh.unlink()
    with pytest.raises(InputError, match="does not exist"):
        mlir.write_file(module, tmp_path / "missing" / "out.mlir")
    with pytest.raises(InputError, match="is a directory"):
        mlir.write_file(module, tmp_path)


# -- blanking locations ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "blanked", "explicit"),
    [
        ("a loc(x) b", "a        b", True),
        ('a "loc(x)" b', 'a "loc(x)" b', False),
        ('// loc(x) "\nb loc("s)")', '// loc(x) "\nb          ', True),
        ("@my_loc(x) %loc(y)", "@my_loc(x) %loc(y)", False),
        ('#loc1 = loc("f":1:2)\nop loc(#loc1)', "                    \nop           ", True),
        ('x loc(fused[loc(a), "b)"])y', "x                         y", True),
    ],
    ids=["plain", "in-string", "comment-and-string-arg", "names", "alias-line", "nested"],
)
def test_blank_locations(text: str, blanked: str, explicit: bool) -> None:
    out, found = mlir.blank_locations(text)
    assert out == blanked
    assert len(out) == len(text)
    assert found is explicit


def test_generic_printout_of_module_has_no_unresolved_aliases(jax_lowered: dict[str, str]) -> None:
    module = mlir.load_text(jax_lowered["mlp-locs"])
    assert "#loc" not in gen.print_generic(module)


_DEBUG_INFO_TEXT = """\
func.func @main(%arg0: tensor<8xf32> loc("x")) -> tensor<8xf32> {
  %0 = stablehlo.negate %arg0 : tensor<8xf32> loc(#loc3)
  return %0 : tensor<8xf32> loc(#loc1)
} loc(#loc1)
#loc1 = loc("m.py":1:2)
#loc2 = loc("neg"(#loc1))
#loc3 = loc(callsite(#loc2 at #loc1))
"""


_PLAIN_TEXT = """\
func.func @main(%arg0: tensor<8xf32> {mhlo.name = "#loc1 = loc(\\"a.py\\":1:2)\\0A"}) -> tensor<8xf32> {
  %0 = stablehlo.negate %arg0 : tensor<8xf32>
  return %0 : tensor<8xf32>
}
"""
_PRINTED_TEXTS = {"debug_info": (_DEBUG_INFO_TEXT, True), "plain": (_PLAIN_TEXT, False)}


@pytest.mark.parametrize("name", _PRINTED_TEXTS)
def test_generic_form_printed_through_a_file_is_the_bindings_printout(
    monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """The load's generic printout (with debug info or without), written by the pass manager's
    IR printer, is `get_asm`'s text in full scope to the byte, and its temporary folder is gone
    after; without debug info it loads the module that `get_asm`'s local scope loads."""
    text, debug_info = _PRINTED_TEXTS[name]
    module = mlir._parse(text)
    expected = module.operation.get_asm(
        print_generic_op_form=True, enable_debug_info=debug_info, assume_verified=True
    )
    folders: list[str] = []
    make_folder = mlir._temporary_folder

    def recorded() -> str | None:
        folders.append(make_folder())
        return folders[-1]

    monkeypatch.setattr(mlir, "_temporary_folder", recorded)
    assert mlir._print_generic_to_file(mlir._parse(text), debug_info) == expected
    form = mlir.GenericForm.of(text)
    assert form.printed == expected
    assert not form.local_scope
    assert len(folders) == 2 and None not in folders
    assert not any(os.path.exists(f) for f in folders)  # type: ignore[arg-type]
    if not debug_info:
        local = module.operation.get_asm(
            print_generic_op_form=True, use_local_scope=True, assume_verified=True
        )
        assert expected == local + "\n"
        from_local = gen.parse_generic(local, "-", mlir._sdy_parser(), form.positions, True)
        assert gen.print_generic(form.load()) == gen.print_generic(from_local)


def test_printout_in_a_file_with_attribute_aliases_is_printed_in_local_scope_instead() -> None:
    """Full scope prints ``#map = affine_map<...>`` above the module, an alias our parser does
    not resolve: such a module is printed again, by `get_asm` in local scope."""
    text = _PLAIN_TEXT.replace("negate %arg0 :", "negate %arg0 {m = affine_map<(d0) -> (d0)>} :")
    assert mlir._print_generic_to_file(mlir._parse(text), False).startswith("#map = ")
    form = mlir.GenericForm.of(text)
    assert form.local_scope
    assert form.printed.startswith('"builtin.module"')
    assert "affine_map<(d0) -> (d0)>" in mlir.write_text(form.load())


@pytest.mark.parametrize("name", _PRINTED_TEXTS)
def test_load_without_a_temporary_folder_prints_through_the_bindings(
    monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    text, debug_info = _PRINTED_TEXTS[name]
    expected = mlir.write_text(mlir.load_text(text))
    monkeypatch.setattr(mlir, "_temporary_folder", lambda: None)
    form = mlir.GenericForm.of(text)
    assert form.local_scope is not debug_info  # `get_asm` in local scope where it can
    assert mlir.write_text(form.load()) == expected


def test_debug_info_kept_when_the_printout_file_is_lost_after_the_pass(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The file's pass (`strip-debuginfo`) has run on the module when the dump turns out
    unreadable: the fallback must print a fresh parse, not the stripped module (whose every
    location would be ``loc(unknown)``)."""
    expected = mlir.write_text(mlir.load_text(_DEBUG_INFO_TEXT))
    assert 'loc("m.py":1:2)' in expected
    monkeypatch.setattr(mlir.os, "walk", lambda _folder, **_kw: iter(()))  # no dump found
    form = mlir.GenericForm.of(_DEBUG_INFO_TEXT)
    assert "unknown" not in form.printed
    assert mlir.write_text(form.load()) == expected
