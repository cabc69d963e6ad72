"""The all-slice step of Shardy's `CollectiveInserter` (`getSlicingAxesPerDim`).

Capacity of dim d for slicing: how much more sharded the output dim is than the input dim,
``size(out_axes[d]) / gcd(size(in_axes[d]), size(out_axes[d]))``. Slicing a dim along more
than its capacity would cost an extra all-to-all later. Axes to slice are picked in three
stages: (1) axes another dim's output needs right after an axis that will be all-to-all'ed
there from dim d are sliced at d already (`_axes_to_slice_for_all_to_all`); (2) each output
dim takes the free axes it wants, within its capacity; (3) the free axes left go to the first
dim with capacity.
"""

from __future__ import annotations

import math

from shardwise.axis import AxisRef, add_axis_or_merge
from shardwise.export.reshard_to_collectives.axis_lists import (
    AxisList,
    axis_within_capacity,
    sharded_size,
)
from shardwise.export.reshard_to_collectives.state import ReshardState

__all__ = ["slicing_axes_per_dim"]


def _c_remainder(a: int, b: int) -> int:
    """C++ ``a % b`` (truncating; a dynamic dim is INT64_MIN)."""
    return a % b if a >= 0 else -((-a) % b)


def _next_out_position(out_axes: AxisList, axis: AxisRef) -> int:
    """``++llvm::find(out_axes, axis)``; a missing axis gives ``++end()``, i.e. ``begin()``."""
    try:
        return out_axes.index(axis) + 1
    except ValueError:
        return 0


def _axes_to_slice_for_all_to_all(
    state: ReshardState, src: int, dim_size: int
) -> tuple[int, int, int] | None:
    """`getAxesToSliceForAllToAll`: (tgt dim, begin, end) of ``out_axes[tgt]`` to slice at `src`.

    Applies when the last in axis of `src` goes to another dim `tgt` (whose in axes are empty)
    and is followed there by free out axes: slicing those at `src` now lets one all-to-all
    move everything, in order, instead of a collective-permute. Borrows `tgt`'s capacity.
    """
    src_in = state.in_axes[src]
    if not src_in or state.out_axes[src]:
        return None
    entry = state.out_index.get(src_in[-1])
    if entry is None:
        return None
    tgt = entry.dim
    if state.in_axes[tgt]:
        return None
    tgt_out = state.out_axes[tgt]
    start = _next_out_position(tgt_out, src_in[-1])
    if start == len(tgt_out) or tgt_out[start] in state.in_set:
        return None
    i, o, common_size = len(src_in) - 1, start - 1, 1
    while i >= 0 and o >= 0 and src_in[i] == tgt_out[o]:
        common_size *= src_in[i].size(state.mesh)
        i, o = i - 1, o - 1
    for axis in src_in[: i + 1]:
        other = state.out_index.get(axis)
        if other is not None and other.dim == tgt:
            return None  # an axis of `src` goes to `tgt` out of order
    end, added_size = start, 1
    while end < len(tgt_out) and tgt_out[end] not in state.in_set:
        added_size *= tgt_out[end].size(state.mesh)
        end += 1
    new_size = sharded_size(state.current[src], state.mesh) * added_size
    if _c_remainder(dim_size, new_size) != 0:
        return None
    state.capacity[tgt] //= common_size * added_size
    return tgt, start, end


def _slice_in_out_dims(state: ReshardState, slicing: list[AxisList]) -> tuple[bool, AxisList]:
    """Stage 2: each dim slices its own free out axes within capacity.

    Returns whether anything was sliced and the free out axes left for stage 3.
    """
    sliced = False
    available: AxisList = []
    for dim in range(state.rank):
        in_axes, out_axes = state.in_axes[dim], state.out_axes[dim]
        k = 0
        while k < len(out_axes):
            out_axis = out_axes[k]
            if out_axis in state.in_set:
                k += 1
                continue
            fit = axis_within_capacity(out_axis, state.capacity[dim], state.mesh)
            state.capacity[dim] = fit.capacity
            if fit.within is None:
                available.append(out_axis)
                k += 1
                continue
            sliced = True
            add_axis_or_merge(slicing[dim], fit.within, state.mesh)
            add_axis_or_merge(state.current[dim], fit.within, state.mesh)
            if not in_axes and k == 0:
                del out_axes[k]  # sliced right where the output wants it
            else:
                state.in_set.add(fit.within)
                in_axes.append(fit.within)
                out_axes[k] = fit.within
                k += 1
            if fit.remainder is not None:
                out_axes.insert(k, fit.remainder)
                k += 1  # the remainder is not visited here; stage 3 gets it
                available.append(fit.remainder)
    return sliced, available


def slicing_axes_per_dim(state: ReshardState, shape: tuple[int, ...]) -> list[AxisList] | None:
    """The axes to all-slice per dim (None when there are none); updates `state`."""
    slicing: list[AxisList] = [[] for _ in range(state.rank)]
    for dim in range(state.rank):
        in_size = sharded_size(state.in_axes[dim], state.mesh)
        out_size = sharded_size(state.out_axes[dim], state.mesh)
        state.capacity[dim] = out_size // math.gcd(in_size, out_size)

    sliced = False
    for src in range(state.rank):
        found = _axes_to_slice_for_all_to_all(state, src, shape[src])
        if found is None:
            continue
        sliced = True
        tgt, begin, end = found
        for axis in state.out_axes[tgt][begin:end]:
            state.in_axes[src].append(axis)
            state.in_set.add(axis)
            add_axis_or_merge(slicing[src], axis, state.mesh)
            add_axis_or_merge(state.current[src], axis, state.mesh)

    sliced_own, available = _slice_in_out_dims(state, slicing)
    sliced |= sliced_own

    def consume(axis: AxisRef, dim: int) -> None:
        nonlocal sliced
        sliced = True
        add_axis_or_merge(slicing[dim], axis, state.mesh)
        add_axis_or_merge(state.current[dim], axis, state.mesh)

    state.distribute_in_axes_from(available, add_to_front=False, consume=consume)
    state.rebuild_out_index()
    return slicing if sliced else None
