"""Ops without a sharding rule: silent by default (Shardy only logs it), once per op name per
run with ``--verbose``, always listed by `ops_without_rule` and ``shardwise report``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shardwise.io.mlir import load_text
from shardwise.io.reference import run_pass
from shardwise.rules.registry import ops_without_rule
from tests.unit.cli_run import run_cli

TEXT = """sdy.mesh @m = <["x"=2]>
func.func @main(%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{"x"}]>}) -> tensor<8xf32> {
  %0 = chlo.square %a : tensor<8xf32> -> tensor<8xf32>
  %1 = chlo.square %0 : tensor<8xf32> -> tensor<8xf32>
  %2 = stablehlo.add %1, %a : tensor<8xf32>
  %3 = chlo.erf_inv %2 : tensor<8xf32> -> tensor<8xf32>
  %4 = stablehlo.custom_call @acme_kernel(%3) : (tensor<8xf32>) -> tensor<8xf32>
  %5 = stablehlo.custom_call @tpu_custom_call(%4) : (tensor<8xf32>) -> tensor<8xf32>
  return %5 : tensor<8xf32>
}
"""
# Hand-derived: Shardy's registry has no case for these two chlo ops nor for that target;
# `tpu_custom_call` gets no rule on purpose, silently.
RULELESS = ["chlo.erf_inv", "chlo.square", "stablehlo.custom_call @acme_kernel"]
WARNINGS = [
    "shardwise: warning: op 'chlo.square' is unknown to SDY sharding rule registry",
    "shardwise: warning: op 'chlo.erf_inv' is unknown to SDY sharding rule registry",
    "shardwise: warning: custom call @acme_kernel is unknown to SDY sharding rule registry",
]


@pytest.fixture
def paths(tmp_path: Path) -> list[str]:
    found = []
    for name in ("a.mlir", "b.mlir"):
        (tmp_path / name).write_text(TEXT)
        found.append(str(tmp_path / name))
    return found


def test_the_reference_gives_them_no_rule() -> None:
    populated = run_pass(TEXT, "sdy-populate-op-sharding-rules")
    assert [
        line for line in populated.split("\n") if "chlo." in line and "sharding_rule" in line
    ] == []
    assert "sharding_rule" in populated  # the add got one


def test_ops_without_rule() -> None:
    assert sorted(ops_without_rule(load_text(TEXT))) == RULELESS


def test_silent_without_verbose(paths: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["propagate", paths[0]], capsys)
    assert code == 0 and "sdy.mesh" in out
    assert err == ""


@pytest.mark.parametrize("where", ["after", "before"])
def test_verbose_once_per_op_name_per_run(
    where: str, paths: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_dir = str(tmp_path / "out") + "/"
    argv = ["propagate", "--verbose", *paths, "-o", out_dir]
    if where == "before":
        argv = ["--verbose", "propagate", *paths, "-o", out_dir]
    for _ in range(2):  # a second run warns again
        code, _, err = run_cli(argv, capsys)
        assert code == 0
        assert err.splitlines() == WARNINGS


def test_report_lists_them(paths: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["report", "--plain", paths[0]], capsys)
    assert code == 0 and err == ""
    assert out.splitlines()[-1] == (
        "no sharding rule (what flows through them is replicated): " + ", ".join(RULELESS)
    )
    code, out, _ = run_cli(["report", "--json", "-", paths[0]], capsys)
    assert json.loads(out)["ops_without_rule"] == RULELESS
