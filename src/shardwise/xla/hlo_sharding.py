"""Sdy shardings <-> XLA HloSharding text (``{devices=[2,1,4]<=[8] last_tile_dim_replicate}``).

Export (`to_hlo_sharding`) follows what XLA does when it lowers Shardy's shardings
(``convertToHloSharding`` in XLA's stablehlo round-trip export), in our own words:

1. Split every mesh axis at the sub-axis boundaries the sharding uses (dims and unreduced), in
   mesh order: mesh ``"x"=2, "y"=4`` and sharding ``[{"y":(1)2}, {"x"}]`` give the pieces
   ``"x", "y":(1)2, "y":(2)2`` with sizes ``[2, 2, 2]``.
2. The device array is ``devices.reshape(piece sizes).transpose(perm)`` where `perm` lists the
   pieces of dim 0 (major to minor), dim 1, ..., then manual axes, then unreduced axes, then the
   remaining (replicated) pieces in mesh order: ``perm = (1, 0, 2)``.
3. Reshape it to the tile shape: one entry per tensor dim (the product of its axes), then one
   per subgroup kind present (manual, unreduced, replicated):
   ``{devices=[2,2,2]<=[2,2,2]T(1,0,2) last_tile_dim_replicate}``.
4. Canonicalize as XLA does: size-1 subgroups vanish, a lone replicated subgroup prints as
   ``last_tile_dim_replicate`` (devices sorted within each group), no tiling at all prints
   ``{replicated}`` / ``{manual}`` / ``{unreduced}``; meshes with explicit device ids print the
   device list.

Import (`from_hlo_sharding`) runs this backwards (`shardwise.xla.hlo_decompose`).
Lossy by nature: HloSharding has no open/closed dims, priorities, explicit replicated axes or
reduction kind (`unreduced=max{...}` exports like sum), so those do not round-trip.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from shardwise.axis import AxisRef, SubAxisInfo, add_axis_or_merge, sort_and_merge_axes
from shardwise.errors import ParseError, UnsupportedError, VerifyError
from shardwise.mesh import Mesh
from shardwise.sharding import DimensionSharding, TensorSharding
from shardwise.xla.hlo_decompose import decompose_tiles, level_axes
from shardwise.xla.tile_assignment import TileAssignment, transpose_flat

__all__ = [
    "HloSharding",
    "MANUAL",
    "UNREDUCED",
    "REPLICATED",
    "parse_hlo_sharding",
    "hlo_sharding_for",
    "to_hlo_sharding",
    "from_hlo_sharding",
    "ordered_axis_pieces",
    "tuple_sharding_text",
]

MANUAL = "manual"
UNREDUCED = "unreduced"
REPLICATED = "replicated"
# XLA's order of subgroup kinds after canonicalization (``kOrderedTypes``, restricted to the
# kinds a sharding can have).
_SUBGROUP_ORDER = (MANUAL, UNREDUCED, REPLICATED)


@dataclass(frozen=True, slots=True)
class HloSharding:
    """One (non-tuple) XLA HloSharding; `str()` prints it exactly as XLA's ``ToString``.

    `kind` is ``"replicated"``, ``"manual"``, ``"unreduced"``, ``"maximal"`` (on `device`) or
    ``"tiled"``: `tiles` has one dim per tensor dim, then one per entry of `subgroups`.
    `last_tile_dim_replicate` is the short spelling of a lone replicated subgroup.
    """

    kind: str
    tiles: TileAssignment | None = None
    subgroups: tuple[str, ...] = ()
    last_tile_dim_replicate: bool = False
    device: int = 0

    @property
    def subgroup_kinds(self) -> tuple[str, ...]:
        """The subgroup kind of each trailing tile dim (``last_tile_dim_replicate`` included)."""
        return (REPLICATED,) if self.last_tile_dim_replicate else self.subgroups

    @property
    def data_rank(self) -> int:
        assert self.tiles is not None
        return len(self.tiles.dims) - len(self.subgroup_kinds)

    def __str__(self) -> str:
        if self.kind == "maximal":
            return f"{{maximal device={self.device}}}"
        if self.kind != "tiled":
            return "{" + self.kind + "}"
        text = "{" + str(self.tiles)
        if self.last_tile_dim_replicate:
            text += " last_tile_dim_replicate"
        if self.subgroups:
            text += " last_tile_dims={" + ", ".join(self.subgroups) + "}"
        return text + "}"


def tuple_sharding_text(elements: Sequence[str]) -> str:
    """XLA's tuple sharding: ``{a, b, c, d, e, /*index=5*/f}``."""
    parts = []
    for i, element in enumerate(elements):
        separator = "" if i == 0 else (f", /*index={i}*/" if i % 5 == 0 else ", ")
        parts.append(separator + element)
    return "{" + "".join(parts) + "}"


