"""Ops that move or regroup dimensions: transpose, broadcast_in_dim, reshape, bitcast_convert."""

from __future__ import annotations

import functools
import math

from shardwise.ir import Op
from shardwise.rules.builder import NULL_DIM, OpShardingRuleBuilder, tensor_shape
from shardwise.rules.ops.common import i64_array_attr, operand_shape, result_shape
from shardwise.rules.registry import register
from shardwise.rules.rule import FactorType, OpShardingRule


@register("stablehlo.transpose")
def transpose_rule(op: Op, conservative: bool) -> OpShardingRule:
    """``([j, i])->([i, j])`` for permutation [1, 0]: result dim d is operand dim perm[d]."""
    in_shape = operand_shape(op)
    builder = OpShardingRuleBuilder.for_op(op)
    for out_dim, in_dim in enumerate(i64_array_attr(op, "permutation")):
        builder.add_factor((in_dim,), (out_dim,), in_shape[in_dim])
    return builder.build()


@register("stablehlo.broadcast_in_dim")
def broadcast_in_dim_rule(op: Op, conservative: bool) -> OpShardingRule:
    """``([i, k])->([i, j, k])`` for dims [0, 2]: new dims and expanded size-1 dims are result-only.

    An operand dim of size 1 expanded in place gets its own size-1 factor first.
    """
    return _broadcast_in_dim_rule(
        tuple(v.type for v in op.operands),
        tuple(v.type for v in op.results),
        tuple(i64_array_attr(op, "broadcast_dimensions")),
    )


@functools.lru_cache(maxsize=4096)
def _broadcast_in_dim_rule(
    operand_types: tuple, result_types: tuple, dims: tuple[int, ...]
) -> OpShardingRule:
    """Built once per signature (deep models repeat a few thousand times); rules are frozen."""
    in_shape = tensor_shape(operand_types[0])
    out_to_in = dict((out_dim, in_dim) for in_dim, out_dim in enumerate(dims))
    builder = OpShardingRuleBuilder(list(operand_types), list(result_types))
    for out_dim, out_size in enumerate(tensor_shape(result_types[0])):
        in_dim = out_to_in.get(out_dim, NULL_DIM)
        if in_dim != NULL_DIM and in_shape[in_dim] == 1 and out_size != 1:
            builder.add_factor((in_dim,), (NULL_DIM,), 1)
            in_dim = NULL_DIM
        builder.add_factor((in_dim,), (out_dim,), out_size)
    return builder.build()


@register("stablehlo.bitcast_convert")
def bitcast_convert_rule(op: Op, conservative: bool) -> OpShardingRule:
    """``([i, j])->([i, j, k]) need_replication={k}`` (f64 -> 2 x f32): the extra minor dim.

    The extra minor dim of the narrower element type holds the bits of one element.
    """
    in_shape, out_shape = operand_shape(op), result_shape(op)
    builder = OpShardingRuleBuilder.for_op(op)
    builder.add_pointwise(in_shape if len(in_shape) < len(out_shape) else out_shape)
    if len(in_shape) < len(out_shape):
        builder.add_factor(
            (NULL_DIM,), (len(out_shape) - 1,), out_shape[-1], FactorType.NEED_REPLICATION
        )
    elif len(in_shape) > len(out_shape):
        builder.add_factor(
            (len(in_shape) - 1,), (NULL_DIM,), in_shape[-1], FactorType.NEED_REPLICATION
        )
    return builder.build()


class _ReshapeCursor:
    """One side of a reshape: the current dim and running products of dims and factors."""

    def __init__(self, shape: tuple[int, ...]) -> None:
        self.shape = shape
        self.dim = 0
        self.dims_product = 1
        self.factors_product = 1

    @property
    def open(self) -> bool:
        return self.dim < len(self.shape)

    def open_next_dim(self) -> None:
        if self.open and self.dims_product == self.factors_product:
            self.dims_product *= self.shape[self.dim]

    @property
    def remaining(self) -> int:
        return self.dims_product // self.factors_product

    def advance_if_done(self) -> None:
        if self.open and self.dims_product == self.factors_product:
            self.dim += 1


def _converging_factor(remaining: int, behind: int, ahead: int, gcd: int) -> int:
    """The next factor for the side that lags: close the gap if it divides, else keep the gcd."""
    if ahead % behind == 0 and remaining % (ahead // behind) == 0:
        return ahead // behind
    if remaining > gcd:
        return remaining // gcd
    return remaining


def _reshape_step(builder: OpShardingRuleBuilder, a: _ReshapeCursor, b: _ReshapeCursor) -> None:
    """Add the next factor(s) for input cursor `a` and output cursor `b`."""
    gcd = math.gcd(a.remaining, b.remaining)
    if a.factors_product == b.factors_product:
        if gcd > 1:
            builder.add_factor((a.dim,), (b.dim,), gcd)
            a.factors_product *= gcd
            b.factors_product *= gcd
            return
        size_in, size_out = a.remaining, b.remaining
        builder.add_factor((a.dim,), (NULL_DIM,), size_in)
        a.factors_product *= size_in
        builder.add_factor((NULL_DIM,), (b.dim,), size_out)
        b.factors_product *= size_out
    elif a.factors_product < b.factors_product:
        size = _converging_factor(a.remaining, a.factors_product, b.factors_product, gcd)
        builder.add_factor((a.dim,), (NULL_DIM,), size)
        a.factors_product *= size
    else:
        size = _converging_factor(b.remaining, b.factors_product, a.factors_product, gcd)
        builder.add_factor((NULL_DIM,), (b.dim,), size)
        b.factors_product *= size


@register("stablehlo.reshape")
def reshape_rule(op: Op, conservative: bool) -> OpShardingRule | None:
    """``([ij, k, l])->([i, jk, l]) {i=2, j=4, k=4, l=5}`` for 8x4x5 -> 2x16x5.

    Dims are split into common factors (gcds) so that a sharding of a major part of a dim
    maps across; size-1 dims get their own size-1 factor. No rule for 0 elements.
    """
    in_shape, out_shape = operand_shape(op), result_shape(op)
    if math.prod(in_shape) == 0:
        return None
    if min(in_shape + out_shape, default=0) < 0:
        # Dynamic dims: the decomposition needs static sizes (and would not terminate).
        return None
    a, b = _ReshapeCursor(in_shape), _ReshapeCursor(out_shape)
    builder = OpShardingRuleBuilder.for_op(op)
    while a.open or b.open:
        if a.open and in_shape[a.dim] == 1:
            builder.add_factor((a.dim,), (NULL_DIM,), 1)
            a.dim += 1
            continue
        if b.open and out_shape[b.dim] == 1:
            builder.add_factor((NULL_DIM,), (b.dim,), 1)
            b.dim += 1
            continue
        a.open_next_dim()
        b.open_next_dim()
        _reshape_step(builder, a, b)
        a.advance_if_done()
        b.advance_if_done()
    return builder.build()
