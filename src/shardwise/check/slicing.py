"""Which slice of a global array each device holds under a `TensorSharding` (numpy only).

Device order follows the mesh: position k of the mesh (row-major over its axes, the first axis
major) is device id ``device_ids[k]`` (``k`` without explicit ids). Along a dimension sharded
on axes ``[a1, a2, ...]`` (major to minor) a device's shard index is its coordinate in those
axes read as one mixed-radix number; a sub-axis ``"x":(p)s`` contributes ``(coord_x // p) % s``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from shardwise.axis import AxisRef
from shardwise.errors import UnsupportedError
from shardwise.mesh import Mesh
from shardwise.sharding import TensorSharding

__all__ = [
    "device_ids",
    "device_coords",
    "local_shape",
    "device_slices",
    "split",
    "split_padded",
    "assemble",
]


def device_ids(mesh: Mesh) -> tuple[int, ...]:
    """The device id at each mesh position (iota when the mesh names none)."""
    return mesh.device_ids or tuple(range(mesh.total_size))


def device_coords(mesh: Mesh, device_id: int) -> dict[str, int]:
    """The coordinate of `device_id` along every mesh axis."""
    position = device_ids(mesh).index(device_id)
    coords: dict[str, int] = {}
    for axis in reversed(mesh.axes):
        coords[axis.name] = position % axis.size
        position //= axis.size
    return coords


def _axis_index(axis: AxisRef, coords: dict[str, int], mesh: Mesh) -> int:
    """The coordinate along `axis`; a sub-axis takes its digit of the full axis' coordinate.

    ``"x":(p)s`` is the s-sized digit with sub-axes of total size p to its major side, so
    the minor sub-axes below it have size ``|x| / (p * s)``.
    """
    coord = coords[axis.name]
    info = axis.sub_axis_info
    if info is None:
        return coord
    minor = mesh.axis_size(axis.name) // (info.pre_size * info.size)
    return (coord // minor) % info.size


def _shard_count(axes: Sequence[AxisRef], mesh: Mesh) -> int:
    n = 1
    for axis in axes:
        n *= axis.size(mesh)
    return n


def local_shape(shape: Sequence[int], sharding: TensorSharding, mesh: Mesh) -> tuple[int, ...]:
    """The per-device shape; a dimension the axes do not divide is `UnsupportedError`."""
    result = []
    for dim, size in zip(sharding.dim_shardings, shape, strict=True):
        n = _shard_count(dim.axes, mesh)
        if size % n:
            raise UnsupportedError(
                f"dimension of size {size} is not divisible by its {n} shards in {sharding}; "
                "the checker does not model padding"
            )
        result.append(size // n)
    return tuple(result)


def device_slices(
    shape: Sequence[int], sharding: TensorSharding, mesh: Mesh, device_id: int
) -> tuple[slice, ...]:
    """The index of the global array that `device_id` holds."""
    coords = device_coords(mesh, device_id)
    local = local_shape(shape, sharding, mesh)
    slices = []
    for dim, size in zip(sharding.dim_shardings, local, strict=True):
        index = 0
        for axis in dim.axes:
            index = index * axis.size(mesh) + _axis_index(axis, coords, mesh)
        slices.append(slice(index * size, (index + 1) * size))
    return tuple(slices)


def split(array: np.ndarray, sharding: TensorSharding | None, mesh: Mesh) -> np.ndarray:
    """Every device's piece, stacked: row ``p`` is what device id ``p`` holds.

    With unreduced axes the global value is the sum of the pieces over those axes: the
    device at coordinate 0 of every unreduced axis holds the piece, the others zeros."""
    count = mesh.total_size
    if sharding is None:
        return np.stack([array] * count)
    pieces = [array[device_slices(array.shape, sharding, mesh, p)] for p in range(count)]
    for p in range(count):
        if _off_unreduced(sharding, mesh, p):
            pieces[p] = np.zeros_like(pieces[p])
    return np.stack(pieces)


def _off_unreduced(sharding: TensorSharding, mesh: Mesh, device_id: int) -> bool:
    """Whether `device_id` is not at coordinate 0 of some unreduced axis of `sharding`."""
    if not sharding.unreduced_axes:
        return False
    coords = device_coords(mesh, device_id)
    return any(_axis_index(a, coords, mesh) != 0 for a in sharding.unreduced_axes)


def split_padded(
    array: np.ndarray, sharding: TensorSharding, mesh: Mesh
) -> tuple[np.ndarray, np.ndarray]:
    """`split` of `array` padded at the high end of each dim its shards do not divide (as
    Shardy pads), and which elements of each piece are real (the others are padding)."""
    padded = []
    for dim, size in zip(sharding.dim_shardings, array.shape, strict=True):
        n = _shard_count(dim.axes, mesh)
        padded.append(-(-size // n) * n)
    widths = [(0, p - size) for p, size in zip(padded, array.shape, strict=True)]
    real = np.pad(np.ones(array.shape, dtype=bool), widths)
    return split(np.pad(array, widths), sharding, mesh), split(real, sharding, mesh)


def assemble(
    stacked: np.ndarray, shape: Sequence[int], sharding: TensorSharding | None, mesh: Mesh
) -> tuple[np.ndarray, list[int]]:
    """The global array from per-device pieces, and the devices whose piece disagrees with an
    earlier replica of the same slice (those are reported, not silently dropped).

    With unreduced axes the pieces are partial values: the devices at each coordinate along
    those axes hold one whole array, and the global array is the sum of those arrays."""
    devices = list(range(len(stacked)))
    if sharding is None:
        return stacked[0], [p for p in devices if not _same(stacked[p], stacked[0])]
    if not sharding.unreduced_axes:
        return _assemble(stacked, shape, sharding, mesh, devices)
    groups: dict[tuple[int, ...], list[int]] = {}
    for p in devices:
        coords = device_coords(mesh, p)
        key = tuple(_axis_index(a, coords, mesh) for a in sharding.unreduced_axes)
        groups.setdefault(key, []).append(p)
    whole = replace(sharding, unreduced_axes=())
    total, disagree = np.zeros(shape, dtype=stacked.dtype), []
    for members in groups.values():
        part, bad = _assemble(stacked, shape, whole, mesh, members)
        total = total + part
        disagree += bad
    return total, sorted(disagree)


def _assemble(
    stacked: np.ndarray,
    shape: Sequence[int],
    sharding: TensorSharding,
    mesh: Mesh,
    devices: list[int],
) -> tuple[np.ndarray, list[int]]:
    out = np.zeros(shape, dtype=stacked.dtype)
    written = np.zeros(shape, dtype=bool)
    disagree = []
    for p in devices:
        index = device_slices(shape, sharding, mesh, p)
        if written[index].all() and not _same(out[index], stacked[p]):
            disagree.append(p)
            continue
        out[index] = stacked[p]
        written[index] = True
    return out, disagree


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
