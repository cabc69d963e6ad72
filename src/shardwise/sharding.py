"""Dimension and tensor shardings (Shardy `DimensionShardingAttr`, `TensorShardingAttr`).

`str()` of each value prints exactly what Shardy prints; `shardwise.syntax` parses it back
(`shardwise.parse_sharding` for users).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace

from shardwise.axis import AxisRef, AxisSizes, axes_size, quote_string
from shardwise.hashing import InternTable, cached_hash
from shardwise.mesh import Mesh

__all__ = [
    "DimensionSharding",
    "TensorSharding",
    "TensorShardingPerValue",
    "ManualAxes",
    "MeshRef",
    "resolve_mesh",
    "common_mesh_or_ref",
    "symbol_ref",
    "interned",
]

# A sharding names its mesh by symbol (``@mesh``) or carries it inline (``mesh<[...]>``).
MeshRef = str | Mesh


def _axes_str(axes: tuple[AxisRef, ...]) -> str:
    return ", ".join(str(a) for a in axes)


@dataclass(frozen=True, slots=True)
class DimensionSharding:
    """Axes sharding one dimension, major to minor; open dims may grow; lower priority wins."""

    axes: tuple[AxisRef, ...] = ()
    is_closed: bool = True
    priority: int | None = None

    def __str__(self) -> str:
        items = [str(a) for a in self.axes]
        if not self.is_closed:
            items.append("?")
        text = "{" + ", ".join(items) + "}"
        if self.priority is not None:
            text += f"p{self.priority}"
        return text

    @property
    def priority_or_default(self) -> int:
        return 0 if self.priority is None else self.priority

    def sharded_size(self, mesh: AxisSizes) -> int:
        return axes_size(self.axes, mesh)

    def drop_priority(self) -> DimensionSharding:
        return replace(self, priority=None) if self.priority is not None else self

    @staticmethod
    def open(axes: tuple[AxisRef, ...] = ()) -> DimensionSharding:
        return DimensionSharding(axes, is_closed=False)

    @staticmethod
    def closed(axes: tuple[AxisRef, ...] = ()) -> DimensionSharding:
        return DimensionSharding(axes, is_closed=True)


@dataclass(frozen=True, slots=True)
class TensorSharding:
    """How one tensor is laid out on a mesh: one `DimensionSharding` per dimension."""

    mesh_or_ref: MeshRef
    dim_shardings: tuple[DimensionSharding, ...] = ()
    replicated_axes: tuple[AxisRef, ...] = ()
    unreduced_axes: tuple[AxisRef, ...] = ()
    reduction_op: str = "sum"
    # Computed on first use: shardings are keys of the memoized propagation step, hashed
    # many times each, and the generated hash would walk every dim and axis each time.
    _hash: int = field(default=0, init=False, repr=False, compare=False)

    __hash__ = cached_hash

    # -- text -------------------------------------------------------------------------------

    def body_str(self) -> str:
        """The part inside ``#sdy.sharding<...>``, also used stripped inside per-value lists."""
        if isinstance(self.mesh_or_ref, Mesh):
            mesh = "mesh" + self.mesh_or_ref.body_str()
        else:
            mesh = symbol_ref(self.mesh_or_ref)
        text = f"{mesh}, [" + ", ".join(str(d) for d in self.dim_shardings) + "]"
        if self.replicated_axes:
            text += ", replicated={" + _axes_str(self.replicated_axes) + "}"
        if self.unreduced_axes:
            op = "" if self.reduction_op == "sum" else self.reduction_op
            text += f", unreduced={op}{{" + _axes_str(self.unreduced_axes) + "}"
        return f"<{text}>"

    def __str__(self) -> str:
        return "#sdy.sharding" + self.body_str()

    # -- queries ----------------------------------------------------------------------------

    @property
    def rank(self) -> int:
        return len(self.dim_shardings)

    @property
    def mesh_name(self) -> str | None:
        return self.mesh_or_ref if isinstance(self.mesh_or_ref, str) else None

    def is_closed(self, dim: int) -> bool:
        return self.dim_shardings[dim].is_closed

    @property
    def is_fully_closed(self) -> bool:
        return all(d.is_closed for d in self.dim_shardings)

    @property
    def is_fully_replicated(self) -> bool:
        """No dimension is sharded (replicated and unreduced axes are ignored)."""
        # A loop, not all(...) over a generator: propagation asks on every write.
        for d in self.dim_shardings:  # noqa: SIM110
            if d.axes:
                return False
        return True

    @property
    def empty_axes(self) -> bool:
        return not self.replicated_axes and not self.unreduced_axes and self.is_fully_replicated

    def dim_axes(self) -> Iterator[AxisRef]:
        for d in self.dim_shardings:
            yield from d.axes

    def all_axes(self) -> Iterator[AxisRef]:
        """Every axis the sharding names: dims, then replicated, then unreduced."""
        yield from self.dim_axes()
        yield from self.replicated_axes
        yield from self.unreduced_axes

    def is_bound(self, axis_name: str) -> bool:
        return any(a.name == axis_name for a in self.all_axes())

    # -- constructors and rewrites ----------------------------------------------------------

    @staticmethod
    @functools.lru_cache(maxsize=1024)
    def fully_open(mesh_or_ref: MeshRef, rank: int) -> TensorSharding:
        """One shared value per (mesh, rank): propagation creates many (frozen, so sharing is
        safe; equal keys of the memoized step then compare by identity)."""
        return TensorSharding(mesh_or_ref, (DimensionSharding.open(),) * rank)

    @staticmethod
    def fully_closed(mesh_or_ref: MeshRef, rank: int) -> TensorSharding:
        return TensorSharding(mesh_or_ref, (DimensionSharding.closed(),) * rank)

    def replace_dims(self, dims: tuple[DimensionSharding, ...]) -> TensorSharding:
        return replace(self, dim_shardings=tuple(dims))

    def closed_like(self) -> TensorSharding:
        """All dims closed, replicated axes dropped, unreduced kept (`getClosedLike`)."""
        # Built field by field: `replace` inspects the fields on every call (export closes
        # every sharding of the module).
        dims = tuple(
            d if d.is_closed else DimensionSharding(d.axes, True, d.priority)
            for d in self.dim_shardings
        )
        return TensorSharding(self.mesh_or_ref, dims, (), self.unreduced_axes, self.reduction_op)

    def open_like(self) -> TensorSharding:
        """All dims open, replicated axes kept (`getOpenLike`)."""
        dims = tuple(replace(d, is_closed=False) for d in self.dim_shardings)
        return replace(self, dim_shardings=dims)

    def is_equivalent(self, other: TensorSharding | None) -> bool:
        """Same mesh and axes per dim; open/closed, priorities, replicated and unreduced axes
        ignored; a fully replicated sharding is equivalent to none.

        This is `isEquivalent` as built into jaxlib 0.10.2; later Shardy (2026-06-23) also
        compares unreduced axes, but 0.10.2 inserts no reshard after a call whose result
        differs from the callee's only in unreduced axes.
        """
        if self.is_fully_replicated:
            return other is None or other.is_fully_replicated
        if other is None or self.mesh_or_ref != other.mesh_or_ref:
            return False
        if self.rank != other.rank:
            return False
        return all(
            a.axes == b.axes for a, b in zip(self.dim_shardings, other.dim_shardings, strict=True)
        )


