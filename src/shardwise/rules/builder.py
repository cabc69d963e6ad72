"""A fluent builder of `OpShardingRule`s (Shardy's `OpShardingRuleBuilder`).

A rule is built by adding factors one at a time; each new factor gets the next index and is
mapped to one dimension of some operands/results. Factor order is observable (propagation
walks factors by index and rules compare as text), so every rule adds its factors in exactly
Shardy's order.

Two mapping flavours exist, as in Shardy, and they differ on size-1 factors:

- `add_factor(operand_dims, result_dims, ...)` maps the listed dims (`NULL_DIM` skips a
  tensor) and does NOT add a size-1 factor to a dim that already has a factor;
- `add_factor_for_all(dim, ...)` (and the operands-only/results-only variants) maps the same
  dim of every tensor of rank >= 1 and always appends.

`build()` gives every dim still without a factor its own fresh size-1 factor, operands first,
then results, in dim order.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Self

from shardwise.ir import Op, TensorType, Type
from shardwise.rules.rule import FactorType, OpShardingRule, TensorMapping

__all__ = [
    "NULL_DIM",
    "OpShardingRuleBuilder",
    "build_pointwise",
    "create_identity_sharding_rule",
    "tensor_rank",
    "tensor_shape",
]

# A tensor that a factor does not map to (Shardy's `kNullDim`).
NULL_DIM = -1

FactorTypeFn = Callable[[int], FactorType]
# Per tensor, per dim: the factor indices mapped so far (major to minor).
_Mappings = list[list[list[int]]]


def _pass_through(_dim: int) -> FactorType:
    return FactorType.PASS_THROUGH


def tensor_shape(type_: Type) -> tuple[int, ...]:
    """The shape of a ranked tensor; non-tensor types (tokens, tuples) are rank 0."""
    return type_.shape if isinstance(type_, TensorType) else ()


def tensor_rank(type_: Type) -> int:
    return len(tensor_shape(type_))


class OpShardingRuleBuilder:
    """Accumulates factors for one op; `build()` returns the immutable rule."""

    def __init__(self, operand_types: Sequence[Type], result_types: Sequence[Type]) -> None:
        self._factor_sizes: list[int] = []
        self._operands: _Mappings = [[[] for _ in range(tensor_rank(t))] for t in operand_types]
        self._results: _Mappings = [[[] for _ in range(tensor_rank(t))] for t in result_types]
        self._typed: dict[FactorType, list[int]] = {t: [] for t in FactorType}
        self._blocked: list[int] = []

    @classmethod
    def for_op(cls, op: Op) -> Self:
        return cls([v.type for v in op.operands], [v.type for v in op.results])

    # -- adding factors -----------------------------------------------------------------------

    def _reserve(self, size: int, factor_type: FactorType, blocked: bool) -> int:
        index = len(self._factor_sizes)
        self._factor_sizes.append(size)
        self._typed[factor_type].append(index)
        if blocked:
            self._blocked.append(index)
        return index

    def add_factor(
        self,
        operand_dims: Sequence[int],
        result_dims: Sequence[int],
        size: int,
        factor_type: FactorType = FactorType.PASS_THROUGH,
        blocked: bool = False,
    ) -> Self:
        """A new factor on dim `operand_dims[k]` of operand k and `result_dims[k]` of result k.

        `NULL_DIM` skips a tensor. A size-1 factor is not added to a dim that already has a
        factor. Like Shardy's release build, extra entries are ignored and missing ones skip.
        """
        index = self._reserve(size, factor_type, blocked)
        for tensors, dims in ((self._operands, operand_dims), (self._results, result_dims)):
            for mapping, dim in zip(tensors, dims, strict=False):
                if dim == NULL_DIM or (size == 1 and mapping[dim]):
                    continue
                mapping[dim].append(index)
        return self

    def _add_same_dim(
        self,
        sides: tuple[_Mappings, ...],
        dim: int,
        size: int,
        factor_type: FactorType,
        blocked: bool,
    ) -> Self:
        index = self._reserve(size, factor_type, blocked)
        for tensors in sides:
            for mapping in tensors:
                if mapping:  # rank-0 tensors are skipped
                    mapping[dim].append(index)
        return self

    def add_factor_for_all(
        self,
        dim: int,
        size: int,
        factor_type: FactorType = FactorType.PASS_THROUGH,
        blocked: bool = False,
    ) -> Self:
        """A new factor on `dim` of every operand and result of rank >= 1."""
        return self._add_same_dim((self._operands, self._results), dim, size, factor_type, blocked)

    def add_factor_for_all_operands(
        self,
        dim: int,
        size: int,
        factor_type: FactorType = FactorType.PASS_THROUGH,
        blocked: bool = False,
    ) -> Self:
        """A new factor on `dim` of every operand of rank >= 1 (no result)."""
        return self._add_same_dim((self._operands,), dim, size, factor_type, blocked)

    def add_factor_for_all_results(
        self,
        dim: int,
        size: int,
        factor_type: FactorType = FactorType.PASS_THROUGH,
        blocked: bool = False,
    ) -> Self:
        """A new factor on `dim` of every result of rank >= 1 (no operand)."""
        return self._add_same_dim((self._results,), dim, size, factor_type, blocked)

    def add_pointwise(
        self,
        shape: Sequence[int],
        factor_type: FactorTypeFn = _pass_through,
        blocked: bool | Callable[[FactorType], bool] = False,
    ) -> Self:
        """One `add_factor_for_all(dim, shape[dim])` per dim; types/blocking per dim."""
        for dim, size in enumerate(shape):
            type_ = factor_type(dim)
            is_blocked = blocked(type_) if callable(blocked) else blocked
            self.add_factor_for_all(dim, size, type_, is_blocked)
        return self

    def add_pointwise_if(
        self,
        shape: Sequence[int],
        pred: Callable[[int], bool],
        factor_type: FactorTypeFn = _pass_through,
    ) -> Self:
        """Like `add_pointwise`, only for the dims satisfying `pred`."""
        for dim, size in enumerate(shape):
            if pred(dim):
                self.add_factor_for_all(dim, size, factor_type(dim))
        return self

    def add_pointwise_with_diff_type_for_mismatch(
        self,
        in_shape: Sequence[int],
        out_shape: Sequence[int],
        mismatch_type: FactorType = FactorType.NEED_REPLICATION,
        mismatch_blocked: bool = False,
    ) -> Self:
        """Pointwise over `in_shape`; a dim whose size differs in `out_shape` is typed/blocked."""
        for dim, (in_size, out_size) in enumerate(zip(in_shape, out_shape, strict=True)):
            if in_size == out_size:
                self.add_factor_for_all(dim, in_size)
            else:
                self.add_factor_for_all(dim, in_size, mismatch_type, mismatch_blocked)
        return self

    # -- building -----------------------------------------------------------------------------

    def build(self) -> OpShardingRule:
        """The rule; dims without a factor get fresh size-1 factors. The builder is unchanged."""
        sizes = list(self._factor_sizes)

        def freeze(tensors: _Mappings) -> tuple[TensorMapping, ...]:
            frozen = []
            for mapping in tensors:
                dims = []
                for factors in mapping:
                    if not factors:
                        factors = [len(sizes)]
                        sizes.append(1)
                    dims.append(tuple(factors))
                frozen.append(tuple(dims))
            return tuple(frozen)

        operands = freeze(self._operands)
        results = freeze(self._results)
        return OpShardingRule(
            factor_sizes=tuple(sizes),
            operand_mappings=operands,
            result_mappings=results,
            reduction_factors=tuple(self._typed[FactorType.REDUCTION]),
            need_replication_factors=tuple(self._typed[FactorType.NEED_REPLICATION]),
            permutation_factors=tuple(self._typed[FactorType.PERMUTATION]),
            blocked_propagation_factors=tuple(self._blocked),
        )


def build_pointwise(op: Op) -> OpShardingRule | None:
    """Factor i = dim i of the first result, shared by every dim i of every tensor.

    No rule when the op has no result or its first result is not a ranked tensor.
    """
    if not op.results or not isinstance(op.results[0].type, TensorType):
        return None
    return _pointwise_rule(tuple(v.type for v in op.operands), tuple(v.type for v in op.results))


@functools.lru_cache(maxsize=4096)
def _pointwise_rule(operand_types: tuple, result_types: tuple) -> OpShardingRule:
    """Built once per type signature (a deep model repeats a few signatures thousands of times);
    the rule is a frozen value, so ops can share it."""
    builder = OpShardingRuleBuilder(list(operand_types), list(result_types))
    builder._factor_sizes = list(result_types[0].shape)
    for mapping in builder._operands + builder._results:
        for dim, factors in enumerate(mapping):
            factors.append(dim)
    return builder.build()


@functools.lru_cache(maxsize=1024)
def create_identity_sharding_rule(
    type_: TensorType, num_operands: int = 1, num_results: int = 1
) -> OpShardingRule:
    """`createIdentityShardingRule`: one pass-through factor per dim shared by every tensor
    (`num_operands` -> `num_results` tensors of `type_`; the rule `add_pointwise` builds).

    One shared rule per arguments: propagation builds it for every data-flow edge, barrier and
    func result in every round, and a shared rule keeps its hash (a key of the memoized step)."""
    mapping = tuple((d,) for d in range(type_.rank))
    return OpShardingRule(
        factor_sizes=tuple(type_.shape),
        operand_mappings=(mapping,) * num_operands,
        result_mappings=(mapping,) * num_results,
    )
