"""Collectives that change a dimension's size: all_gather, all_to_all, reduce_scatter.

The gathered/split/scattered dim has different sizes on the two sides, so it gets one
need-replication factor per side; every other dim passes through. (Shape-preserving
collectives such as all_reduce are pointwise, see `elementwise`.)
"""

from __future__ import annotations

from shardwise.ir import Op
from shardwise.rules.builder import OpShardingRuleBuilder
from shardwise.rules.ops.common import int_attr, operand_shape, result_shape
from shardwise.rules.registry import register
from shardwise.rules.rule import FactorType, OpShardingRule

NR = FactorType.NEED_REPLICATION


def _split_dim_pair(builder: OpShardingRuleBuilder, op: Op, dim: int) -> None:
    """An operand-only and a result-only need-replication factor on `dim`."""
    builder.add_factor_for_all_operands(dim, operand_shape(op)[dim], NR)
    builder.add_factor_for_all_results(dim, result_shape(op)[dim], NR)


@register("stablehlo.all_gather")
def all_gather_rule(op: Op, conservative: bool) -> OpShardingRule:
    """``([i, j])->([i, k]) need_replication={j, k}`` (gather dim 1): it changes size."""
    dim = int_attr(op, "all_gather_dim")
    builder = OpShardingRuleBuilder.for_op(op)
    builder.add_pointwise_if(operand_shape(op), lambda d: d != dim)
    _split_dim_pair(builder, op, dim)
    return builder.build()


@register("stablehlo.reduce_scatter")
def reduce_scatter_rule(op: Op, conservative: bool) -> OpShardingRule:
    """``([i, j])->([i, k]) need_replication={j, k}`` (scatter dim 1): it changes size."""
    dim = int_attr(op, "scatter_dimension")
    builder = OpShardingRuleBuilder.for_op(op)
    builder.add_pointwise_if(operand_shape(op), lambda d: d != dim)
    _split_dim_pair(builder, op, dim)
    return builder.build()


@register("stablehlo.all_to_all")
def all_to_all_rule(op: Op, conservative: bool) -> OpShardingRule:
    """``([i, k])->([j, l]) need_replication={i, j, k, l}`` (split 0, concat 1).

    Both the split and the concat dim change size; every other dim passes through.
    """
    split = int_attr(op, "split_dimension")
    concat = int_attr(op, "concat_dimension")
    builder = OpShardingRuleBuilder.for_op(op)
    builder.add_pointwise_if(operand_shape(op), lambda d: d not in (split, concat))
    _split_dim_pair(builder, op, split)
    if split != concat:
        _split_dim_pair(builder, op, concat)
    return builder.build()
