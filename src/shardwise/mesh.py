"""Device meshes (Shardy `MeshAxisAttr`, `MeshAttr`).

A mesh is a list of named axes with sizes and an optional device order. With no axes it is
either empty (no devices; a placeholder) or maximal (exactly one device id: the tensor lives
on that one device).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from shardwise.axis import AxisRef, quote_string

__all__ = ["MeshAxis", "Mesh"]


@dataclass(frozen=True, slots=True)
class MeshAxis:
    """A named mesh axis, printed ``"x"=4``."""

    name: str
    size: int

    def __str__(self) -> str:
        return f"{quote_string(self.name)}={self.size}"


@dataclass(frozen=True, slots=True)
class Mesh:
    """Named axes plus an optional explicit device order (empty tuple = iota)."""

    axes: tuple[MeshAxis, ...] = ()
    device_ids: tuple[int, ...] = ()
    _sizes: dict[str, int] = field(init=False, repr=False, compare=False, hash=False)
    _index: dict[str, int] = field(init=False, repr=False, compare=False, hash=False)
    # A mesh is part of the memoized propagation step's key; the device ids can be long.
    _hash: int = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_sizes", {a.name: a.size for a in self.axes})
        object.__setattr__(self, "_index", {a.name: i for i, a in enumerate(self.axes)})
        object.__setattr__(self, "_hash", hash((self.axes, self.device_ids)))

    def __hash__(self) -> int:
        return self._hash

    # -- text -------------------------------------------------------------------------------

    def body_str(self) -> str:
        """The text inside ``#sdy.mesh`` / ``sdy.mesh @m = ``: ``<["a"=2], device_ids=[..]>``."""
        text = "<[" + ", ".join(str(a) for a in self.axes) + "]"
        if self.device_ids:
            text += ", device_ids=[" + ", ".join(str(d) for d in self.device_ids) + "]"
        return text + ">"

    def __str__(self) -> str:
        return "#sdy.mesh" + self.body_str()

    # -- queries ----------------------------------------------------------------------------

    @property
    def is_empty(self) -> bool:
        return not self.axes and not self.device_ids

    @property
    def is_maximal(self) -> bool:
        """No axes and exactly one device id (axes whose sizes multiply to 1 are not maximal)."""
        return not self.axes and len(self.device_ids) == 1

    @property
    def maximal_device_id(self) -> int | None:
        return self.device_ids[0] if self.is_maximal else None

    def has_axis(self, name: str) -> bool:
        return name in self._sizes

    def axis_size(self, name: str) -> int:
        return self._sizes[name]

    def axis_index(self, name: str) -> int:
        return self._index[name]

    @property
    def axis_names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.axes)

    @property
    def total_size(self) -> int:
        return math.prod(a.size for a in self.axes)

    def device_order(self) -> tuple[int, ...]:
        """The explicit device ids, or iota over the total size."""
        return self.device_ids or tuple(range(self.total_size))

    def axis_key(self, axis: AxisRef) -> tuple[int, str, int, float]:
        """Shardy's mesh comparator: axis declaration order, then `AxisRef.sort_key`."""
        return (self._index.get(axis.name, len(self.axes)), *axis.sort_key())

    def equals(self, other: Mesh, ignore_device_ids: bool = False) -> bool:
        if not ignore_device_ids:
            return self == other
        return self.is_maximal == other.is_maximal and self.axes == other.axes
