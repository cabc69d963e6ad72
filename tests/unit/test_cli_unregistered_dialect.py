"""`--allow-unregistered-dialect` on the commands that read modules."""

from __future__ import annotations

from pathlib import Path

import pytest

from shardwise.io.reference import run_pass
from tests.unit.cli_run import run_cli

TEXT = """sdy.mesh @m = <["x"=4]>
func.func @main(%a: tensor<16xf32> {sdy.sharding = #sdy.sharding<@m, [{"x"}]>}) -> tensor<16xf32> {
  %0 = stablehlo.sqrt %a : tensor<16xf32>
  %1 = "acme.op"(%0) : (tensor<16xf32>) -> tensor<16xf32>
  %2 = stablehlo.log %1 : tensor<16xf32>
  return %2 : tensor<16xf32>
}
"""


@pytest.fixture
def path(tmp_path: Path) -> str:
    file = tmp_path / "m.mlir"
    file.write_text(TEXT)
    return str(file)


@pytest.mark.parametrize("command", ["verify", "propagate", "rules", "export-hlo"])
def test_rejected_without_the_flag(
    command: str, path: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli([command, path], capsys)
    assert code == 1
    assert f"{path}:4:17: error: op of an unregistered dialect" in err
    assert "--allow-unregistered-dialect" in err


@pytest.mark.parametrize("command", ["verify", "propagate", "rules", "export-hlo"])
def test_accepted_with_the_flag(
    command: str, path: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli([command, "--allow-unregistered-dialect", path], capsys)
    assert code == 0, err
    assert '"acme.op"' in out or out == f"{path}: ok\n"


def test_propagate_output_is_the_reference(path: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["propagate", "--allow-unregistered-dialect", path], capsys)
    assert code == 0
    expected = run_pass(TEXT, "sdy-propagation-pipeline", allow_unregistered_dialect=True)
    assert out == expected


def test_report_lists_the_unregistered_op(path: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["report", "--plain", "--allow-unregistered-dialect", path], capsys)
    assert code == 0, err
    assert out.splitlines()[-1] == (
        "no sharding rule (what flows through them is replicated): acme.op"
    )


def test_explain_accepts_the_flag(path: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["explain", "--plain", "--allow-unregistered-dialect", path, "--value", "%0"]
    code, out, err = run_cli(argv, capsys)
    assert code == 0, err
    assert out.startswith("%0 (stablehlo.sqrt")
