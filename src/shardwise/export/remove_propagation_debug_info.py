"""`sdy-remove-propagation-debug-info`: the sharding origins and propagation edges that debug
options saved, removed (Shardy's `export/remove_propagation_debug_info.cc`).
"""

from __future__ import annotations

from shardwise.ir import (
    Module,
    Op,
    func_arg_attrs,
    func_result_attrs,
    func_result_types,
)
from shardwise.passes import sdy_pass

__all__ = [
    "PROPAGATION_DEBUG_ATTRS",
    "remove_propagation_debug_info",
]


PROPAGATION_DEBUG_ATTRS = (
    "sdy.propagation_edges",
    "sdy.block_arg_propagation_edges",
    "sdy.result_propagation_edges",
    "sdy.sharding_origins",
    "sdy.block_arg_sharding_origins",
    "sdy.result_sharding_origins",
)


def _remove_func_debug_attrs(func: Op) -> None:
    num_args = len(func.regions[0].entry.args) if func.regions[0].blocks else 0
    dicts = [func_arg_attrs(func, i) for i in range(num_args)]
    dicts += [func_result_attrs(func, i) for i in range(len(func_result_types(func)))]
    for attrs in dicts:
        for name in PROPAGATION_DEBUG_ATTRS:
            if attrs is not None:
                attrs.pop(name, None)


@sdy_pass("sdy-remove-propagation-debug-info")
def remove_propagation_debug_info(module: Module) -> None:
    """`sdy-remove-propagation-debug-info`: drop edge/origin debug attributes everywhere."""
    for op in module.walk():
        if op.name == "func.func":
            _remove_func_debug_attrs(op)
            continue
        for name in PROPAGATION_DEBUG_ATTRS:
            op.attributes.pop(name, None)
