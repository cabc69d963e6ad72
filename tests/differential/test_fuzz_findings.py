"""Divergences the fuzzer found with its region constructs, as hand-written modules.

Each case is our own small module showing one behaviour, compared with the reference's
output for the named pass (one reference worker for the whole file).
"""

from __future__ import annotations

import difflib

import pytest

from shardwise.fuzz.runner import run_ours
from shardwise.fuzz.worker import ReferenceWorker

pytest.importorskip("jax")

_CALL = """module {{
  sdy.mesh @mesh = <["x"=4, "z"=2]>
  func.func @main(%a0: tensor<8xf32>) -> (tensor<8xf32>) {{
    %v0 = call @f(%a0) {{sdy.sharding = #sdy.sharding_per_value<[{call}]>}} : (tensor<8xf32>) -> tensor<8xf32>
    %v1 = stablehlo.negate %v0 : tensor<8xf32>
    return %v1 : tensor<8xf32>
  }}
  func.func private @f(%a0: tensor<8xf32>) -> (tensor<8xf32> {{sdy.sharding = #sdy.sharding{func}}}) {{
    return %a0 : tensor<8xf32>
  }}
}}
"""

# sdy-insert-func-call-reshards: a reshard after a call result only where the call's sharding
# is not equivalent to the callee's; jaxlib 0.10.2's `isEquivalent` ignores unreduced axes.
_SHARDINGS = {
    "replicated": "<@mesh, [{}]>",
    "x": '<@mesh, [{"x"}]>',
    "replicated-unreduced-z": '<@mesh, [{}], unreduced={"z"}>',
    "x-unreduced-z": '<@mesh, [{"x"}], unreduced={"z"}>',
}
CASES: dict[str, tuple[str, str]] = {
    f"call-{c}-callee-{f}": (
        _CALL.format(call=_SHARDINGS[c], func=_SHARDINGS[f]),
        "sdy-insert-func-call-reshards",
    )
    for c in _SHARDINGS
    for f in _SHARDINGS
}

# Seed 7-97: a dead call result whose callee result is unreduced; the pipeline's func-call
# reshard step must not add a reshard (nor, after export, an unreduced collective).
CASES["pipeline-dead-call-result-unreduced-callee"] = (
    """module {
  sdy.mesh @mesh = <["x"=4, "z"=2]>
  func.func @main(%a0: tensor<2xf32>, %a1: tensor<f32>) -> (tensor<f32>) {
    %v0:2 = call @g(%a0) : (tensor<2xf32>) -> (tensor<1x2xf32>, tensor<f32>)
    return %a1 : tensor<f32>
  }
  func.func private @g(%a0: tensor<2xf32>) -> (tensor<1x2xf32>, tensor<f32> {sdy.sharding = #sdy.sharding<@mesh, [], unreduced={"z"}>}) {
    %c = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %r = stablehlo.reduce(%a0 init: %c) applies stablehlo.add across dimensions = [0] : (tensor<2xf32>, tensor<f32>) -> tensor<f32>
    %s = stablehlo.reshape %a0 : (tensor<2xf32>) -> tensor<1x2xf32>
    return %s, %r : tensor<1x2xf32>, tensor<f32>
  }
}
""",
    "sdy-propagation-pipeline",
)

