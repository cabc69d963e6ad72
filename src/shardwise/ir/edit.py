"""Rewriting helpers: what MLIR's OpBuilder/RewriterBase do, for passes that clone and move ops.

Use lists: `Value.uses` is in creation order and MLIR iterates newest first, so creating uses in
the order MLIR creates them is all it takes to get MLIR's order."""

from __future__ import annotations

from typing import Any

from shardwise.errors import UNKNOWN_LOCATION
from shardwise.ir.attrs import copy_attr
from shardwise.ir.core import _NO_REGIONS, Block, Op, Region, Value


def clone_op(op: Op, mapping: dict[Value, Value] | None = None) -> Op:
    """`Operation::clone(mapping)`: a detached deep copy; operands looked up in `mapping`.

    Results and block arguments of the clone are added to `mapping`, so later clones of
    users refer to them (MLIR's `IRMapping`).
    """
    if mapping is None:
        mapping = {}
    # What `Op(...)` would build from the copied parts, its slots set directly (cloning is a
    # tenth of importing a call-heavy model: every call after the first gets a clone).
    new = Op.__new__(Op)
    new.name = op.name
    new.operands = operands = [mapping.get(v, v) for v in op.operands]
    for i, value in enumerate(operands):
        value.uses.append((new, i))
    new.results = []
    for old in op.results:
        result = mapping[old] = Value(old.type, new, len(new.results), old.name)
        new.results.append(result)
    new.properties = {k: copy_attr(v) for k, v in op.properties.items()}
    new.attributes = {k: copy_attr(v) for k, v in op.attributes.items()}
    new.regions = _NO_REGIONS  # type: ignore[assignment]
    new.successors = list(op.successors) if op.successors else op.successors
    new.location = op.location or UNKNOWN_LOCATION
    new.loc_text = op.loc_text
    new.parent = None
    for region in op.regions:
        new.add_region(clone_region(region, mapping))
    return new


def clone_region(region: Region, mapping: dict[Value, Value] | None = None) -> Region:
    """`Region::cloneInto`: blocks (and their arguments) first, then the ops in order."""
    if mapping is None:
        mapping = {}
    new = Region()
    pairs = []
    for block in region.blocks:
        copy = Block(label=block.label)
        for arg in block.args:
            mapping[arg] = copy.add_arg(arg.type, arg.name, arg.location, arg.loc_text)
        new.add_block(copy)
        pairs.append((block, copy))
    for block, copy in pairs:
        for op in block.ops:
            copy.append(clone_op(op, mapping))
    return new


def detach(op: Op) -> Op:
    """Take `op` out of its block (uses are kept), ready to be inserted elsewhere."""
    if op.parent is not None:
        op.parent.ops.remove(op)
        op.parent = None
    return op


def move_before(op: Op, anchor: Op) -> None:
    """`Operation::moveBefore(anchor)`."""
    block = anchor.parent
    assert block is not None
    detach(op)
    block.insert_before(anchor, op)


def move_after(op: Op, anchor: Op) -> None:
    """`Operation::moveAfter(anchor)`."""
    block = anchor.parent
    assert block is not None
    detach(op)
    block.insert_after(anchor, op)


def insert_after_value(op: Op, value: Value) -> None:
    """`setInsertionPointAfterValue` + insert: after the defining op, or first in the block."""
    detach(op)
    if value.defining_op is not None:
        block = value.defining_op.parent
        assert block is not None
        block.insert_after(value.defining_op, op)
    else:
        value.owner.insert(0, op)  # type: ignore[union-attr]


def replace_uses_if(old: Value, new: Value, predicate: Any) -> None:
    """`replaceUsesWithIf`: move the uses of `old` for which `predicate(op, index)` holds.

    Walks MLIR's use list (newest first), like `Value.replace_all_uses_with`.
    """
    for op, i in reversed(list(old.uses)):
        if predicate(op, i):
            op.set_operand(i, new)


def is_before_in_block(a: Op, b: Op) -> bool:
    """`Operation::isBeforeInBlock`: both ops in the same block, `a` strictly first."""
    assert a.parent is not None and a.parent is b.parent
    ops = a.parent.ops
    return ops.index(a) < ops.index(b)
