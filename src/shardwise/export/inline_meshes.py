"""`sdy-inline-meshes`: every mesh symbol a sharding names written inline, and the
``sdy.mesh`` ops erased (Shardy's `export/inline_meshes.cc`).
"""

from __future__ import annotations

from shardwise.imports.replica_group_meshes import missing_mesh_error
from shardwise.ir import (
    Module,
)
from shardwise.mesh import Mesh
from shardwise.passes import sdy_pass
from shardwise.sdy.sharding_walker import transform_shardings
from shardwise.sharding import TensorSharding

__all__ = [
    "inline_meshes",
]


@sdy_pass("sdy-inline-meshes")
def inline_meshes(module: Module) -> None:
    """`sdy-inline-meshes`: shardings carry their mesh inline; ``sdy.mesh`` ops are erased."""
    meshes = module.meshes()

    def inline(sharding: TensorSharding) -> TensorSharding:
        name = sharding.mesh_name
        if name is None:
            return sharding
        mesh = meshes.get(name)
        assert isinstance(mesh, Mesh), f"unknown mesh @{name}"
        return TensorSharding(
            mesh, sharding.dim_shardings, sharding.replicated_axes, sharding.unreduced_axes
        )

    transform_shardings(module.op, inline)
    for op in list(module.top_level_ops("sdy.mesh")):
        op.erase()
    # The reference erases meshes that replica groups still name; its verifier then fails.
    error = missing_mesh_error(module)
    if error is not None:
        raise error
