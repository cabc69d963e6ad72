"""Shardy's `CollectiveInserter`: the collectives that turn one sharding into another.

Starting from the input sharding, each step inserts one collective (or a run of
all-to-alls) before the reshard and updates the `ReshardState`, until the current sharding
is the output sharding. One round is: all-slice (shrink), collective-permute (same size,
other axes or order, or another device order), all-to-alls landing axes in their final place,
any all-to-alls, all-gather (grow). With power-of-two axes one round always finishes;
otherwise a second round runs (and the reference stops there whatever is left).

Every collective is closed, keeps the output's unreduced axes, and is located at the reshard.
"""

from __future__ import annotations

from shardwise.axis import add_axis_or_merge
from shardwise.export.collective_attrs import (
    AllToAllParam,
    all_to_all_params_attr,
    list_of_axis_ref_lists_attr,
)
from shardwise.export.reshard_to_collectives.axis_lists import (
    AxisList,
    pop_back_from_current_axes,
)
from shardwise.export.reshard_to_collectives.permute import (
    perform_collective_permute,
    should_collective_permute,
)
from shardwise.export.reshard_to_collectives.slicing import slicing_axes_per_dim
from shardwise.export.reshard_to_collectives.state import ReshardState
from shardwise.ir import DYNAMIC, Op, TensorType, Value
from shardwise.mesh import Mesh
from shardwise.sharding import TensorSharding

__all__ = ["insert_collectives"]

_MAX_ROUNDS = 2
_MLIR_DYNAMIC = -(2**63)


class _Inserter:
    def __init__(self, state: ReshardState, value: Value, reshard: Op) -> None:
        self.state = state
        self.result = value
        self.reshard = reshard
        t = value.type
        # MLIR's dynamic size is INT64_MIN, which the reference's divisibility test sees.
        dims = t.shape if isinstance(t, TensorType) else ()
        self.shape = tuple(_MLIR_DYNAMIC if d == DYNAMIC else d for d in dims)

    def run(self) -> Value:
        for _ in range(_MAX_ROUNDS):
            if self.state.is_done():
                break
            self.try_all_slice()
            self.try_collective_permute()
            self.try_all_to_alls(allow_out_of_order_target=False)
            self.try_all_to_alls(allow_out_of_order_target=True)
            self.try_all_gather()
        return self.result

    # -- op creation ------------------------------------------------------------------------

    def _create(self, name: str, properties: dict[str, object]) -> None:
        properties["out_sharding"] = self.state.current_sharding()
        op = Op(
            name,
            [self.result],
            [self.result.type],
            properties,
            location=self.reshard.location,
            loc_text=self.reshard.loc_text,
        )
        block = self.reshard.parent
        assert block is not None
        block.insert_before(self.reshard, op)
        self.result = op.results[0]

    # -- steps ------------------------------------------------------------------------------

    def try_all_slice(self) -> None:
        slicing = slicing_axes_per_dim(self.state, self.shape)
        if slicing is None:
            return
        attr = list_of_axis_ref_lists_attr(tuple(tuple(axes) for axes in slicing))
        self._create("sdy.all_slice", {"slicing_axes": attr})

    def try_collective_permute(self) -> None:
        state = self.state
        if should_collective_permute(state):
            perform_collective_permute(state)
        elif state.cur_mesh == state.out_mesh:
            return
        # Also when nothing moved: the output mesh orders the devices differently.
        state.cur_mesh = state.out_mesh
        self._create("sdy.collective_permute", {})

    def try_all_to_alls(self, allow_out_of_order_target: bool) -> None:
        for src in range(self.state.rank):
            while (found := self._all_to_all(src, allow_out_of_order_target)) is not None:
                axes, tgt = found
                attr = all_to_all_params_attr((AllToAllParam(tuple(axes), src, tgt),))
                self._create("sdy.all_to_all", {"params": attr})

    def try_all_gather(self) -> None:
        gathering = [self._gathering_axes(dim) for dim in range(self.state.rank)]
        if not any(gathering):
            return
        attr = list_of_axis_ref_lists_attr(tuple(tuple(axes) for axes in gathering))
        self._create("sdy.all_gather", {"gathering_axes": attr})

    # -- per-dim decisions ------------------------------------------------------------------

    def _all_to_all(self, src: int, allow_out_of_order_target: bool) -> tuple[AxisList, int] | None:
        """`getAllToAllInfo`: move the longest suffix of ``in_axes[src]`` bound for one other
        dim there; unless `allow_out_of_order_target`, only if it lands in its final place."""
        state = self.state
        src_in = state.in_axes[src]
        start, tgt = len(src_in), None
        while start > 0:
            entry = state.out_index.get(src_in[start - 1])
            if entry is None or entry.dim == src or (tgt is not None and entry.dim != tgt):
                break
            tgt = entry.dim
            start -= 1
        if tgt is None:
            return None
        tgt_out = state.out_axes[tgt]
        moving = src_in[start:]
        if not allow_out_of_order_target and tgt_out[: len(moving)] != moving:
            return None
        pop_back_from_current_axes(state.current[src], src_in, start)
        del src_in[start:]
        tgt_in = state.in_axes[tgt]
        axes: AxisList = []
        for axis in moving:
            add_axis_or_merge(axes, axis, state.mesh)
            add_axis_or_merge(state.current[tgt], axis, state.mesh)
            state.in_set.discard(axis)
            if not tgt_in and tgt_out and tgt_out[0] == axis:
                del tgt_out[0]
            else:
                tgt_in.append(axis)
                state.in_set.add(axis)
        return axes, tgt

    def _gathering_axes(self, dim: int) -> AxisList:
        """`getGatheringAxes`: the in axes of `dim` to all-gather.

        The reference means to gather the suffix of in axes the output does not want, but its
        reverse walk steps the wrong way (``--rbegin()`` of a ``std::list`` is ``rend()``): if
        the last in axis is unwanted, it gathers *all* in axes of the dim and drops only that
        last one from `in_set`; if the last one is wanted, nothing. We do the same.
        """
        state = self.state
        in_axes = state.in_axes[dim]
        if not in_axes or in_axes[-1] in state.out_index:
            return []
        state.in_set.discard(in_axes[-1])
        pop_back_from_current_axes(state.current[dim], in_axes, 0)
        gathering: AxisList = []
        for axis in in_axes:
            add_axis_or_merge(gathering, axis, state.mesh)
        in_axes.clear()
        return gathering


def insert_collectives(
    in_sharding: TensorSharding,
    out_sharding: TensorSharding,
    mesh: Mesh,
    value: Value,
    reshard: Op,
) -> Value:
    """Insert before `reshard` the collectives taking `value` from `in_sharding` to
    `out_sharding` (both on `mesh`'s axes); returns the last result (`value` if none)."""
    state = ReshardState(in_sharding, out_sharding, mesh)
    return _Inserter(state, value, reshard).run()
