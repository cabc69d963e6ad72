"""Read mesh (sub-)axes back out of an XLA tile assignment (the import half of hlo_sharding).

Number the devices by their position in the mesh's device order; with mesh axes
``a0, ..., am`` (major to minor) a position is a mixed-radix number whose digit ``j`` is the
device's coordinate on axis ``j``. A tile assignment that some sdy sharding exports to has a
simple shape in these positions: moving along one tile dim adds fixed multiples of a few
"levels" ``(stride, size)`` -- contiguous ranges of that mixed-radix number -- and the levels of
all tile dims, plus the replicated ones, cover the positions exactly once. Each level then reads
as one or more (sub-)axes: ``stride 1, size 8`` on mesh ``"x"=2, "y"=4`` is ``"x", "y"``.

`decompose_tiles` finds the levels (greedily from the minor end, merging adjacent ones, which
gives the simplest axes) and checks the whole array against them, so a tile assignment that no
sharding produces is rejected rather than misread.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from shardwise.axis import AxisRef, SubAxisInfo
from shardwise.errors import UnsupportedError
from shardwise.mesh import Mesh

__all__ = ["Level", "decompose_tiles", "level_axes"]


@dataclass(frozen=True, slots=True)
class Level:
    """Positions ``stride * k`` for ``k < size``: one contiguous range of mesh digits."""

    stride: int
    size: int

    @property
    def end(self) -> int:
        return self.stride * self.size


def _not_expressible(reason: str) -> UnsupportedError:
    return UnsupportedError(
        f"the HLO tile assignment is not expressible with axes of this mesh: {reason}"
    )


def _levels_of(values: Callable[[int], int], extent: int, where: str) -> list[Level]:
    """Levels of one tile dim, minor first, from ``values(t)`` (position of tile index t).

    >>> _levels_of(lambda t: [0, 2, 4, 6, 1, 3, 5, 7][t], 8, "dim 0")
    [Level(stride=2, size=4), Level(stride=1, size=2)]
    """
    levels: list[Level] = []
    block = 1  # tile-index step of the next level
    while block < extent:
        stride = values(block)
        if stride <= 0:
            raise _not_expressible(f"{where} repeats or reverses device positions")
        size = 1
        while block * (size + 1) <= extent and values(block * size) == size * stride:
            size += 1
        # The run can end early at a level boundary that does not divide the extent.
        while extent % (block * size):
            size -= 1
        if size == 1:
            raise _not_expressible(f"{where} is not a product of evenly strided ranges")
        levels.append(Level(stride, size))
        block *= size
    return levels


def _level_value(levels: Sequence[Level], t: int) -> int:
    """The position of tile index `t` predicted by `levels` (minor first)."""
    value = 0
    for level in levels:
        value += (t % level.size) * level.stride
        t //= level.size
    return value


def _gaps(levels: Sequence[Level], total: int) -> list[Level]:
    """The levels that complete `levels` to a cover of ``[1, total)``; raises on overlap."""
    gaps: list[Level] = []
    covered = 1
    for level in sorted(levels, key=lambda v: v.stride):
        if level.stride < covered or level.stride % covered:
            raise _not_expressible("two tile dims use overlapping parts of the mesh")
        if level.stride > covered:
            gaps.append(Level(covered, level.stride // covered))
        covered = level.end
    if covered > total or total % covered:
        raise _not_expressible("the tiles do not fit the mesh size")
    if covered < total:
        gaps.append(Level(covered, total // covered))
    return gaps


def _group_offsets(levels: Sequence[Level]) -> set[int]:
    ranges = [range(0, level.end, level.stride) for level in levels]
    return {sum(combo) for combo in itertools.product(*ranges)}


def decompose_tiles(
    dims: Sequence[int], positions: Sequence[int], replicated_last: bool
) -> list[list[Level]]:
    """Levels per tile dim (major first); the last entry is the replicated group if any.

    `positions` is the row-major array of mesh positions of shape `dims`, a permutation of
    ``range(N)``. With `replicated_last` the last tile dim lists each group of replicas in any
    order; its levels are whatever the other dims leave over.
    """
    total = len(positions)
    if sorted(positions) != list(range(total)):
        raise _not_expressible("it does not name every device of the mesh exactly once")
    base_dims = list(dims[:-1] if replicated_last else dims)
    group = dims[-1] if replicated_last else 1
    base = [min(positions[i : i + group]) for i in range(0, total, group)]
    per_dim: list[list[Level]] = []
    for k, extent in enumerate(base_dims):
        step = math.prod(base_dims[k + 1 :])
        along = base[::step][:extent]  # positions along dim k, the other indices at 0
        per_dim.append(_levels_of(along.__getitem__, extent, f"tile dim {k}"))
    _check_base(base, base_dims, per_dim)
    gaps = _gaps([v for levels in per_dim for v in levels], total)
    result = [list(reversed(levels)) for levels in per_dim]
    if replicated_last:
        _check_groups(positions, base, group, gaps)
        result.append(sorted(gaps, key=lambda v: -v.stride))
    elif gaps:
        raise _not_expressible("some mesh axes are neither tiled nor replicated")
    return result


def _check_base(base: Sequence[int], dims: Sequence[int], per_dim: list[list[Level]]) -> None:
    """Every tile's position is the sum of what its per-dim indices predict."""
    for flat, index in enumerate(itertools.product(*(range(d) for d in dims))):
        predicted = sum(_level_value(levels, t) for levels, t in zip(per_dim, index, strict=True))
        if predicted != base[flat]:
            raise _not_expressible(f"tile {list(index)} is not where its indices place it")


def _check_groups(
    positions: Sequence[int], base: Sequence[int], group: int, gaps: Sequence[Level]
) -> None:
    offsets = _group_offsets(gaps)
    for g, start in enumerate(base):
        members = set(positions[g * group : (g + 1) * group])
        if members != {start + o for o in offsets}:
            raise _not_expressible(f"replica group {g} is not a set of mesh axes")


def level_axes(level: Level, mesh: Mesh) -> list[AxisRef]:
    """The (sub-)axes a level spans, major first.

    | mesh          | level          | axes               |
    | "x"=2, "y"=4  | stride 1, 8    | "x", "y"           |
    | "x"=2, "y"=4  | stride 2, 2    | "y":(1)2           |
    | "x"=8         | stride 2, 2    | "x":(2)2           |
    """
    axes: list[AxisRef] = []
    stride = mesh.total_size
    for axis in mesh.axes:
        stride //= axis.size  # position stride of this axis's coordinate
        lo, hi = max(level.stride, stride), min(level.end, stride * axis.size)
        if lo >= hi:
            continue
        if lo % stride or hi % stride:
            raise _not_expressible(f"a tile range cuts axis {axis.name!r} unevenly")
        low, high = lo // stride, hi // stride
        if axis.size % high or high % low:
            raise _not_expressible(f"a tile range cuts axis {axis.name!r} unevenly")
        if low == 1 and high == axis.size:
            axes.append(AxisRef(axis.name))
        else:
            axes.append(AxisRef(axis.name, SubAxisInfo(axis.size // high, high // low)))
    return axes
