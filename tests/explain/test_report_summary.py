"""The report's summary, its JSON without prose unless asked, and long chains summarized."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shardwise.cli import main
from shardwise.explain import explain_text
from shardwise.explain.chains import path_text
from shardwise.explain.report import build_report

MODEL = Path(__file__).parents[1] / "models" / "data" / "mlp_fwd_tp.mlir"

# Per device on "x"=2: %arg0 8x16 f32 on {"x"} = 256 B, %arg1 16x4 replicated = 256 B;
# %0 and %1 (8x16 on {"x"}) 256 B each, both live at %1; %2 (8x4 on {"x"}) 64 B.
# Peak = arguments 512 + live 512 (at %1) = 1024. No axis is contracted: no collective.
# Compute (1e14 FLOP/s, 1e12 B/s): add and multiply 768 B each, the dot 576 B (512 FLOPs),
# all bound by memory: (768 + 768 + 576) / 1e12 = 2.112e-9 s.
MEMORY = """
sdy.mesh @mesh = <["x"=2]>
func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                %arg1: tensor<16x4xf32>) -> tensor<8x4xf32> {
  %0 = stablehlo.add %arg0, %arg0 : tensor<8x16xf32>
  %1 = stablehlo.multiply %0, %0 : tensor<8x16xf32>
  %2 = stablehlo.dot_general %1, %arg1, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  return %2 : tensor<8x4xf32>
}
"""

# An axis carried through seven ops, the transpose moving it from dim 0 to dim 1.
CHAIN = """
sdy.mesh @mesh = <["x"=2]>
func.func @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<4x8xf32> {
  %0 = stablehlo.negate %arg0 : tensor<8x4xf32>
  %1 = stablehlo.negate %0 : tensor<8x4xf32>
  %2 = stablehlo.negate %1 : tensor<8x4xf32>
  %3 = stablehlo.transpose %2, dims = [1, 0] : (tensor<8x4xf32>) -> tensor<4x8xf32>
  %4 = stablehlo.negate %3 : tensor<4x8xf32>
  %5 = stablehlo.negate %4 : tensor<4x8xf32>
  %6 = stablehlo.negate %5 : tensor<4x8xf32>
  return %6 : tensor<4x8xf32>
}
"""


def test_summary_peak_memory_by_hand():
    report = build_report(MEMORY, "memory.mlir", explanations=False)
    assert report.collectives == []
    assert report.to_json()["summary"] == {
        "time_s": pytest.approx(2.112e-9),
        "compute_s": pytest.approx(2.112e-9),
        "comm_bytes_per_device": 0,
        "peak_memory_bytes_per_device": 1024,
    }


def test_summary_communication_is_the_collectives():
    data = build_report(MODEL.read_text(), str(MODEL)).to_json()
    (collective,) = data["collectives"]  # the all_reduce over "model" the reference inserts
    summary = data["summary"]
    assert summary["comm_bytes_per_device"] == 8 * 64 * 4 // 2
    assert summary["time_s"] == pytest.approx(collective["time_s"] + summary["compute_s"])
    assert collective["time_s"] > 0 and summary["compute_s"] > 0
    assert summary["peak_memory_bytes_per_device"] > 0


def test_json_has_prose_only_when_asked(capsys):
    assert main(["report", str(MODEL), "--json", "-"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert main(["report", str(MODEL), "--json", "-", "--explanations"]) == 0
    prose = json.loads(capsys.readouterr().out)
    assert all("explanation" not in v for v in plain["values"])
    assert all(v["explanation"].startswith(v["name"]) for v in prose["values"])
    strip = [{k: x for k, x in v.items() if k != "explanation"} for v in prose["values"]]
    assert strip == plain["values"]
    assert set(plain["summary"]) == {
        "time_s",
        "compute_s",
        "comm_bytes_per_device",
        "peak_memory_bytes_per_device",
    }


def test_long_chain_shows_its_ends_and_where_the_axis_moved():
    lines = explain_text(CHAIN, "%6").splitlines()
    start = lines.index('  axis "x": 8 steps, 4 shown')
    chain = lines[start + 1 : start + 7]
    assert chain[0].startswith("    <- stablehlo.negate") and chain[0].endswith("from %5")
    assert chain[1] == "    <- ... 2 ops carry it on, same dim, same round ..."
    assert chain[2].startswith("    <- stablehlo.transpose")
    assert chain[2].endswith("from %2 [dim 0 -> dim 1]")
    assert chain[3] == "    <- ... 2 ops carry it on, same dim, same round ..."
    assert chain[4].startswith("    <- stablehlo.negate") and chain[4].endswith("from main:arg0")
    assert chain[5] == "    <- user annotation/constraint on main:arg0"


def test_short_chain_is_whole_and_flat():
    lines = explain_text(CHAIN, "%1").splitlines()
    start = lines.index('  axis "x":')
    assert [line[:24] for line in lines[start + 1 : start + 4]] == [
        "    <- stablehlo.negate ",
        "    <- stablehlo.negate ",
        "    <- user annotation/c",
    ]


def test_long_path_keeps_its_ends():
    names = [f"%{i}" for i in range(10)]
    assert path_text(names) == "%0 -> %1 -> %2 -> (4 more) -> %7 -> %8 -> %9"
    assert path_text(names[:7]) == " -> ".join(names[:7])


def test_html_page_has_the_summary_on_top():
    from shardwise.explain.html import render_html

    report = build_report(MODEL.read_text(), str(MODEL))
    page = render_html(report, "mlp")
    cost = page.split('<p id="cost">', 1)[1].split("</p>", 1)[0]
    peak = report.summary["peak_memory_bytes_per_device"]
    assert cost.endswith(f"1024 B/device sent, peak memory {peak} B/device")
    axes = page.split('<p id="axes">', 1)[1].split("</p>", 1)[0]
    assert axes == "bytes per mesh axis: model: 1024 B/device in 1 collectives"
    assert page.index('id="cost"') < page.index('id="view"')