# `interned(sharding)`: the one shared instance equal to `sharding`. The parser and the
# propagation step intern the shardings they create (see `InternTable`).
interned = InternTable(1 << 16)


@dataclass(frozen=True, slots=True)
class TensorShardingPerValue:
    """The shardings of every result of an op: ``#sdy.sharding_per_value<[<...>, <...>]>``."""

    shardings: tuple[TensorSharding, ...] = ()

    def __str__(self) -> str:
        return "#sdy.sharding_per_value<[" + ", ".join(s.body_str() for s in self.shardings) + "]>"


@dataclass(frozen=True, slots=True)
class ManualAxes:
    """The manual axes of an `sdy.manual_computation`: ``#sdy<manual_axes{"a", "b"}>``."""

    axes: tuple[str, ...] = ()

    def __str__(self) -> str:
        return "#sdy<manual_axes{" + ", ".join(quote_string(a) for a in self.axes) + "}>"


_BARE_ID_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$.")


def _symbol_name(name: str) -> str:
    """A symbol name prints bare when it is an MLIR bare identifier, quoted otherwise.

    Bare: ``[A-Za-z_][A-Za-z0-9_$.]*`` (so ``@m.x$1`` but ``@"m-1"``), as MLIR prints it.
    """
    if (
        name
        and (name[0].isascii() and name[0].isalpha() or name[0] == "_")
        and all(c in _BARE_ID_CHARS for c in name)
    ):
        return name
    return quote_string(name)


def symbol_ref(name: str) -> str:
    """A flat symbol reference as MLIR prints it: ``@mesh``, ``@"odd name"``."""
    return "@" + _symbol_name(name)


# -- the mesh of a sharding ---------------------------------------------------------------------


def resolve_mesh(sharding: TensorSharding, meshes: Mapping[str, object]) -> Mesh | None:
    """The sharding's inline mesh, or the `Mesh` its symbol names in `meshes` (else None)."""
    ref = sharding.mesh_or_ref
    if isinstance(ref, Mesh):
        return ref
    mesh = meshes.get(ref)
    return mesh if isinstance(mesh, Mesh) else None


def common_mesh_or_ref(
    shardings: Sequence[TensorSharding | None], meshes: Mapping[str, object]
) -> MeshRef | None:
    """`getCommonMeshOrRef`: the one mesh every sharding uses, empty meshes aside (the mesh or
    symbol of the first sharding with it); None if they differ, one does not resolve, or there
    is no sharding."""
    mesh_or_ref: MeshRef | None = None
    mesh: Mesh | None = None
    for sharding in shardings:
        if sharding is None:
            continue
        other = resolve_mesh(sharding, meshes)
        if other is None:
            return None
        if mesh is None or mesh.is_empty:
            mesh, mesh_or_ref = other, sharding.mesh_or_ref
        elif not other.is_empty and other != mesh:
            return None
    return mesh_or_ref
