"""`sdy-sink-func-data-flow-edges`: the shardings of ``sdy.func_data_flow_edge`` ops moved
onto func arguments and call results, and the edges erased (Shardy's
`export/sink_func_data_flow_edges.cc`).
"""

from __future__ import annotations

from shardwise.export.sink_data_flow_edges import erase_replacing
from shardwise.ir import Op, ops_in_pre_order
from shardwise.passes import FUNC, sdy_pass
from shardwise.sdy.shardings import (
    get_sharding,
    set_sharding,
)
from shardwise.sharding import TensorSharding

__all__ = [
    "sink_func_data_flow_edges",
]


_FUNC_DATA_FLOW_EDGE = frozenset({"sdy.func_data_flow_edge"})


@sdy_pass("sdy-sink-func-data-flow-edges", anchor=FUNC)
def sink_func_data_flow_edges(func: Op) -> None:
    """`sdy-sink-func-data-flow-edges`: the edge's sharding (or a fully open one) moves to
    its operand's owner; the edge is erased."""
    for op in ops_in_pre_order(func, _FUNC_DATA_FLOW_EDGE):
        operand = op.operands[0]
        operand_sharding = get_sharding(operand)
        sharding = get_sharding(op.results[0])
        if sharding is not None:
            set_sharding(operand, sharding)
        elif operand_sharding is not None:
            set_sharding(
                operand,
                TensorSharding.fully_open(operand_sharding.mesh_or_ref, operand_sharding.rank),
            )
        erase_replacing(op, operand)
