"""The shardings of a func's arguments or results as one list (Shardy's ``ir/utils.cc``).

`getMeshOrRef`, `getFuncResultShardings` and the filling shared with `getFuncArgShardings`,
used by the import passes (call graph) and the export passes (func calls, explicit reshards).
"""

from __future__ import annotations

from collections.abc import Sequence

from shardwise.ir import Module, Op, func_result_types
from shardwise.mesh import Mesh
from shardwise.propagation.sharding_access import get_func_result_sharding
from shardwise.sharding import MeshRef, TensorSharding

__all__ = ["mesh_of", "mesh_or_ref_of", "fill_open", "func_result_shardings"]


def mesh_of(module: Module, sharding: TensorSharding) -> Mesh | None:
    """The sharding's mesh: inlined, or looked up by name (None if the name is unknown)."""
    if isinstance(sharding.mesh_or_ref, Mesh):
        return sharding.mesh_or_ref
    mesh = module.meshes().get(sharding.mesh_or_ref)
    return mesh if isinstance(mesh, Mesh) else None


def mesh_or_ref_of(module: Module, shardings: Sequence[TensorSharding | None]) -> MeshRef | None:
    """`getMeshOrRef`: the mesh of the first sharding whose mesh is not maximal."""
    meshes = None  # read once, on the first named mesh (`Module.meshes` scans the module body)
    for sharding in shardings:
        if sharding is None:
            continue
        mesh = sharding.mesh_or_ref
        if not isinstance(mesh, Mesh):
            meshes = module.meshes() if meshes is None else meshes
            mesh = meshes.get(mesh)
        if isinstance(mesh, Mesh) and not mesh.is_maximal:
            return sharding.mesh_or_ref
    return None


def fill_open(
    module: Module, shardings: Sequence[TensorSharding | None], ranks: Sequence[int]
) -> list[TensorSharding] | None:
    """Every sharding, a missing one fully open on the common mesh; None if there is none."""
    mesh_or_ref = mesh_or_ref_of(module, shardings)
    if mesh_or_ref is None:
        return None
    return [
        s if s is not None else TensorSharding.fully_open(mesh_or_ref, r)
        for s, r in zip(shardings, ranks, strict=True)
    ]


def func_result_shardings(module: Module, func: Op) -> list[TensorSharding] | None:
    """`getFuncResultShardings`: all result shardings (missing ones fully open), None if no mesh."""
    types = func_result_types(func)
    shardings = [get_func_result_sharding(func, i) for i in range(len(types))]
    return fill_open(module, shardings, [t.rank for t in types])
