"""An op a pass creates at a block argument is located where the argument is.

MLIR's `Value::getLoc` of a block argument is the argument's own location: its explicit
``loc("p")`` / ``loc(unknown)`` when the input has one, not its position in the file. Shardy
places the open sharding constraints it adds for a sharding group, the reshards of explicit
reshards and the data-flow edges of a loop's block arguments at that location. Compared with
the reference printed with locations, so a wrong location shifts the aliases. Inputs are ours.
"""

from __future__ import annotations

import pytest

from shardwise.io.mlir import load_text, write_text
from shardwise.io.reference import run_pass
from shardwise.passes import run_pass as run_ours

T = "tensor<4x8xf32>"

CASES = {
    # Groups with inconsistent shardings: an open constraint on each member, a reshard after.
    "sharding_group_on_callee_args": f"""sdy.mesh @m = <["x"=4]>
func.func @main(%a: {T}) -> {T} {{
  %0 = call @f(%a, %a) : ({T}, {T}) -> {T}
  return %0 : {T}
}}
func.func private @f(%p: {T} {{sdy.sharding = #sdy.sharding<@m, [{{}}, {{}}]>}} loc("p"), %q: {T} {{sdy.sharding = #sdy.sharding<@m, [{{?}}, {{"x":(1)2, ?}}]>}} loc(unknown)) -> {T} {{
  sdy.sharding_group %q group_id=1 : {T}
  sdy.sharding_group %p group_id=1 : {T}
  return %p : {T}
}}
""",
    # A block argument returned under a different sharding: a reshard at the argument.
    "returned_argument_resharded": f"""sdy.mesh @m = <["x"=4]>
func.func @main(%a: {T} {{sdy.sharding = #sdy.sharding<@m, [{{"x"}}, {{}}]>}} loc("a")) -> ({T} {{sdy.sharding = #sdy.sharding<@m, [{{}}, {{"x"}}]>}}) {{
  return %a : {T} loc("ret")
}}
""",
    # A loop body argument used under two shardings: the reshard sits at the argument.
    "while_body_arguments": f"""sdy.mesh @m = <["x"=4]>
func.func @main(%a: {T} {{sdy.sharding = #sdy.sharding<@m, [{{"x"}}, {{}}]>}}, %n: tensor<i32>) -> {T} {{
  %c = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = "stablehlo.while"(%c, %a) ({{
  ^bb0(%i: tensor<i32> loc("i"), %v: {T} loc("carry")):
    %1 = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  }}, {{
  ^bb0(%i2: tensor<i32> loc("i2"), %v2: {T} loc(unknown)):
    %w = sdy.sharding_constraint %v2 <@m, [{{}}, {{"x"}}]> : {T}
    %2 = stablehlo.add %w, %v2 : {T}
    stablehlo.return %i2, %2 : tensor<i32>, {T}
  }}) : (tensor<i32>, {T}) -> (tensor<i32>, {T})
  return %0#1 : {T}
}}
""",
}
PASSES = [
    "sdy-propagation-pipeline",
    "sdy-user-priority-propagate",
    "sdy-propagation-pipeline,sdy-insert-explicit-reshards{enable-full-version=true}",
]


def _reference(text: str, spec: str) -> str:
    return run_pass(text, spec.split(","), debug_info=True)


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("spec", PASSES)
def test_ops_at_block_arguments_take_their_location(name: str, spec: str) -> None:
    text = CASES[name]
    expected = _reference(text, spec)
    module = load_text(text)
    for step in spec.split(","):
        run_ours(module, step)
    assert write_text(module, debug_info=True) == expected


def test_cases_make_ops_at_arguments() -> None:
    """Each case does create an op at a block argument (else it would test nothing)."""
    for name, text in CASES.items():
        out = _reference(text, PASSES[2])
        assert "sdy.reshard" in out or "sdy.sharding_constraint" in out, name


# A dot contracting a sharded dim: global-to-local lowers its all-reduce with a reduction
# region, whose block arguments sit where the all-reduce is (fuzz seed 1963-302).
CONTRACTING_DOT = """sdy.mesh @m = <["x"=4]>
func.func @main(%a: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {"x"}]>} loc("a"), %b: tensor<16x8xf32> loc("b")) -> tensor<8x8xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32> loc("dot")
  return %0 : tensor<8x8xf32>
}
"""
PARTITION_CHAIN = (
    "sdy-propagation-pipeline,sdy-insert-explicit-reshards{enable-full-version=true},"
    "sdy-reshard-to-collectives,sdy-convert-global-to-local"
)


def test_reduction_region_arguments_take_the_all_reduce_location() -> None:
    expected = _reference(CONTRACTING_DOT, PARTITION_CHAIN)
    assert "stablehlo.all_reduce" in expected
    module = load_text(CONTRACTING_DOT)
    for step in PARTITION_CHAIN.split(","):
        run_ours(module, step)
    assert write_text(module, debug_info=True) == expected
