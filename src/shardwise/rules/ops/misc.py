"""Remaining ops with a rule: sort, fft, rng_bit_generator."""

from __future__ import annotations

from shardwise.ir import Op
from shardwise.rules import stablehlo_attrs as attrs
from shardwise.rules.builder import NULL_DIM, OpShardingRuleBuilder
from shardwise.rules.ops.common import i64_array_attr, operand_shape, result_shape
from shardwise.rules.registry import register
from shardwise.rules.rule import FactorType, OpShardingRule

NR = FactorType.NEED_REPLICATION


@register("stablehlo.sort")
def sort_rule(op: Op, conservative: bool) -> OpShardingRule:
    """``([i, j], [i, j])->([i, j], [i, j]) need_replication={j}`` for dimension 1: a sort
    needs the whole sort dim; it is also blocked when every other dim has size 1."""
    shape = operand_shape(op)
    # Like Shardy, a negative (or absent, i.e. -1) dimension matches no dim: all pass through.
    dim_attr = op.get_attr("dimension")
    sort_dim = -1 if dim_attr is None else attrs.parse_int(dim_attr)
    blocked = all(size == 1 for dim, size in enumerate(shape) if dim != sort_dim)
    builder = OpShardingRuleBuilder.for_op(op)
    for dim, size in enumerate(shape):
        if dim == sort_dim:
            builder.add_factor_for_all(dim, size, NR, blocked)
        else:
            builder.add_factor_for_all(dim, size)
    return builder.build()


@register("stablehlo.fft")
def fft_rule(op: Op, conservative: bool) -> OpShardingRule:
    """``([i, j])->([i, j]) need_replication={j}`` for a 1-D FFT: the transformed dims need all
    their elements; the last is blocked when its size changes (RFFT/IRFFT)."""
    in_shape, out_shape = operand_shape(op), result_shape(op)
    num_batch = len(in_shape) - len(i64_array_attr(op, "fft_length"))
    builder = OpShardingRuleBuilder.for_op(op)
    for dim, size in enumerate(in_shape):
        if dim < num_batch:
            builder.add_factor_for_all(dim, size)
        elif dim < len(in_shape) - 1:
            builder.add_factor_for_all(dim, size, NR)
        else:
            builder.add_factor_for_all(dim, size, NR, in_shape[-1] != out_shape[-1])
    return builder.build()


@register("stablehlo.rng_bit_generator")
def rng_bit_generator_rule(op: Op, conservative: bool) -> OpShardingRule:
    """``([i])->([i], [j, k]) need_replication={i} blocked_propagation={i}``: the state is
    replicated and unrelated to the output, whose dims are free."""
    builder = OpShardingRuleBuilder.for_op(op)
    for dim, size in enumerate(operand_shape(op)):
        builder.add_factor((dim,), (dim, NULL_DIM), size, NR, True)
    for dim, size in enumerate(result_shape(op, 1)):
        builder.add_factor((NULL_DIM,), (NULL_DIM, dim), size)
    return builder.build()
