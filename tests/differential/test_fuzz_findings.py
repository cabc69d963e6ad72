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
