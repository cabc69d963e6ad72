"""Reductions: reduce, reduce_window, select_and_scatter."""

from __future__ import annotations

from collections.abc import Sequence

from shardwise.ir import Op
from shardwise.rules import stablehlo_attrs as attrs
from shardwise.rules.builder import NULL_DIM, OpShardingRuleBuilder
from shardwise.rules.ops.common import i64_array_attr, operand_shape, result_shape
from shardwise.rules.registry import register
from shardwise.rules.rule import FactorType, OpShardingRule

PT = FactorType.PASS_THROUGH
R = FactorType.REDUCTION
NR = FactorType.NEED_REPLICATION
P = FactorType.PERMUTATION


@register("stablehlo.reduce")
def reduce_rule(op: Op, conservative: bool) -> OpShardingRule:
    """``([i, j], [])->([i]) reduction={j}`` for dimensions [1]: reduced dims sum across shards.

    Factors follow the input dims; every input shares them, init values are never mapped.
    """
    reduced = i64_array_attr(op, "dimensions")
    num_inputs = len(op.results)
    builder = OpShardingRuleBuilder.for_op(op)
    out = 0
    for dim, size in enumerate(operand_shape(op)):
        inputs = (dim,) * num_inputs
        if dim in reduced:
            builder.add_factor(inputs, (NULL_DIM,) * num_inputs, size, R)
        else:
            builder.add_factor(inputs, (out,) * num_inputs, size)
            out += 1
    return builder.build()


def _is_window_pass_through(
    padding: Sequence[int] | None, window: Sequence[int], strides: Sequence[int], dim: int
) -> bool:
    """Window size 1, stride 1 and no padding on `dim`: result dim = operand dim, 1 to 1."""
    if padding is not None and (padding[2 * dim] != 0 or padding[2 * dim + 1] != 0):
        return False
    return (not strides or strides[dim] == 1) and (not window or window[dim] == 1)


def _window_attrs(
    op: Op, rank: int
) -> tuple[tuple[int, ...] | None, tuple[int, ...], tuple[int, ...]]:
    """(padding as flat [lo0, hi0, lo1, ...] or None, window_dimensions, window_strides)."""
    padding_attr = op.get_attr("padding")
    padding = None if padding_attr is None else attrs.parse_dense_ints(padding_attr, 2 * rank)
    return (
        padding,
        i64_array_attr(op, "window_dimensions", ()),
        i64_array_attr(op, "window_strides", ()),
    )


@register("stablehlo.reduce_window")
def reduce_window_rule(op: Op, conservative: bool) -> OpShardingRule:
    """``([i, j], [])->([i, j]) {i=4} permutation={i}`` for a window of 2 on dim 0.

    A factor per result dim (size = number of windows); windows straddle shards unless the
    window is trivial, so such dims are permutation factors (blocked if conservative).
    """
    shape = result_shape(op)
    padding, window, strides = _window_attrs(op, len(shape))
    return (
        OpShardingRuleBuilder.for_op(op)
        .add_pointwise(
            shape,
            lambda d: PT if _is_window_pass_through(padding, window, strides, d) else P,
            lambda t: conservative and t == P,
        )
        .build()
    )


@register("stablehlo.select_and_scatter")
def select_and_scatter_rule(op: Op, conservative: bool) -> OpShardingRule:
    """``([j, k], [i, k], [])->([j, k]) {i=4, j=8} need_replication={i} permutation={j}``
    for a window of 2 on dim 0: the source is replicated and the operand/result permuted
    along a windowed dim (both blocked if conservative); trivial-window dims pass through.
    """
    shape = result_shape(op)
    source = operand_shape(op, 1)
    padding, window, strides = _window_attrs(op, len(shape))
    builder = OpShardingRuleBuilder.for_op(op)
    for dim, size in enumerate(shape):
        if _is_window_pass_through(padding, window, strides, dim):
            builder.add_factor_for_all(dim, size)
            continue
        builder.add_factor((NULL_DIM, dim, NULL_DIM), (NULL_DIM,), source[dim], NR, conservative)
        builder.add_factor((dim, NULL_DIM, NULL_DIM), (dim,), size, P, conservative)
    return builder.build()
