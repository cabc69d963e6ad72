"""`sdy-remove-size-one-axes`: axes of size one dropped from meshes and shardings (Shardy's
`import/remove_size_one_axes.cc`).
"""

from __future__ import annotations

from dataclasses import replace

from shardwise.ir import (
    Module,
)
from shardwise.mesh import Mesh
from shardwise.passes import sdy_pass
from shardwise.sdy.call_graph import mesh_of
from shardwise.sdy.sharding_walker import transform_shardings
from shardwise.sharding import DimensionSharding, TensorSharding

__all__ = [
    "remove_size_one_axes",
]


def _without_size_one_axes(sharding: TensorSharding, mesh: Mesh) -> TensorSharding:
    def keep(axes):
        return tuple(a for a in axes if a.size(mesh) != 1)

    dims = []
    for d in sharding.dim_shardings:
        axes = keep(d.axes)
        # A priority on a closed dim without axes does not verify (it could not matter).
        priority = None if not axes and d.is_closed else d.priority
        dims.append(DimensionSharding(axes, d.is_closed, priority))
    return replace(
        sharding,
        dim_shardings=tuple(dims),
        replicated_axes=keep(sharding.replicated_axes),
        unreduced_axes=keep(sharding.unreduced_axes),
    )


@sdy_pass("sdy-remove-size-one-axes")
def remove_size_one_axes(module: Module) -> None:
    """Drop axes of size 1 from every sharding (dims, replicated, unreduced); meshes keep them."""
    meshes = [op.get_attr("mesh") for op in module.top_level_ops("sdy.mesh")]
    if not any(isinstance(m, Mesh) and any(a.size == 1 for a in m.axes) for m in meshes):
        return

    def transform(sharding: TensorSharding) -> TensorSharding:
        mesh = mesh_of(module, sharding)
        assert mesh is not None, f"unknown mesh {sharding.mesh_or_ref}"
        return _without_size_one_axes(sharding, mesh)

    transform_shardings(module.op, transform)
