"""Factor propagation: growing factor shardings across one op's tensors.

Shardy's `factor_propagation.h`, `basic_factor_propagation` and
`aggressive_factor_propagation`. Both strategies take a `ShardingProjection`, mutate it in
place and return which tensors changed.

Basic (`BasicFactorPropagation`), per factor in index order:

A. candidates = the compatible major axes of the factor over the tensors allowed to contribute
   (operands for FORWARD, results for BACKWARD, all for BOTH; the others can only cut);
B. cut the candidates at the first axis that conflicts in ANY tensor (used by another factor,
   replicated, unreduced, closed factor, overflow, divisibility);
C. every tensor whose axes for the factor are a strict prefix of the candidates adopts them.

Aggressive (`AggressiveFactorPropagation`): step A for all factors on the untouched projection,
then factors in preference order (largest source tensor first), conflicts resolved per
receiving tensor, results before operands.

`mesh` may be None, as in Shardy's C++ unit tests: divisibility is then not checked.
"""

from __future__ import annotations

import enum
import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from shardwise.axis import (
    AxisRef,
    AxisSizes,
    PrefixStatus,
    SubAxisInfo,
    is_axis_list_prefix_of,
    prefix_without_overlap_with_list,
)
from shardwise.propagation.projection import (
    Axes,
    FactorSharding,
    ShardingProjection,
    TensorFactorShardings,
    UpdateTensorShardings,
    is_strict_prefix,
)
from shardwise.rules.rule import OpShardingRule, TensorMapping
from shardwise.sharding import TensorSharding, interned

__all__ = [
    "PropagationDirection",
    "DirectionAlongFactor",
    "FactorPropagation",
    "BasicFactorPropagation",
    "AggressiveFactorPropagation",
    "merge_compatible_major_axes",
    "truncate_axes_by_removing_conflicts",
    "compatible_prefix_no_conflicts_across_factors",
    "compatible_prefix_no_conflicts_within_factor",
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

# Given a candidate axis and the size of the candidates before it, the part of the axis that
# survives a conflict check (None if nothing does).
RemoveConflicts = Callable[[AxisRef, int], AxisRef | None]


def propagate_anything(_factor: int) -> PropagationDirection:
    """The direction function of the basic pass: BOTH for every factor."""
    return PropagationDirection.BOTH


# -- step A: compatible major axes ignoring conflicts -------------------------------------------


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


# -- step B: removing conflicts -----------------------------------------------------------------


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


# -- the strategies -----------------------------------------------------------------------------


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


# -- one op, as a pure function of frozen values -------------------------------------------------

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
