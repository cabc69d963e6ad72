"""Func/call helpers shared by the call-graph export passes (Shardy's ``ir/utils.cc``)."""

from __future__ import annotations

from shardwise.ir import (
    SHARDING_ATTR,
    Module,
    Op,
    SymbolTable,
    func_arg_attrs,
    symbol_ref_name,
)
from shardwise.propagation.func_shardings import fill_open, func_result_shardings, mesh_of
from shardwise.sharding import TensorSharding

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


def callee_of(module: Module, call: Op, symbols: SymbolTable | None = None) -> Op:
    """`getFuncOpOrDie(callOp.getCallee())`; pass `symbols` when looking up many calls
    (`Module.lookup_symbol` scans the module body)."""
    name = symbol_ref_name(call.get_attr("callee"))
    func = module.lookup_symbol(name) if symbols is None else symbols.lookup(name)
    assert func is not None and func.name == "func.func", f"unknown callee @{name}"
    return func


def func_arg_shardings(module: Module, func: Op) -> list[TensorSharding] | None:
    """`getFuncArgShardings`: all arg shardings (missing ones fully open), None if no mesh."""
    args = func.regions[0].entry.args
    shardings = []
    for arg in args:
        attrs = func_arg_attrs(func, arg.index)
        shardings.append(attrs.get(SHARDING_ATTR) if attrs is not None else None)
    return fill_open(module, shardings, [a.type.rank for a in args])
