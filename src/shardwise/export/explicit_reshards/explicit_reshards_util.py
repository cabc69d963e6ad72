"""Common axes per factor for `sdy-insert-explicit-reshards` (Shardy ``explicit_reshards_util``).

After propagation an op's tensors may shard a factor differently. `find_common_axes` picks
one axis list per factor that every tensor will be resharded to, in three steps:

1. already compatible (each factor sharded alike everywhere, need-replication factors
   unsharded, no axis on two factors): keep it;
2. exactly two non-scalar tensors, no need-replication factor, no compound dimension: keep
   the preferred tensor as is and cut the other tensor's remaining factors where they
   overlap it;
3. otherwise a greedy search over (factor, axes prefix) candidates, then axes chosen for
   need-replication factors move onto batching factors that have room.

Axis lists are tuples of `AxisRef` (Shardy's `AxisListRef` is a view of one; the operations
it needs are the small functions below).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from shardwise.axis import (
    AxisRef,
    SubAxisInfo,
    add_axis_or_merge,
    axes_size,
    lists_overlap,
    prefix_without_overlap_with_list,
    truncate_axes_by_removing_overlaps,
)
from shardwise.mesh import Mesh
from shardwise.propagation.projection import (
    Axes,
    FactorSharding,
    ShardingProjection,
    TensorFactorShardings,
    is_strict_prefix,
)
from shardwise.rules.rule import FactorType, OpShardingRule

__all__ = [
    "compatible_factor_sharding",
    "compatible_factor_shardings",
    "find_common_axes",
    "distribute_axes_across_factors",
]

# Candidates of a factor kind win ties on source size in this order (Shardy `precedence`).
_PRECEDENCE = {
    FactorType.PASS_THROUGH: 3,
    FactorType.REDUCTION: 2,
    FactorType.PERMUTATION: 1,
    FactorType.NEED_REPLICATION: 0,
}


def compatible_factor_sharding(projection: ShardingProjection, factor: int) -> Axes | None:
    """The axes every tensor having `factor` shards it with (``()`` if none has it), else None."""
    common: Axes | None = None
    for tensor in projection.tensors():
        sharding = tensor.get(factor)
        if sharding is None:
            continue
        if common is None:
            common = sharding.axis_refs
        elif common != sharding.axis_refs:
            return None
    return common if common is not None else ()


def compatible_factor_shardings(
    projection: ShardingProjection, rule: OpShardingRule
) -> list[Axes] | None:
    """Per factor the common axes if the shardings are already compatible with the rule.

    Compatible: every factor sharded alike on all tensors, need-replication factors
    unsharded, no axis used by two factors. None otherwise.
    """
    result: list[Axes] = [() for _ in range(rule.num_factors)]
    seen: list[AxisRef] = []
    for factor in range(rule.num_factors):
        axes = compatible_factor_sharding(projection, factor)
        if axes is None:
            return None
        if rule.factor_type(factor) == FactorType.NEED_REPLICATION:
            if axes:
                return None
            continue
        if lists_overlap(axes, seen):
            return None
        result[factor] = axes
        seen.extend(axes)
    return result


# -- axis lists (Shardy `AxisListRef`) ----------------------------------------------------------


def _list_key(axes: Axes) -> tuple:
    """`AxisListRef::operator<`: shorter lists first, then axis by axis."""
    return (len(axes), tuple(a.sort_key() for a in axes))


def _truncate_without_overlap(axes: Axes, other: Axes) -> Axes | None:
    """The longest prefix of `axes` not overlapping `other`; None if nothing was cut."""
    for i, axis in enumerate(axes):
        prefix = prefix_without_overlap_with_list(axis, other)
        if prefix != axis:
            return axes[:i] + ((prefix,) if prefix is not None else ())
    return None


# -- the greedy search ----------------------------------------------------------------------------


@dataclass(slots=True)
class _Candidate:
    """A (factor, axes) choice with what ranks it (Shardy `FactorAxesCandidate`)."""

    factor: int
    axes: Axes
    source_size: int
    precedence: int
    sharding_size: int

    def key(self) -> tuple:
        return (
            self.source_size,
            self.precedence,
            self.sharding_size,
            self.factor,
            _list_key(self.axes),
        )


def _factor_dependencies(rule: OpShardingRule) -> dict[int, set[int]]:
    """Factor -> the factors right before it in some compound dimension (must be full first)."""
    deps: dict[int, set[int]] = {}
    for mapping in rule.tensor_mappings:
        for dim in mapping:
            for before, factor in zip(dim, dim[1:], strict=False):
                deps.setdefault(factor, set()).add(before)
    return deps


def _initial_candidates(
    projection: ShardingProjection, rule: OpShardingRule, sizes: Sequence[int], mesh: Mesh
) -> list[_Candidate]:
    """Every (factor, whole-axis prefix) some tensor has, with the summed size of the tensors
    whose axes for that factor equal or extend it."""
    pairs: dict[tuple[int, Axes], None] = {}
    for tensor in projection.tensors():
        for factor, sharding in tensor.factor_index_to_sharding.items():
            axes = sharding.axis_refs
            while axes:
                pairs.setdefault((factor, axes))
                axes = axes[:-1]
    candidates = [
        _Candidate(f, axes, 0, _PRECEDENCE[rule.factor_type(f)], axes_size(axes, mesh))
        for f, axes in pairs
    ]
    for size, tensor in zip(sizes, projection.tensors(), strict=True):
        for factor, sharding in tensor.factor_index_to_sharding.items():
            source = sharding.axis_refs
            for c in candidates:
                if c.factor == factor and (c.axes == source or is_strict_prefix(c.axes, source)):
                    c.source_size += size
    return candidates


def _find_common_axes_greedy(
    projection: ShardingProjection, rule: OpShardingRule, sizes: Sequence[int], mesh: Mesh
) -> list[Axes]:
    """Repeatedly assign the best valid candidate; drop or trim the candidates it conflicts with.

    A candidate is valid once the factors before its factor in every compound dimension are
    fully sharded (anything else would need a strided view).
    """
    assigned: list[Axes] = [() for _ in range(rule.num_factors)]
    deps = _factor_dependencies(rule)
    candidates = _initial_candidates(projection, rule, sizes, mesh)
    while candidates:
        valid = [c for c in candidates if not deps.get(c.factor)]
        if not valid:
            break
        best = max(valid, key=_Candidate.key)
        factor, best_axes = best.factor, best.axes
        assigned[factor] = best_axes
        if axes_size(best_axes, mesh) == rule.factor_sizes[factor]:
            for before in deps.values():
                before.discard(factor)
        candidates = [
            c for c in candidates if _update_candidate(c, factor, best_axes, assigned, mesh)
        ]
    return assigned


def _update_candidate(
    c: _Candidate, factor: int, best_axes: Axes, assigned: list[Axes], mesh: Mesh
) -> bool:
    """Refresh `c` after `best_axes` went to `factor`; False if `c` is to be dropped."""
    if c.factor == factor:
        if not is_strict_prefix(best_axes, c.axes):
            return False
        c.sharding_size = axes_size(c.axes, mesh) // axes_size(best_axes, mesh)
        return True
    truncated = _truncate_without_overlap(c.axes, best_axes)
    if truncated is None:
        # Shardy recomputes the size without the factor's current assignment here.
        c.sharding_size = axes_size(c.axes, mesh)
        return True
    c.axes = truncated
    current = assigned[c.factor]
    if truncated == current:
        return False
    c.sharding_size = axes_size(truncated, mesh) // axes_size(current, mesh)
    return True


# -- two-tensor ops -------------------------------------------------------------------------------


def _non_scalar_tensors(rule: OpShardingRule) -> list[int]:
    return [i for i, mapping in enumerate(rule.tensor_mappings) if mapping]


def _has_sharded_permutation_factor(tensor: TensorFactorShardings, rule: OpShardingRule) -> bool:
    return any(
        rule.factor_type(f) == FactorType.PERMUTATION and s.axis_refs
        for f, s in tensor.factor_index_to_sharding.items()
    )


def _find_common_axes_two_tensors(
    projection: ShardingProjection, rule: OpShardingRule, sizes: Sequence[int], mesh: Mesh
) -> list[Axes]:
    """Keep the preferred tensor (no sharded permutation factor, larger, more sharded; the
    first on ties); the other keeps its own factors up to where they overlap it."""
    first, second = _non_scalar_tensors(rule)[:2]

    def preference(index: int) -> tuple[bool, int, int]:
        tensor = projection.tensor(index)
        return (
            not _has_sharded_permutation_factor(tensor, rule),
            sizes[index],
            tensor.sharding_size(mesh),
        )

    preferred, other = (
        (first, second) if preference(first) >= preference(second) else (second, first)
    )
    kept = projection.tensor(preferred).factor_index_to_sharding
    result: list[Axes] = [() for _ in range(rule.num_factors)]
    used: list[AxisRef] = []
    for factor, sharding in kept.items():
        result[factor] = sharding.axis_refs
        used.extend(sharding.axis_refs)
    for factor, sharding in projection.tensor(other).factor_index_to_sharding.items():
        if factor not in kept:
            result[factor] = tuple(truncate_axes_by_removing_overlaps(sharding.axis_refs, used))
    return result


# -- need-replication axes onto batching factors --------------------------------------------------


def _batching_factors(rule: OpShardingRule) -> list[int]:
    return [f for f in range(rule.num_factors) if rule.is_batching_factor(f)]


def _distribute_to_batching_factors(
    axes: list[AxisRef], rule: OpShardingRule, mesh: Mesh, common: list[Axes]
) -> None:
    """Append `axes` in order to batching factors while each axis divides the room left."""
    for factor in _batching_factors(rule):
        size = rule.factor_sizes[factor]
        if size == 0:
            continue
        current = list(common[factor])
        sharded = axes_size(current, mesh)
        if size % sharded != 0:
            continue
        capacity = size // sharded
        while axes:
            axis_size = axes[0].size(mesh)
            if capacity % axis_size != 0:
                break
            add_axis_or_merge(current, axes.pop(0), mesh)
            capacity //= axis_size
        common[factor] = tuple(current)
        if not axes:
            break


def _move_need_replication_axes(rule: OpShardingRule, mesh: Mesh, common: list[Axes]) -> None:
    for factor in rule.need_replication_factors:
        axes = list(common[factor])
        common[factor] = ()
        if axes and rule.is_factor_in_all_non_scalar_tensors(factor):
            _distribute_to_batching_factors(axes, rule, mesh, common)


def find_common_axes(
    projection: ShardingProjection, rule: OpShardingRule, sizes: Sequence[int], mesh: Mesh
) -> list[Axes]:
    """The axes each factor gets so that the op's shardings become compatible with `rule`.

    `sizes` are the element counts of the operands then results (0 if dynamic).
    """
    compatible = compatible_factor_shardings(projection, rule)
    if compatible is not None:
        return compatible
    if (
        len(_non_scalar_tensors(rule)) == 2
        and not rule.need_replication_factors
        and not rule.has_dimensions_with_multiple_factors
    ):
        return _find_common_axes_two_tensors(projection, rule, sizes, mesh)
    common = _find_common_axes_greedy(projection, rule, sizes, mesh)
    if rule.need_replication_factors:
        _move_need_replication_axes(rule, mesh, common)
    return common


# -- reshape with overflow axes ---------------------------------------------------------------------


def distribute_axes_across_factors(
    shardings: Sequence[FactorSharding],
    factor_sizes: Sequence[int],
    all_axes: Sequence[AxisRef],
    mesh: Mesh,
) -> None:
    """Axis-first greedy: each (rest of an) axis goes to the first factor with room for a
    common divisor; what no factor can take becomes the last factor's overflow axes.

    Shardy `distributeAxesAcrossFactors`; `shardings` start empty and are filled in place.
    """
    if not shardings:
        return
    room = list(factor_sizes)
    index = 0
    current = _axis_info(all_axes, index, mesh)
    while current is not None:
        size, pre = current
        used = False
        for i, sharding in enumerate(shardings):
            if room[i] <= 1:
                continue
            gcd = math.gcd(room[i], size)
            if gcd == 1 and size != 1:
                continue
            used = True
            name = all_axes[index].name
            if size > gcd:
                _append(sharding, _axis_part(name, pre or 1, gcd), mesh)
                pre, size = (pre or 1) * gcd, size // gcd
                room[i] //= gcd
                current = (size, pre)
                continue
            _append(sharding, _axis_part(name, pre, size), mesh)
            room[i] //= size
            index += 1
            current = _axis_info(all_axes, index, mesh)
            break
        if not used:
            _add_overflow(shardings[-1], current, all_axes, index, mesh)
            return


def _axis_info(axes: Sequence[AxisRef], index: int, mesh: Mesh) -> tuple[int, int | None] | None:
    """(size, pre-size if a sub-axis) of `axes[index]`, None past the end."""
    if index >= len(axes):
        return None
    axis = axes[index]
    return axis.size(mesh), (axis.pre_size if axis.is_sub_axis else None)


def _axis_part(name: str, pre: int | None, size: int) -> AxisRef:
    return AxisRef(name) if pre is None else AxisRef(name, SubAxisInfo(pre, size))


def _append(sharding: FactorSharding, axis: AxisRef, mesh: Mesh) -> None:
    axes = list(sharding.axis_refs)
    add_axis_or_merge(axes, axis, mesh)
    sharding.axis_refs = tuple(axes)


def _add_overflow(
    sharding: FactorSharding,
    current: tuple[int, int | None] | None,
    all_axes: Sequence[AxisRef],
    index: int,
    mesh: Mesh,
) -> None:
    overflow = list(sharding.overflow_axes)
    while current is not None:
        size, pre = current
        add_axis_or_merge(overflow, _axis_part(all_axes[index].name, pre, size), mesh)
        index += 1
        current = _axis_info(all_axes, index, mesh)
    sharding.overflow_axes = tuple(overflow)
