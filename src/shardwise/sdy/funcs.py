"""Funcs and calls in Shardy's terms (``ir/utils.cc``): the one callee lookup, the shardings
of a func's arguments or results as one list, the mesh of a sharding.

`getFuncOpOrDie`, `getMeshOrRef`, `getFuncArgShardings`, `getFuncResultShardings`, used by the
import passes (call graph) and the export passes (func calls, explicit reshards).
"""

from __future__ import annotations

from collections.abc import Sequence

from shardwise.errors import InputError
from shardwise.ir import (
    SHARDING_ATTR,
    Module,
    Op,
    SymbolTable,
    func_arg_attrs,
    func_result_types,
    symbol_ref_name,
)
from shardwise.mesh import Mesh
from shardwise.sdy.shardings import get_func_result_sharding
from shardwise.sharding import MeshRef, TensorSharding, resolve_mesh

__all__ = [
    "CALL",
    "ORIGINAL_FUNC_NAME_ATTR",
    "FUNC_MANUAL_AXES_ATTR",
    "EXECUTION_THREAD_ATTR",
    "callee_name",
    "callee_of",
    "main_func",
    "mesh_of",
    "mesh_or_ref_of",
    "fill_open",
    "func_arg_shardings",
    "func_result_shardings",
]


# The ops that call a func.
CALL = frozenset({"func.call"})

ORIGINAL_FUNC_NAME_ATTR = "sdy.original_func_name"
FUNC_MANUAL_AXES_ATTR = "sdy.func_manual_axes"
EXECUTION_THREAD_ATTR = "execution_thread"


def callee_name(call: Op) -> str:
    """The name of the func a ``func.call`` calls, unquoted (``@"my-fn"`` -> ``my-fn``)."""
    return symbol_ref_name(call.get_attr("callee"))


def callee_of(module: Module, call: Op, symbols: SymbolTable | None = None) -> Op:
    """`getFuncOpOrDie(callOp.getCallee())`; pass `symbols` when looking up many calls
    (`Module.lookup_symbol` scans the module body)."""
    name = callee_name(call)
    func = module.lookup_symbol(name) if symbols is None else symbols.lookup(name)
    if func is None or func.name != "func.func":
        raise InputError(f"Failed to lookup function: {name}", call.location)
    return func


def main_func(module: Module) -> Op | None:
    """`getMainFuncOrDie(useSingleFunc=true)` but for the dying: the only func, else the func
    named ``main``; None if there is none (each caller says what it needed it for)."""
    funcs = module.funcs
    if len(funcs) == 1:
        return funcs[0]
    main = module.lookup_symbol("main")
    return main if main is not None and main.name == "func.func" else None


def mesh_of(module: Module, sharding: TensorSharding) -> Mesh | None:
    """The sharding's mesh: inlined, or looked up by name (None if the name is unknown)."""
    if isinstance(sharding.mesh_or_ref, Mesh):
        return sharding.mesh_or_ref
    return resolve_mesh(sharding, module.meshes())


def mesh_or_ref_of(module: Module, shardings: Sequence[TensorSharding | None]) -> MeshRef | None:
    """`getMeshOrRef`: the mesh of the first sharding whose mesh is not maximal."""
    for sharding in shardings:
        if sharding is None:
            continue
        ref = sharding.mesh_or_ref
        mesh: MeshRef | None = ref
        if not isinstance(ref, Mesh):
            # The symbol looked up, not `Module.meshes()`: that scans the whole module body,
            # where the meshes come first (passes call this per func: thousands of funcs).
            op = module.lookup_symbol(ref)
            mesh = op.get_attr("mesh") if op is not None and op.name == "sdy.mesh" else None
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


def func_arg_shardings(module: Module, func: Op) -> list[TensorSharding] | None:
    """`getFuncArgShardings`: all arg shardings (missing ones fully open), None if no mesh."""
    args = func.regions[0].entry.args
    shardings = []
    for arg in args:
        attrs = func_arg_attrs(func, arg.index)
        shardings.append(attrs.get(SHARDING_ATTR) if attrs is not None else None)
    return fill_open(module, shardings, [a.type.rank for a in args])
