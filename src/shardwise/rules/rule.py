"""`OpShardingRule`: an op described as factors (Shardy `OpShardingRuleAttr`).

Each factor is an abstract dimension of the op's iteration space with a size; every operand
and result maps each of its dimensions to a list of factors (major to minor; more than one
for a reshape's compound dimension). Factors are pass-through unless listed as reduction,
need-replication or permutation (mutually exclusive); blocked propagation is orthogonal.

Text: ``#sdy.op_sharding_rule<([i, k], [k, j])->([i, j]) {i=8, j=16, k=32} reduction={k}>``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from shardwise.hashing import cached_hash

__all__ = ["FactorType", "OpShardingRule", "factor_symbol", "TensorMapping", "DimMapping"]

# A dimension's factors, major to minor; a tensor's dimensions.
DimMapping = tuple[int, ...]
TensorMapping = tuple[DimMapping, ...]

# Factors 0..17 print as the letters i..z, then z_1, z_2, ... (Shardy's kStartAtZ = 17).
_LETTERS = "ijklmnopqrstuvwxyz"


def factor_symbol(index: int) -> str:
    if index < len(_LETTERS):
        return _LETTERS[index]
    return f"z_{index - len(_LETTERS) + 1}"


class FactorType(enum.IntEnum):
    PASS_THROUGH = 0
    REDUCTION = 1
    NEED_REPLICATION = 2
    PERMUTATION = 3


@dataclass(frozen=True, slots=True)
class OpShardingRule:
    factor_sizes: tuple[int, ...]
    operand_mappings: tuple[TensorMapping, ...]
    result_mappings: tuple[TensorMapping, ...]
    reduction_factors: tuple[int, ...] = ()
    need_replication_factors: tuple[int, ...] = ()
    permutation_factors: tuple[int, ...] = ()
    blocked_propagation_factors: tuple[int, ...] = ()
    is_custom_rule: bool = False
    # Computed on first use: a rule is part of the memoized propagation step's key.
    _hash: int = field(default=0, init=False, repr=False, compare=False)

    __hash__ = cached_hash

    # -- text -------------------------------------------------------------------------------

    def __str__(self) -> str:
        def mapping(m: TensorMapping) -> str:
            return "[" + ", ".join("".join(factor_symbol(f) for f in dim) for dim in m) + "]"

        def group(ms: tuple[TensorMapping, ...]) -> str:
            return "(" + ", ".join(mapping(m) for m in ms) + ")"

        text = group(self.operand_mappings) + "->" + group(self.result_mappings)
        if self.factor_sizes:
            text += (
                " {"
                + ", ".join(f"{factor_symbol(i)}={s}" for i, s in enumerate(self.factor_sizes))
                + "}"
            )
        for label, factors in (
            ("reduction", self.reduction_factors),
            ("need_replication", self.need_replication_factors),
            ("permutation", self.permutation_factors),
            ("blocked_propagation", self.blocked_propagation_factors),
        ):
            if factors:
                text += f" {label}={{" + ", ".join(factor_symbol(f) for f in factors) + "}"
        if self.is_custom_rule:
            text += ", custom"
        return f"#sdy.op_sharding_rule<{text}>"

    # -- queries ----------------------------------------------------------------------------

    @property
    def num_factors(self) -> int:
        return len(self.factor_sizes)

    @property
    def tensor_mappings(self) -> tuple[TensorMapping, ...]:
        """Operands then results (Shardy's tensor index order)."""
        return self.operand_mappings + self.result_mappings

    @property
    def num_operands(self) -> int:
        return len(self.operand_mappings)

    def factor_type(self, factor: int) -> FactorType:
        if factor in self.reduction_factors:
            return FactorType.REDUCTION
        if factor in self.need_replication_factors:
            return FactorType.NEED_REPLICATION
        if factor in self.permutation_factors:
            return FactorType.PERMUTATION
        return FactorType.PASS_THROUGH

    def is_blocked(self, factor: int) -> bool:
        return factor in self.blocked_propagation_factors

    def is_factor_in_all_non_scalar_tensors(self, factor: int) -> bool:
        return all(any(factor in dim for dim in m) for m in self.tensor_mappings if len(m) > 0)

    def is_batching_factor(self, factor: int) -> bool:
        return self.factor_type(
            factor
        ) == FactorType.PASS_THROUGH and self.is_factor_in_all_non_scalar_tensors(factor)

    @property
    def has_dimensions_with_multiple_factors(self) -> bool:
        return any(len(dim) > 1 for m in self.tensor_mappings for dim in m)
