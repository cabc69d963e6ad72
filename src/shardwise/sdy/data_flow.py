"""Data-flow ops: ops whose results (or block arguments) just carry values from elsewhere.

Shardy's `ShardableDataFlowOpInterface`, implemented for ``stablehlo.while``,
``stablehlo.case``, ``stablehlo.optimization_barrier``, ``sdy.manual_computation`` and
``sdy.named_computation``. Each such op has data-flow edges: an edge has sources (values that
flow in), targets (values that flow out) and one *owner* target whose sharding stands for all
targets. For ``while``, edge i has sources operand i and body-return operand i, owner result i,
and non-owner targets cond arg i and body arg i.
"""

from __future__ import annotations

from typing import TypeGuard

from shardwise.ir import Op, Value
from shardwise.sdy.manual_computation import (
    add_free_axes_to_manual_sharding,
    erase_manual_axes,
    manual_axes_of,
)
from shardwise.sharding import TensorSharding, TensorShardingPerValue

__all__ = [
    "DATA_FLOW_OPS",
    "is_data_flow_op",
    "owning_data_flow_op",
    "edge_owners",
    "edge_owner_from_target",
    "edge_owner_from_source",
    "edge_sources",
    "non_edge_owner_targets",
    "get_edge_owner_sharding",
    "set_edge_owner_sharding",
    "transform_target_sharding",
    "erase_manual_axes",
    "add_free_axes_to_manual_sharding",
    "manual_axes_of",
    "BEFORE_EDGE_PROPAGATION",
    "AFTER_EDGE_PROPAGATION",
]

_REGION_RESULT_OPS = frozenset({"sdy.manual_computation", "sdy.named_computation"})
DATA_FLOW_OPS = frozenset(
    {"stablehlo.while", "stablehlo.case", "stablehlo.optimization_barrier"} | _REGION_RESULT_OPS
)

BEFORE_EDGE_PROPAGATION = "before"
AFTER_EDGE_PROPAGATION = "after"


def is_data_flow_op(op: Op | None) -> TypeGuard[Op]:
    return op is not None and op.name in DATA_FLOW_OPS


def _owning_op(value: Value) -> Op | None:
    if value.defining_op is not None:
        return value.defining_op
    return value.owner.parent_op  # type: ignore[union-attr]


def owning_data_flow_op(value: Value) -> Op | None:
    """The data-flow op owning `value` (as a result or block argument), if any."""
    op = _owning_op(value)
    return op if is_data_flow_op(op) else None


def _terminator_operands(op: Op, region: int = 0) -> list[Value]:
    terminator = op.regions[region].entry.terminator
    return list(terminator.operands) if terminator is not None else []


def edge_owners(op: Op) -> list[Value]:
    """Block-argument owners first (manual/named computation), then result owners."""
    if op.name in _REGION_RESULT_OPS:
        return list(op.regions[0].entry.args) + list(op.results)
    return list(op.results)


def edge_owner_from_target(op: Op, target: Value) -> Value:
    if target.is_block_arg and op.name == "stablehlo.while":
        return op.results[target.index]
    return target


def edge_owner_from_source(op: Op, user: Op, operand_index: int) -> Value:
    """The owner target fed by operand `operand_index` of `user` (the op or its terminator).

    For an operand of a manual/named computation this is the operand itself, not the block
    argument it feeds: Shardy's `getEdgeOwnerFromSource` does so (its comment says block
    argument), so `DataFlowEdgeOp::lookup` finds no edge and a change of such an operand does
    not requeue the body's block-argument edge.
    """
    if user is not op:  # a terminator of one of the op's regions
        return op.results[operand_index]
    if op.name in _REGION_RESULT_OPS:
        return op.operands[operand_index]
    return op.results[operand_index]


def edge_sources(op: Op, owner: Value) -> list[tuple[Op, int]]:
    """The (user op, operand index) pairs whose values flow into the edge of `owner`."""
    if owner.is_block_arg:
        return [(op, owner.index)]
    # The regions of a data-flow op end in their return (a verified module).
    i = owner.index
    if op.name == "stablehlo.while":
        body_return = op.regions[1].entry.terminator
        assert body_return is not None, "a while body without a return"
        return [(op, i), (body_return, i)]
    if op.name == "stablehlo.case":
        sources: list[tuple[Op, int]] = []
        for region in op.regions:
            branch_return = region.entry.terminator
            assert branch_return is not None, "a case branch without a return"
            sources.append((branch_return, i))
        return sources
    if op.name == "stablehlo.optimization_barrier":
        return [(op, i)]
    body_return = op.regions[0].entry.terminator
    assert body_return is not None, f"an {op.name} body without a return"
    return [(body_return, i)]


