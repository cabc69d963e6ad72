"""Bad and unsupported inputs through the command line: never crash, always say where.

Each case is a small file written for the test, run through `shardwise.cli.main` in-process
(two through a child process). A case checks the exit code (1; 2 for usage errors), the
first line of stderr (``file:line:col: error: ...`` with the real file name) and that no
traceback or internal error reaches the user. Where the reference (Shardy) has a message
for the same failure, the expected text is the reference's wording.
"""

from __future__ import annotations

import io
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from shardwise import cli
from shardwise.io.reference import parse_and_print, run_pass
from shardwise.ir import Module
from tests.unit.cli_run import run_cli

MESH = 'sdy.mesh @mesh = <["x"=2, "y"=4]>\n'
T = "tensor<8x16xf32>"


def _func(
    arg_attr: str = "", body: str = f"  %0 = stablehlo.abs %arg0 : {T}\n", ty: str = T
) -> str:
    """``@main(%arg0) -> %0`` with one op `body` (which must define %0)."""
    attr = f" {{sdy.sharding = {arg_attr}}}" if arg_attr else ""
    return f"func.func @main(%arg0: {ty}{attr}) -> {ty} {{\n{body}  return %0 : {ty}\n}}\n"


def _sharded(dims: str, extra: str = "") -> str:
    """A module whose argument has ``#sdy.sharding<@mesh, [dims]extra>`` (error on line 2)."""
    return MESH + _func(f"#sdy.sharding<@mesh, [{dims}]{extra}>")


def _mesh(axes: str) -> str:
    return f"sdy.mesh @mesh = <[{axes}]>\n" + _func()


def _op(line: str) -> str:
    """A module whose only op (line 3) is `line`."""
    return MESH + _func(body=f"  {line}\n")


DYNAMIC = MESH + _func(
    body="  %0 = stablehlo.abs %arg0 : tensor<?x16xf32>\n", ty="tensor<?x16xf32>"
)
TWO_FUNCS = (
    MESH
    + "func.func @f(%a: tensor<8xf32>) -> tensor<8xf32> {\n  return %a : tensor<8xf32>\n}\n"
    + "func.func @g(%a: tensor<8xf32>) -> tensor<8xf32> {\n"
    + "  %0 = call @f(%a) : (tensor<8xf32>) -> tensor<8xf32>\n  return %0 : tensor<8xf32>\n}\n"
)
MANUAL = MESH + _func(
    body=(
        '  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {}]>, '
        '<@mesh, [{}, {}]>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x"} '
        "(%a: tensor<4x16xf32>) {\n    sdy.return %a : tensor<4x16xf32>\n"
        f"  }} : ({T}) -> {T}\n"
    )
)
WITH_LOCS = (
    '#loc1 = loc("model.py":10:4)\n'
    + MESH
    + f'func.func @main(%arg0: {T} loc("model.py":1:1)) -> {T} {{\n'
    + f"  %0 = stablehlo.abs %arg0 : {T} loc(#loc1)\n"
    + "  %1 = stablehlo.abs %0 : tensor<8x8xf32> loc(#loc1)\n"
    + f"  return %0 : {T}\n}}\n"
)


@dataclass(frozen=True, slots=True)
class Case:
    """An input file (None: none is written), the command line and what it must print.

    ``{f}`` in `argv` and `first_line` is the input's path, ``{d}`` the test's directory.
    `first_line` is a prefix of stderr's first line (of the line holding it, for exit 2).
    """

    source: str | bytes | None
    argv: tuple[str, ...]
    code: int
    first_line: str


def _verify(source: str | bytes, first_line: str) -> Case:
    return Case(source, ("verify", "{f}"), 1, first_line)


def _propagate(source: str | bytes, first_line: str, *extra: str) -> Case:
    return Case(source, ("propagate", *extra, "{f}"), 1, first_line)


def _bad_pass(spec: str, message: str) -> Case:
    return Case(MESH + _func(), ("propagate", "--pass", spec, "{f}"), 2, message)


