"""`sdy-flatten-call-graph`: every call after the first of a callee gets its own (recursive)
clone of it (Shardy's `import/flatten_call_graph.cc`).
"""

from __future__ import annotations

from shardwise.ir import (
    Module,
    Op,
    SymbolTable,
    clone_op,
    string_attr,
    symbol_ref,
)
from shardwise.passes import sdy_pass
from shardwise.sdy.call_graph import (
    ORIGINAL_FUNC_NAME_ATTR,
    calls_in_call_graph_order,
    ops_in_post_order,
    original_func_name,
)
from shardwise.sdy.funcs import CALL, callee_of

__all__ = [
    "clone_func_recursively",
    "flatten_call_graph",
]


def clone_func_recursively(func: Op, table: SymbolTable) -> Op:
    """`cloneFuncRecursively`: a detached clone naming its origin, callees cloned (inserted)."""
    clone = clone_op(func)
    clone.attributes[ORIGINAL_FUNC_NAME_ATTR] = string_attr(original_func_name(func))
    for call in ops_in_post_order(clone, CALL):
        callee = callee_of(table.module, call, table)
        call.properties["callee"] = symbol_ref(table.insert(clone_func_recursively(callee, table)))
    return clone


@sdy_pass("sdy-flatten-call-graph")
def flatten_call_graph(module: Module) -> None:
    """Every call after the first one of a callee gets its own (recursive) clone of it."""
    table = SymbolTable(module)
    seen: set[str] = set()
    for call in calls_in_call_graph_order(module):
        func = callee_of(module, call, table)
        name = module.symbol_name(func) or ""
        if name in seen:
            clone = clone_func_recursively(func, table)
            call.properties["callee"] = symbol_ref(table.insert(clone))
        else:
            seen.add(name)
