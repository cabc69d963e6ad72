"""Contractions: dot, dot_general, convolution."""

from __future__ import annotations

from shardwise.ir import Op
from shardwise.rules import stablehlo_attrs as attrs
from shardwise.rules.builder import NULL_DIM, OpShardingRuleBuilder
from shardwise.rules.ops.common import operand_shape, result_shape
from shardwise.rules.registry import register
from shardwise.rules.rule import FactorType, OpShardingRule

PT = FactorType.PASS_THROUGH
R = FactorType.REDUCTION
P = FactorType.PERMUTATION


@register("stablehlo.dot_general")
def dot_general_rule(op: Op, conservative: bool) -> OpShardingRule:
    """``([i, k], [k, j])->([i, j]) reduction={k}`` for a matmul: contracting dims sum.

    Factor order: batching pairs, lhs free dims, rhs free dims (= result dim order), then the
    contracting pairs.
    """
    nums = attrs.parse_dot_dimension_numbers(attrs.required_attr(op, "dot_dimension_numbers"))
    lhs, rhs = operand_shape(op, 0), operand_shape(op, 1)
    builder = OpShardingRuleBuilder.for_op(op)
    out = 0
    for lhs_dim, rhs_dim in zip(
        nums.lhs_batching_dimensions, nums.rhs_batching_dimensions, strict=True
    ):
        builder.add_factor((lhs_dim, rhs_dim), (out,), lhs[lhs_dim])
        out += 1
    lhs_used = nums.lhs_batching_dimensions + nums.lhs_contracting_dimensions
    for dim in (d for d in range(len(lhs)) if d not in lhs_used):
        builder.add_factor((dim, NULL_DIM), (out,), lhs[dim])
        out += 1
    rhs_used = nums.rhs_batching_dimensions + nums.rhs_contracting_dimensions
    for dim in (d for d in range(len(rhs)) if d not in rhs_used):
        builder.add_factor((NULL_DIM, dim), (out,), rhs[dim])
        out += 1
    for lhs_dim, rhs_dim in zip(
        nums.lhs_contracting_dimensions, nums.rhs_contracting_dimensions, strict=True
    ):
        builder.add_factor((lhs_dim, rhs_dim), (NULL_DIM,), lhs[lhs_dim], R)
    return builder.build()


@register("stablehlo.dot")
def dot_rule(op: Op, conservative: bool) -> OpShardingRule:
    """``([i, k], [k, j])->([i, j]) reduction={k}``; a vector side has no free factor."""
    lhs, rhs = operand_shape(op, 0), operand_shape(op, 1)
    lhs_matrix, rhs_matrix = len(lhs) == 2, len(rhs) == 2
    builder = OpShardingRuleBuilder.for_op(op)
    if lhs_matrix:
        builder.add_factor((0, NULL_DIM), (0,), lhs[0])
    if rhs_matrix:
        builder.add_factor((NULL_DIM, 1), (1 if lhs_matrix else 0,), rhs[1])
    builder.add_factor((1 if lhs_matrix else 0, 0), (NULL_DIM,), rhs[0], R)
    return builder.build()


def _add_spatial_factors(
    builder: OpShardingRuleBuilder,
    dims: tuple[int, int, int],
    num_windows: int,
    window_size: int,
    lhs_size: int,
) -> None:
    """Split an input spatial dim into a windows factor (P, to the output) and a window-size
    factor (R, to the kernel), the larger first, each only if it is > 1."""
    lhs_dim, rhs_dim, out_dim = dims
    remaining = lhs_size
    order = [(num_windows, False), (window_size, True)]
    if num_windows < window_size:
        order.reverse()
    for candidate, contracting in order:
        size = min(remaining, candidate)
        if size <= 1:
            continue
        if contracting:
            builder.add_factor((lhs_dim, rhs_dim), (NULL_DIM,), size, R)
        else:
            builder.add_factor((lhs_dim, NULL_DIM), (out_dim,), size, P)
        remaining //= size


@register("stablehlo.convolution")
def convolution_rule(op: Op, conservative: bool) -> OpShardingRule:
    """``([b, s, f], [w, f, o])->([b, t, o]) reduction={f, w} permutation={t}`` (1-D conv):

    batch passes through, input features contract, each input spatial dim splits into the
    output windows and the kernel window (skipped if conservative), output features pass.
    Group counts add a group factor shared by the grouped dims.
    """
    nums = attrs.parse_conv_dimension_numbers(attrs.required_attr(op, "dimension_numbers"))
    batch_groups = attrs.parse_int(op.get_attr("batch_group_count") or "1")
    feature_groups = attrs.parse_int(op.get_attr("feature_group_count") or "1")
    lhs, rhs, out = operand_shape(op, 0), operand_shape(op, 1), result_shape(op)
    builder = OpShardingRuleBuilder.for_op(op)
    if batch_groups > 1:
        builder.add_factor(
            (nums.input_batch_dimension, nums.kernel_output_feature_dimension),
            (nums.output_feature_dimension,),
            batch_groups,
        )
    builder.add_factor(
        (nums.input_batch_dimension, NULL_DIM),
        (nums.output_batch_dimension,),
        out[nums.output_batch_dimension],
    )
    if not conservative:
        for dims in zip(
            nums.input_spatial_dimensions,
            nums.kernel_spatial_dimensions,
            nums.output_spatial_dimensions,
            strict=True,
        ):
            _add_spatial_factors(builder, dims, out[dims[2]], rhs[dims[1]], lhs[dims[0]])
    if feature_groups > 1:
        builder.add_factor(
            (nums.input_feature_dimension, nums.kernel_output_feature_dimension),
            (nums.output_feature_dimension,),
            feature_groups,
        )
    builder.add_factor(
        (nums.input_feature_dimension, nums.kernel_input_feature_dimension),
        (NULL_DIM,),
        rhs[nums.kernel_input_feature_dimension],
        R,
    )
    out_features = out[nums.output_feature_dimension] // (batch_groups * feature_groups)
    if out_features > 1:
        builder.add_factor(
            (NULL_DIM, nums.kernel_output_feature_dimension),
            (nums.output_feature_dimension,),
            out_features,
        )
    return builder.build()
