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


# Seed 4242-1010: the same cause through pipeline + explicit reshards + reshard-to-collectives
# (the call becomes a named computation whose operand is sharded late).
CASES["chain-seed-4242-1010-call-operand-sharded-late"] = (
    """module {
  sdy.mesh @mesh = <["y"=8]>
  func.func @main(%a10: tensor<8x8x8xf32>, %a11: tensor<4x2x8xf32>, %a12: tensor<4x4x2xf32>, %a13: tensor<i32>, %a14: tensor<i32>, %a15: tensor<i32>) -> (tensor<8x8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}, {}]>}) {
    %v18 = call @callee0(%a10) : (tensor<8x8x8xf32>) -> tensor<8x8x8xf32>
    %v19 = stablehlo.dot_general %a10, %a11, batching_dims = [0] x [2], contracting_dims = [] x [] : (tensor<8x8x8xf32>, tensor<4x2x8xf32>) -> tensor<8x8x8x4x2xf32>
    %v21 = stablehlo.dynamic_update_slice %v18, %a12, %a15, %a15, %a15 : (tensor<8x8x8xf32>, tensor<4x4x2xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<8x8x8xf32>
    %v24:2 = stablehlo.while(%v24_x = %v19, %v24_c = %a14) : tensor<8x8x8x4x2xf32>, tensor<i32>
    cond {
      %v24_p = stablehlo.compare LT, %v24_c, %a13 : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %v24_p : tensor<i1>
    } do {
      %v24_b0 = sdy.sharding_constraint %v24_x <@mesh, [{}, {}, {"y":(1)4}, {"y":(4)2, ?}, {?}]> : tensor<8x8x8x4x2xf32>
      %v24_b1 = stablehlo.negate %v24_b0 : tensor<8x8x8x4x2xf32>
      %v24_n = stablehlo.add %v24_c, %a13 : tensor<i32>
      stablehlo.return %v24_b1, %v24_n : tensor<8x8x8x4x2xf32>, tensor<i32>
    }
    return %v21 : tensor<8x8x8xf32>
  }
  func.func private @callee0(%a0: tensor<8x8x8xf32>) -> (tensor<8x8x8xf32>) {
    return %a0 : tensor<8x8x8xf32>
  }
}
""",
    "sdy-propagation-pipeline,sdy-insert-explicit-reshards,sdy-reshard-to-collectives",
)


# Fuzzer seed cat1-122-0 (a shard_map inside a jitted callee): one callee arg feeds two
# operands of a manual computation. sdy-apply-sharding-constraints makes the arg (a data-flow
# edge target once the call graph is imported) go through one constraint for the in-sharding;
# Shardy reads the second operand live (already the constraint's result, sharded: nothing to
# do), ours read a snapshot of the operands and chained a second constraint (an extra reshard).
CASES["pipeline-manual-computation-same-callee-arg-twice"] = (
    """module {
  sdy.mesh @mesh = <["x"=4]>
  func.func @main(%a4: tensor<2x4xf32>) -> (tensor<2x4xf32>) {
    %v7:2 = func.call @callee1(%a4) : (tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>)
    return %v7#0 : tensor<2x4xf32>
  }
  func.func private @callee1(%a0: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
    %v0:2 = sdy.manual_computation(%a0, %a0) in_shardings=[<@mesh, [{}, {"x"}]>, <@mesh, [{}, {"x"}]>] out_shardings=[<@mesh, [{}, {"x"}]>, <@mesh, [{}, {"x"}]>] manual_axes={"x"} (%m0_a0: tensor<2x1xf32>, %m0_a1: tensor<2x1xf32>) {
      sdy.return %m0_a0, %m0_a1 : tensor<2x1xf32>, tensor<2x1xf32>
    } : (tensor<2x4xf32>, tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>)
    return %v0#0, %a0 : tensor<2x4xf32>, tensor<2x4xf32>
  }
}
""",
    "sdy-propagation-pipeline",
)
CASES["pipeline-seed-cat1-122-0-shard-map-in-callee"] = (
    """module {
  sdy.mesh @mesh = <["z"=6, "w"=8, "x"=4]>
  func.func @main(%a4: tensor<2x4xf32>) -> (tensor<32x128x16xf32>) {
    %v7:2 = func.call @callee1(%a4) : (tensor<2x4xf32>) -> (tensor<32x128x16xf32>, tensor<2x4xf32>)
    return %v7#0 : tensor<32x128x16xf32>
  }
  func.func private @callee0(%a0: tensor<8x16x16xf32>) -> (tensor<8x16x16xf32>, tensor<16x16xf32>) {
    %v1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %v2 = stablehlo.reduce(%a0 init: %v1) applies stablehlo.add across dimensions = [0] : (tensor<8x16x16xf32>, tensor<f32>) -> tensor<16x16xf32>
    return %a0, %v2 : tensor<8x16x16xf32>, tensor<16x16xf32>
  }
  func.func private @callee1(%a0: tensor<2x4xf32>) -> (tensor<32x128x16xf32>, tensor<2x4xf32>) {
    %v0:2 = sdy.manual_computation(%a0, %a0) in_shardings=[<@mesh, [{}, {"x"}]>, <@mesh, [{}, {"x"}]>] out_shardings=[<@mesh, [{"x"}, {"w"}, {}]>, <@mesh, [{"x", "w"}, {}, {}]>] manual_axes={"w", "x"} (%m0_a0: tensor<2x1xf32>, %m0_a1: tensor<2x1xf32>) {
      %m0_v0 = sdy.sharding_constraint %m0_a0 <@mesh, [{"z"}, {}]> : tensor<2x1xf32>
      %m0_v1 = stablehlo.constant dense<1.000000e+00> : tensor<8x16x16xf32>
      %m0_v2:2 = func.call @callee0(%m0_v1) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{?}, {?}, {?}]>, <@mesh, [{?}, {"z", ?}p3]>]>} : (tensor<8x16x16xf32>) -> (tensor<8x16x16xf32>, tensor<16x16xf32>)
      %m0_r0_0 = stablehlo.add %m0_v2#0, %m0_v2#0 : tensor<8x16x16xf32>
      sdy.return %m0_r0_0, %m0_v1 : tensor<8x16x16xf32>, tensor<8x16x16xf32>
    } : (tensor<2x4xf32>, tensor<2x4xf32>) -> (tensor<32x128x16xf32>, tensor<256x16x16xf32>)
    return %v0#0, %a0 : tensor<32x128x16xf32>, tensor<2x4xf32>
  }
}
""",
    "sdy-propagation-pipeline",
)


