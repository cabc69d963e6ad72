"""The ``shardwise`` command line: exit codes, messages, outputs.

Most cases call `shardwise.cli.main` in-process; two run the real entry points in a child
process. Expected module texts come from the reference (`shardwise.io.reference`).
"""

from __future__ import annotations

import ast
import dataclasses
import io
import re
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

from shardwise import cli
from shardwise.io.reference import parse_and_print, run_pass
from tests.unit.cli_run import run_cli

GOOD = """\
sdy.mesh @mesh = <["x"=2, "y"=4]>
func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<8x16xf32> {
  %0 = stablehlo.abs %arg0 : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}
"""
VERIFY_ERROR = """\
func.func @f(%a: tensor<4xf32>) -> tensor<8xf32> {
  return %a : tensor<4xf32>
}
"""
EXAMPLE_TEXT = resources.files("shardwise.examples").joinpath(cli.EXAMPLE).read_text()


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "good.mlir").write_text(GOOD)
    (tmp_path / "bad.mlir").write_text(VERIFY_ERROR)
    (tmp_path / "empty.mlir").write_text("")
    (tmp_path / "binary.mlir").write_bytes(b"\x7fELF\x00\x01")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "good.mlir").write_text(GOOD)
    return tmp_path


# (argv, exit code, text expected in stderr); {d} is the test's directory.
_ERROR_CASES = [
    (["verify", "{d}/missing.mlir"], 1, "{d}/missing.mlir: error: no such file; check the path"),
    (["verify", "{d}/sub"], 1, "{d}/sub: error: is a directory"),
    (["verify", "{d}/empty.mlir"], 1, "{d}/empty.mlir: error: empty input"),
    (["verify", "{d}/binary.mlir"], 1, "{d}/binary.mlir:1:5: error: binary file"),
    (
        ["verify", "{d}/bad.mlir"],
        1,
        "{d}/bad.mlir:2:3: error: type of return operand 0 ('tensor<4xf32>') doesn't match "
        "function result type ('tensor<8xf32>') in function @f\n"
        "  return %a : tensor<4xf32>\n  ^",
    ),
    (["propagate", "{d}/bad.mlir"], 1, "{d}/bad.mlir:2:3: error: type of return operand 0"),
    (["propagate", "--pass", "bogus", "{d}/good.mlir"], 2, "--pass: unknown pass 'bogus'"),
    (
        ["propagate", "--pass", "sdy-basic-propagate{nope=1}", "{d}/good.mlir"],
        2,
        "unknown pass option 'nope'",
    ),
    (["propagate", "--pass", "none{a}", "{d}/good.mlir"], 2, "expected name=value"),
    (
        ["propagate", "{d}/good.mlir", "-o", "{d}/nodir/out.mlir"],
        1,
        "{d}/nodir/out.mlir: error: cannot write: directory '{d}/nodir' does not exist",
    ),
    (
        ["propagate", "{d}/good.mlir", "{d}/sub/good.mlir", "-o", "{d}/out"],
        2,
        "two inputs have the same file name",
    ),
    (
        ["propagate", "{d}/good.mlir", "{d}/bad.mlir", "-o", "{d}/good.mlir"],
        2,
        "several inputs need -o to name a directory",
    ),
    (["frobnicate"], 2, "invalid choice: 'frobnicate'"),
    (["verify"], 2, "the following arguments are required"),
]


@pytest.mark.parametrize(
    ("argv", "code", "message"),
    _ERROR_CASES,
    ids=[
        "missing",
        "directory",
        "empty",
        "binary",
        "verify-error-with-caret",
        "propagate-verify-error",
        "unknown-pass",
        "unknown-pass-option",
        "bad-pass-option",
        "unwritable-output",
        "same-output-name",
        "several-inputs-one-file",
        "unknown-command",
        "no-input",
    ],
)
def test_errors(
    files: Path, capsys: pytest.CaptureFixture[str], argv: list[str], code: int, message: str
) -> None:
    got, out, err = run_cli([a.replace("{d}", str(files)) for a in argv], capsys)
    assert got == code
    assert message.replace("{d}", str(files)) in err
    assert "Traceback" not in err


def test_verify_ok_and_mixed(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["verify", f"{files}/good.mlir", f"{files}/bad.mlir"], capsys)
    assert code == 1
    assert out == f"{files}/good.mlir: ok\n"
    assert f"{files}/bad.mlir:2:3: error:" in err
    assert run_cli(["verify", f"{files}/good.mlir"], capsys)[0] == 0