# -- building a canonical HloSharding ----------------------------------------------------------


def _sort_groups(tiles: TileAssignment) -> TileAssignment:
    """Sort the device ids within each group of the last tile dim (XLA's ``PartialTile``).

    An iota form is left alone: the groups we build list replicated pieces in mesh order, so
    their ids already increase.
    """
    if tiles.devices is None:
        return tiles
    size = tiles.dims[-1]
    flat = list(tiles.devices)
    groups = [sorted(flat[i : i + size]) for i in range(0, len(flat), size)]
    return TileAssignment.explicit(tiles.dims, [d for g in groups for d in g])


def hlo_sharding_for(tiles: TileAssignment, subgroups: Sequence[str]) -> HloSharding:
    """XLA's ``HloSharding::Subgroup``: the canonical sharding of a tile array with subgroups.

    `subgroups` names the kind of each trailing dim of `tiles`, in `_SUBGROUP_ORDER`, each at
    most once (which is all an sdy sharding produces).
    """
    data_dims = tiles.dims[: len(tiles.dims) - len(subgroups)]
    if tiles.num_elements == 1:  # a one-device mesh: XLA prints it replicated
        return HloSharding(subgroups[0] if subgroups else REPLICATED)
    if not subgroups:
        return HloSharding("tiled", tiles)
    if len(set(subgroups)) == 1 and math.prod(data_dims) == 1:
        return HloSharding(subgroups[0])
    kept = [(k, n) for k, n in zip(subgroups, tiles.dims[len(data_dims) :], strict=True) if n > 1]
    tiles = tiles.reshape((*data_dims, *(n for _, n in kept)))
    kinds = tuple(k for k, _ in kept)
    if not kinds:
        return HloSharding("tiled", tiles)
    if kinds == (MANUAL,) and tiles.num_elements == tiles.dims[-1]:
        return HloSharding(MANUAL)
    if kinds[-1] != REPLICATED:
        return HloSharding("tiled", tiles, kinds)
    if tiles.dims[-1] == tiles.num_elements:
        return HloSharding(REPLICATED)
    tiles = _sort_groups(tiles)
    if kinds == (REPLICATED,):
        return HloSharding("tiled", tiles, last_tile_dim_replicate=True)
    return HloSharding("tiled", tiles, kinds)


# -- sdy -> HLO ----------------------------------------------------------------------------------


