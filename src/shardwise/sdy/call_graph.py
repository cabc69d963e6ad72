"""Helpers shared by the import passes: the call graph and func shardings.

Shardy's `walkCalls`/`iterateFuncs` (ir/utils.cc, over MLIR's `CallGraph`); the sharding walker
(`transformShardings`) is `shardwise.sdy.sharding_walker`.
"""

from __future__ import annotations

from collections.abc import Iterator

from shardwise.ir import (
    SHARDING_ATTR,
    Module,
    Op,
    TensorType,
    Value,
    func_input_types,
    ops_in_post_order,
    ops_in_pre_order,
    string_attr_value,
)
from shardwise.sdy import funcs as func_shardings
from shardwise.sdy.funcs import CALL, ORIGINAL_FUNC_NAME_ATTR, callee_name, fill_open, mesh_of
from shardwise.sharding import TensorSharding, TensorShardingPerValue

__all__ = [
    "ORIGINAL_FUNC_NAME_ATTR",
    "calls_by_func",
    "has_body",
    "is_in_module",
    "funcs_in_call_graph_order",
    "ops_in_post_order",
    "ops_in_pre_order",
    "calls_in_call_graph_order",
    "callee_name",
    "original_func_name",
    "is_static_shaped",
    "mesh_of",
    "func_arg_shardings",
    "func_result_shardings",
]


# -- call graph ----------------------------------------------------------------------------------


def has_body(func: Op) -> bool:
    return bool(func.regions) and bool(func.regions[0].blocks)


def calls_by_func(module: Module) -> dict[Op, list[Op]]:
    """The ``func.call`` ops of each top-level func with a body, in program order (one walk).

    The call graph of a pass: build it once and hand it to `funcs_in_call_graph_order`.
    """
    return {func: ops_in_pre_order(func, CALL) for func in module.funcs if has_body(func)}


def _rpo_funcs(module: Module, calls: dict[Op, list[Op]]) -> list[Op]:
    """Funcs with a body in reverse post-order of MLIR's `CallGraph` from the external node.

    The external node has an edge to every top-level func (module order); a func has one
    edge per distinct callee, in the order its calls appear.
    """
    funcs = {module.symbol_name(f): f for f in calls}
    visited: set[int] = set()
    post_order: list[Op] = []

    def callees(func: Op) -> Iterator[Op]:
        for name in dict.fromkeys(callee_name(c) for c in calls[func]):
            target = funcs.get(name)
            if target is not None:
                yield target

    # A depth-first search with an explicit stack (a recursive closure would be a reference
    # cycle holding the whole module until a GC pass: see `Module.release`).
    for root in funcs.values():
        if id(root) in visited:
            continue
        visited.add(id(root))
        stack = [(root, callees(root))]
        while stack:
            func, pending = stack[-1]
            for target in pending:  # resumed after each descent
                if id(target) not in visited:
                    visited.add(id(target))
                    stack.append((target, callees(target)))
                    break
            else:
                stack.pop()
                post_order.append(func)
    return post_order[::-1]


def funcs_in_call_graph_order(
    module: Module, pre_order: bool = False, calls: dict[Op, list[Op]] | None = None
) -> list[Op]:
    """`iterateFuncs`: callees before callers by default, callers first with `pre_order`.

    `calls`: the module's `calls_by_func`, if the caller has it already.
    """
    rpo = _rpo_funcs(module, calls_by_func(module) if calls is None else calls)
    return rpo if pre_order else rpo[::-1]


def calls_in_call_graph_order(
    module: Module, pre_order: bool = False, calls: dict[Op, list[Op]] | None = None
) -> list[Op]:
    """`walkCalls`: the calls of each func (program order) with funcs in call-graph order.

    `calls`: the module's `calls_by_func`, if the caller has it already."""
    if calls is None:
        calls = calls_by_func(module)
    return [c for f in funcs_in_call_graph_order(module, pre_order, calls) for c in calls[f]]


def is_in_module(module: Module, op: Op) -> bool:
    """Whether `op` is (nested) in `module`: not in an op erased or detached since."""
    while op.parent_op is not None:
        op = op.parent_op
    return op is module.op


def original_func_name(func: Op) -> str:
    attr = func.attributes.get(ORIGINAL_FUNC_NAME_ATTR)
    if attr is not None:
        return string_attr_value(attr)
    return string_attr_value(func.get_attr("sym_name"))


# -- small queries -------------------------------------------------------------------------------


def is_static_shaped(value: Value) -> bool:
    return isinstance(value.type, TensorType) and value.type.is_static


def func_arg_shardings(module: Module, func: Op) -> TensorShardingPerValue | None:
    """`getFuncArgShardings`: None if no argument has a sharding on a non-maximal mesh."""
    array = func.properties.get("arg_attrs")
    if array is None or not any(SHARDING_ATTR in d.entries for d in array.elements):
        return None  # no sharding at all (the types are not even parsed)
    types = func_input_types(func)
    shardings = [(_arg_attrs(func, i) or {}).get(SHARDING_ATTR) for i in range(len(types))]
    return _per_value(fill_open(module, shardings, [t.rank for t in types]))


def _arg_attrs(func: Op, index: int) -> dict | None:
    array = func.properties.get("arg_attrs")
    return None if array is None else array.elements[index].entries


def func_result_shardings(module: Module, func: Op) -> TensorShardingPerValue | None:
    """`getFuncResultShardings`: None if no result has a sharding on a non-maximal mesh."""
    return _per_value(func_shardings.func_result_shardings(module, func))


def _per_value(shardings: list[TensorSharding] | None) -> TensorShardingPerValue | None:
    return None if shardings is None else TensorShardingPerValue(tuple(shardings))
