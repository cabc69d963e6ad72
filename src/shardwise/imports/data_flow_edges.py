"""`sdy-add-data-flow-edges`: an ``sdy.data_flow_edge`` after every data-flow edge owner.

Shardy's import/add_data_flow_edges.cc and `addDataFlowEdges` (propagation/utils.cc). The
edge op takes over all uses of its owner and a copy of the owner's current sharding.
"""

from __future__ import annotations

from shardwise.imports.common import is_static_shaped
from shardwise.ir import Module, Op, Value, insert_after_value
from shardwise.propagation import data_flow
from shardwise.propagation.sharding_access import get_sharding

__all__ = ["add_data_flow_edges", "add_data_flow_edges_for"]


def _value_location(value: Value) -> tuple:
    op = value.defining_op
    if op is not None:
        return op.location, op.loc_text
    return value.location, None


def add_data_flow_edges_for(owners: list[Value]) -> None:
    """Insert an edge op after each statically shaped owner (iterated last to first)."""
    for owner in reversed(owners):
        if not is_static_shaped(owner):
            continue  # tokens and dynamic shapes carry no sharding
        sharding = get_sharding(owner)
        location, loc_text = _value_location(owner)
        edge = Op(
            "sdy.data_flow_edge",
            [owner],
            [owner.type],
            {"sharding": sharding} if sharding is not None else {},
            location=location,
            loc_text=loc_text,
        )
        insert_after_value(edge, owner)
        owner.replace_all_uses_with(edge.results[0], except_op=edge)


def _block_arg_owners(op: Op) -> list[Value]:
    return [v for v in data_flow.edge_owners(op) if v.is_block_arg]


def _result_owners(op: Op) -> list[Value]:
    return [v for v in data_flow.edge_owners(op) if not v.is_block_arg]


def add_data_flow_edges_to(op: Op) -> None:
    add_data_flow_edges_for(_block_arg_owners(op))
    add_data_flow_edges_for(_result_owners(op))


def add_data_flow_edges(module: Module) -> None:
    """Edges for every data-flow op (while, case, optimization_barrier, manual/named computation)."""
    for op in list(module.op.walk_post_order()):
        if data_flow.is_data_flow_op(op):
            add_data_flow_edges_to(op)
