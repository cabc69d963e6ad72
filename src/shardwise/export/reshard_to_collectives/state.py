"""The bookkeeping of Shardy's `CollectiveInserter` (``exp/reshard_to_collectives.cc``).

The state is the *difference* between the current sharding and the output sharding:

- `in_axes[d]`: axes of the current sharding of dim d after the prefix it shares with the
  output (they must go: gathered, moved or replaced);
- `out_axes[d]`: axes of the output sharding of dim d after that common prefix (they must
  come: sliced, moved or swapped in);
- `current[d]`: every axis of the current sharding of dim d (common prefix included).

The reshard is done when every `in_axes[d]` and `out_axes[d]` is empty and the current mesh
is the output mesh. Two lookups are kept alongside, with the reference's update discipline
(which the printed collectives depend on): `in_set` (the axes of `in_axes`) and `out_index`
(axis -> where it sits in `out_axes`), rebuilt only after an out axis is split. This state
is local to one reshard and never leaves the pass.
"""

from __future__ import annotations

from collections.abc import Callable

from shardwise.axis import AxisRef
from shardwise.export.reshard_to_collectives.axis_lists import (
    AxisList,
    DimAndIndex,
    align_in_and_out_sub_axes,
    align_sub_axes_per_dim,
    axis_to_dim_and_index,
    axis_within_capacity,
)
from shardwise.mesh import Mesh
from shardwise.sharding import DimensionSharding, MeshRef, TensorSharding

__all__ = ["ReshardState"]

ConsumeAxis = Callable[[AxisRef, int], None]


def _ignore(_axis: AxisRef, _dim: int) -> None:
    return None


class ReshardState:
    """What is left to do to turn `in_sharding` into `out_sharding` (same rank, same axes)."""

    def __init__(
        self, in_sharding: TensorSharding, out_sharding: TensorSharding, mesh: Mesh
    ) -> None:
        self.mesh = mesh
        self.cur_mesh: MeshRef = in_sharding.mesh_or_ref
        self.out_mesh: MeshRef = out_sharding.mesh_or_ref
        # The reference keeps the output's unreduced axes on every intermediate sharding
        # (input and output agree on them whenever insert-explicit-reshards made the reshard).
        self.unreduced = out_sharding.unreduced_axes
        self.in_axes: list[AxisList] = [list(d.axes) for d in in_sharding.dim_shardings]
        self.out_axes: list[AxisList] = [list(d.axes) for d in out_sharding.dim_shardings]
        self.current: list[AxisList] = [list(d.axes) for d in in_sharding.dim_shardings]
        self.capacity = [1] * in_sharding.rank
        align_in_and_out_sub_axes(self.in_axes, self.out_axes, mesh)
        self._remove_common_prefix()
        self.in_set: set[AxisRef] = {a for axes in self.in_axes for a in axes}
        self.out_index: dict[AxisRef, DimAndIndex] = axis_to_dim_and_index(self.out_axes)

    @property
    def rank(self) -> int:
        return len(self.in_axes)

    def _remove_common_prefix(self) -> None:
        for in_axes, out_axes in zip(self.in_axes, self.out_axes, strict=True):
            while in_axes and out_axes and in_axes[0] == out_axes[0]:
                del in_axes[0]
                del out_axes[0]

    def is_done(self) -> bool:
        return self.cur_mesh == self.out_mesh and not any(self.in_axes) and not any(self.out_axes)

    def current_sharding(self) -> TensorSharding:
        """`TensorShardingAttr::getClosed`: closed dims, no replicated axes, unreduced kept."""
        dims = tuple(DimensionSharding(tuple(axes)) for axes in self.current)
        return TensorSharding(self.cur_mesh, dims, (), self.unreduced)

    def rebuild_out_index(self) -> None:
        self.out_index = axis_to_dim_and_index(self.out_axes)

    def distribute_in_axes(
        self,
        add_to_front: bool,
        available_of: Callable[[int], AxisList],
        consume: ConsumeAxis = _ignore,
    ) -> None:
        """`distributeInAxesWithinCapacity`: fill each dim's capacity from its available axes.

        Per dim d, while ``capacity[d] > 1``: take the next available axis that fits (an axis
        larger than the capacity is cut, its remainder going back to the front of the
        available axes; an axis whose size and the capacity do not divide each other is
        skipped), add it to `in_axes[d]` (at the front, keeping order, or at the back) and
        report it to `consume`. Out axes are then re-aligned with every axis that was cut.
        """
        split_added: AxisList = []
        for dim in range(self.rank):
            in_axes = self.in_axes[dim]
            front = 0
            available = available_of(dim)
            k = 0
            while k < len(available) and self.capacity[dim] > 1:
                fit = axis_within_capacity(available[k], self.capacity[dim], self.mesh)
                self.capacity[dim] = fit.capacity
                if fit.within is None:
                    k += 1
                    continue
                del available[k]
                if add_to_front:
                    in_axes.insert(front, fit.within)
                    front += 1
                else:
                    in_axes.append(fit.within)
                self.in_set.add(fit.within)
                consume(fit.within, dim)
                if fit.remainder is not None:
                    split_added.append(fit.within)
                    available.insert(0, fit.remainder)
                    k += 1  # the C++ iterator still points past the erased axis
        split_added.sort(key=AxisRef.sort_key)
        align_sub_axes_per_dim(self.out_axes, split_added, self.mesh)

    def distribute_in_axes_from(
        self, available: AxisList, add_to_front: bool, consume: ConsumeAxis = _ignore
    ) -> None:
        """`distribute_in_axes` with one list of available axes shared by every dim."""
        self.distribute_in_axes(add_to_front, lambda _dim: available, consume)