def ordered_axis_pieces(mesh: Mesh, used: Sequence[AxisRef]) -> list[AxisRef]:
    """Every mesh axis in mesh order, split at each sub-axis boundary in `used`.

    | mesh          | used                  | pieces                                   |
    | "x"=2, "y"=4  | "y":(1)2, "x"         | "x", "y":(1)2, "y":(2)2                  |
    | "x"=8         | "x":(2)2              | "x":(1)2, "x":(2)2, "x":(4)2             |
    | "x"=4         | "x"                   | "x"                                      |
    """
    pieces: list[AxisRef] = []
    for axis in mesh.axes:
        bounds = {1, axis.size}
        for ref in used:
            if ref.name == axis.name and ref.sub_axis_info is not None:
                bounds.update((ref.pre_size, ref.sub_axis_info.next_pre_size))
        edges = sorted(bounds)
        if len(edges) <= 2:  # unsplit (a size-1 axis has the single edge 1)
            pieces.append(AxisRef(axis.name))
            continue
        pieces.extend(
            AxisRef(axis.name, SubAxisInfo(lo, hi // lo)) for lo, hi in itertools.pairwise(edges)
        )
    return pieces


def _check_axes(sharding: TensorSharding, mesh: Mesh, manual_axes: Sequence[str]) -> None:
    for ref in (*sharding.all_axes(), *(AxisRef(a) for a in manual_axes)):
        if not mesh.has_axis(ref.name):
            raise VerifyError(f"unknown axis name: {ref.name!r} is not in mesh {mesh.body_str()}")
    if sharding.unreduced_axes and manual_axes:
        raise UnsupportedError(
            "XLA cannot express a sharding with both unreduced and manual axes: got unreduced "
            f"{{{', '.join(map(str, sharding.unreduced_axes))}}} and manual "
            f"{{{', '.join(manual_axes)}}}; drop one of them"
        )


def to_hlo_sharding(sharding: TensorSharding, mesh: Mesh, manual_axes: Sequence[str] = ()) -> str:
    """The HloSharding text XLA emits for `sharding` on `mesh` (``convertToHloSharding``).

    `manual_axes` are the mesh axes that are manual at this value (inside a
    ``sdy.manual_computation``), in mesh order.

    | mesh          | sharding                              | HloSharding                      |
    | "x"=2, "y"=4  | [{"x"}, {}]                           | {devices=[2,1,4]<=[8] last_tile_dim_replicate} |
    | "x"=2, "y"=4  | [{"y"}, {"x"}]                        | {devices=[4,2]<=[2,4]T(1,0)}     |
    | "x"=2, "y"=4  | [{}, {}]                              | {replicated}                     |
    | <[], device_ids=[3]> | []                             | {maximal device=3}               |
    """
    if not mesh.axes:
        return str(
            HloSharding("maximal", device=mesh.device_ids[0])
            if mesh.is_maximal
            else HloSharding(REPLICATED)
        )
    if len(manual_axes) == len(mesh.axes):
        return str(HloSharding(MANUAL))
    _check_axes(sharding, mesh, manual_axes)
    return str(_tiled_hlo_sharding(sharding, mesh, manual_axes))


def _tiled_hlo_sharding(
    sharding: TensorSharding, mesh: Mesh, manual_axes: Sequence[str]
) -> HloSharding:
    """Steps 1-4 of the module docstring for a mesh with axes."""
    pieces = ordered_axis_pieces(mesh, [*sharding.dim_axes(), *sharding.unreduced_axes])
    index = {piece: i for i, piece in enumerate(pieces)}
    groups: list[list[AxisRef]] = [list(d.axes) for d in sharding.dim_shardings]
    subgroups: list[str] = []
    if manual_axes:
        groups.append([AxisRef(a) for a in manual_axes])
        subgroups.append(MANUAL)
    if sharding.unreduced_axes:
        groups.append(list(sharding.unreduced_axes))
        subgroups.append(UNREDUCED)
    perm: list[int] = []
    for group in groups:
        for ref in group:
            if ref not in index or index[ref] in perm:
                raise VerifyError(f"axis {ref} overlaps another axis of the sharding {sharding}")
            perm.append(index[ref])
    replicated = [i for i in range(len(pieces)) if i not in perm]
    tile_dims = [math.prod(r.size(mesh) for r in group) for group in groups]
    replicated_size = math.prod(pieces[i].size(mesh) for i in replicated)
    if replicated_size > 1:
        tile_dims.append(replicated_size)
        subgroups.append(REPLICATED)
    perm.extend(replicated)
    sizes = [p.size(mesh) for p in pieces]
    if mesh.device_ids:
        devices = transpose_flat(mesh.device_ids, sizes, perm)
        tiles = TileAssignment.explicit(tile_dims, devices)
    else:
        tiles = TileAssignment.iota(tile_dims, sizes, perm)
    return hlo_sharding_for(tiles, subgroups)


# -- parsing ---------------------------------------------------------------------------------------

_LIST = r"\[(\d+(?:,\d+)*)\]"
_TILED_RE = re.compile(
    r"^\{devices=" + _LIST + r"(?:<=" + _LIST + r"(?:T\((\d+(?:,\d+)*)\))?|((?:\d+)(?:,\d+)*))"
    r"( last_tile_dim_replicate)?(?: last_tile_dims=\{([a-z, ]+)\})?\}$"
)
_MAXIMAL_RE = re.compile(r"^\{maximal device=(\d+)\}$")


def _ints(text: str | None) -> tuple[int, ...]:
    return tuple(int(v) for v in text.split(",")) if text else ()


def parse_hlo_sharding(text: str) -> HloSharding:
    """Parse one HloSharding as XLA prints it (no tuples, metadata or shard groups).

    >>> str(parse_hlo_sharding("{devices=[4,2]<=[2,4]T(1,0)}"))
    '{devices=[4,2]<=[2,4]T(1,0)}'
    """
    text = text.strip()
    if text in ("{replicated}", "{manual}", "{unreduced}"):
        return HloSharding(text[1:-1])
    if m := _MAXIMAL_RE.match(text):
        return HloSharding("maximal", device=int(m.group(1)))
    m = _TILED_RE.match(text)
    if m is None:
        raise ParseError(
            f"expected an HloSharding like '{{devices=[2,1]<=[2]}}' or '{{replicated}}', "
            f"got {text!r} (tuple shardings, metadata and shard groups are not supported)"
        )
    dims, reshape, perm, explicit, replicate, kinds = m.groups()
    tile_dims = _ints(dims)
    if explicit is not None:
        devices = _ints(explicit)
        if math.prod(tile_dims) != len(devices):
            raise ParseError(
                f"tile assignment of shape {list(tile_dims)} needs {math.prod(tile_dims)} "
                f"device ids, got {len(devices)} in {text!r}"
            )
        tiles = TileAssignment.explicit(tile_dims, devices)
    else:
        reshape_dims = _ints(reshape)
        order = _ints(perm) or tuple(range(len(reshape_dims)))
        if math.prod(reshape_dims) != math.prod(tile_dims) or sorted(order) != list(
            range(len(reshape_dims))
        ):
            raise ParseError(f"inconsistent iota tile assignment in {text!r}")
        tiles = TileAssignment.iota(tile_dims, reshape_dims, order)
    subgroups = tuple(k.strip() for k in kinds.split(",")) if kinds else ()
    if any(k not in _SUBGROUP_ORDER for k in subgroups):
        raise ParseError(f"unknown subgroup kind in {text!r}: expected manual/unreduced/replicated")
    if len(subgroups) + bool(replicate) > len(tile_dims):
        raise ParseError(f"more subgroup kinds than tile dims in {text!r}")
    return HloSharding("tiled", tiles, subgroups, bool(replicate))


# -- HLO -> sdy ------------------------------------------------------------------------------------


def from_hlo_sharding(
    text: str,
    mesh: Mesh,
    rank: int,
    manual_axes: Sequence[str] = (),
    mesh_ref: str | None = None,
) -> TensorSharding:
    """The simplest closed sdy sharding on `mesh` whose export is `text` (up to XLA's canon).

    Full axes are used where possible, sub-axes only where the tiles cut an axis. The result
    names the mesh by `mesh_ref` if given, else carries `mesh` inline. Raises
    `UnsupportedError` naming the tile dim when the tile assignment cannot be written with
    (sub-)axes of `mesh`.

    | mesh          | text                                            | sharding             |
    | "x"=2, "y"=4  | {devices=[2,1,4]<=[8] last_tile_dim_replicate}  | [{"x"}, {}]          |
    | "x"=2, "y"=4  | {devices=[4,2]<=[2,4]T(1,0)}                    | [{"y"}, {"x"}]       |
    | "x"=8         | {devices=[2,4]<=[8]}                            | [{"x":(1)2}, {"x":(2)4}] |
    """
    hlo = parse_hlo_sharding(text)
    mesh_or_ref: str | Mesh = mesh_ref if mesh_ref else mesh
    if hlo.kind == "tiled":
        dims, unreduced = _import_tiles(hlo, mesh, rank, tuple(manual_axes))
        return TensorSharding(mesh_or_ref, dims, unreduced_axes=unreduced)
    closed = TensorSharding.fully_closed(mesh_or_ref, rank)
    if hlo.kind == REPLICATED:
        return closed
    if hlo.kind == UNREDUCED:
        return replace(
            closed, unreduced_axes=tuple(AxisRef(a.name) for a in mesh.axes if a.size > 1)
        )
    if hlo.kind == MANUAL and set(manual_axes) == set(mesh.axis_names):
        return closed
    if hlo.kind == "maximal" and mesh.maximal_device_id == hlo.device:
        return closed
    raise UnsupportedError(
        f"{text} is not expressible on mesh {mesh.body_str()} with manual axes {list(manual_axes)}"
    )


def _import_tiles(
    hlo: HloSharding, mesh: Mesh, rank: int, manual_axes: tuple[str, ...]
) -> tuple[tuple[DimensionSharding, ...], tuple[AxisRef, ...]]:
    """Dim shardings and unreduced axes of a tiled HloSharding (see `hlo_decompose`)."""
    assert hlo.tiles is not None
    kinds = hlo.subgroup_kinds
    if hlo.data_rank != rank:
        raise UnsupportedError(f"{hlo} tiles {hlo.data_rank} dims but the tensor has rank {rank}")
    if REPLICATED in kinds[:-1] or not mesh.axes:
        raise UnsupportedError(f"{hlo} is not expressible on mesh {mesh.body_str()}")
    position = {device: i for i, device in enumerate(mesh.device_order())}
    flat = hlo.tiles.flat_devices()
    if any(d not in position for d in flat):
        missing = sorted(d for d in flat if d not in position)
        raise UnsupportedError(f"{hlo} uses devices {missing} that mesh {mesh.body_str()} lacks")
    levels = decompose_tiles(
        hlo.tiles.dims, [position[d] for d in flat], bool(kinds) and kinds[-1] == REPLICATED
    )
    axes = [[a for level in dim for a in level_axes(level, mesh)] for dim in levels]
    dims = tuple(DimensionSharding(tuple(_merged(dim, mesh))) for dim in axes[:rank])
    unreduced: tuple[AxisRef, ...] = ()
    for kind, group in zip(kinds, axes[rank:], strict=True):
        if kind == UNREDUCED:
            unreduced = tuple(sort_and_merge_axes(group, mesh, key=mesh.axis_key))
        elif kind == MANUAL and _merged(group, mesh) != [AxisRef(a) for a in manual_axes]:
            raise UnsupportedError(
                f"the manual subgroup of {hlo} spans {', '.join(map(str, group))}, "
                f"not the manual axes {list(manual_axes)}"
            )
    return dims, unreduced


def _merged(axes: Sequence[AxisRef], mesh: Mesh) -> list[AxisRef]:
    merged: list[AxisRef] = []
    for axis in axes:
        add_axis_or_merge(merged, axis, mesh)
    return merged
