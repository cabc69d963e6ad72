"""`sdy-sink-data-flow-edges`: the shardings of ``sdy.data_flow_edge`` ops moved onto their
data-flow ops, and the edges erased (Shardy's `export/sink_data_flow_edges.cc`,
`getShardingsFromDataFlowEdges` of `prop/utils.cc`, `saveDebugInfoDictsFromDataFlowEdges`).
"""

from __future__ import annotations

from shardwise.ir import SHARDING_ATTR, ArrayAttr, DictAttr, Op, RawAttr, Value, ops_in_pre_order
from shardwise.passes import FUNC, sdy_pass
from shardwise.sdy import data_flow, manual_computation
from shardwise.sdy.sharding_walker import get_per_value, set_per_value
from shardwise.sdy.shardings import (
    data_flow_edge_for_target,
)
from shardwise.sharding import TensorSharding

__all__ = [
    "EDGES_AND_DATA_FLOW_OPS",
    "set_result_owner_shardings",
    "shardings_from_data_flow_edges",
    "sink_collected_edges",
    "sink_data_flow_edges",
]


EDGES_AND_DATA_FLOW_OPS = data_flow.DATA_FLOW_OPS | {"sdy.data_flow_edge"}


_REGION_OPS = ("sdy.manual_computation", "sdy.named_computation")


def _rank(value: Value) -> int:
    return value.type.rank


def shardings_from_data_flow_edges(owners: list[Value]) -> list[TensorSharding]:
    """`getShardingsFromDataFlowEdges`: the edges' shardings, [] if none names a mesh.

    Owners without an edge (or whose edge has no sharding) get a fully open sharding on the
    mesh of the first edge sharding that refers to its mesh by name.
    """
    shardings: list[TensorSharding | None] = []
    mesh_name: str | None = None
    for owner in owners:
        edge = data_flow_edge_for_target(owner)
        sharding = edge.get_attr("sharding") if edge is not None else None
        if sharding is not None and mesh_name is None:
            mesh_name = sharding.mesh_name
        shardings.append(sharding)
    if mesh_name is None:
        return []
    return [
        s if s is not None else TensorSharding.fully_open(mesh_name, _rank(owner))
        for s, owner in zip(shardings, owners, strict=True)
    ]


def set_block_arg_owner_shardings(op: Op, shardings: list[TensorSharding]) -> None:
    """`setBlockArgumentEdgeOwnerShardings` (manual computations re-add their manual axes)."""
    if op.name == "sdy.manual_computation":
        manual = manual_computation.manual_axes_of(op)
        outer = get_per_value(op, "in_shardings")
        merged = [
            manual_computation.add_free_axes_to_manual_sharding(o, n, manual)
            for o, n in zip(outer, shardings, strict=True)
        ]
        set_per_value(op, "in_shardings", merged)
    elif op.name == "sdy.named_computation":
        set_per_value(op, "in_shardings", shardings)


def set_result_owner_shardings(op: Op, shardings: list[TensorSharding]) -> None:
    """`setOpResultEdgeOwnerShardings`."""
    key = "out_shardings" if op.name in _REGION_OPS else SHARDING_ATTR
    set_per_value(op, key, shardings)


def _block_arg_owners(op: Op) -> list[Value]:
    return list(op.regions[0].entry.args) if op.name in _REGION_OPS else []


def _debug_dicts(owners: list[Value], name: str, edges_only_non_empty: bool) -> ArrayAttr:
    items = []
    for owner in owners:
        edge = data_flow_edge_for_target(owner)
        if edge is None:
            continue
        attr = edge.attributes.get(name)
        if edges_only_non_empty:
            if attr is not None and str(attr) not in ("[]", "#sdy.propagation_edges<[]>"):
                items.append(attr)
        elif isinstance(attr, (DictAttr, RawAttr)):
            items.append(attr)
    return ArrayAttr(items)


def _save_debug_info(op: Op, owners: list[Value], prefix: str, origins: bool, edges: bool):
    """`saveDebugInfoDictsFromDataFlowEdges` (an edge without a dict contributes nothing)."""
    if origins:
        op.attributes[f"sdy.{prefix}_sharding_origins"] = _debug_dicts(
            owners, "sdy.sharding_origins", False
        )
    if edges:
        op.attributes[f"sdy.{prefix}_propagation_edges"] = _debug_dicts(
            owners, "sdy.propagation_edges", True
        )


def _sink_into(op: Op, origins: bool, edges: bool) -> None:
    arg_owners = _block_arg_owners(op)
    shardings = shardings_from_data_flow_edges(arg_owners)
    if shardings:
        set_block_arg_owner_shardings(op, shardings)
    if origins or edges:
        _save_debug_info(op, arg_owners, "block_arg", origins, edges)
    result_owners = list(op.results)
    shardings = shardings_from_data_flow_edges(result_owners)
    if shardings:
        set_result_owner_shardings(op, shardings)
    if origins or edges:
        _save_debug_info(op, result_owners, "result", origins, edges)


def erase_replacing(op: Op, value: Value) -> None:
    op.results[0].replace_all_uses_with(value)
    op.erase()


@sdy_pass("sdy-sink-data-flow-edges", anchor=FUNC)
def sink_data_flow_edges(
    func: Op,
    sink_debug_sharding_origins: bool = False,
    sink_debug_propagation_edge_sharding: bool = False,
) -> None:
    """`sdy-sink-data-flow-edges`: edge shardings move to their data-flow op; edges erased.

    Pre-order, so each data-flow op is visited before its edges (which are its users or live
    in its regions) and reads them before they go.
    """
    sink_collected_edges(
        ops_in_pre_order(func, EDGES_AND_DATA_FLOW_OPS),
        sink_debug_sharding_origins,
        sink_debug_propagation_edge_sharding,
    )


def sink_collected_edges(ops: list[Op], origins: bool = False, edges: bool = False) -> None:
    """`sink_data_flow_edges` on its ops (edges and data-flow ops) collected in pre-order."""
    for op in ops:
        if op.name == "sdy.data_flow_edge":
            erase_replacing(op, op.operands[0])
        elif data_flow.is_data_flow_op(op):
            _sink_into(op, origins, edges)
