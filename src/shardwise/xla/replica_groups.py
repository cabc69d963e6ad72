"""Replica groups of a collective over mesh axes: what a backend needs to emit it in HLO.

A collective over axes ``A`` (an all-reduce over ``{"x"}``, an all-gather along ``{"y", "x"}``)
talks within each group of devices that agree on every coordinate outside ``A``. Groups are
listed in mesh order of those other coordinates; inside a group, devices are ordered by their
coordinates on ``A`` taken major to minor in the order given (for an all-gather that is the
order of the gathered pieces). This is XLA's ``MeshAxesReplicaGroupList`` in our own words:

    devices.reshape(mesh pieces).transpose(other pieces in mesh order + A in given order)

cut into rows of ``|A|`` devices. With an iota device order the result prints as XLA's iota
replica-group list, ``replica_groups=[4,2]<=[2,4]T(1,0)``; with explicit device ids only the
explicit list ``replica_groups={{7,3},{6,2},...}`` says it.

| mesh          | axes          | groups                          | iota text              |
| "x"=2, "y"=4  | "y"           | {0,1,2,3},{4,5,6,7}             | [2,4]<=[8]             |
| "x"=2, "y"=4  | "x"           | {0,4},{1,5},{2,6},{3,7}         | [4,2]<=[2,4]T(1,0)     |
| "x"=2, "y"=4  | "y", "x"      | {0,4,1,5,2,6,3,7}               | [1,8]<=[2,4]T(1,0)     |
| "x"=2, "y"=4  | "y":(1)2      | {0,2},{1,3},{4,6},{5,7}         | [4,2]<=[2,2,2]T(0,2,1) |
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from shardwise.axis import AxisRef
from shardwise.errors import VerifyError
from shardwise.mesh import Mesh
from shardwise.xla.hlo_sharding import ordered_axis_pieces
from shardwise.xla.tile_assignment import canonical_iota, iota_suffix, transpose_flat

__all__ = ["ReplicaGroups", "replica_groups", "groups_text"]


@dataclass(frozen=True, slots=True)
class ReplicaGroups:
    """The device groups of one collective, with XLA's iota spelling when there is one."""

    groups: tuple[tuple[int, ...], ...]
    iota: str | None = None

    @property
    def num_groups(self) -> int:
        return len(self.groups)

    @property
    def group_size(self) -> int:
        return len(self.groups[0]) if self.groups else 0

    def explicit_text(self) -> str:
        """``{{0,4},{1,5}}``: XLA's explicit replica-group list."""
        return groups_text(self.groups)

    def __str__(self) -> str:
        """The spelling XLA would print: the iota form if any, else the explicit list."""
        return self.iota if self.iota is not None else self.explicit_text()


def groups_text(groups: Sequence[Sequence[int]]) -> str:
    """``{{0,1},{2,3}}``.

    >>> groups_text([[0, 1], [2, 3]])
    '{{0,1},{2,3}}'
    """
    return "{" + ",".join("{" + ",".join(str(d) for d in g) + "}" for g in groups) + "}"


def _axis_refs(mesh: Mesh, axes: Sequence[AxisRef | str]) -> list[AxisRef]:
    """The axes as `AxisRef`s, checked against the mesh and against each other."""
    refs = [AxisRef(a) if isinstance(a, str) else a for a in axes]
    for i, ref in enumerate(refs):
        if not mesh.has_axis(ref.name):
            raise VerifyError(f"unknown axis name: {ref.name!r} is not in mesh {mesh.body_str()}")
        full = mesh.axis_size(ref.name)
        if ref.sub_axis_info is not None and full % ref.sub_axis_info.next_pre_size:
            raise VerifyError(f"sub-axis {ref} does not divide axis of size {full}")
        for other in refs[:i]:
            if ref.overlaps(other) or not ref.can_coexist(other):
                raise VerifyError(f"collective axes {other} and {ref} overlap")
    return refs


def replica_groups(mesh: Mesh, axes: Sequence[AxisRef | str]) -> ReplicaGroups:
    """The replica groups of a collective over `axes` (names or `AxisRef`s) on `mesh`.

    Raises `VerifyError` for an axis the mesh lacks or two overlapping axes.
    """
    refs = _axis_refs(mesh, axes)
    if not mesh.axes:
        return ReplicaGroups(tuple((d,) for d in mesh.device_order()))
    pieces = ordered_axis_pieces(mesh, refs)
    grouped = [pieces.index(ref) for ref in refs]
    perm = [i for i in range(len(pieces)) if i not in grouped] + grouped
    sizes = [p.size(mesh) for p in pieces]
    flat = transpose_flat(mesh.device_order(), sizes, perm)
    size = math.prod(sizes[i] for i in grouped)
    groups = tuple(tuple(flat[i : i + size]) for i in range(0, len(flat), size))
    iota = None
    if not mesh.device_ids:
        reshape_dims, order = canonical_iota(sizes, perm)
        iota = iota_suffix((len(groups), size), reshape_dims, order)
    return ReplicaGroups(groups, iota)
