"""The propagation driver's writes and requeues: a step's new shardings stored, and the ops
they affect pushed on the worklist (Shardy's `notifyShardingModified` through MLIR's
`rewriter.modifyOpInPlace`), and the erasure of trivially dead ops (`driver.PropagationDriver`
is a `DriverWrites`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import cast

from shardwise.ir import Module, Op, Value
from shardwise.propagation.settled_op_skip import COMPUTATIONS, SettledOpSkip, SkipHost
from shardwise.propagation.sharding_group_map import ShardingGroupMap
from shardwise.propagation.worklist import Worklist
from shardwise.sdy import data_flow
from shardwise.sdy.funcs import callee_name
from shardwise.sdy.shardings import (
    SPECIAL_OWNERS,
    data_flow_edge_for_source,
    replace_sharding_at_index,
    set_sharding,
    shardable_value,
)
from shardwise.sharding import TensorSharding

__all__ = ["DriverWrites", "Tensors"]


@dataclass(slots=True)
class Tensors:
    """One side (operands or results) of a propagation step: values, shardings, setter
    (None: `set_sharding` of the value, the usual case)."""

    values: Sequence[Value]
    shardings: list[TensorSharding | None]
    setter: Callable[[int, TensorSharding], None] | None = None
    is_func_result: bool = False


class DriverWrites:
    """What a driver run writes and requeues; `PropagationDriver` sets the attributes."""

    module: Module
    worklist: Worklist
    groups: ShardingGroupMap
    skip: SettledOpSkip
    funcs: dict[str | None, Op]
    callers: dict[str, list[Op]]
    # The op being visited (a write does not requeue it), whether the run has written a
    # sharding or erased an op, and whether it has erased one.
    current: Op | None
    changed: bool
    erased: bool

    def _erase(self, op: Op) -> None:
        self.changed = self.erased = True
        for region in reversed(op.regions):
            for block in region.blocks:
                for nested in reversed(list(block.ops)):
                    self._erase(nested)
        self._add_operands_to_worklist(op)
        self.worklist.remove(op)
        op.erase()

    def _add_operands_to_worklist(self, op: Op) -> None:
        for operand in op.operands:
            defining = operand.defining_op
            if defining is None:
                continue
            others = {id(u) for u in operand.users if u is not op}
            if len(others) <= 1:
                self._notify(defining)

    def _notify(self, op: Op) -> None:
        """`rewriter.modifyOpInPlace(op)`: push the op, then its ancestors up to the func."""
        if op is self.current:
            return
        # Not a func: its visit does nothing (no rule, no result, never dead), so whether it is
        # queued changes no other visit (a tenth of all visits were of a func, popped at once).
        # `Op.parent_op` inline (most ops: pushed, then their func, then the module).
        top = self.module.op
        push = self.worklist.push
        item: Op | None = op
        while item is not None and item is not top:
            if item.name != "func.func":
                push(item)
            block = item.parent
            item = block.parent.parent if block is not None and block.parent is not None else None

    # -- re-queuing after a sharding change (notifyShardingModified) ------------------------

    def _notify_sharding_modified(self, value: Value) -> None:
        edge = value.defining_op
        if edge is not None and edge.name == "sdy.data_flow_edge":
            owner_op = data_flow.owning_data_flow_op(edge.operands[0])
            if owner_op is not None:
                for target in data_flow.non_edge_owner_targets(owner_op, edge.operands[0]):
                    self._notify_users_modified(target)
        if value.defining_op is not None:
            self._notify(value.defining_op)
        else:
            self._notify(value.owner.parent_op)  # type: ignore[union-attr,arg-type]
        self._notify_users_modified(value)

    def _notify_users_modified(self, value: Value, seen: set[int] | None = None) -> None:
        # Through calls this can come back to `value` (a callee returning its argument, its
        # result passed to another call of it): Shardy recurses until it crashes; we stop at
        # a value already notified, which re-pushes nothing (the worklist keeps one entry).
        seen = set() if seen is None else seen
        if id(value) in seen:
            return
        seen.add(id(value))
        # MLIR use lists iterate newest use first.
        for user, index in reversed(value.uses):
            edge = data_flow_edge_for_source(user, index)
            if edge is not None:
                self._notify(edge)
            elif user.is_terminator:
                self._notify_terminator_user(user, index, seen)
            elif user.name == "func.call":
                callee = self.funcs.get(callee_name(user))
                if callee is not None and callee.regions and callee.regions[0].blocks:
                    self._notify_users_modified(callee.regions[0].entry.args[index], seen)
            else:
                self._notify(user)

    def _notify_terminator_user(self, user: Op, index: int, seen: set[int]) -> None:
        parent = user.parent_op
        assert parent is not None
        if user.name != "func.return":
            self._notify(parent)
            return
        callers = self.callers.get(self.module.symbol_name(parent) or "", [])
        if not callers:
            self._notify(parent)
            return
        for call in callers:
            self._notify_users_modified(call.results[index], seen)

    # -- writes -----------------------------------------------------------------------------

    def _write_step(
        self,
        operands: Tensors,
        results: Tensors,
        new_operands: tuple,
        new_results: tuple,
        notify: bool,
    ) -> bool:
        """Write a step's new shardings (None: unchanged); whether any tensor changed."""
        changed = False
        for side, news in ((operands, new_operands), (results, new_results)):
            for i, new in enumerate(news):
                if new is not None and self._update_tensor(side, i, new, notify):
                    changed = True
        return changed

    def _write_op_step(
        self,
        op: Op,
        operand_shardings: list[TensorSharding | None],
        result_shardings: list[TensorSharding | None],
        new_operands: tuple,
        new_results: tuple,
    ) -> bool:
        """`_write_step` of a registered op's step (values set with `set_sharding`, notified):
        a value an ordinary op keeps in its own list, with no sharding group, takes
        `_write_plain` (`_update_tensor`'s work for it, the calls that do nothing left out);
        any other value `_update_tensor`."""
        changed = False
        value_to_group = self.groups.value_to_group
        for values, olds, news in (
            (op.operands, operand_shardings, new_operands),
            (op.results, result_shardings, new_results),
        ):
            for i, new in enumerate(news):
                if new is None:
                    continue
                old = olds[i]
                if new is old or (old is None and new.empty_axes) or new == old:
                    continue
                value = values[i]
                owner = value.owner
                if (
                    type(owner) is Op
                    and owner.name not in SPECIAL_OWNERS
                    and (not value_to_group or id(value) not in value_to_group)
                ):
                    self._write_plain(value, owner, old, new)
                    changed = True
                elif self._update_tensor(Tensors(values, olds), i, new, True):
                    changed = True
        return changed

    def _write_plain(
        self, value: Value, owner: Op, old: TensorSharding | None, new: TensorSharding
    ) -> None:
        """`_update_tensor` of `value`, a result of `owner`, an ordinary op (not a data-flow
        op, edge, constraint, collective or func: its list holds the sharding, and
        `shardable_value` is `value` itself), in no sharding group, notified."""
        self.changed = True
        replace_sharding_at_index(owner, value.index, new)
        uses = value.uses
        skip = self.skip
        if not skip.unrequeued_write:
            # `note_write` does something only for a computation's operand or the first
            # sharding of one result of several.
            if old is None and len(owner.results) > 1:
                skip.note_write(cast(SkipHost, self), value, value, old, True)
            else:
                for user, _ in uses:
                    if user.name in COMPUTATIONS:
                        skip.note_write(cast(SkipHost, self), value, value, old, True)
                        break
        # `_notify_sharding_modified(value)`: the value is no edge's result.
        self._notify(owner)
        # `_notify_users_modified(value)`, its usual case inline: a user that is no data-flow
        # op, call or terminator (the last op of its block) is pushed with its ancestors.
        seen: set[int] | None = None
        for user, index in reversed(uses):
            name = user.name
            block = user.parent
            if (
                name not in data_flow.DATA_FLOW_OPS
                and name != "func.call"
                and (block is None or block.ops[-1] is not user)
            ):
                self._notify(user)
                continue
            if seen is None:
                seen = {id(value)}
            edge = data_flow_edge_for_source(user, index)
            if edge is not None:
                self._notify(edge)
            elif user.is_terminator:
                self._notify_terminator_user(user, index, seen)
            elif name == "func.call":
                callee = self.funcs.get(callee_name(user))
                if callee is not None and callee.regions and callee.regions[0].blocks:
                    self._notify_users_modified(callee.regions[0].entry.args[index], seen)
            else:
                self._notify(user)

    def _update_tensor(self, side: Tensors, i: int, new: TensorSharding, notify: bool) -> bool:
        old = side.shardings[i]
        if new is old or (old is None and new.empty_axes) or new == old:
            return False
        self.changed = True
        if side.setter is None:
            set_sharding(side.values[i], new)
        else:
            side.setter(i, new)
        if side.is_func_result:
            return True
        # Shardy re-queues, and mirrors to the sharding group, the value that owns the
        # sharding (`getShardableValue`): e.g. the while result for its body's block argument.
        value = shardable_value(side.values[i]) or side.values[i]
        skip = self.skip
        if not skip.unrequeued_write:
            skip.note_write(cast(SkipHost, self), side.values[i], value, old, notify)
        if notify:
            self._notify_sharding_modified(value)
        for member in self.groups.members(value):
            if member is value:
                continue
            if not skip.unrequeued_write:
                skip.note_write(cast(SkipHost, self), member, member, None, notify)
            set_sharding(member, new)
            if notify:
                self._notify_sharding_modified(member)
        return True