CASES: dict[str, Case] = {
    # -- MLIR syntax, at several places ----------------------------------------------------
    "syntax-unclosed-func": _verify(
        MESH + "func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
        "  return %arg0 : tensor<8xf32>\n",
        "{f}:3:31: error: expected operation name in quotes",
    ),
    "syntax-unclosed-type": _verify(
        _op(f"%0 = stablehlo.abs %arg0 : {T[:-1]}"), "{f}:3:45: error: expected '>' in tensor type"
    ),
    "syntax-undefined-value": _verify(
        _op(f"%0 = stablehlo.abs %argX : {T}"), "{f}:3:22: error: use of undeclared SSA value name"
    ),
    "syntax-missing-equals": _verify(
        _op(f"%0 stablehlo.abs %arg0 : {T}"), "{f}:3:5: error: expected '=' after SSA name"
    ),
    "syntax-garbage-line": _verify(
        MESH + _func(body=f"  %0 = stablehlo.abs %arg0 : {T}\n  )))\n"),
        "{f}:3:46: error: expected operation name in quotes",
    ),
    "syntax-type-mismatch": _verify(
        MESH + _func(body=f"  %0 = stablehlo.abs %arg0 : {T}\n", ty="tensor<?x16xf32>"),
        "{f}:3:22: error: use of value '%arg0' expects different type than prior uses",
    ),
    "syntax-sharding-brackets": _verify(
        MESH + _func('#sdy.sharding<@mesh, [{"x"}, {}>'),
        "{f}:2:80: error: unbalanced '[' character in pretty dialect name",
    ),
    "syntax-axis-unquoted": _verify(
        MESH + _func("#sdy.sharding<@mesh, [{x}, {}]>"), "{f}:2:80: error: expected string"
    ),
    "syntax-mesh-missing-size": _verify(
        _mesh('"x"='), "{f}:1:24: error: custom op 'sdy.mesh' expected integer value"
    ),
    "syntax-after-loc-annotations": _verify(
        WITH_LOCS, "{f}:5:22: error: use of value '%0' expects different type than prior uses"
    ),
    "syntax-after-bom": _verify(
        b"\xef\xbb\xbf" + _op(f"%0 = stablehlo.abs %argX : {T}").encode(),
        "{f}:3:22: error: use of undeclared SSA value name",
    ),
    "syntax-crlf-lines": _verify(
        _op(f"%0 = stablehlo.abs %argX : {T}").replace("\n", "\r\n"),
        "{f}:3:22: error: use of undeclared SSA value name",
    ),
    # -- sharding attributes (Shardy's verifier wording) -------------------------------------
    "unknown-mesh": _verify(
        MESH + _func('#sdy.sharding<@nomesh, [{"x"}, {}]>'),
        "{f}:2:1: error: 'func.func' op arg 0 - unknown mesh: @nomesh",
    ),
    "unknown-axis": _verify(
        _sharded('{"z"}, {}'), "{f}:2:1: error: 'func.func' op arg 0 - unknown axis name: \"z\""
    ),
    "rank-mismatch": _verify(
        _sharded('{"x"}'),
        "{f}:2:1: error: 'func.func' op arg 0 - sharding doesn't match tensor rank: 1 != 2",
    ),
    "duplicate-axes": _verify(
        _sharded('{"x"}, {"x"}'), "{f}:2:1: error: 'func.func' op arg 0 - duplicate axis ref: \"x\""
    ),
    "overlapping-sub-axes": _verify(
        _sharded('{"y":(1)2}, {"y":(1)4}'),
        "{f}:2:1: error: 'func.func' op arg 0 - sub-axis size is equal to the full axis size",
    ),
    "overlapping-sub-axes-proper": _verify(
        _sharded('{"y":(1)2}, {"y":(2)2}, {}'),
        "{f}:2:1: error: 'func.func' op arg 0 - sharding doesn't match tensor rank: 3 != 2",
    ),
    "non-dividing-sub-axis": _verify(
        _sharded('{"y":(1)3}, {}'),
        "{f}:2:1: error: 'func.func' op arg 0 - sub-axis next pre-size 3 doesn't divide the size "
        'of the full axis 4: "y":(1)3',
    ),
    "replicated-unreduced-overlap": _verify(
        _sharded("{}, {}", ', replicated={"x"}, unreduced={"x"}'),
        "{f}:2:1: error: 'func.func' op arg 0 - duplicate axis ref: \"x\"",
    ),
    "replicated-dim-overlap": _verify(
        _sharded('{"x"}, {}', ', replicated={"x"}'),
        "{f}:2:1: error: 'func.func' op arg 0 - duplicate axis ref: \"x\"",
    ),
    "per-value-count": _verify(
        _op(
            '%0 = stablehlo.abs %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, '
            f"{{}}]>, <@mesh, [{{}}, {{}}]>]>}} : {T}"
        ),
        "{f}:3:8: error: 'stablehlo.abs' op result shardings don't match number of values: "
        "2 shardings vs 1 values",
    ),
    "priority-leading-zero": _verify(
        _sharded('{"x"}p01, {}'),
        "{f}:2:87: error: priorities with leading zeros are not allowed, got: p01",
    ),
    "constraint-unknown-axis": _verify(
        _op(f'%0 = sdy.sharding_constraint %arg0 <@mesh, [{{"q"}}, {{}}]> : {T}'),
        "{f}:3:8: error: 'sdy.sharding_constraint' op unknown axis name: \"q\"",
    ),
    "manual-computation-count": _verify(
        MANUAL,
        "{f}:3:8: error: 'sdy.manual_computation' op operand shardings don't match number of "
        "values: 2 shardings vs 1 values",
    ),
    # -- meshes ------------------------------------------------------------------------------
    "mesh-axis-zero": _verify(
        _mesh('"x"=0'), "{f}:1:20: error: custom op 'sdy.mesh' axis size must be at least 1, got: 0"
    ),
    "mesh-duplicate-axis": _verify(
        _mesh('"x"=2, "x"=4'), "{f}:1:18: error: custom op 'sdy.mesh' duplicate axis name: \"x\""
    ),
    "mesh-size-too-large": _verify(
        _mesh('"x"=99999999999999999999999'),
        "{f}:1:24: error: custom op 'sdy.mesh' integer value too large",
    ),
    "shape-too-large": _verify(
        MESH + _func(ty="tensor<99999999999999999999x16xf32>"), "{f}:2:31: error: invalid dimension"
    ),
    # -- what propagation does not support ---------------------------------------------------
    "dynamic-shape": _propagate(
        DYNAMIC,
        "{f}:3:8: error: Shardy propagation only supports ranked tensors with a static shape. "
        "type: 'tensor<?x16xf32>'",
        "--pass",
        "sdy-basic-propagate",
    ),
    "dynamic-shape-pipeline": _propagate(
        DYNAMIC, "{f}:3:8: error: Shardy propagation only supports ranked tensors with a static"
    ),
    "unranked": _propagate(
        MESH + _func(body="  %0 = stablehlo.abs %arg0 : tensor<*xf32>\n", ty="tensor<*xf32>"),
        "{f}:3:8: error: 'stablehlo.abs' op operand #0 must be ranked tensor",
    ),
    "tuple-result": _propagate(
        MESH + "func.func @main(%a: tensor<8xf32>) -> tuple<tensor<8xf32>> {\n"
        "  %0 = stablehlo.tuple %a : tuple<tensor<8xf32>>\n"
        "  return %0 : tuple<tensor<8xf32>>\n}\n",
        "{f}:3:8: error: Shardy propagation doesn't support tuples: 'tuple<tensor<8xf32>>'",
        "--pass",
        "sdy-basic-propagate",
    ),
    # Two unsupported results: the first in walk order is the one reported.
    "tuple-then-dynamic": _propagate(
        MESH + "func.func @main(%a: tensor<8xf32>, %b: tensor<?xf32>) -> tuple<tensor<8xf32>> {\n"
        "  %0 = stablehlo.tuple %a : tuple<tensor<8xf32>>\n"
        "  %1 = stablehlo.abs %b : tensor<?xf32>\n"
        "  return %0 : tuple<tensor<8xf32>>\n}\n",
        "{f}:3:8: error: Shardy propagation doesn't support tuples: 'tuple<tensor<8xf32>>'",
        "--pass",
        "sdy-basic-propagate",
    ),
    # The input verifies; inlining the call into the manual computation (import-func-calls)
    # puts the constraint on "x" under the body that made "x" manual (fuzzer seed 11-205).
    "inlined-call-names-a-manual-axis": _propagate(
        MESH
        + f"func.func @main(%arg0: {T}) -> {T} {{\n"
        + '  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {}]>] '
        + 'out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x"} (%a: tensor<4x16xf32>) {\n'
        + "    %1 = func.call @f(%a) : (tensor<4x16xf32>) -> tensor<4x16xf32>\n"
        + f"    sdy.return %1 : tensor<4x16xf32>\n  }} : ({T}) -> {T}\n"
        + f"  return %0 : {T}\n}}\n"
        + "func.func private @f(%b: tensor<4x16xf32>) -> tensor<4x16xf32> {\n"
        + '  %0 = sdy.sharding_constraint %b <@mesh, [{}, {"x"}]> : tensor<4x16xf32>\n'
        + "  return %0 : tensor<4x16xf32>\n}\n",
        "{f}:10:8: error: 'sdy.sharding_constraint' op operates on axis \"x\" which is already "
        "bound by a parent sdy.manual_computation op",
    ),
    "several-funcs-no-main": _propagate(
        TWO_FUNCS, "{f}: error: cannot find the main function: the module has several functions"
    ),
    "empty-module": _propagate(
        "module {\n}\n", "{f}:1:1: error: cannot find the main function: the module has no function"
    ),
    "unregistered-dialect": _verify(
        _op(f'%0 = "foo.bar"(%arg0) : ({T}) -> {T}'),
        "{f}:3:17: error: op of an unregistered dialect (registered: those JAX emits, stablehlo, "
        "sdy, func, chlo, mhlo, ...); pass --allow-unregistered-dialect",
    ),
    "unknown-op": _verify(
        _op(f"%0 = stablehlo.frobnicate %arg0 : {T}"),
        "{f}:3:8: error: custom op 'stablehlo.frobnicate' is unknown",
    ),
    # -- files -------------------------------------------------------------------------------
    "empty-file": _verify("", "{f}: error: empty input: expected an MLIR module"),
    "blank-file": _verify(" \n\t\n", "{f}: error: empty input: expected an MLIR module"),
    "not-utf8": _verify(
        MESH.encode() + b"// caf\xe9\n",
        "{f}:2:7: error: not UTF-8 text (byte 0xe9); save the file as UTF-8",
    ),
    "binary": _verify(b"\x7fELF\x02\x01\x00\x00", "{f}:1:7: error: binary file"),
    "bytecode": _verify(b"ML\xefR\x00\x05", "{f}:1:1: error: MLIR bytecode; shardwise reads"),
    "missing-file": Case(None, ("verify", "{f}"), 1, "{f}: error: no such file; check the path"),
    "directory": Case(None, ("verify", "{d}"), 1, "{d}: error: is a directory"),
    "missing-file-propagate": Case(
        None, ("propagate", "{f}"), 1, "{f}: error: no such file; check the path"
    ),
    "output-in-proc": _propagate(
        MESH + _func(), "/proc/x/out.mlir: error: cannot write", "-o", "/proc/x/out.mlir"
    ),
    "output-under-a-file": _propagate(
        MESH + _func(), "{f}/out.mlir: error: cannot write", "-o", "{f}/out.mlir"
    ),
    "output-dir-missing": _propagate(
        MESH + _func(),
        "{d}/nodir/out.mlir: error: cannot write: directory '{d}/nodir' does not exist",
        "-o",
        "{d}/nodir/out.mlir",
    ),
    # -- --pass ------------------------------------------------------------------------------
    "pass-unknown": _bad_pass("sdy-bogus", "error: --pass: unknown pass 'sdy-bogus'; known passes"),
    "pass-unknown-option": _bad_pass(
        "sdy-basic-propagate{nope=1}", "error: --pass: unknown pass option 'nope'"
    ),
    "pass-bad-option-value": _bad_pass(
        "sdy-basic-propagate{keep-sharding-rules=maybe}",
        "error: --pass: option 'keep-sharding-rules' expects true or false, got 'maybe'",
    ),
    "pass-option-without-value": _bad_pass(
        "sdy-basic-propagate{keep-sharding-rules}",
        "error: --pass: bad pass option 'keep-sharding-rules'",
    ),
    "pass-unclosed-brace": _bad_pass(
        "sdy-basic-propagate{keep-sharding-rules=true",
        "error: --pass: bad pass pipeline 'sdy-basic-propagate{keep-sharding-rules=true' at column 20: '{' without its '}'",
    ),
    "pass-extra-brace": _bad_pass(
        "sdy-basic-propagate{a=1}}",
        "error: --pass: bad pass pipeline 'sdy-basic-propagate{a=1}}' at column 25: expected ','",
    ),
    "pass-no-name": _bad_pass(
        "{a=1}", "error: --pass: bad pass pipeline '{a=1}' at column 1: expected a pass name"
    ),
}


