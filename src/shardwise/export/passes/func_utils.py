"""Func/call helpers shared by the call-graph export passes (Shardy's ``ir/utils.cc``)."""

from __future__ import annotations

from shardwise.ir import (
    SHARDING_ATTR,
    Module,
    Op,
    Type,
    func_arg_attrs,
    func_result_types,
    symbol_ref_name,
)
from shardwise.mesh import Mesh
from shardwise.propagation.sharding_access import get_func_result_sharding
from shardwise.sharding import MeshRef, TensorSharding

__all__ = [
    "ORIGINAL_FUNC_NAME_ATTR",
    "FUNC_MANUAL_AXES_ATTR",
    "EXECUTION_THREAD_ATTR",
    "callee_of",
    "mesh_of",
    "func_arg_shardings",
    "func_result_shardings",
]

ORIGINAL_FUNC_NAME_ATTR = "sdy.original_func_name"
FUNC_MANUAL_AXES_ATTR = "sdy.func_manual_axes"
EXECUTION_THREAD_ATTR = "execution_thread"


def callee_of(module: Module, call: Op) -> Op:
    """`getFuncOpOrDie(callOp.getCallee())`."""
    name = symbol_ref_name(call.get_attr("callee"))
    func = module.lookup_symbol(name)
    assert func is not None and func.name == "func.func", f"unknown callee @{name}"
    return func


def mesh_of(module: Module, sharding: TensorSharding) -> Mesh | None:
    if isinstance(sharding.mesh_or_ref, Mesh):
        return sharding.mesh_or_ref
    mesh = module.meshes().get(sharding.mesh_or_ref)
    return mesh if isinstance(mesh, Mesh) else None


def _common_mesh(module: Module, shardings: list[TensorSharding | None]) -> MeshRef | None:
    """`getMeshOrRef`: the mesh of the first sharding whose mesh is not maximal."""
    for sharding in shardings:
        if sharding is None:
            continue
        mesh = mesh_of(module, sharding)
        if mesh is not None and not mesh.is_maximal:
            return sharding.mesh_or_ref
    return None


def _fill_open(
    module: Module, shardings: list[TensorSharding | None], types: list[Type]
) -> list[TensorSharding] | None:
    mesh = _common_mesh(module, shardings)
    if mesh is None:
        return None
    return [
        s if s is not None else TensorSharding.fully_open(mesh, t.rank)
        for s, t in zip(shardings, types, strict=True)
    ]


def func_arg_shardings(module: Module, func: Op) -> list[TensorSharding] | None:
    """`getFuncArgShardings`: all arg shardings (missing ones fully open), None if no mesh."""
    args = func.regions[0].entry.args
    shardings = []
    for arg in args:
        attrs = func_arg_attrs(func, arg.index)
        shardings.append(attrs.get(SHARDING_ATTR) if attrs is not None else None)
    return _fill_open(module, shardings, [a.type for a in args])


def func_result_shardings(module: Module, func: Op) -> list[TensorSharding] | None:
    """`getFuncResultShardings`: like `func_arg_shardings` for the results."""
    types = func_result_types(func)
    shardings = [get_func_result_sharding(func, i) for i in range(len(types))]
    return _fill_open(module, shardings, types)
