"""Where the sharding of a value lives, and how to read and write it.

Shardy's `getShardableValue`, `getSharding`, `setSharding` (ir/utils.cc). A value's sharding
is stored on its owner: a func argument's attribute dict, an `sdy.data_flow_edge`'s
``sharding``, a constraint's/reshard's ``sharding``, a collective's ``out_sharding``, a
data-flow op's edge-owner shardings, or otherwise the defining op's ``sdy.sharding``
per-value list. Block arguments of other region ops (reduce bodies, ...) are unshardable:
reading gives None and writing does nothing.
"""

from __future__ import annotations

from shardwise.ir import (
    SHARDING_ATTR,
    Block,
    Op,
    Value,
    func_arg_attrs,
    func_result_attrs,
)
from shardwise.sdy import data_flow
from shardwise.sharding import TensorSharding, TensorShardingPerValue
from shardwise.verify import COLLECTIVE_OPS

__all__ = [
    "COLLECTIVE_OPS",
    "owning_op",
    "data_flow_edge_for_target",
    "data_flow_edge_for_source",
    "shardable_value",
    "get_sharding",
    "get_result_shardings",
    "get_operand_shardings",
    "set_sharding",
    "get_func_result_sharding",
    "set_func_result_sharding",
    "get_op_shardings",
    "replace_sharding_at_index",
    "SPECIAL_OWNERS",
]

_SHARDING_PROPERTY_OPS = frozenset({"sdy.data_flow_edge", "sdy.sharding_constraint", "sdy.reshard"})
# Ops whose results do not simply keep their shardings in the op's ``sdy.sharding`` list.
_SPECIAL_OWNERS = (
    _SHARDING_PROPERTY_OPS | COLLECTIVE_OPS | data_flow.DATA_FLOW_OPS | frozenset({"func.func"})
)
SPECIAL_OWNERS = _SPECIAL_OWNERS


def owning_op(value: Value) -> Op:
    """The defining op, or for a block argument the op owning its region."""
    if value.defining_op is not None:
        return value.defining_op
    op = value.owner.parent_op  # type: ignore[union-attr]
    assert op is not None
    return op


def _single_data_flow_edge_user(owner: Value) -> Op | None:
    if len(owner.uses) != 1:
        return None
    user = owner.uses[0][0]
    return user if user.name == "sdy.data_flow_edge" else None


def data_flow_edge_for_target(target: Value) -> Op | None:
    """`DataFlowEdgeOp::lookup(target)`: the edge op holding this target's sharding."""
    op = data_flow.owning_data_flow_op(target)
    if op is None:
        return None
    return _single_data_flow_edge_user(data_flow.edge_owner_from_target(op, target))


def data_flow_edge_for_source(user: Op, operand_index: int) -> Op | None:
    """`DataFlowEdgeOp::lookup(source)` for operand `operand_index` of `user`."""
    op = user.parent_op if user.is_terminator else user
    if not data_flow.is_data_flow_op(op):
        return None
    owner = data_flow.edge_owner_from_source(op, user, operand_index)
    return _single_data_flow_edge_user(owner)


def shardable_value(value: Value) -> Value | None:
    """`getShardableValue`: the value whose owner stores `value`'s sharding (None if none)."""
    owner = value.owner
    if type(owner) is Op and owner.name not in data_flow.DATA_FLOW_OPS:
        return value  # the result of an op that is no data-flow op (no edge targets it)
    edge = data_flow_edge_for_target(value)
    if edge is not None:
        return edge.results[0]
    if not value.is_block_arg:
        return value
    op = owning_op(value)
    if op.name == "func.func":
        return value
    if data_flow.is_data_flow_op(op):
        return data_flow.edge_owner_from_target(op, value)
    if op.name == "stablehlo.async_start":
        return op.operands[value.index]
    return None


def get_op_shardings(op: Op) -> list[TensorSharding] | None:
    attr = op.attributes.get(SHARDING_ATTR)
    return list(attr.shardings) if isinstance(attr, TensorShardingPerValue) else None


