"""The pipeline's export of named computations by lookup (`export_named_computations_merged`)
against Shardy: calls of one func that end with equal shardings share one func, those that
differ get their own, and the names of the funcs kept are those MLIR's symbol table gives."""

from __future__ import annotations

import warnings

import pytest

from shardwise.export.export_named_computations import export_named_computations_merged
from shardwise.io.mlir import load_text, write_text
from shardwise.io.reference import run_pass
from shardwise.propagation.propagation_pipeline import import_and_propagate, propagation_pipeline

_RELU = """
  func.func private @relu(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x8xf32>
    %1 = stablehlo.maximum %arg0, %0 : tensor<8x8xf32>
    return %1 : tensor<8x8xf32>
  }
"""

# Four calls of @relu with two input shardings (two funcs kept), two calls of @relu_0 (named
# like a clone of @relu: its funcs are renamed past the names the merged ones took), and a
# func returning its argument (a result sharding read through the argument's edge).
CASES = {
    "two_shardings": """
module {
  sdy.mesh @mesh = <["a"=2, "b"=2]>
  func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>},
                  %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"b"}]>})
      -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) {
    %0 = call @relu(%arg0) : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %1 = call @relu(%arg1) : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %2 = call @relu(%0) : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %3 = call @relu(%1) : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %4 = call @relu_0(%2) : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %5 = call @relu_0(%3) : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %6 = call @id(%4) : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %7 = call @id(%5) : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %8 = call @id(%6) : (tensor<8x8xf32>) -> tensor<8x8xf32>
    return %7, %8, %2 : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
  }
"""
    + _RELU
    + _RELU.replace("@relu(", "@relu_0(")
    + """
  func.func private @id(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
    return %arg0 : tensor<8x8xf32>
  }
}
""",
    "nested_calls": """
module {
  sdy.mesh @mesh = <["a"=2, "b"=2]>
  func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>})
      -> tensor<8x8xf32> {
    %0 = call @twice(%arg0) : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %1 = call @twice(%0) : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %2 = call @relu(%1) : (tensor<8x8xf32>) -> tensor<8x8xf32>
    return %2 : tensor<8x8xf32>
  }
  func.func private @twice(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %0 = call @relu(%arg0) : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %1 = call @relu(%0) : (tensor<8x8xf32>) -> tensor<8x8xf32>
    return %1 : tensor<8x8xf32>
  }
"""
    + _RELU
    + "}\n",
}


def _ours(text: str) -> str:
    module = load_text(text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        propagation_pipeline(module)
    return write_text(module, debug_info=False)


@pytest.mark.parametrize("text", list(CASES.values()), ids=list(CASES))
def test_merged_export_matches_reference(text: str) -> None:
    assert _ours(text) == run_pass(text, "sdy-propagation-pipeline")


def test_two_shardings_keep_two_funcs() -> None:
    """The first case does merge: of the six funcs of @relu and @relu_0, four are kept."""
    out = _ours(CASES["two_shardings"])
    kept = [line for line in out.splitlines() if "func.func private @relu" in line]
    assert len(kept) == 4, out


def test_named_computation_inside_another_takes_the_pass_as_is() -> None:
    """Nested named computations: every func is created (the calls' order could differ)."""
    module = load_text(CASES["nested_calls"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import_and_propagate(module)
    export_named_computations_merged(module)
    funcs = [f for f in module.funcs if f is not module.funcs[0]]
    assert len(funcs) == 7  # two @twice, five @relu
