"""The aggressive strategy (Shardy's `aggressive_factor_propagation`): step A of the basic
strategy for all factors on the untouched projection, then factors in preference order
(largest source tensor first), conflicts resolved per receiving tensor, results before
operands.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from shardwise.axis import (
    AxisRef,
    AxisSizes,
    PrefixStatus,
    is_axis_list_prefix_of,
)
from shardwise.propagation.basic_factor_propagation import (
    BasicFactorPropagation,
    compatible_prefix_no_conflicts_across_factors,
    compatible_prefix_no_conflicts_within_factor,
    truncate_axes_by_removing_conflicts,
)
from shardwise.propagation.factor_propagation import DirectionAlongFactor
from shardwise.propagation.projection import (
    Axes,
    ShardingProjection,
    TensorFactorShardings,
    UpdateTensorShardings,
    is_strict_prefix,
)

__all__ = [
    "AggressiveFactorPropagation",
]


@dataclass(frozen=True, slots=True)
class _Source:
    """The tensor a factor's candidate axes come from: the largest one holding them."""

    size: int = -1
    index: int = -1


class AggressiveFactorPropagation(BasicFactorPropagation):
    """Per-tensor conflict resolution with a factor preference order (Shardy
    `AggressiveFactorPropagation`).

    C = dot(A, B); F0 = A's non-contracting factor, F1 = B's, F2 contracting:

    | case                                   | basic        | aggressive            |
    | A/F0 = "a", C/F1 = "a"                 | nothing      | B/F1 gets "a"         |
    | A/F0 = "a", B/F1 = "a" (B larger)      | nothing      | C/F1 gets "a"         |
    """

    name = "aggressive"

    def propagate_factor_shardings(
        self,
        projection: ShardingProjection,
        direction_along_factor: DirectionAlongFactor,
        factor_sizes: Sequence[int],
        mesh: AxisSizes | None,
        conservative: bool = False,
        op_is_elementwise: bool = False,
    ) -> UpdateTensorShardings:
        """Shardy `AggressiveFactorPropagation::propagateFactorShardings`.

        Factor order: larger source tensor, then (elementwise ops only) larger candidate
        sharding, then smaller source tensor index, then smaller factor index.
        """
        axes_per_factor = [
            self.compatible_major_axes(projection, factor, direction_along_factor(factor))
            for factor in range(len(factor_sizes))
        ]
        updates = projection.no_updates()
        if not any(axes_per_factor):
            return updates
        order = _preferred_factor_order(
            projection, factor_sizes, axes_per_factor, mesh, op_is_elementwise
        )
        for index, tensor in enumerate(projection.results):
            updates.results[index] = self._propagate_to_tensor(
                tensor, order, axes_per_factor, factor_sizes, mesh, conservative, None
            )
        clip_to = projection.results if op_is_elementwise else None
        for index, tensor in enumerate(projection.operands):
            updates.operands[index] = self._propagate_to_tensor(
                tensor, order, axes_per_factor, factor_sizes, mesh, conservative, clip_to
            )
        return updates

    def _propagate_to_tensor(
        self,
        tensor: TensorFactorShardings,
        order: Sequence[int],
        axes_per_factor: Sequence[Axes],
        factor_sizes: Sequence[int],
        mesh: AxisSizes | None,
        conservative: bool,
        clip_to: Sequence[TensorFactorShardings] | None,
    ) -> bool:
        """Expand the tensor's factors in preference order; whether anything changed.

        `clip_to` (operands of elementwise ops): never give an operand more than a result
        holds when that result's axes are a strict prefix of the offer; sideways propagation
        into an operand is pointless if the result stays less sharded.
        """
        updated = False
        for factor in order:
            new_axes = self._propagated_factor_sharding(
                factor, tensor, axes_per_factor[factor], factor_sizes[factor], mesh, conservative
            )
            if not new_axes:
                continue
            for result in clip_to or ():
                sharding = result.get(factor)
                if sharding is not None and is_strict_prefix(sharding.axis_refs, new_axes):
                    new_axes = sharding.axis_refs
            updated |= tensor.expand_sharding_axes(factor, new_axes)
        return updated

    def _propagated_factor_sharding(
        self,
        factor: int,
        tensor: TensorFactorShardings,
        candidates: Axes,
        factor_size: int,
        mesh: AxisSizes | None,
        conservative: bool,
    ) -> Axes:
        """The axes this tensor takes for `factor` given the candidates.

        Shardy `AggressiveFactorPropagation::getPropagatedFactorSharding`: first the
        within-factor checks, then (if still an expansion) the across-factor checks against
        this tensor's live state, which includes expansions of factors preferred before.
        """
        sharding = tensor.get(factor)
        if sharding is None:
            return ()

        def within(axis: AxisRef, prev_size: int) -> AxisRef | None:
            return compatible_prefix_no_conflicts_within_factor(
                axis,
                tensor.replicated_axes,
                tensor.unreduced_axes,
                sharding,
                prev_size,
                factor_size,
                mesh,
            )

        new_axes = truncate_axes_by_removing_conflicts(candidates, within, mesh, conservative)
        if not is_strict_prefix(sharding.axis_refs, new_axes):
            return ()

        def across(axis: AxisRef, _prev_size: int) -> AxisRef | None:
            return compatible_prefix_no_conflicts_across_factors(axis, tensor, factor)

        return truncate_axes_by_removing_conflicts(new_axes, across, mesh, conservative)


def _factor_sources(
    projection: ShardingProjection,
    factor_sizes: Sequence[int],
    axes_per_factor: Sequence[Axes],
) -> list[_Source]:
    """Per factor, the largest tensor (earliest on ties) whose axes extend the candidates.

    Shardy `getFactorToSourceTensor`; a tensor's size is the product of its factors' sizes.
    """
    sources = [_Source()] * len(factor_sizes)
    for index, tensor in enumerate(projection.tensors()):
        size = math.prod(factor_sizes[f] for f in tensor.factor_index_to_sharding)
        for factor, sharding in tensor.factor_index_to_sharding.items():
            candidates = axes_per_factor[factor]
            if not candidates or size <= sources[factor].size:
                continue
            if is_axis_list_prefix_of(candidates, sharding.axis_refs) != PrefixStatus.NOT_A_PREFIX:
                sources[factor] = _Source(size, index)
    return sources


def _preferred_factor_order(
    projection: ShardingProjection,
    factor_sizes: Sequence[int],
    axes_per_factor: Sequence[Axes],
    mesh: AxisSizes | None,
    op_is_elementwise: bool,
) -> list[int]:
    """Factor indices sorted by (-source size, -candidate size if elementwise, source, index)."""
    sources = _factor_sources(projection, factor_sizes, axes_per_factor)

    def candidate_size(factor: int) -> int:
        if not op_is_elementwise:
            return 0
        assert mesh is not None, "elementwise preference needs the mesh's axis sizes"
        return math.prod(axis.size(mesh) for axis in axes_per_factor[factor])

    def key(factor: int) -> tuple[int, int, int, int]:
        source = sources[factor]
        return (-source.size, -candidate_size(factor), source.index, factor)

    return sorted(range(len(factor_sizes)), key=key)
