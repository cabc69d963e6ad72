"""`sdy-add-data-flow-edges`: an ``sdy.data_flow_edge`` after every data-flow edge owner.

Shardy's import/add_data_flow_edges.cc and `addDataFlowEdges` (propagation/utils.cc). The
edge op takes over all uses of its owner and a copy of the owner's current sharding.
"""

from __future__ import annotations

from shardwise.ir import Block, Module, Op, Value
from shardwise.passes import sdy_pass
from shardwise.sdy import data_flow
from shardwise.sdy.call_graph import is_static_shaped, ops_in_post_order
from shardwise.sdy.shardings import get_sharding

__all__ = [
    "EdgePlacer",
    "add_data_flow_edges",
    "add_data_flow_edges_for",
    "add_data_flow_edges_to",
    "add_data_flow_edges_to_ops",
]


class EdgePlacer:
    """Where new edge ops go, applied once per block by `flush`.

    An edge goes right after its owner's defining op, or first in the block for a block
    argument; owners are visited last to first, so each new edge lands before the previous
    ones. Placing them one by one would cost a list search per edge on large blocks.
    """

    def __init__(self) -> None:
        self.after: dict[Op, list[Op]] = {}
        self.front: dict[Block, list[Op]] = {}

    def place(self, edge: Op, owner: Value) -> None:
        producer = owner.defining_op
        if producer is not None:
            edge.parent = producer.parent
            self.after.setdefault(producer, []).insert(0, edge)
        else:
            block = owner.owner
            assert isinstance(block, Block)
            edge.parent = block
            self.front.setdefault(block, []).insert(0, edge)

    def flush(self) -> None:
        blocks = {id(op.parent): op.parent for op in self.after if op.parent is not None}
        blocks.update({id(b): b for b in self.front})
        after = self.after
        for block in blocks.values():
            old = block.ops
            ops = list(self.front.get(block, ()))
            start = 0
            # Slices between the anchors: far fewer list operations than one per op.
            for i in [i for i, op in enumerate(old) if op in after]:
                ops += old[start : i + 1]
                ops += after[old[i]]
                start = i + 1
            ops += old[start:]
            block.ops = ops
        self.after.clear()
        self.front.clear()


def add_data_flow_edges_for(owners: list[Value], placer: EdgePlacer | None = None) -> None:
    """Insert an edge op after each statically shaped owner (iterated last to first)."""
    local = placer is None
    placer = placer or EdgePlacer()
    for owner in reversed(owners):
        if not is_static_shaped(owner):
            continue  # tokens and dynamic shapes carry no sharding
        sharding = get_sharding(owner)
        location, loc_text = owner.loc
        edge = Op(
            "sdy.data_flow_edge",
            [owner],
            [owner.type],
            {"sharding": sharding} if sharding is not None else {},
            location=location,
            loc_text=loc_text,
        )
        placer.place(edge, owner)
        owner.replace_all_uses_with(edge.results[0], except_op=edge)
    if local:
        placer.flush()


def add_data_flow_edges_to(op: Op, placer: EdgePlacer | None = None) -> None:
    """Edges for the block-argument owners of `op`, then for its result owners."""
    owners = data_flow.edge_owners(op)
    add_data_flow_edges_for([v for v in owners if v.is_block_arg], placer)
    add_data_flow_edges_for([v for v in owners if not v.is_block_arg], placer)


@sdy_pass("sdy-add-data-flow-edges")
def add_data_flow_edges(module: Module) -> None:
    """Edges for every data-flow op (while, case, optimization_barrier, manual/named computation)."""
    add_data_flow_edges_to_ops(ops_in_post_order(module.op, data_flow.DATA_FLOW_OPS))


def add_data_flow_edges_to_ops(ops: list[Op]) -> None:
    """`add_data_flow_edges` given the module's data-flow ops, in MLIR's walk order."""
    placer = EdgePlacer()
    for op in ops:
        add_data_flow_edges_to(op, placer)
    placer.flush()
