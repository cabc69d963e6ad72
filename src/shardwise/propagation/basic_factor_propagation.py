"""The basic strategy (Shardy's `basic_factor_propagation`), per factor in index order:

A. candidates = the compatible major axes of the factor over the tensors allowed to contribute
   (operands for FORWARD, results for BACKWARD, all for BOTH; the others can only cut);
B. cut the candidates at the first axis that conflicts in ANY tensor (used by another factor,
   replicated, unreduced, closed factor, overflow, divisibility);
C. every tensor whose axes for the factor are a strict prefix of the candidates adopts them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from shardwise.axis import (
    AxisRef,
    AxisSizes,
    SubAxisInfo,
    prefix_without_overlap_with_list,
)
from shardwise.propagation.factor_propagation import (
    DirectionAlongFactor,
    FactorPropagation,
    PropagationDirection,
)
from shardwise.propagation.projection import (
    Axes,
    FactorSharding,
    ShardingProjection,
    TensorFactorShardings,
    UpdateTensorShardings,
)

__all__ = [
    "BasicFactorPropagation",
    "merge_compatible_major_axes",
    "truncate_axes_by_removing_conflicts",
    "compatible_prefix_no_conflicts_across_factors",
    "compatible_prefix_no_conflicts_within_factor",
]


# Given a candidate axis and the size of the candidates before it, the part of the axis that
# survives a conflict check (None if nothing does).
RemoveConflicts = Callable[[AxisRef, int], AxisRef | None]


def merge_compatible_major_axes(
    old: Sequence[AxisRef], new: Sequence[AxisRef], can_expand: bool
) -> tuple[Axes, bool]:
    """The compatible major axes of `old` and `new`, and whether later lists may still extend.

    Shardy `getCompatibleMajorAxesInternal`. With `can_expand` false the result is at most
    `old`.

    | old              | new              | can_expand | result                   |
    | ``["a"]``        | ``["a", "b"]``   | True       | ``["a", "b"]``, True     |
    | ``["a", "b"]``   | ``["a", "c"]``   | True       | ``["a"]``, False         |
    | ``["a":(1)2]``   | ``["a":(1)4]``   | True       | ``["a":(1)4]``, True     |
    | ``["a":(1)2, "b"]`` | ``["a":(1)4, "b"]`` | True  | ``["a":(1)2]``, False    |
    | ``["a"]``        | ``["a", "b"]``   | False      | ``["a"]``, False         |
    | ``["a", "b"]``   | ``["a"]``        | False      | ``["a", "b"]``, False    |
    | ``["a":(1)2]``   | ``["a":(1)4]``   | False      | ``["a":(1)2]``, False    |
    """
    result: list[AxisRef] = []
    for i, (old_axis, new_axis) in enumerate(zip(old, new, strict=False)):
        old_has_more, new_has_more = i + 1 < len(old), i + 1 < len(new)
        if old_axis.name != new_axis.name:
            return tuple(result), False
        if old_axis == new_axis:
            result.append(new_axis)
        elif new_axis.prefix_of(old_axis):
            if new_has_more:  # the next new axis would conflict (it cannot be mergeable)
                result.append(new_axis)
                return tuple(result), False
            result.append(old_axis)
        elif old_axis.prefix_of(new_axis):
            if not can_expand or old_has_more:
                result.append(old_axis)
                return tuple(result), False
            result.append(new_axis)
        else:
            return tuple(result), False
    common = min(len(old), len(new))
    result.extend(old[common:])
    if can_expand:
        result.extend(new[common:])
    return tuple(result), can_expand


def truncate_axes_by_removing_conflicts(
    axes: Sequence[AxisRef],
    remove_conflicts: RemoveConflicts,
    mesh: AxisSizes | None,
    conservative: bool,
) -> Axes:
    """Cut `axes` at the first axis that `remove_conflicts` shrinks or rejects.

    Shardy `BasicFactorPropagation::truncateAxesByRemovingConflicts`. A shrunk axis is kept
    as the last element; a rejected one (or, when `conservative`, any surviving sub-axis) is
    dropped with everything after it. `remove_conflicts` also gets the product of the sizes of
    the axes accepted before (1 when `mesh` is None).
    """
    prev_size = 1
    for index, axis in enumerate(axes):
        new_axis = remove_conflicts(axis, prev_size)
        if new_axis is None or (conservative and new_axis.is_sub_axis):
            return tuple(axes[:index])
        if new_axis != axis:
            return (*axes[:index], new_axis)
        if mesh is not None:
            prev_size *= new_axis.size(mesh)
    return tuple(axes)


def compatible_prefix_no_conflicts_across_factors(
    axis: AxisRef, tensor: TensorFactorShardings, factor: int
) -> AxisRef | None:
    """The longest prefix of `axis` overlapping no axis or overflow axis of another factor.

    Shardy `BasicFactorPropagation::compatiblePrefixNoConflictsAcrossFactors`.
    """
    result = axis
    for other, sharding in tensor.factor_index_to_sharding.items():
        if other == factor:
            continue
        for others in (sharding.overflow_axes, sharding.axis_refs):
            prefix = prefix_without_overlap_with_list(result, others)
            if prefix is None:
                return None
            result = prefix
    return result


def compatible_prefix_no_conflicts_within_factor(
    axis: AxisRef,
    replicated_axes: Sequence[AxisRef],
    unreduced_axes: Sequence[AxisRef],
    sharding: FactorSharding,
    prev_size: int,
    factor_size: int,
    mesh: AxisSizes | None,
) -> AxisRef | None:
    """The longest prefix of `axis` that this tensor's factor can take.

    Shardy `BasicFactorPropagation::compatiblePrefixNoConflictsWithinFactor`: not replicated,
    not unreduced; fine if the factor already has it; else the factor must be open without
    overflow, and either minor-most or with room for it: the gcd of the size left
    (``factor_size / prev_size``) and the axis size, possibly a sub-axis. Failing that, the
    factor's own last axis if it is a prefix of `axis`.
    """
    result = prefix_without_overlap_with_list(axis, replicated_axes)
    if result is None:
        return None
    result = prefix_without_overlap_with_list(result, unreduced_axes)
    if result is None:
        return None
    if any(existing.contains(result) for existing in sharding.axis_refs):
        return result
    if not sharding.is_closed and not sharding.overflow_axes:
        fitting = _fitting_prefix(result, sharding, prev_size, factor_size, mesh)
        if fitting is not None:
            return fitting
    if sharding.axis_refs and sharding.axis_refs[-1].prefix_of(result):
        return sharding.axis_refs[-1]
    return None


def _fitting_prefix(
    axis: AxisRef,
    sharding: FactorSharding,
    prev_size: int,
    factor_size: int,
    mesh: AxisSizes | None,
) -> AxisRef | None:
    """The prefix of `axis` that keeps a non-minor-most factor evenly divided."""
    if sharding.is_minor_most or mesh is None:
        return axis
    if factor_size % prev_size != 0:
        return None
    axis_size = axis.size(mesh)
    gcd = math.gcd(factor_size // prev_size, axis_size)
    if gcd == axis_size:
        return axis
    if gcd == 1:
        return None
    return AxisRef(axis.name, SubAxisInfo(axis.pre_size, gcd))


class BasicFactorPropagation(FactorPropagation):
    """Same axes for every tensor of a factor; factors in index order (Shardy
    `BasicFactorPropagation`)."""

    name = "basic"

    def propagate_factor_shardings(
        self,
        projection: ShardingProjection,
        direction_along_factor: DirectionAlongFactor,
        factor_sizes: Sequence[int],
        mesh: AxisSizes | None,
        conservative: bool = False,
        op_is_elementwise: bool = False,
    ) -> UpdateTensorShardings:
        """Shardy `BasicFactorPropagation::propagateFactorShardings`.

        Each factor sees the expansions already made for the factors before it.
        """
        updates = projection.no_updates()
        for factor, factor_size in enumerate(factor_sizes):
            axes = self.compatible_major_sharding_axes(
                projection,
                factor,
                direction_along_factor(factor),
                factor_size,
                mesh,
                conservative,
            )
            updates |= projection.expand_sharding(factor, axes)
        return updates

    def compatible_major_axes(
        self, projection: ShardingProjection, factor: int, direction: PropagationDirection
    ) -> Axes:
        """Step A: the longest axes prefix the contributing tensors agree on, cut by the others.

        Shardy `BasicFactorPropagation::getCompatibleMajorAxes` (conflicts across factors,
        replicated axes etc. are not considered here).
        """
        if direction == PropagationDirection.NONE:
            return ()
        contributors, limiters = projection.operands, projection.results
        if direction == PropagationDirection.BACKWARD:  # getDirectionBasedTensorShardings
            contributors, limiters = limiters, contributors
        axes: Axes = ()
        can_expand = True
        for tensor in contributors:
            sharding = tensor.get(factor)
            if sharding is not None:
                axes, can_expand = merge_compatible_major_axes(axes, sharding.axis_refs, can_expand)
        if direction != PropagationDirection.BOTH:
            can_expand = False
        for tensor in limiters:
            sharding = tensor.get(factor)
            if sharding is not None:
                axes, can_expand = merge_compatible_major_axes(axes, sharding.axis_refs, can_expand)
        return axes

    def compatible_prefix(
        self,
        axis: AxisRef,
        tensor: TensorFactorShardings,
        factor: int,
        prev_size: int,
        factor_size: int,
        mesh: AxisSizes | None,
    ) -> AxisRef | None:
        """The part of `axis` one tensor accepts for `factor` (Shardy `compatiblePrefix`).

        A tensor without the factor only forbids axes its other factors use.
        """
        result = compatible_prefix_no_conflicts_across_factors(axis, tensor, factor)
        sharding = tensor.get(factor)
        if result is None or sharding is None:
            return result
        return compatible_prefix_no_conflicts_within_factor(
            result,
            tensor.replicated_axes,
            tensor.unreduced_axes,
            sharding,
            prev_size,
            factor_size,
            mesh,
        )

    def compatible_major_sharding_axes(
        self,
        projection: ShardingProjection,
        factor: int,
        direction: PropagationDirection,
        factor_size: int,
        mesh: AxisSizes | None,
        conservative: bool,
    ) -> Axes:
        """Steps A and B: what every tensor of the factor can take.

        Shardy `BasicFactorPropagation::getCompatibleMajorShardingAxes`. Given factor shardings
        (direction BOTH, no other conflicts):

        | factor shardings                                    | result              |
        | ``["a", "b"]``, ``["a", "c"]``                      | ``["a"]``           |
        | ``["a"]``, ``[]``, ``["a", "b", "c"]``, ``["a", "b", "d"]`` | ``["a", "b"]` |
        | ``["a":(1)2]``, ``["a":(1)4]``                      | ``["a":(1)4]``      |
        | ``["a":(1)2, "b"]``, ``["a":(1)4]``                 | ``["a":(1)2]``      |
        """
        axes = self.compatible_major_axes(projection, factor, direction)

        def remove_conflicts(axis: AxisRef, prev_size: int) -> AxisRef | None:
            result = axis
            for tensor in projection.tensors():
                prefix = self.compatible_prefix(
                    result, tensor, factor, prev_size, factor_size, mesh
                )
                if prefix is None:
                    return None
                result = prefix
            return result

        return truncate_axes_by_removing_conflicts(axes, remove_conflicts, mesh, conservative)
