"""More faults the checker must catch and name: a wrong padding, a custom sharding rule that
leaves a contracting factor's partial sums, and `--against xla` (XLA's own partitioning).

Local programs come from the reference's chain (Shardy in jaxlib), or from ours where ours is
byte-identical to it; one XLA worker serves every test (`executor` in conftest.py).
"""

from __future__ import annotations

import pytest

from shardwise import cli
from shardwise.check import check
from shardwise.errors import ShardwiseError
from shardwise.io.mlir import load_text, write_text
from shardwise.io.reference import run_pass
from shardwise.partition import partition, reference_chain

# A dim of 6 sharded 4 ways: Shardy pads it to 8 (`sdy-pad-for-divisibility`).
PADDED = """
sdy.mesh @mesh = <["x"=4]>
func.func @main(%arg0: tensor<6x8xf32>) -> tensor<6x8xf32> {
  %0 = stablehlo.exponential %arg0 : tensor<6x8xf32>
  %1 = sdy.sharding_constraint %0 <@mesh, [{"x"}, {}]> : tensor<6x8xf32>
  %2 = stablehlo.negate %1 : tensor<6x8xf32>
  %3 = sdy.sharding_constraint %2 <@mesh, [{}, {}]> : tensor<6x8xf32>
  return %3 : tensor<6x8xf32>
}
"""

# A reduce over a dim sharded on "y", carrying a `custom` rule. Shardy's explicit reshards
# trust a custom rule and insert nothing for its op, so the rule below, in which the summed
# factor j is no reduction factor (as a pass-through factor would be), leaves every device
# with its partial sums: no all-reduce follows the reduce.
REDUCE_RULE = "#sdy.op_sharding_rule<([i, j], [])->([i]) {i=8, j=16}, custom>"
REDUCE = """
sdy.mesh @mesh = <["x"=2, "y"=4]>
func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> tensor<8xf32> {
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [1] RULE : (tensor<8x16xf32>, tensor<f32>) -> tensor<8xf32>
  %1 = stablehlo.tanh %0 : tensor<8xf32>
  return %1 : tensor<8xf32>
}
"""

# The same fault on a dot: its contracting factor j given as a non-reduction factor.
DOT = """
sdy.mesh @mesh = <["x"=2, "y"=4]>
func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>},
                %arg1: tensor<16x4xf32>) -> tensor<8x4xf32> {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] {sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [j, k])->([i, k]) {i=8, j=16, k=4}, custom>} : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %1 = stablehlo.tanh %0 : tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}
"""

MATMUL = """
sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>},
                %arg1: tensor<16x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>})
    -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0]
      : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}
"""


def _padded_local() -> str:
    local = run_pass(PADDED, reference_chain(pad=True))
    assert "low = [0, 0], high = [2, 0]" in local
    return local


def test_padded_program_is_equal(executor) -> None:
    assert check(PADDED, _padded_local(), executor=executor).equal


@pytest.mark.parametrize(
    ("mutation", "shown"),
    [
        (("low = [0, 0], high = [2, 0]", "low = [2, 0], high = [0, 0]"), "low=[2, 0] high=[0, 0]"),
        (("low = [0, 0], high = [2, 0]", "low = [1, 0], high = [1, 0]"), "low=[1, 0] high=[1, 0]"),
    ],
)
def test_wrong_padding_is_caught_at_the_first_op_reading_it(executor, mutation, shown) -> None:
    # Padding at the wrong end shifts every device's rows: the first op on the shards (the
    # exponential) differs, and the pad is listed among what it reads through.
    local = _padded_local().replace(*mutation)
    result = check(PADDED, local, executor=executor, global_name="g.mlir")
    assert not result.equal
    d = result.divergence
    assert d is not None and d.op_name == "stablehlo.exponential"
    assert d.global_location is not None and d.global_location.line == 4
    pads = [n for n in d.inputs_via if n.name == "stablehlo.pad"]
    assert pads and pads[0].detail == shown
    # Only the 48 real elements count, not the padding.
    assert d.difference.size == 48


def test_custom_rule_without_the_reduction_factor_is_caught_at_the_reduce(executor) -> None:
    text = REDUCE.replace("RULE", "{sdy.sharding_rule = " + REDUCE_RULE + "}")
    module = load_text(text, "g.mlir")
    partition(module)
    local = write_text(module)
    assert local == run_pass(text, reference_chain())  # the reference writes it so too
    assert "stablehlo.all_reduce" not in local
    result = check(text, local, executor=executor, global_name="g.mlir")
    assert not result.equal
    d = result.divergence
    assert d is not None and d.op_name == "stablehlo.reduce"
    assert d.global_location is not None and d.global_location.line == 5


def test_reduce_with_the_registry_rule_is_equal(executor) -> None:
    text = REDUCE.replace("RULE", "")
    module = load_text(text, "g.mlir")
    partition(module)
    assert check(text, write_text(module), executor=executor).equal


def test_custom_rule_on_a_dot_stops_partition_at_the_dot() -> None:
    # The global-to-local conversion checks that a sharded contracting dot feeds an
    # all-reduce (as the reference does); the wrong rule is named before anything runs.
    with pytest.raises(ShardwiseError, match="sharded contracting dot_general") as info:
        partition(load_text(DOT, "g.mlir"))
    assert info.value.location is not None and info.value.location.line == 5


def test_against_xla_reports_both(executor, tmp_path, capsys) -> None:
    path = tmp_path / "matmul.mlir"
    path.write_text(MATMUL)
    assert cli.main(["check", str(path), "--against", "xla"]) == 0
    out = capsys.readouterr().out
    assert out.count(": EQUAL") == 2
    assert f"XLA's own SPMD partitioning vs {path}: EQUAL" in out


def test_against_xla_result(executor) -> None:
    local = run_pass(MATMUL, reference_chain())
    result = check(MATMUL, local, executor=executor, against_xla=True)
    assert result.equal and result.xla_equal
    assert result.against_xla is not None and len(result.against_xla) == 1
    # Without the flag there is no second comparison.
    assert check(MATMUL, local, executor=executor).xla_equal is None