def _write(case: Case, path: Path) -> None:
    if isinstance(case.source, bytes):
        path.write_bytes(case.source)
    elif case.source is not None:
        path.write_text(case.source, encoding="utf-8", newline="")


@pytest.mark.parametrize("name", list(CASES))
def test_bad_input(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    case = CASES[name]
    path = tmp_path / f"{name}.mlir"
    _write(case, path)

    def fill(text: str) -> str:
        return text.replace("{f}", str(path)).replace("{d}", str(tmp_path))

    code, out, err = run_cli([fill(a) for a in case.argv], capsys)
    assert code == case.code, err
    assert "Traceback" not in err and "internal error" not in err, err
    lines = err.splitlines()
    if case.code == 2:
        assert any(line.startswith("shardwise") and fill(case.first_line) in line for line in lines)
    else:
        assert lines and lines[0].startswith(fill(case.first_line)), err
        assert not lines[0].startswith("-:"), "the real file name, not '-'"
        assert out == ""


def test_there_are_at_least_40_cases() -> None:
    assert len(CASES) >= 40


def test_caret_under_the_column(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.mlir"
    path.write_text(_op(f"%0 = stablehlo.abs %argX : {T}"))
    _, _, err = run_cli(["verify", str(path)], capsys)
    assert err.splitlines()[1:3] == [f"  %0 = stablehlo.abs %argX : {T}", " " * 21 + "^"]


def test_stdin_is_named_stdin(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    class _Stdin:
        buffer = io.BytesIO(_sharded('{"z"}, {}').encode())

    monkeypatch.setattr(sys, "stdin", _Stdin)
    code, _, err = run_cli(["verify", "-"], capsys)
    assert code == 1 and err.startswith("<stdin>:2:1: error: 'func.func' op arg 0 - unknown axis")


def test_one_bad_input_does_not_stop_the_others(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = MESH + _func()
    (tmp_path / "a.mlir").write_text(_sharded('{"z"}, {}'))
    (tmp_path / "b.mlir").write_text(good)
    argv = ["propagate", "--pass", "none", str(tmp_path / "a.mlir"), str(tmp_path / "b.mlir")]
    code, _, err = run_cli([*argv, "-o", str(tmp_path / "out")], capsys)
    assert code == 1 and "unknown axis" in err
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["b.mlir"]
    assert (tmp_path / "out" / "b.mlir").read_text() == parse_and_print(good)


# Inputs that are valid but odd: each must give the reference's result. The reference crashes
# on the first two with sdy-user-priority-propagate (a dead op with a priority; a call to a
# body-less func), so the expected text is its sdy-basic-propagate result: a dead op is erased
# before any priority round, and a call to a declaration is a propagation barrier, so the
# priorities cannot change anything.
DEAD_PRIORITIZED_OP = (
    MESH
    + f"func.func @main(%arg0: {T}) -> {T} {{\n"
    + '  %0 = stablehlo.abs %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}p1, '
    + f"{{}}]>]>}} : {T}\n"
    + f"  %1 = stablehlo.negate %arg0 : {T}\n  return %1 : {T}\n}}\n"
)
CALL_BODYLESS = (
    MESH
    + "func.func private @ext(tensor<8xf32>) -> tensor<8xf32>\n"
    + 'func.func @main(%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}p1]>}) '
    + "-> tensor<8xf32> {\n  %0 = call @ext(%a) : (tensor<8xf32>) -> tensor<8xf32>\n"
    + "  return %0 : tensor<8xf32>\n}\n"
)
HUGE_MESH = 'sdy.mesh @mesh = <["x"=4294967296, "y"=4294967296]>\n' + _func(
    '#sdy.sharding<@mesh, [{"x"}, {"y"}]>'
)
TUPLE_ARG = (
    MESH
    + "func.func @main(%a: tuple<tensor<8xf32>, tensor<4xf32>>) -> tensor<8xf32> {\n"
    + "  %0 = stablehlo.get_tuple_element %a[0] : (tuple<tensor<8xf32>, tensor<4xf32>>) "
    + "-> tensor<8xf32>\n  return %0 : tensor<8xf32>\n}\n"
)


@pytest.mark.parametrize(
    ("source", "our_pass", "reference_pass"),
    [
        (DEAD_PRIORITIZED_OP, "sdy-user-priority-propagate", "sdy-basic-propagate"),
        (CALL_BODYLESS, "sdy-user-priority-propagate", "sdy-basic-propagate"),
        (HUGE_MESH, "sdy-basic-propagate", "sdy-basic-propagate"),
        (TUPLE_ARG, "sdy-user-priority-propagate", "sdy-user-priority-propagate"),
    ],
    ids=["dead-op-with-priority", "call-to-bodyless-func", "huge-mesh", "tuple-argument"],
)
def test_odd_but_valid_inputs_match_the_reference(
    source: str,
    our_pass: str,
    reference_pass: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path / "in.mlir"
    path.write_text(source)
    code, out, err = run_cli(["propagate", "--pass", our_pass, str(path)], capsys)
    assert code == 0, err
    # sdy-user-priority-propagate drops priorities, so the reference runs without them.
    assert out == run_pass(source.replace("p1", ""), reference_pass)


def test_internal_error_names_pass_and_op(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def crash_on_abs(module: Module) -> None:
        for op in module.walk():
            if op.name == "stablehlo.abs":
                raise ZeroDivisionError("boom")

    cli.passes.pass_names()  # the catalogue loaded, then one pass more for this test
    info = cli.passes.PassInfo("crash", crash_on_abs, cli.passes.get_pass("none").options_type)
    monkeypatch.setitem(cli.passes._CATALOGUE, "crash", info)
    path = tmp_path / "in.mlir"
    path.write_text(MESH + _func())
    code, _, err = run_cli(["propagate", "--pass", "crash", str(path)], capsys)
    assert code == 1
    assert err.splitlines()[0] == (
        "error: internal error in shardwise while running crash on op 'stablehlo.abs' at "
        f"{path}:3:8; please report it"
    )
    assert "Traceback" not in err
    code, _, err = run_cli(["--debug", "propagate", "--pass", "crash", str(path)], capsys)
    assert code == 1 and "Traceback" in err and "ZeroDivisionError: boom" in err


@pytest.mark.parametrize(
    "argv",
    [["verify", "{d}/bad.mlir"], ["propagate", "-o", "/proc/x", "{d}/good.mlir"]],
    ids=["verify", "unwritable-output"],
)
def test_child_process(argv: list[str], tmp_path: Path) -> None:
    (tmp_path / "bad.mlir").write_text(_sharded('{"x"}'))
    (tmp_path / "good.mlir").write_text(MESH + _func())
    args = [a.replace("{d}", str(tmp_path)) for a in argv]
    proc = subprocess.run(
        [sys.executable, "-m", "shardwise", *args], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 1
    first = proc.stderr.splitlines()[0]
    assert first.startswith((f"{tmp_path}/bad.mlir:2:1: error:", "/proc/x: error: cannot write"))
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    "flags",
    [["report", "--json"], ["report", "--html"], ["export-hlo", "--json"]],
    ids=["report-json", "report-html", "export-hlo-json"],
)
def test_side_outputs_into_a_missing_directory(
    flags: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every file a command writes fails like the main output: path, reason, exit 1."""
    path = tmp_path / "in.mlir"
    path.write_text(_sharded('{"x"}, {}'))
    target = tmp_path / "missing" / "out"
    code, _, err = run_cli([flags[0], str(path), flags[1], str(target)], capsys)
    assert code == 1
    assert err.splitlines()[0] == (
        f"{target}: error: cannot write: directory '{target.parent}' does not exist"
    )
    assert not target.parent.exists()