def get_sharding(value: Value) -> TensorSharding | None:
    """The sharding of `value`, or None when it has none (= fully open)."""
    owner = value.owner
    if type(owner) is Op and owner.name not in _SPECIAL_OWNERS:
        # Fast path (most calls): the result of an ordinary op, read from its own list.
        attr = owner.attributes.get(SHARDING_ATTR)
        if isinstance(attr, TensorShardingPerValue) and attr.shardings:
            return attr.shardings[value.index]
        return None
    if type(owner) is Block and owner.parent_op is not None:
        func = owner.parent_op
        if func.name == "func.func":
            # Second fast path: a func argument (`shardable_value` would return it as is; a
            # func is not a data-flow op).
            attrs = func_arg_attrs(func, value.index)
            return attrs.get(SHARDING_ATTR) if attrs is not None else None
    uses = value.uses
    if len(uses) == 1 and uses[0][0].name == "sdy.data_flow_edge":
        # Third fast path: a data-flow edge owner (an edge's operand always is one), whose
        # edge keeps its sharding (`shardable_value` would find that edge).
        return uses[0][0].get_attr("sharding")
    v = shardable_value(value)
    if v is None:
        return None
    op = owning_op(v)
    if op.name == "func.func":
        attrs = func_arg_attrs(op, v.index)
        return attrs.get(SHARDING_ATTR) if attrs is not None else None
    if op.name in _SHARDING_PROPERTY_OPS:
        return op.get_attr("sharding")
    if op.name in COLLECTIVE_OPS:
        return op.get_attr("out_sharding")
    if data_flow.is_data_flow_op(op):
        return data_flow.get_edge_owner_sharding(op, v)
    shardings = get_op_shardings(op)
    return shardings[v.index] if shardings else None


def stores_no_result_sharding(op: Op) -> bool:
    """True if `get_sharding` of each result of `op` is None as `op` stores no list: an
    ordinary op (its results' shardings kept in its own ``sdy.sharding``) without one."""
    if op.name in _SPECIAL_OWNERS:
        return False
    attr = op.attributes.get(SHARDING_ATTR)
    return not (isinstance(attr, TensorShardingPerValue) and attr.shardings)


def get_operand_shardings(op: Op) -> list[TensorSharding | None]:
    """`get_sharding` of every operand of `op`, with its first fast path inline (one call per
    op instead of one per operand: the propagation driver reads them on every visit)."""
    shardings: list[TensorSharding | None] = []
    append = shardings.append
    for value in op.operands:
        owner = value.owner
        if type(owner) is Op and owner.name not in _SPECIAL_OWNERS:
            attr = owner.attributes.get(SHARDING_ATTR)
            if isinstance(attr, TensorShardingPerValue) and attr.shardings:
                append(attr.shardings[value.index])
            else:
                append(None)
        elif type(owner) is Op and owner.name == "sdy.data_flow_edge":
            # Second fast path: an edge's result (a data-flow op's target, in a block the
            # edge's sharding property holds it; `shardable_value` would return it as is).
            append(owner.get_attr("sharding"))
        else:
            append(get_sharding(value))
    return shardings


def get_result_shardings(op: Op) -> list[TensorSharding | None]:
    """`get_sharding` of every result of `op`, reading an ordinary op's list once."""
    if op.name in _SPECIAL_OWNERS:
        return [get_sharding(v) for v in op.results]
    attr = op.attributes.get(SHARDING_ATTR)
    if isinstance(attr, TensorShardingPerValue) and attr.shardings:
        return list(attr.shardings)
    return [None] * len(op.results)


def set_sharding(value: Value, sharding: TensorSharding) -> None:
    """Store `sharding` where `get_sharding(value)` reads it (no-op for unshardable values)."""
    owner = value.owner
    if type(owner) is Op and owner.name not in _SPECIAL_OWNERS:
        replace_sharding_at_index(owner, value.index, sharding)  # as in `get_sharding`
        return
    v = shardable_value(value)
    if v is None:
        return
    op = owning_op(v)
    if op.name == "func.func":
        func_arg_attrs(op, v.index, create=True)[SHARDING_ATTR] = sharding
    elif op.name in _SHARDING_PROPERTY_OPS:
        op.properties["sharding"] = sharding
    elif op.name in COLLECTIVE_OPS:
        op.properties["out_sharding"] = sharding
    elif data_flow.is_data_flow_op(op):
        data_flow.set_edge_owner_sharding(op, v, sharding)
    else:
        replace_sharding_at_index(op, v.index, sharding)


def replace_sharding_at_index(op: Op, index: int, sharding: TensorSharding) -> None:
    """Store `sharding` as result `index`'s in `op`'s own list (the others kept, or fully
    open if it had none): `set_sharding` of a result of an op outside `SPECIAL_OWNERS`."""
    shardings = get_op_shardings(op)
    if shardings is None:
        mesh = sharding.mesh_or_ref
        shardings = [TensorSharding.fully_open(mesh, r.type.rank) for r in op.results]
    shardings[index] = sharding
    op.attributes[SHARDING_ATTR] = TensorShardingPerValue(tuple(shardings))


def get_func_result_sharding(func: Op, index: int) -> TensorSharding | None:
    attrs = func_result_attrs(func, index)
    return attrs.get(SHARDING_ATTR) if attrs is not None else None


def set_func_result_sharding(func: Op, index: int, sharding: TensorSharding) -> None:
    func_result_attrs(func, index, create=True)[SHARDING_ATTR] = sharding
