"""Factor propagation: the interface of both strategies and the memoized step (Shardy's
`factor_propagation.h`).

A strategy (`basic_factor_propagation`, `aggressive_factor_propagation`) takes a
`ShardingProjection`, mutates it in place and returns which tensors changed;
`propagate_op_shardings` is one step of one op, a pure function of frozen values (cached).

`mesh` may be None, as in Shardy's C++ unit tests: divisibility is then not checked.
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Callable, Sequence

from shardwise.axis import (
    AxisSizes,
)
from shardwise.propagation.projection import (
    ShardingProjection,
    TensorFactorShardings,
    UpdateTensorShardings,
)
from shardwise.rules.rule import OpShardingRule, TensorMapping
from shardwise.sharding import TensorSharding, interned

__all__ = [
    "PropagationDirection",
    "DirectionAlongFactor",
    "FactorPropagation",
    "propagate_anything",
    "propagate_op_shardings",
    "new_tensor_shardings",
]


class PropagationDirection(enum.IntEnum):
    """Which tensors may contribute axes (Shardy `PropagationDirection`)."""

    NONE = 0
    FORWARD = 1
    BACKWARD = 2
    BOTH = 3


DirectionAlongFactor = Callable[[int], PropagationDirection]


def propagate_anything(_factor: int) -> PropagationDirection:
    """The direction function of the basic pass: BOTH for every factor."""
    return PropagationDirection.BOTH


class FactorPropagation:
    """A strategy growing factor shardings (Shardy `FactorPropagation`).

    Strategies are stateless: two instances of one class are equal (and hash alike), so they
    can be part of a cache key.
    """

    name = "abstract"

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other)

    def __hash__(self) -> int:
        return hash(type(self))

    def propagate_factor_shardings(
        self,
        projection: ShardingProjection,
        direction_along_factor: DirectionAlongFactor,
        factor_sizes: Sequence[int],
        mesh: AxisSizes | None,
        conservative: bool = False,
        op_is_elementwise: bool = False,
    ) -> UpdateTensorShardings:
        """Mutate `projection` and return which tensors changed."""
        raise NotImplementedError


NewShardings = tuple[TensorSharding | None, ...]


@functools.lru_cache(maxsize=1 << 16)
def propagate_op_shardings(
    strategy: FactorPropagation,
    rule: OpShardingRule,
    operand_shardings: tuple[TensorSharding | None, ...],
    result_shardings: tuple[TensorSharding | None, ...],
    mesh_name: str,
    mesh: AxisSizes,
    directions: tuple[PropagationDirection, ...],
    conservative: bool = False,
    op_is_elementwise: bool = False,
) -> tuple[NewShardings, NewShardings]:
    """Project, propagate and project back one op's shardings; memoized.

    The core of Shardy's `propagateTensorShardings` (steps 3-6 of shardy-notes 5.2) minus the
    writes: `directions[f]` is the effective direction of factor f (NONE for blocked factors).
    Returns the new sharding of every operand and result whose update bit is set, None for the
    others; the caller still drops a new sharding equal to the old one, or with no axes at all
    where the value had none. Every argument is a frozen value, so results are cached.
    """
    projection = ShardingProjection.build(operand_shardings, result_shardings, rule, mesh)
    updates = strategy.propagate_factor_shardings(
        projection, directions.__getitem__, rule.factor_sizes, mesh, conservative, op_is_elementwise
    )
    return new_tensor_shardings(projection, updates, rule, mesh_name, mesh)


def new_tensor_shardings(
    projection: ShardingProjection,
    updates: UpdateTensorShardings,
    rule: OpShardingRule,
    mesh_name: str,
    mesh: AxisSizes,
) -> tuple[NewShardings, NewShardings]:
    """The inverse projection of every updated tensor (None for the others)."""

    def new(
        tensors: Sequence[TensorFactorShardings],
        mappings: Sequence[TensorMapping],
        bits: Sequence[bool],
    ) -> NewShardings:
        return tuple(
            interned(t.create_tensor_sharding(m, rule.factor_sizes, mesh_name, mesh))
            if bit
            else None
            for t, m, bit in zip(tensors, mappings, bits, strict=True)
        )

    return (
        new(projection.operands, rule.operand_mappings, updates.operands),
        new(projection.results, rule.result_mappings, updates.results),
    )
