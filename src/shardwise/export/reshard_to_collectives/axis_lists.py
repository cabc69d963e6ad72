"""Axis-list helpers of `sdy-reshard-to-collectives` (Shardy ``exp/utils.cc`` and the
anonymous helpers of ``exp/reshard_to_collectives.cc``).

Axis lists are plain Python lists standing in for Shardy's ``std::list<AxisRefAttr>``: the
algorithm pops from both ends and erases in the middle. Where the C++ walks off the end of a
``std::list`` (a circular list whose ``++end()`` is ``begin()``), the helpers here say so and
reproduce what the reference does.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from shardwise.axis import AxisRef, SubAxisInfo
from shardwise.mesh import Mesh

__all__ = [
    "AxisList",
    "DimAndIndex",
    "WithinCapacity",
    "align_sub_axes",
    "align_sub_axes_per_dim",
    "align_in_and_out_sub_axes",
    "axis_to_dim_and_index",
    "axis_within_capacity",
    "are_divisible",
    "sharded_size",
    "pop_back_from_current_axes",
    "sorted_axes",
]

AxisList = list[AxisRef]


@dataclass(frozen=True, slots=True)
class DimAndIndex:
    """Where an axis sits in a list of axes per dimension."""

    dim: int
    index: int


@dataclass(frozen=True, slots=True)
class WithinCapacity:
    """An axis cut to fit a capacity: the part that fits and the rest (either may be None)."""

    within: AxisRef | None
    remainder: AxisRef | None
    capacity: int  # the capacity left once `within` is used


def sharded_size(axes: Iterable[AxisRef], mesh: Mesh) -> int:
    return math.prod(a.size(mesh) for a in axes)


def are_divisible(a: int, b: int) -> bool:
    """`a` divides `b` or `b` divides `a`."""
    return a % b == 0 or b % a == 0


def sorted_axes(axes_per_dim: Iterable[Iterable[AxisRef]]) -> AxisList:
    """Every axis of every dimension, sorted by Shardy's mesh-independent `operator<`."""
    return sorted((a for axes in axes_per_dim for a in axes), key=AxisRef.sort_key)


def axis_to_dim_and_index(axes_per_dim: Sequence[AxisList]) -> dict[AxisRef, DimAndIndex]:
    """Axis -> (dimension, position); the first occurrence wins (``try_emplace``)."""
    result: dict[AxisRef, DimAndIndex] = {}
    for dim, axes in enumerate(axes_per_dim):
        for index, axis in enumerate(axes):
            result.setdefault(axis, DimAndIndex(dim, index))
    return result


def axis_within_capacity(axis: AxisRef, capacity: int, mesh: Mesh) -> WithinCapacity:
    """`getAxisWithinCapacity`: the part of `axis` that fits in `capacity`.

    | axis (x=8) | capacity | within     | remainder  | capacity left |
    | "x"        | 16       | "x"        | None       | 2             |
    | "x"        | 2        | "x":(1)2   | "x":(2)4   | 1             |
    | "x"        | 3        | None       | None       | 3             |
    """
    size = axis.size(mesh)
    if capacity <= 1 or not are_divisible(size, capacity):
        return WithinCapacity(None, None, capacity)
    if capacity >= size:
        return WithinCapacity(axis, None, capacity // size)
    within = AxisRef(axis.name, SubAxisInfo(axis.pre_size, capacity))
    remainder = AxisRef(axis.name, SubAxisInfo(axis.pre_size * capacity, size // capacity))
    return WithinCapacity(within, remainder, 1)


def pop_back_from_current_axes(current: AxisList, to_pop: AxisList, start: int) -> None:
    """`popBackFromCurrentAxes`: remove ``to_pop[start:]`` from the back of `current`.

    `to_pop` may hold pieces of one axis of `current` (sub-axes split by alignment), so the
    back of `current` is cut to its prefix before each piece and dropped once nothing is left.
    """
    for axis in reversed(to_pop[start:]):
        prefix = current[-1].prefix_without_overlap(axis)
        if prefix is not None:
            current[-1] = prefix
        else:
            current.pop()


def _first_overlapping(axis: AxisRef, ordered: Sequence[AxisRef]) -> int | None:
    """`getFirstOverlapping`: index of the first axis in sorted `ordered` overlapping `axis`."""
    keys = [a.sort_key() for a in ordered]
    after = bisect.bisect_left(keys, axis.sort_key())
    if after > 0 and axis.overlaps(ordered[after - 1]):
        return after - 1
    if after < len(ordered) and axis.overlaps(ordered[after]):
        return after
    return None


def _should_split(axis: AxisRef, other: AxisRef) -> bool:
    return other.can_coexist(axis) and not other.contains(axis) and other.overlaps(axis)


def align_sub_axes(axes: AxisList, ordered_other: Sequence[AxisRef], mesh: Mesh) -> None:
    """`alignSubAxesByDecomposition` for one list, in place.

    Every axis of `axes` that overlaps, but is not contained in, an axis of `ordered_other`
    (sorted) is replaced by its pieces: the prefix before the overlap, the overlap, and the
    suffix after it; the suffix is then split again by the next axis of `ordered_other`.
    With ``"x"=8``: ``["x"]`` against ``["x":(2)2]`` becomes ``["x":(1)2, "x":(2)2, "x":(4)2]``.
    """
    i = 0
    while i < len(axes):
        axis = axes[i]
        k = _first_overlapping(axis, ordered_other)
        advanced = False
        while k is not None and k < len(ordered_other) and _should_split(axis, ordered_other[k]):
            other = ordered_other[k]
            del axes[i]
            prefix = axis.prefix_without_overlap(other)
            if prefix is not None:
                axes.insert(i, prefix)
                i += 1
            overlap = axis.overlap(other)
            assert overlap is not None
            axes.insert(i, overlap)
            i += 1
            suffix = axis.suffix_without_overlap(other, mesh)
            if suffix is None:
                advanced = True
                break
            axes.insert(i, suffix)  # the suffix is the next axis to split
            axis = suffix
            k += 1
        if not advanced:
            i += 1


def align_sub_axes_per_dim(
    axes_per_dim: Sequence[AxisList], ordered_other: Sequence[AxisRef], mesh: Mesh
) -> None:
    if not ordered_other:
        return
    for axes in axes_per_dim:
        align_sub_axes(axes, ordered_other, mesh)


def align_in_and_out_sub_axes(
    in_axes_per_dim: Sequence[AxisList], out_axes_per_dim: Sequence[AxisList], mesh: Mesh
) -> None:
    """Split overlapping in/out sub-axes so that any two that overlap are equal."""
    ordered_in = sorted_axes(in_axes_per_dim)
    ordered_out = sorted_axes(out_axes_per_dim)
    align_sub_axes_per_dim(in_axes_per_dim, ordered_out, mesh)
    align_sub_axes_per_dim(out_axes_per_dim, ordered_in, mesh)