def non_edge_owner_targets(op: Op, owner: Value) -> list[Value]:
    if op.name == "stablehlo.while" and not owner.is_block_arg:
        return [op.regions[0].entry.args[owner.index], op.regions[1].entry.args[owner.index]]
    return []


# -- manual computation helpers ----------------------------------------------------------------


# -- owner shardings -----------------------------------------------------------------------------


def _per_value(op: Op, key: str) -> list[TensorSharding] | None:
    attr = op.properties.get(key) if key != "sdy.sharding" else op.attributes.get(key)
    if attr is None and key != "sdy.sharding":
        attr = op.attributes.get(key)
    if isinstance(attr, TensorShardingPerValue):
        return list(attr.shardings)
    return None


def get_edge_owner_sharding(op: Op, owner: Value) -> TensorSharding | None:
    if op.name in _REGION_RESULT_OPS:
        if owner.is_block_arg:
            shardings = _per_value(op, "in_shardings")
            if not shardings:
                return None
            sharding = shardings[owner.index]
            if op.name == "sdy.manual_computation":
                sharding = erase_manual_axes(sharding, manual_axes_of(op))
            return sharding
        shardings = _per_value(op, "out_shardings")
        return shardings[owner.index] if shardings else None
    shardings = _per_value(op, "sdy.sharding")
    return shardings[owner.index] if shardings else None


def _open_list(values: list[Value], index: int, sharding: TensorSharding) -> list[TensorSharding]:
    mesh = sharding.mesh_or_ref
    result = [TensorSharding.fully_open(mesh, v.type.rank) for v in values]
    result[index] = sharding
    return result


def set_edge_owner_sharding(op: Op, owner: Value, sharding: TensorSharding) -> None:
    """Store `sharding` for `owner`; missing sibling shardings become fully open."""
    if op.name == "sdy.manual_computation" and owner.is_block_arg:
        manual = manual_axes_of(op)
        outer = _per_value(op, "in_shardings") or []
        local = [erase_manual_axes(s, manual) for s in outer]
        local[owner.index] = sharding
        merged = [
            add_free_axes_to_manual_sharding(o, n, manual)
            for o, n in zip(outer, local, strict=True)
        ]
        op.properties["in_shardings"] = TensorShardingPerValue(tuple(merged))
        return
    if op.name in _REGION_RESULT_OPS:
        key = "in_shardings" if owner.is_block_arg else "out_shardings"
        values = op.regions[0].entry.args if owner.is_block_arg else op.results
        op.properties[key] = _replace_at(_per_value(op, key), list(values), owner, sharding)
        return
    current = _per_value(op, "sdy.sharding")
    op.attributes["sdy.sharding"] = _replace_at(current, list(op.results), owner, sharding)


def _replace_at(
    current: list[TensorSharding] | None,
    values: list[Value],
    owner: Value,
    sharding: TensorSharding,
) -> TensorShardingPerValue:
    if current:
        current[owner.index] = sharding
    else:
        current = _open_list(values, owner.index, sharding)
    return TensorShardingPerValue(tuple(current))


def transform_target_sharding(
    op: Op, target: Value, sharding: TensorSharding, when: str
) -> TensorSharding:
    """Manual computations add/remove their manual axes around edge propagation."""
    if op.name != "sdy.manual_computation":
        return sharding
    manual = manual_axes_of(op)
    in_shardings = _per_value(op, "in_shardings") or []
    out_shardings = _per_value(op, "out_shardings") or []
    if when == BEFORE_EDGE_PROPAGATION:
        if target.is_block_arg:
            return add_free_axes_to_manual_sharding(in_shardings[target.index], sharding, manual)
        return erase_manual_axes(sharding, manual)
    if target.is_block_arg:
        return erase_manual_axes(sharding, manual)
    return add_free_axes_to_manual_sharding(out_shardings[target.index], sharding, manual)
