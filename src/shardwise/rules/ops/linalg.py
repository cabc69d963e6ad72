"""Linear algebra and normalization: cholesky, triangular_solve, batch_norm_inference."""

from __future__ import annotations

from shardwise.ir import Op
from shardwise.rules import stablehlo_attrs as attrs
from shardwise.rules.builder import NULL_DIM, OpShardingRuleBuilder
from shardwise.rules.ops.common import bool_attr, int_attr, operand_shape
from shardwise.rules.registry import register
from shardwise.rules.rule import FactorType, OpShardingRule

PT = FactorType.PASS_THROUGH
NR = FactorType.NEED_REPLICATION


@register("stablehlo.cholesky")
def cholesky_rule(op: Op, conservative: bool) -> OpShardingRule:
    """``([i, j, k])->([i, j, k]) need_replication={j, k}``: batch dims pass, the matrix dims
    are decomposed as a whole."""
    shape = operand_shape(op)
    num_batch = len(shape) - 2
    return (
        OpShardingRuleBuilder.for_op(op)
        .add_pointwise(shape, lambda d: PT if d < num_batch else NR)
        .build()
    )


def _is_transposed(op: Op) -> bool:
    value = op.get_attr("transpose_a")
    return value is not None and attrs.parse_enum(value) in ("TRANSPOSE", "ADJOINT")


@register("stablehlo.triangular_solve")
def triangular_solve_rule(op: Op, conservative: bool) -> OpShardingRule:
    """``([i, l, k], [i, l, j])->([i, k, j]) need_replication={j, k, l}`` (left side, op(a) = a):
    batch dims pass; the solve needs whole matrices, so its three dims are replicated."""
    a, b = operand_shape(op, 0), operand_shape(op, 1)
    dim1, dim2 = len(a) - 2, len(a) - 1
    transposed = _is_transposed(op)
    builder = OpShardingRuleBuilder.for_op(op).add_pointwise(a[:-2])
    if bool_attr(op, "left_side"):
        # op(a) @ result = b
        a_free, a_contracting = (dim2, dim1) if transposed else (dim1, dim2)
        builder.add_factor((a_free, dim1), (NULL_DIM,), a[a_free], NR)
        builder.add_factor((NULL_DIM, dim2), (dim2,), b[dim2], NR)
        builder.add_factor((a_contracting, NULL_DIM), (dim1,), a[a_contracting], NR)
    else:
        # result @ op(a) = b
        a_free, a_contracting = (dim1, dim2) if transposed else (dim2, dim1)
        builder.add_factor((NULL_DIM, dim1), (dim1,), b[dim1], NR)
        builder.add_factor((a_free, dim2), (NULL_DIM,), a[a_free], NR)
        builder.add_factor((a_contracting, NULL_DIM), (dim2,), a[a_contracting], NR)
    return builder.build()


@register("stablehlo.batch_norm_inference")
def batch_norm_inference_rule(op: Op, conservative: bool) -> OpShardingRule:
    """``([i, j], [j], [j], [j], [j])->([i, j])`` for feature_index 1: each element is
    normalized with the statistics of its feature, so every dim passes through."""
    feature = int_attr(op, "feature_index")
    num_operands = len(op.operands)
    builder = OpShardingRuleBuilder.for_op(op)
    for dim, size in enumerate(operand_shape(op)):
        stats_dim = 0 if dim == feature else NULL_DIM
        builder.add_factor((dim,) + (stats_dim,) * (num_operands - 1), (dim,), size)
    return builder.build()
