"""Ops that select or place parts of a tensor: slice, dynamic_slice, dynamic_update_slice, pad,
concatenate, reverse."""

from __future__ import annotations

from shardwise.ir import Op, Value
from shardwise.rules.builder import NULL_DIM, OpShardingRuleBuilder
from shardwise.rules.ops.common import i64_array_attr, int_attr, operand_shape, result_shape
from shardwise.rules.registry import register
from shardwise.rules.rule import FactorType, OpShardingRule

PT = FactorType.PASS_THROUGH
NR = FactorType.NEED_REPLICATION
P = FactorType.PERMUTATION

# Ops with MLIR's ConstantLike trait (plus `sdy.constant`): their value is known statically.
_CONSTANT_OPS = frozenset({"arith.constant", "mhlo.constant", "sdy.constant", "stablehlo.constant"})


@register("stablehlo.slice")
def slice_rule(op: Op, conservative: bool) -> OpShardingRule:
    """``([i, j])->([i, j]) permutation={j}`` when dim 1 is sliced (blocked if conservative).

    Static start indices tell how to shift data to keep a sliced dim sharded.
    """
    return (
        OpShardingRuleBuilder.for_op(op)
        .add_pointwise_with_diff_type_for_mismatch(
            operand_shape(op), result_shape(op), P, mismatch_blocked=conservative
        )
        .build()
    )


@register("stablehlo.pad")
def pad_rule(op: Op, conservative: bool) -> OpShardingRule:
    """``([i, j], [])->([i, j]) permutation={j}`` when dim 1 grows (blocked if conservative).

    Padding shifts data across shards; the scalar padding value is unmapped.
    """
    return (
        OpShardingRuleBuilder.for_op(op)
        .add_pointwise_with_diff_type_for_mismatch(
            operand_shape(op), result_shape(op), P, mismatch_blocked=conservative
        )
        .build()
    )


@register("stablehlo.dynamic_slice")
def dynamic_slice_rule(op: Op, conservative: bool) -> OpShardingRule:
    """``([i, j], [], [])->([i, j]) need_replication={i} blocked_propagation={i}`` (dim 0 sliced).

    The start indices are only known at run time, so a sliced dim must be replicated.
    """
    return (
        OpShardingRuleBuilder.for_op(op)
        .add_pointwise_with_diff_type_for_mismatch(
            operand_shape(op), result_shape(op), NR, mismatch_blocked=True
        )
        .build()
    )


def _is_constant(value: Value) -> bool:
    op = value.defining_op
    return op is not None and op.name in _CONSTANT_OPS


@register("stablehlo.dynamic_update_slice")
def dynamic_update_slice_rule(op: Op, conservative: bool) -> OpShardingRule:
    """``([i, j], [k, j], [], [])->([i, j]) need_replication={k}`` (dim 0 updated partially).

    Each device updates its local shard of the operand, so the operand dim passes through to
    the result while the update is replicated along it (pass-through if all starts constant).
    """
    operand, update = operand_shape(op, 0), operand_shape(op, 1)
    update_type = PT if all(_is_constant(v) for v in op.operands[2:]) else NR
    builder = OpShardingRuleBuilder.for_op(op)
    for dim, (operand_size, update_size) in enumerate(zip(operand, update, strict=True)):
        if operand_size == update_size:
            builder.add_factor_for_all(dim, operand_size)
            continue
        builder.add_factor((dim, NULL_DIM), (dim,), operand_size)
        builder.add_factor((NULL_DIM, dim), (NULL_DIM,), update_size, update_type)
    return builder.build()


@register("stablehlo.reverse")
def reverse_rule(op: Op, conservative: bool) -> OpShardingRule:
    """``([i, j])->([i, j]) permutation={j}`` for dims [1]: reversed shards swap places."""
    reversed_dims = i64_array_attr(op, "dimensions")
    return (
        OpShardingRuleBuilder.for_op(op)
        .add_pointwise(result_shape(op), lambda d: P if d in reversed_dims else PT)
        .build()
    )


def _source_before_slice(value: Value) -> Value:
    op = value.defining_op
    return op.operands[0] if op is not None and op.name == "stablehlo.slice" else value


def _is_slice(value: Value) -> bool:
    op = value.defining_op
    return op is not None and op.name == "stablehlo.slice"


def _concat_dim_type(op: Op) -> FactorType:
    """Permutation for concat(slice(a), slice(b)) or concat(slice(x), x, ...), else replication."""
    if all(_is_slice(v) for v in op.operands):
        return P
    source = _source_before_slice(op.operands[0])
    same_source = all(_source_before_slice(v) is source for v in op.operands)
    if same_source and any(_is_slice(v) for v in op.operands):
        return P
    return NR


@register("stablehlo.concatenate")
def concatenate_rule(op: Op, conservative: bool) -> OpShardingRule:
    """``([i, j], [i, j])->([i, j]) need_replication={i}`` for dim 0 (result-sized factor).

    Operands land at different offsets of the concat dim; in conservative mode it gets no factor.
    """
    concat_dim = int_attr(op, "dimension")
    return (
        OpShardingRuleBuilder.for_op(op)
        .add_pointwise_if(
            result_shape(op),
            lambda d: not conservative or d != concat_dim,
            lambda d: PT if d != concat_dim else _concat_dim_type(op),
        )
        .build()
    )
