"""`sdy-propagate-sharding-from-func-to-call`: each call result takes its callee's result
sharding (Shardy's `import/propagate_sharding_from_func_to_call.cc`).
"""

from __future__ import annotations

from shardwise.ir import (
    SHARDING_ATTR,
    Module,
    SymbolTable,
)
from shardwise.passes import sdy_pass
from shardwise.sdy.call_graph import (
    func_result_shardings,
    ops_in_post_order,
)
from shardwise.sdy.funcs import CALL, callee_of

__all__ = [
    "propagate_sharding_from_func_to_call",
]


@sdy_pass("sdy-propagate-sharding-from-func-to-call")
def propagate_sharding_from_func_to_call(module: Module) -> None:
    """Calls without ``sdy.sharding`` take their callee's result shardings (if any)."""
    table = SymbolTable(module)
    for op in ops_in_post_order(module.op, CALL):
        if SHARDING_ATTR in op.attributes:
            continue
        shardings = func_result_shardings(module, callee_of(module, op, table))
        if shardings is not None:
            op.attributes[SHARDING_ATTR] = shardings