# Seed 11-27 (op-priority and user-priority; no data-flow edges outside the pipeline): a
# while body's block argument keeps its sharding on the while result. An update of the block
# argument is an update of that result (Shardy's `getShardableValue`): it must reach the
# result's sharding group (here a func argument) and requeue the result's users.
_WHILE = """module {{
  sdy.mesh @mesh = <["w"=4]>
  func.func @main({args}) -> {results} {{
    %c0 = stablehlo.constant dense<0> : tensor<i32>
    %c3 = stablehlo.constant dense<3> : tensor<i32>
    %0:2 = stablehlo.while(%x = %arg0, %i = %c0) : {t}, tensor<i32>
    cond {{
      %p = stablehlo.compare LT, %i, %c3 : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    }} do {{
      %1 = {step} : {t}
      %2 = stablehlo.add %i, %c3 : tensor<i32>
      stablehlo.return %1, %2 : {t}, tensor<i32>
    }}
{tail}
  }}
}}
"""
_WHILE_GROUPED_WITH_ITS_OPERAND = _WHILE.format(
    args="%arg0: tensor<1x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {?}]>}",
    results="tensor<1x16xf32>",
    t="tensor<1x16xf32>",
    step='sdy.sharding_constraint %x <@mesh, [{}, {"w"}]>',
    tail="""    sdy.sharding_group %0#0 group_id=0 : tensor<1x16xf32>
    sdy.sharding_group %arg0 group_id=0 : tensor<1x16xf32>
    return %0#0 : tensor<1x16xf32>""",
)
for _pass in ("sdy-basic-propagate", "sdy-op-priority-propagate", "sdy-user-priority-propagate"):
    CASES[f"while-body-arg-sharded-reaches-group-{_pass.removeprefix('sdy-')}"] = (
        _WHILE_GROUPED_WITH_ITS_OPERAND,
        _pass,
    )
# The body's block argument is sharded late (backward from a constraint after the loop on a
# captured value), after the loop result's user was visited: it must be visited again.
CASES["while-body-arg-sharded-late-requeues-result-users"] = (
    _WHILE.format(
        args="%arg0: tensor<16xf32>, %arg1: tensor<16xf32>",
        results="(tensor<16xf32>, tensor<16xf32>)",
        t="tensor<16xf32>",
        step="stablehlo.add %x, %arg1",
        tail="""    %3 = stablehlo.negate %0#0 : tensor<16xf32>
    %4 = sdy.sharding_constraint %arg1 <@mesh, [{"w"}]> : tensor<16xf32>
    return %3, %4 : tensor<16xf32>, tensor<16xf32>""",
    ),
    "sdy-basic-propagate",
)


@pytest.fixture(scope="module")
def reference():
    with ReferenceWorker(timeout=300) as worker:
        yield worker


@pytest.mark.parametrize("case", sorted(CASES))
def test_finding(reference, case: str) -> None:
    text, pass_name = CASES[case]
    outcome = reference.run(text, [pass_name])  # a comma chains passes, as in `run_ours`
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
