"""Reject what jaxlib 0.10.2's global-to-local gets wrong on sub-axes: device offsets.

The reference's `getShardIndex` reads a sub-axis ``"x":(p)s`` of an axis of size X as the
digit ``(coord_x // p) % s``. By Shardy's definition (the axis reshaped as ``[p, s, X/(p*s)]``,
which XLA's tile assignments follow too) the digit is ``(coord_x // (X / (p*s))) % s``. The two
agree only when ``p == X / (p*s)``: a sub-axis with as much of the axis on its major side as
on its minor side (``"x":(2)2`` of ``x=8``). For any other sub-axis, every offset table the
conversion builds from `getShardIndex` gives devices the wrong piece: the ``dynamic_slice`` of
an ``sdy.all_slice``, a sharded ``iota``, a ``pad`` or ``gather``/``scatter`` offset. Found by
``shardwise fuzz --check`` (docs/fuzzing.md); `shardwise check` shows the wrong values, and
the reference's own chain prints the same program.

`check_skewed_sub_axes` raises a `ShardwiseError` at the first such op, so that `partition`
never writes the wrong program. (The pairs of a ``collective_permute`` over sub-axes come
from the same formula; `partition` rejects those itself.)
"""

from __future__ import annotations

from shardwise.axis import AxisRef
from shardwise.errors import ShardwiseError
from shardwise.ir import Module, Op
from shardwise.mesh import Mesh
from shardwise.sharding import TensorSharding

__all__ = ["OFFSET_OPS", "check_skewed_sub_axes", "skewed"]

# Ops whose per-device program reads this device's offset along a sharded dim from a table
# built by `getShardIndex`.
OFFSET_OPS = frozenset(
    {"sdy.all_slice", "stablehlo.iota", "stablehlo.pad", "stablehlo.gather", "stablehlo.scatter"}
)


def skewed(axis: AxisRef, mesh: Mesh) -> bool:
    """Whether the reference's reading of sub-axis `axis` differs from Shardy's definition."""
    info = axis.sub_axis_info
    if info is None:
        return False
    minor = mesh.axis_size(axis.name) // (info.pre_size * info.size)
    return minor != info.pre_size


def check_skewed_sub_axes(module: Module) -> None:
    """Raise at the first op of `OFFSET_OPS` whose shardings hold a skewed sub-axis."""
    from shardwise.sdy.shardings import get_sharding

    meshes = module.meshes()
    for op in module.walk():
        if op.name not in OFFSET_OPS:
            continue
        for value in (*op.operands, *op.results):
            sharding = get_sharding(value)
            if sharding is not None:
                _check(op, sharding, meshes)


def _check(op: Op, sharding: TensorSharding, meshes: dict[str, object]) -> None:
    ref = sharding.mesh_or_ref
    mesh = ref if isinstance(ref, Mesh) else meshes.get(str(ref).lstrip("@"))
    if not isinstance(mesh, Mesh):
        return
    for dim in sharding.dim_shardings:
        for axis in dim.axes:
            if skewed(axis, mesh):
                raise ShardwiseError(
                    f"'{op.name}' with sharding {sharding} takes device offsets along the "
                    f"sub-axis {axis}: jaxlib 0.10.2's sdy-convert-global-to-local reads that "
                    "sub-axis as the wrong digit of the axis and gives devices the wrong "
                    "pieces (a wrong program); shard on whole axes there (an "
                    "sdy.sharding_constraint), or give the per-device program yourself",
                    op.location,
                )
