"""The collective-permute step of Shardy's `CollectiveInserter`.

`should_collective_permute` decides (`shouldCollectivePermute`), `perform_collective_permute`
rewrites the state (`performCollectivePermute`). A collective-permute keeps each dim's sharded
size and can put any axes of that size there: capacity of dim d is the size of `in_axes[d]`.
"""

from __future__ import annotations

from shardwise.axis import AxisRef, add_axis_or_merge
from shardwise.export.reshard_to_collectives.axis_lists import (
    AxisList,
    are_divisible,
    axis_within_capacity,
    pop_back_from_current_axes,
    sharded_size,
)
from shardwise.export.reshard_to_collectives.state import ReshardState

__all__ = ["should_collective_permute", "perform_collective_permute"]


def _sizes_divisible(a: AxisRef, b: AxisRef, state: ReshardState) -> bool:
    return are_divisible(a.size(state.mesh), b.size(state.mesh))


def _misplaced_in_dim(state: ReshardState, dim: int) -> tuple[bool, AxisRef | None]:
    """Conditions 3-5 for one dim: in axes out of order, discontiguous, or an axis to gather
    in front of one to move while the dim wants nothing. Also returns the last in axis of the
    dim that the output does not want (a candidate for condition 2)."""
    out_axes = state.out_axes[dim]
    available_in: AxisRef | None = None
    last_out_dim: int | None = None
    last_out_index = 0
    seen_dims: set[int] = set()
    for axis in state.in_axes[dim]:
        cur_out_dim: int | None = None
        entry = state.out_index.get(axis)
        if entry is not None:
            cur_out_dim = entry.dim
            out_of_place = cur_out_dim == dim or cur_out_dim in seen_dims
            if out_of_place and (last_out_dim != cur_out_dim or entry.index != last_out_index + 1):
                return True, available_in
            seen_dims.add(cur_out_dim)
            last_out_index = entry.index
        elif last_out_dim is not None and not out_axes:
            return True, available_in
        else:
            available_in = axis
        last_out_dim = cur_out_dim
    return False, available_in


def should_collective_permute(state: ReshardState) -> bool:
    """Whether a collective-permute can replace or reorder axes (`shouldCollectivePermute`).

    1. a dim whose first in axis and first out axis have divisible sizes;
    2. an axis to add and an axis to drop (anywhere) with divisible sizes;
    3./4. in axes bound for one dim that are out of order or not contiguous;
    5. an axis to gather in front of one to move, on a dim whose output wants nothing.
    """
    available_in: AxisRef | None = None
    available_out: AxisRef | None = None
    for dim in range(state.rank):
        in_axes, out_axes = state.in_axes[dim], state.out_axes[dim]
        if in_axes and out_axes and _sizes_divisible(in_axes[0], out_axes[0], state):
            return True
        for axis in out_axes:
            if axis not in state.in_set:
                available_out = axis
        misplaced, dim_available_in = _misplaced_in_dim(state, dim)
        if misplaced:
            return True
        if dim_available_in is not None:
            available_in = dim_available_in
    return (
        available_out is not None
        and available_in is not None
        and _sizes_divisible(available_out, available_in, state)
    )


def _place_out_axes(state: ReshardState, dim: int, available_out: AxisList) -> int:
    """Step 1 for one dim: swap in the dim's wanted out axes up to its capacity.

    Returns the capacity used.
    """
    in_axes, out_axes, current = state.in_axes[dim], state.out_axes[dim], state.current[dim]
    state.capacity[dim] = sharded_size(in_axes, state.mesh)
    used = state.capacity[dim]
    pop_back_from_current_axes(current, in_axes, 0)
    while state.capacity[dim] > 1 and out_axes:
        fit = axis_within_capacity(out_axes[0], state.capacity[dim], state.mesh)
        state.capacity[dim] = fit.capacity
        if fit.within is None:
            break
        del out_axes[0]
        add_axis_or_merge(current, fit.within, state.mesh)
        if fit.remainder is not None:
            out_axes.insert(0, fit.remainder)
    available_out.extend(out_axes)
    return used // state.capacity[dim]


def _collect_in_axes(state: ReshardState, dim: int, used: int, available_in: AxisList) -> None:
    """Step 1, second half: the dim's in axes the output does not want, those beyond the used
    capacity first (so they go back where they were), emptying `in_axes[dim]`."""
    in_axes = state.in_axes[dim]
    in_axes[:] = [a for a in in_axes if a not in state.out_index]
    while used > 1 and in_axes:
        fit = axis_within_capacity(in_axes[0], used, state.mesh)
        used = fit.capacity
        if fit.within is None:
            break
        del in_axes[0]
        available_in.append(fit.within)
        if fit.remainder is not None:
            in_axes.insert(0, fit.remainder)
    available_in[:0] = in_axes
    in_axes.clear()


def perform_collective_permute(state: ReshardState) -> None:
    """Rebuild every dim's in axes at the same sharded size (`performCollectivePermute`).

    1. each dim takes its wanted out axes, in order, up to its capacity;
    2. the other wanted out axes go to the back of any dim with capacity left;
    3. axes to gather go back to the front of their own dim (gathered after the all-to-alls);
    4. the rest of them to the front of any dim with capacity left.
    """
    available_out: AxisList = []
    available_in: list[AxisList] = [[] for _ in range(state.rank)]
    state.in_set.clear()
    for dim in range(state.rank):
        used = _place_out_axes(state, dim, available_out)
        _collect_in_axes(state, dim, used, available_in[dim])
    state.distribute_in_axes_from(available_out, add_to_front=False)
    state.distribute_in_axes(True, lambda dim: available_in[dim])
    remaining = [axis for axes in available_in for axis in axes]
    for axes in available_in:
        axes.clear()
    state.distribute_in_axes_from(remaining, add_to_front=True)
    state.rebuild_out_index()
    for in_axes, current in zip(state.in_axes, state.current, strict=True):
        for axis in in_axes:
            add_axis_or_merge(current, axis, state.mesh)
