"""Pointwise ops, `clamp` and `select`: every dim is one pass-through factor."""

from __future__ import annotations

from shardwise.ir import Op
from shardwise.rules.builder import OpShardingRuleBuilder, build_pointwise
from shardwise.rules.ops.common import operand_shape, result_shape
from shardwise.rules.registry import register
from shardwise.rules.rule import OpShardingRule

__all__ = ["POINTWISE_OPS"]

# Shardy's pointwise list (sorted). Collectives that keep the shape (all_reduce,
# collective_permute, ...) are here too: their shards are independent per element position.
POINTWISE_OPS: tuple[str, ...] = (
    "sdy.sharding_constraint",
    "stablehlo.abs",
    "stablehlo.add",
    "stablehlo.all_reduce",
    "stablehlo.and",
    "stablehlo.atan2",
    "stablehlo.cbrt",
    "stablehlo.ceil",
    "stablehlo.collective_broadcast",
    "stablehlo.collective_permute",
    "stablehlo.compare",
    "stablehlo.complex",
    "stablehlo.convert",
    "stablehlo.cosine",
    "stablehlo.count_leading_zeros",
    "stablehlo.cross-replica-sum",
    "stablehlo.divide",
    "stablehlo.exponential",
    "stablehlo.exponential_minus_one",
    "stablehlo.floor",
    "stablehlo.imag",
    "stablehlo.is_finite",
    "stablehlo.log",
    "stablehlo.log_plus_one",
    "stablehlo.logistic",
    "stablehlo.maximum",
    "stablehlo.minimum",
    "stablehlo.multiply",
    "stablehlo.negate",
    "stablehlo.not",
    "stablehlo.or",
    "stablehlo.popcnt",
    "stablehlo.power",
    "stablehlo.real",
    "stablehlo.reduce_precision",
    "stablehlo.remainder",
    "stablehlo.round_nearest_afz",
    "stablehlo.round_nearest_even",
    "stablehlo.rsqrt",
    "stablehlo.shift_left",
    "stablehlo.shift_right_arithmetic",
    "stablehlo.shift_right_logical",
    "stablehlo.sign",
    "stablehlo.sine",
    "stablehlo.sqrt",
    "stablehlo.subtract",
    "stablehlo.tan",
    "stablehlo.tanh",
    "stablehlo.xor",
)


@register(*POINTWISE_OPS)
def pointwise_rule(op: Op, conservative: bool) -> OpShardingRule | None:
    """``([i, j], [i, j])->([i, j])``: element (i, j) of the result needs only element (i, j)."""
    return build_pointwise(op)


@register("stablehlo.clamp")
def clamp_rule(op: Op, conservative: bool) -> OpShardingRule:
    """``([], [i, j], [])->([i, j])`` (scalar bounds unmapped): pointwise over the operand."""
    return OpShardingRuleBuilder.for_op(op).add_pointwise(operand_shape(op, 1)).build()


@register("stablehlo.select")
def select_rule(op: Op, conservative: bool) -> OpShardingRule:
    """``([], [i, j], [i, j])->([i, j])`` (a scalar predicate is broadcast): pointwise."""
    return OpShardingRuleBuilder.for_op(op).add_pointwise(result_shape(op)).build()