# Seed 2026-1746 (pipeline; calls become named computations): an operand of a named
# computation sharded only later (backward, here through the body's first block argument) does
# not requeue the edge of another block argument it feeds, so that edge stays unsharded.
_NAMED = """module {{
  sdy.mesh @mesh = <["x"=4, "y"=3]>
  func.func @main(%a0: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {{
{body}
  }}
}}
"""
CASES["named-computation-operand-sharded-late-two-block-args"] = (
    _NAMED.format(
        body="""    %0:2 = sdy.named_computation<"f">(%a0, %a0) (%b0: tensor<2x4xf32>, %b1: tensor<2x4xf32>) {
      %e0 = sdy.data_flow_edge %b0 : tensor<2x4xf32>
      %e1 = sdy.data_flow_edge %b1 : tensor<2x4xf32>
      %c = sdy.sharding_constraint %e0 <@mesh, [{"y"}, {}]> : tensor<2x4xf32>
      sdy.return %c, %e1 : tensor<2x4xf32>, tensor<2x4xf32>
    } : (tensor<2x4xf32>, tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>)
    return %0#0, %0#1 : tensor<2x4xf32>, tensor<2x4xf32>"""
    ),
    "sdy-basic-propagate",
)
CASES["named-computation-operand-sharded-late-by-a-later-constraint"] = (
    _NAMED.format(
        body="""    %0 = sdy.named_computation<"f">(%a0) (%b0: tensor<2x4xf32>) {
      %e0 = sdy.data_flow_edge %b0 : tensor<2x4xf32>
      sdy.return %e0 : tensor<2x4xf32>
    } : (tensor<2x4xf32>) -> tensor<2x4xf32>
    %c = sdy.sharding_constraint %a0 <@mesh, [{"y"}, {}]> : tensor<2x4xf32>
    return %0, %c : tensor<2x4xf32>, tensor<2x4xf32>"""
    ),
    "sdy-basic-propagate",
)
# The fuzzer's shrunk module (seed 2026-1746) through the whole pipeline.
CASES["pipeline-seed-2026-1746-call-operand-sharded-late"] = (
    """module {
  sdy.mesh @mesh = <["x"=4, "z"=8]>
  sdy.mesh @mesh2 = <["z"=4, "y"=3]>
  func.func @main(%a5: tensor<2x4xf32>, %a6: tensor<4x8x12xf32>) -> (tensor<4x8x12xf32>) {
    %v12:3 = call @callee0(%a5, %a5, %a5) : (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> (tensor<4x2xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
    return %a6 : tensor<4x8x12xf32>
  }
  func.func private @callee0(%a0: tensor<2x4xf32>, %a1: tensor<2x4xf32>, %a2: tensor<2x4xf32>) -> (tensor<4x2xf32>, tensor<2x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x":(2)2, ?}]>}, tensor<2x4xf32>) {
    %v0 = stablehlo.optimization_barrier %a0 : tensor<2x4xf32>
    %v1 = stablehlo.constant dense<2> : tensor<i32>
    %v2 = "stablehlo.case"(%v1) ({
      %v2_k0r0_0 = stablehlo.abs %a1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh2, [{"z":(1)2}, {"z":(2)2, ?}]>]>} : tensor<2x4xf32>
      %v2_k0r0_1 = stablehlo.add %v2_k0r0_0, %v2_k0r0_0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"z":(2)4}]>]>} : tensor<2x4xf32>
      %v2_k0r0_2 = sdy.reshard %v2_k0r0_1 <@mesh2, [{"z"}, {?}]> : tensor<2x4xf32>
      stablehlo.return %v2_k0r0_2 : tensor<2x4xf32>
    }, {
      %v2_k1r0_0 = sdy.sharding_constraint %v0 <@mesh2, [{"y"}, {}]> : tensor<2x4xf32>
      stablehlo.return %v2_k1r0_0 : tensor<2x4xf32>
    }, {
      stablehlo.return %v0 : tensor<2x4xf32>
    }) : (tensor<i32>) -> tensor<2x4xf32>
    %v3 = "stablehlo.case"(%v1) ({
      %v3_k0r0_0 = sdy.reshard %a0 <@mesh, [{"x", "z":(1)2}p3, {}]> : tensor<2x4xf32>
      %v3_k0r0_1 = stablehlo.multiply %v3_k0r0_0, %a2 : tensor<2x4xf32>
      %v3_k0r0_2 = stablehlo.multiply %v3_k0r0_1, %a0 : tensor<2x4xf32>
      stablehlo.return %v3_k0r0_2 : tensor<2x4xf32>
    }, {
      stablehlo.return %a1 : tensor<2x4xf32>
    }) : (tensor<i32>) -> tensor<2x4xf32>
    %v4 = stablehlo.transpose %v0, dims = [1, 0] : (tensor<2x4xf32>) -> tensor<4x2xf32>
    return %v4, %v3, %v2 : tensor<4x2xf32>, tensor<2x4xf32>, tensor<2x4xf32>
  }
}
""",
    "sdy-propagation-pipeline",
)


@pytest.fixture(scope="module")
def reference():
    with ReferenceWorker(timeout=300) as worker:
        yield worker


@pytest.mark.parametrize("case", sorted(CASES))
def test_finding(reference, case: str) -> None:
    text, pass_name = CASES[case]
    outcome = reference.run(text, [pass_name])
    assert outcome.parsed, outcome.error
    ref_ok, expected = outcome.outputs[0]
    assert ref_ok, expected
    ok, ours = run_ours(text, pass_name)
    assert ok, ours
    if ours != expected:
        diff = difflib.unified_diff(
            expected.splitlines(), ours.splitlines(), "reference", "shardwise", lineterm=""
        )
        pytest.fail("\n".join(diff))
