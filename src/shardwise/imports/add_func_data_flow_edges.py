"""`sdy-add-func-data-flow-edges`: a ``sdy.func_data_flow_edge`` on every func argument and
call result, for propagation across calls in dedup mode (Shardy's
`import/add_func_data_flow_edges.cc`).
"""

from __future__ import annotations

from shardwise.errors import InputError
from shardwise.ir import (
    SHARDING_ATTR,
    Module,
    Op,
    Value,
)
from shardwise.passes import sdy_pass
from shardwise.sdy.call_graph import (
    is_static_shaped,
    ops_in_post_order,
)
from shardwise.sdy.funcs import CALL, main_func
from shardwise.sdy.shardings import get_sharding
from shardwise.sharding import TensorShardingPerValue

__all__ = [
    "add_func_data_flow_edges",
]


def _main_func(module: Module) -> Op:
    main = main_func(module)
    if main is None:
        raise InputError("Failed to lookup function: main", module.op.location)
    return main


def _add_func_edge(value: Value, anchor_block, index: int, owner: Op) -> int:
    """Insert a ``sdy.func_data_flow_edge`` of `value` at `index`; returns the next index."""
    if not is_static_shaped(value):
        return index
    edge = Op(
        "sdy.func_data_flow_edge",
        [value],
        [value.type],
        location=owner.location,
        loc_text=owner.loc_text,
    )
    anchor_block.insert(index, edge)
    value.replace_all_uses_with(edge.results[0], except_op=edge)
    sharding = get_sharding(value)
    if sharding is not None:
        edge.attributes[SHARDING_ATTR] = TensorShardingPerValue((sharding,))
    return index + 1


@sdy_pass("sdy-add-func-data-flow-edges")
def add_func_data_flow_edges(module: Module) -> None:
    """Edge ops after every argument of non-main funcs and after every call result."""
    main = _main_func(module)
    for func in module.funcs:
        if func is main or not func.regions[0].blocks:
            continue
        entry = func.regions[0].entry
        index = 0
        for arg in list(entry.args):
            index = _add_func_edge(arg, entry, index, func)
    for call in ops_in_post_order(module.op, CALL):
        block = call.parent
        assert block is not None
        index = block.ops.index(call) + 1
        for result in list(call.results):
            index = _add_func_edge(result, block, index, call)