def test_propagate_none_to_stdout_is_the_reference_print(
    files: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(["propagate", "--pass", "none", f"{files}/good.mlir"], capsys)
    assert (code, err) == (0, "")
    assert out == parse_and_print(GOOD)


def test_propagate_reads_stdin(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(GOOD.encode())))
    code, out, err = run_cli(["propagate", "--pass", "none", "-"], capsys)
    assert (code, err) == (0, "")
    assert out == parse_and_print(GOOD)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(VERIFY_ERROR.encode())))
    code, _, err = run_cli(["verify", "-"], capsys)
    assert code == 1 and err.startswith("<stdin>:2:3: error:")


def test_propagate_generic(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(
        ["propagate", "--pass", "none", "--generic", f"{files}/good.mlir"], capsys
    )
    assert code == 0
    assert out == parse_and_print(GOOD, generic=True)


@pytest.mark.parametrize(
    "spec",
    ["sdy-basic-propagate", "sdy-aggressive-propagate{propagation-strategy=basic}"],
)
def test_propagate_passes_match_reference(
    files: Path, capsys: pytest.CaptureFixture[str], spec: str
) -> None:
    code, out, err = run_cli(["propagate", "--pass", spec, f"{files}/good.mlir"], capsys)
    assert code == 0, err
    assert out == run_pass(GOOD, spec)


def test_propagate_default_runs_on_bundled_example(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["propagate"], capsys)
    assert code == 0, err
    assert out == run_pass(EXAMPLE_TEXT, cli.DEFAULT_PASS)


def test_propagate_several_inputs_into_a_directory(
    files: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (files / "two.mlir").write_text(GOOD.replace("abs", "negate"))
    code, _, err = run_cli(
        [
            "propagate",
            "--pass",
            "none",
            f"{files}/good.mlir",
            f"{files}/two.mlir",
            "-o",
            f"{files}/out",
        ],
        capsys,
    )
    assert (code, err) == (0, "")
    assert sorted(p.name for p in (files / "out").iterdir()) == ["good.mlir", "two.mlir"]
    assert (files / "out" / "good.mlir").read_text() == parse_and_print(GOOD)


def test_propagate_keeps_going_after_a_bad_input(
    files: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli(
        [
            "propagate",
            "--pass",
            "none",
            f"{files}/bad.mlir",
            f"{files}/good.mlir",
            "-o",
            f"{files}/out",
        ],
        capsys,
    )
    assert code == 1
    assert "bad.mlir:2:3: error:" in err
    assert (files / "out" / "good.mlir").exists()


def test_rules_command(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("shardwise.rules.populate")
    code, out, err = run_cli(["rules", f"{files}/good.mlir"], capsys)
    assert code == 0, err
    assert out == run_pass(GOOD, "sdy-populate-op-sharding-rules")


def test_internal_error_is_short_with_a_hint(
    files: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(module: object) -> None:
        raise KeyError("oops")

    cli.passes.pass_names()  # the catalogue loaded, then one pass more for this test
    info = cli.passes.PassInfo("boom", boom, cli.passes.get_pass("none").options_type)
    monkeypatch.setitem(cli.passes._CATALOGUE, "boom", info)
    code, _, err = run_cli(["propagate", "--pass", "boom", f"{files}/good.mlir"], capsys)
    assert code == 1
    assert (
        f"error: internal error in shardwise while running boom on {files}/good.mlir; "
        "please report it\nnote: KeyError: 'oops'"
    ) in err
    assert "please report it" in err and "--debug" in err
    assert "Traceback" not in err
    code, _, err = run_cli(["--debug", "propagate", "--pass", "boom", f"{files}/good.mlir"], capsys)
    assert code == 1 and "Traceback" in err


@pytest.mark.parametrize(
    "command",
    [[sys.executable, "-m", "shardwise"], [str(Path(sys.executable).parent / "shardwise")]],
    ids=["python-m", "entry-point"],
)
def test_entry_points(files: Path, command: list[str]) -> None:
    if not Path(command[0]).exists():
        pytest.skip("the shardwise script is not installed next to this python")
    ok = subprocess.run(
        [*command, "verify", str(files / "good.mlir")], capture_output=True, text=True
    )
    assert (ok.returncode, ok.stdout) == (0, f"{files}/good.mlir: ok\n")
    bad = subprocess.run(
        [*command, "verify", str(files / "bad.mlir")], capture_output=True, text=True
    )
    assert bad.returncode == 1
    assert bad.stderr.startswith(f"{files}/bad.mlir:2:3: error:")


# -- the pass registry behind --pass -----------------------------------------------------------


S = cli.passes.PassSpec


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("none", [S("none")]),
        ("sdy-basic-propagate{}", [S("sdy-basic-propagate")]),
        (
            "sdy-aggressive-propagate{propagation-strategy=basic keep-sharding-rules=true}",
            [
                S(
                    "sdy-aggressive-propagate",
                    (("propagation-strategy", "basic"), ("keep-sharding-rules", "true")),
                )
            ],
        ),
        ("a.b{x=1,y=2}", [S("a.b", (("x", "1"), ("y", "2")))]),
        ("canonicalize{enable-patterns=p,q}", [S("canonicalize", (("enable-patterns", "p,q"),))]),
        ("a, b{x=1}", [S("a"), S("b", (("x", "1"),))]),
        (
            "builtin.module(a,func.func(b,c{x=1}),d)",
            [S("a"), S("b", (), True), S("c", (("x", "1"),), True), S("d")],
        ),
    ],
    ids=[
        "bare",
        "empty-options",
        "two-options",
        "comma-separated-options",
        "comma-in-value",
        "chain",
        "pipeline",
    ],
)
def test_parse_pipeline(spec: str, expected: list) -> None:
    assert cli.passes.parse_pipeline(spec) == expected


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("bad name", "at column 5: expected ',' or the end of the pipeline"),
        ("x{a}", "bad pass option 'a'"),
        ("builtin.module(a", "expected ')'"),
        ("func.func(builtin.module(a))", "builtin.module(...) may only enclose the whole"),
        ("foo(a)", "'foo(...)' is not an op pipeline"),
        ("nope", "unknown pass 'nope'; known passes: canonicalize, none, "),
        ("sdy-basic-propagate,nope", "unknown pass 'nope'"),
        ("none{a=1}", "pass 'none' takes no options"),
        ("sdy-basic-propagate{conservative-propagation=maybe}", "expects true or false"),
        (
            "sdy-populate-op-sharding-rules{x=1}",
            "unknown option 'x' for pass 'sdy-populate-op-sharding-rules'; known options: "
            "conservative-propagation",
        ),
        (
            "sdy-insert-explicit-reshards{x=1}",
            "unknown option 'x' for pass 'sdy-insert-explicit-reshards'; known options: "
            "enable-full-version",
        ),
        ("sdy-reshard-to-collectives{keep-redundant-reshards=2}", "expects true or false"),
    ],
    ids=[
        "syntax",
        "option-syntax",
        "unclosed-pipeline",
        "nested-module",
        "not-an-op-pipeline",
        "unknown",
        "unknown-in-chain",
        "no-options",
        "bad-bool",
        "populate-option",
        "explicit-reshards-option",
        "reshard-to-collectives-bool",
    ],
)
def test_prepare_pass_rejects(spec: str, message: str) -> None:
    with pytest.raises(cli.passes.ShardwiseError) as info:
        cli.passes.prepare_pass(spec)
    assert message in info.value.message


def test_pass_catalogue_is_sorted_unique_and_refuses_duplicates() -> None:
    names = cli.passes.pass_names()
    assert names == sorted(set(names)) and cli.DEFAULT_PASS in names
    with pytest.raises(ValueError, match="declared twice"):
        cli.passes.sdy_pass("none")(lambda module: None)


def test_pass_options_are_a_frozen_dataclass_of_the_keyword_defaults() -> None:
    info = cli.passes.get_pass("sdy-import-func-calls")
    options = info.parse_options({"add-data-flow-edges-on-named-computations": "false"})
    assert options == info.options_type(add_data_flow_edges_on_named_computations=False)
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.add_data_flow_edges_on_named_computations = True  # type: ignore[misc]


def test_console_main_runs_the_command_line_then_freezes_the_heap(
    files: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The ``shardwise`` entry point leaves the heap out of the interpreter's exit GC pass."""
    calls: list[str] = []  # not this test process's heap: the calls are only recorded
    monkeypatch.setattr(cli.gc, "freeze", lambda: calls.append("freeze"))
    monkeypatch.setattr(cli.gc, "unfreeze", lambda: calls.append("unfreeze"))  # the parser's
    monkeypatch.setattr(sys, "argv", ["shardwise", "propagate", f"{files}/good.mlir"])
    assert cli.console_main() == 0
    assert capsys.readouterr().out == run_pass(GOOD, cli.DEFAULT_PASS)
    assert calls[-1] == "freeze" and calls.count("freeze") == calls.count("unfreeze") + 1
    monkeypatch.setattr(sys, "argv", ["shardwise", "propagate", f"{files}/bad.mlir"])
    assert cli.console_main() == 1


def test_installed_command_is_console_main() -> None:
    import tomllib

    pyproject = Path(__file__).parents[2] / "pyproject.toml"
    scripts = tomllib.loads(pyproject.read_text())["project"]["scripts"]
    assert scripts["shardwise"] == "shardwise.cli:console_main"


def test_every_module_that_declares_a_pass_is_in_the_catalogue() -> None:
    """A pass declared in a module the catalogue does not load could not be named."""
    package = Path(cli.passes.__file__).parent
    declaring = set()
    for path in package.rglob("*.py"):
        if path.name != "passes.py" and re.search(r'sdy_pass\(\s*"', path.read_text()):
            parts = path.relative_to(package.parent).with_suffix("").parts
            declaring.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    assert declaring == set(cli.passes._PASS_MODULES)


def test_a_pass_is_found_in_its_own_module() -> None:
    """A lookup imports the pass's module by the file-per-pass rule, not the whole catalogue."""
    cli.passes.pass_names()
    off_rule = {n for n in cli.passes.pass_names() if not cli.passes._conventional_modules(n)}
    assert off_rule == {"canonicalize", "none", "sdy-populate-op-sharding-rules"}
    child = (
        "import sys; from shardwise import passes; "
        "passes.get_pass('sdy-lift-inlined-meshes'); "
        "print(sorted(m for m in sys.modules if m in passes._PASS_MODULES))"
    )
    out = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, check=True)
    loaded = ast.literal_eval(out.stdout.strip())
    assert "shardwise.imports.lift_inlined_meshes" in loaded
    assert all(m.startswith("shardwise.imports.") for m in loaded), loaded  # no export pass


def test_passes_command_lists_every_pass_with_its_options(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["passes"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(cli.passes.pass_names())
    assert "sdy-import-func-calls{add-data-flow-edges-on-named-computations=true}" in lines
    assert "sdy-drop-sharding-rules  (on each func.func)" in lines


def test_func_passes_of_shardy_run_nested_in_func_func() -> None:
    """What Shardy anchors on func.func may be written under func.func(...); a module pass not."""
    from shardwise.io.reference import FUNC_PASSES

    names = set(cli.passes.pass_names())
    for name in sorted(FUNC_PASSES & names):
        cli.passes.prepare_pass(f"builtin.module(func.func({name}))")
    with pytest.raises(cli.passes.ShardwiseError, match="runs on the module"):
        cli.passes.prepare_pass("builtin.module(func.func(symbol-dce))")


def test_a_command_imports_only_its_own_module(tmp_path: Path) -> None:
    # `propagate` must not pay for the modules of `explain`, `report`, `plan`, `check`, `fuzz`;
    # every command is still listed by `--help` and runs when named.
    code = (
        "import sys\n"
        "from shardwise import cli\n"
        f"assert cli.main(['propagate', '-o', {str(tmp_path / 'o.mlir')!r}]) == 0\n"
        "print(sorted({m for m in sys.modules if m.startswith('shardwise.')}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    loaded = set(ast.literal_eval(out))
    assert "shardwise.propagation.propagation_pipeline" in loaded
    # `shardwise.plan` itself is the light `shardwise.plan()` function `import shardwise` loads.
    heavy = {m for m in loaded if m.split(".")[1] in ("explain", "plan", "check", "fuzz")}
    assert heavy <= {"shardwise.plan"}, heavy
    listed = cli.build_parser("propagate").format_help()
    for name in cli._COMMANDS:
        assert name in listed
    assert (
        "--memory"
        in cli.build_parser("plan")._subparsers._group_actions[0].choices["plan"].format_help()
    )
