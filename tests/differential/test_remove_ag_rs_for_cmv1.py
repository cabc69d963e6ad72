"""`sdy-remove-all-gather-reduce-scatter-for-cmv1` inside the export pipeline, against Shardy.

The pass itself is compared case by case in `test_export_passes.py` (cases in
`export_pass_cases_cmv1.py`). Here the pipeline option that enables it
(``remove-all-gather-reduce-scatter-for-cmv1``, effective only with
``enable-insert-explicit-collectives``) runs on inputs where the partitioner itself puts an
all-gather before a dot and a reduce-scatter after one, through our pass registry.
"""

from __future__ import annotations

import pytest

from shardwise.io.mlir import load_text, write_text
from shardwise.io.reference import run_pass
from shardwise.passes import run_pass as run_ours

MESH = 'sdy.mesh @mesh = <["x"=2, "y"=4]>\n'


def _arg(index: int, type_: str, dims: str) -> str:
    return f"%arg{index}: {type_} {{sdy.sharding = #sdy.sharding<@mesh, [{dims}]>}}"


def _result(dims: str) -> str:
    return f"(tensor<8x8xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{dims}]>}})"


def _per_value(dims: str) -> str:
    return f"{{sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{dims}]>]>}}"


_DOT = "(tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>"
_L, _R = "tensor<8x16xf32>", "tensor<16x8xf32>"

# The partitioner gathers %arg0 (dot operand), scatters a dot result (after fusing its
# all-reduce with an all-slice), or gathers a result; main mixes all three.
PIPELINE_INPUT = (
    MESH
    + f"""
func.func @main({_arg(0, _L, '{"x"}, {"y"}')}, {_arg(1, _R, '{"x"}, {}')}) -> {_result('{}, {"y"}')} {{
  %0 = stablehlo.dot %arg0, %arg1 {_per_value('{}, {"y"}')} : {_DOT}
  %1 = stablehlo.dot_general %arg0, %0, contracting_dims = [0] x [0] {_per_value('{"y"}, {}')} : (tensor<8x16xf32>, tensor<8x8xf32>) -> tensor<16x8xf32>
  %2 = stablehlo.dot %arg0, %1 {_per_value('{}, {"y"}')} : {_DOT}
  return %2 : tensor<8x8xf32>
}}
func.func @gather_operand({_arg(0, _L, '{"y"}, {}')}, {_arg(1, _R, '{}, {"y"}')}) -> {_result('{}, {"y"}')} {{
  %0 = stablehlo.dot %arg0, %arg1 {_per_value('{}, {"y"}')} : {_DOT}
  return %0 : tensor<8x8xf32>
}}
func.func @scatter_result({_arg(0, _L, '{}, {"y"}')}, {_arg(1, _R, '{"y"}, {}')}) -> {_result('{}, {"y"}')} {{
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] {_per_value('{}, {"y"}')} : {_DOT}
  %1 = stablehlo.negate %0 : tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}}
func.func @gather_both({_arg(0, _L, '{"x"}, {}')}, {_arg(1, _R, '{}, {"x"}')}) -> {_result("{}, {}")} {{
  %0 = stablehlo.dot %arg0, %arg1 {_per_value("{}, {}")} : {_DOT}
  %1 = stablehlo.dot %arg0, %arg1 {_per_value("{}, {}")} : {_DOT}
  %2 = stablehlo.add %0, %1 : tensor<8x8xf32>
  return %2 : tensor<8x8xf32>
}}
"""
)

OPTION_SETS = {
    "explicit-collectives-cmv1": (
        "enable-insert-explicit-collectives=true remove-all-gather-reduce-scatter-for-cmv1=true"
    ),
    "cmv1-alone-no-effect": "remove-all-gather-reduce-scatter-for-cmv1=true",
    "explicit-collectives": "enable-insert-explicit-collectives=true",
}


@pytest.mark.parametrize("options", list(OPTION_SETS.values()), ids=list(OPTION_SETS))
def test_export_pipeline_with_cmv1_option_matches_reference(options: str) -> None:
    spec = f"sdy-export-pipeline{{{options}}}"
    expected = run_pass(PIPELINE_INPUT, spec)
    assert write_text(run_ours(load_text(PIPELINE_INPUT), spec)) == expected


def test_cmv1_option_removes_what_the_partitioner_inserted() -> None:
    """Guards the input: without the option the reference does insert the collectives."""
    full = run_pass(PIPELINE_INPUT, "sdy-export-pipeline{enable-insert-explicit-collectives=true}")
    cmv1 = run_pass(
        PIPELINE_INPUT, f"sdy-export-pipeline{{{OPTION_SETS['explicit-collectives-cmv1']}}}"
    )
    for collective in ("sdy.all_gather", "sdy.reduce_scatter"):
        assert full.count(collective) > cmv1.count(collective), collective
