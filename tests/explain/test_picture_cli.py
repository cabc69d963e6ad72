"""The terminal picture of tiles on devices, and the explain/report commands end to end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shardwise.api import parse_sharding
from shardwise.cli import main
from shardwise.explain.text import picture
from shardwise.ir import TensorType
from shardwise.syntax import parse_mesh

MESH = parse_mesh('<["x"=2, "y"=4]>')  # device d = 4 * x + y (row-major device order)
MODEL = Path(__file__).parents[1] / "models" / "data" / "mlp_fwd_tp.mlir"


def _rows(text: str) -> list[list[str]]:
    return [
        [cell.strip() for cell in line.strip("|").split("|")]
        for line in text.splitlines()
        if line.startswith("|")
    ]


@pytest.mark.parametrize(
    ("shape", "spec", "rows"),
    [
        ((8, 8), '[{"x"}, {"y"}]', [["D0", "D1", "D2", "D3"], ["D4", "D5", "D6", "D7"]]),
        ((8, 8), '[{"y"}, {}]', [["D0,4"], ["D1,5"], ["D2,6"], ["D3,7"]]),
        ((8, 8), '[{}, {"y", "x"}]', [["D0", "D4", "D1", "D5", "D2", "D6", "D3", "D7"]]),
        ((8,), '[{"x"}]', [["D0,1,2,3"], ["D4,5,6,7"]]),
        ((8,), "[{}]", [["D0,1,2,3,4,5,6,7"]]),
    ],
    ids=["x-by-y", "rows-on-y", "cols-on-y-then-x", "rank1-x", "replicated"],
)
def test_picture(shape, spec, rows) -> None:
    sharding = parse_sharding(f"#sdy.sharding<@mesh, {spec}>")
    assert _rows(picture(sharding, TensorType(shape, "f32"), MESH)) == rows


def test_picture_refuses_rank_3() -> None:
    assert "rank-1 and rank-2" in picture(None, TensorType((2, 2, 2), "f32"), MESH)


def test_explain_command(capsys) -> None:
    assert main(["explain", str(MODEL), "--value", "main:arg4", "--picture"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("main:arg4 : tensor<8x64xf32>")
    assert "user annotation/constraint on main:arg4" in out
    assert "D0,1,2,3" in out  # "data"=2 over rows: devices 0-3 hold the first half


def test_explain_func_result_has_its_type_and_picture(capsys) -> None:
    """A func result is no SSA value: its type comes from the func's signature."""
    assert main(["explain", str(MODEL), "--value", "main:result0", "--picture"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("result (main:result0) : tensor<8x64xf32>")  # jax.result_info
    assert "D0,1,2,3" in out and "rank-1 and rank-2" not in out


def test_explain_op_line(capsys) -> None:
    assert main(["explain", str(MODEL), "--op", "4"]) == 0
    out = capsys.readouterr().out
    assert "stablehlo.dot_general at" in out and "mlp_fwd_tp.mlir:4:10" in out


def test_explain_unknown_value_is_an_error(capsys) -> None:
    assert main(["explain", str(MODEL), "--value", "%nope"]) == 1
    assert "no such value" in capsys.readouterr().err


def test_report_command_json(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    assert main(["report", str(MODEL), "--json", str(out), "--link-bandwidth", "1e9"]) == 0
    data = json.loads(out.read_text())
    assert {"collectives", "values", "totals"} <= set(data)
    (c,) = data["collectives"]
    n, nbytes = 4, 8 * 64 * 4 // 2  # all_reduce over "model"=4 of an 8x64 f32 on "data"=2
    assert c["time_s"] == pytest.approx(2 * (n - 1) / n * nbytes / 1e9 + 2 * (n - 1) * 5e-6)


GPT = Path(__file__).parents[1] / "models" / "data" / "gpt_block.mlir"


def test_names_are_the_outputs(capsys) -> None:
    """MLIR renumbers values in the output; --value takes the output's names first."""
    assert main(["propagate", str(GPT)]) == 0
    output = capsys.readouterr().out
    line = next(ln for ln in output.splitlines() if "= stablehlo.dot_general" in ln)
    name = line.split("=")[0].strip()
    assert main(["explain", str(GPT), "--value", name]) == 0
    assert capsys.readouterr().out.startswith(f"{name} (stablehlo.dot_general at ")


def test_python_api_matches_the_command(capsys) -> None:
    from shardwise import explain

    text = MODEL.read_text()
    assert main(["explain", str(MODEL), "--value", "main:arg0"]) == 0
    expected = capsys.readouterr().out.rstrip("\n")
    assert explain.explain_text(text, "main:arg0", str(MODEL)) == expected
    assert [c["kind"] for c in explain.report_json(text)["collectives"]] == ["all_reduce"]
