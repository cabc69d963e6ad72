"""MLIR's `canonicalize` restricted to Shardy's labelled patterns (``ir/canonicalization.*``).

The export pipeline runs ``canonicalize`` with only the patterns labelled ``sdy-reshard`` or
``sdy-collective`` enabled, but the greedy driver around them still does its own work, and
that shows in the output:

* constants are uniqued by (dialect, value, type) per isolated-from-above region and hoisted
  to the front of its entry block, in walk order (a later equal constant is replaced by the
  first one, whatever discardable attributes, e.g. shardings, either has);
* trivially dead ops are erased (pure ops with unused results; collectives are not pure).

Patterns run until nothing changes. StableHLO folders are not modelled (the ops our
pipeline sees have none that fire).
"""

from __future__ import annotations

from collections.abc import Callable

from shardwise.ir import Block, Module, Op, Value
from shardwise.ir.walk import collect_post_order
from shardwise.sdy.op_properties import (
    ISOLATED_FROM_ABOVE,
    has_no_memory_effect,
    is_trivially_dead,
)

__all__ = ["Rewriter", "canonicalize", "fused_loc_text", "RESHARD_LABEL", "COLLECTIVE_LABEL"]

RESHARD_LABEL = "sdy-reshard"
COLLECTIVE_LABEL = "sdy-collective"

_CONSTANT_LIKE = frozenset({"stablehlo.constant", "arith.constant"})
_MAX_ITERATIONS = 10
_UNKNOWN_LOC = "loc(unknown)"


def fused_loc_text(*ops: Op) -> str | None:
    """`FusedLoc::get` of the ops' locations (DRR rewrites fuse the matched ops' locations):
    duplicates and unknown locations dropped, a single survivor stands alone."""
    if any(op.loc_text is None for op in ops):
        return ops[0].loc_text
    parts: list[str] = []
    for op in ops:
        inner = op.loc_text[len("loc(") : -1]  # type: ignore[index]
        if inner != "unknown" and inner not in parts:
            parts.append(inner)
    if not parts:
        return _UNKNOWN_LOC
    if len(parts) == 1:
        return f"loc({parts[0]})"
    return "loc(fused[" + ", ".join(parts) + "])"


def _set_unknown_loc(op: Op) -> None:
    """The folder erases the location of a constant it hoists out of a nested block or keeps
    in place of an equal one."""
    if op.loc_text is not None:
        op.loc_text = _UNKNOWN_LOC


class Rewriter:
    """The pattern-facing side of the greedy driver: edits plus worklist bookkeeping."""

    def __init__(self) -> None:
        self.worklist: list[Op] = []

    def push(self, op: Op | None) -> None:
        if op is not None and op.parent is not None:
            self.worklist.append(op)

    def insert_before(self, anchor: Op, op: Op) -> Op:
        block = anchor.parent
        assert block is not None
        block.insert_before(anchor, op)
        self.push(op)
        return op

    def replace_op(self, op: Op, values: list[Value]) -> None:
        for old, new in zip(op.results, values, strict=True):
            users = old.users
            old.replace_all_uses_with(new)
            for user in users:
                self.push(user)
        self.erase_op(op)

    def erase_op(self, op: Op) -> None:
        defining = [v.defining_op for v in op.operands]
        op.erase()
        for d in defining:
            self.push(d)


Pattern = Callable[[Op, Rewriter], bool]


class _ConstantFolder:
    """`OperationFolder::insertKnownConstant`: unique constants, hoist them to the front."""

    def __init__(self) -> None:
        self.uniqued: dict[tuple, Op] = {}
        self.owned: dict[int, tuple] = {}

    @staticmethod
    def _insertion_block(op: Op) -> Block:
        block = op.parent
        assert block is not None
        while block.parent_op is not None and block.parent_op.name not in ISOLATED_FROM_ABOVE:
            parent = block.parent_op.parent
            assert parent is not None
            block = parent
        assert block.parent is not None
        return block.parent.entry

    def _move_to_front_unless_settled(self, op: Op, block: Block) -> None:
        if op.parent is block:
            index = block.ops.index(op)
            if index == 0 or id(block.ops[index - 1]) in self.owned:
                return
        moved_across_blocks = op.parent is not block
        if op.parent is not None:
            op.parent.ops.remove(op)
        block.insert(0, op)
        if moved_across_blocks:
            _set_unknown_loc(op)

    def visit(self, op: Op) -> bool:
        """Returns whether `op` was replaced by an equal earlier constant (and erased)."""
        block = self._insertion_block(op)
        if id(op) in self.owned:
            self._move_to_front_unless_settled(op, block)
            return False
        value = op.properties.get("value", op.attributes.get("value"))
        key = (op.name.split(".")[0], str(value), str(op.results[0].type), id(block))
        existing = self.uniqued.get(key)
        if existing is not None:
            op.results[0].replace_all_uses_with(existing.results[0])
            op.erase()
            _set_unknown_loc(existing)
            return True
        self._move_to_front_unless_settled(op, block)
        self.uniqued[key] = op
        self.owned[id(op)] = key
        return False

    def forget(self, op: Op) -> None:
        key = self.owned.pop(id(op), None)
        if key is not None:
            self.uniqued.pop(key, None)


def _erase_dead(module: Module, folder: _ConstantFolder) -> bool:
    """Region DCE: erase trivially dead ops until none is left."""
    changed = False
    again = True
    while again:
        again = False
        for op in reversed(list(module.op.walk_post_order())):
            if op is module.op or op.parent is None or not is_trivially_dead(op):
                continue
            for nested in op.walk():
                folder.forget(nested)
            op.erase()
            again = changed = True
    return changed


def _run_worklist(
    worklist: list[Op], patterns: dict[str, list[Pattern]], folder: _ConstantFolder
) -> bool:
    rewriter = Rewriter()
    rewriter.worklist = worklist
    changed = False
    while rewriter.worklist:
        op = rewriter.worklist.pop()
        if op.parent is None:
            continue
        unused = True  # `is_trivially_dead` inlined: most ops popped have a used result
        for result in op.results:
            if result.uses:
                unused = False
                break
        if unused and has_no_memory_effect(op):
            for nested in op.walk():
                folder.forget(nested)
            rewriter.erase_op(op)
            changed = True
            continue
        for pattern in patterns.get(op.name, ()):
            if pattern(op, rewriter):
                changed = True
                break
    return changed


def canonicalize(module: Module, patterns: dict[str, list[Pattern]]) -> None:
    """Apply `patterns` (op name -> patterns in benefit order) greedily to a fixpoint."""
    folder = _ConstantFolder()
    for _ in range(_MAX_ITERATIONS):
        worklist: list[Op] = []
        changed = False
        ops: list[Op] = []
        collect_post_order(module.op, ops)
        for op in ops:
            if op.parent is None:
                continue
            if op.name in _CONSTANT_LIKE and folder.visit(op):
                continue  # replaced by an equal constant
            worklist.append(op)
        worklist.reverse()
        # When the worklist changed nothing, it found every op alive in the module as it still
        # is, so the dead-op sweep (a walk and a check per op) would find nothing either.
        if _run_worklist(worklist, patterns, folder):
            changed = True
            _erase_dead(module, folder)
        if not changed:
            return
