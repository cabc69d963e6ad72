"""Skipping settled ops: the driver's worklist and what lets a run pop an op without a visit.

A run of the propagation driver (`driver.PropagationDriver`) right after another of the same
op-priority level starts where most ops are at a fixed point: the previous run left them
settled (their last step changed nothing) under the same per-factor directions. Such an op
stays at its fixed point until a write reaches it, and every write either requeues the ops that
read it (Shardy's `notifyShardingModified`), names them (`_note_unrequeued_readers`), or marks
the run (`unrequeued_write`): then the next run skips nothing. The driver pops the ops it may
skip without a visit, in the order its full loop would pop them, so the result is Shardy's.
`PropagationDriver.check_skips` computes every skipped visit and fails if it would change
anything (the tests and fuzz campaigns turn it on).

`SettledOpSkip` holds the driver's methods for this (a mixin: they read the driver's state).
"""

from __future__ import annotations

from collections.abc import Sequence

from shardwise.ir import SHARDING_RULE_ATTR, Op, Value
from shardwise.propagation.factor_propagation import propagate_op_shardings
from shardwise.rules.registry import has_rule_function
from shardwise.rules.rule import OpShardingRule
from shardwise.sdy import data_flow
from shardwise.sdy.op_properties import has_no_memory_effect, is_elementwise
from shardwise.sdy.shardings import (
    data_flow_edge_for_source,
    get_operand_shardings,
    get_result_shardings,
)
from shardwise.sharding import TensorSharding

__all__ = ["ANY_DIRECTIONS", "SettledOpSkip", "Worklist"]


class Worklist:
    """MLIR's greedy-driver worklist: a LIFO stack with set semantics and O(1) removal.

    The driver loop pops inline: the last entry of `_stack` (None: removed), dropping its
    `_index` entry."""

    def __init__(self) -> None:
        self._stack: list[Op | None] = []
        self._index: dict[int, int] = {}
        # While the driver skips settled seeded ops (`PropagationDriver._greedy`): the stack
        # entries below `skippable` are seeded ops it may pop without a visit, but for those
        # flagged in `required` (by stack index), which a push asked for (an op already on
        # the worklist keeps its place) or which were known to need a visit from the start.
        self.skippable = 0
        self.required = bytearray()

    def push(self, op: Op) -> None:
        i = self._index.get(id(op))
        if i is not None:
            if i < self.skippable:
                self.required[i] = 1
            return
        self._index[id(op)] = len(self._stack)
        self._stack.append(op)

    def require(self, op_ids: list[int]) -> None:
        """The ops with these ids need a visit even if they are skippable."""
        for op_id in op_ids:
            i = self._index.get(op_id)
            if i is not None and i < self.skippable:
                self.required[i] = 1

    def remove(self, op: Op) -> None:
        index = self._index.pop(id(op), None)
        if index is not None:
            self._stack[index] = None

    def seed(self, ops: list[Op], index: dict[int, int] | None = None) -> dict[int, int]:
        """Push `ops` last to first (the first is popped first) onto an empty worklist.

        `index`: what a seed with the same `ops` returned (copied: cheaper than rebuilt)."""
        assert not self._index, "seeding a worklist that is not empty"
        self._stack = ops[::-1]
        if index is None:
            index = dict(zip(map(id, self._stack), range(len(self._stack)), strict=True))
        self._index = index.copy()
        return index


class SettledOpSkip:
    """The driver's methods that decide which seeded ops a run visits (see the module doc)."""

    def _pop_unvisited(self, keep: int) -> None:
        """Pop the worklist's entries above the first `keep` without visiting them: each
        visit is known to change nothing (`check_skips` computes it to make sure)."""
        stack, index = self.worklist._stack, self.worklist._index
        popped = stack[keep:]
        if self.check_skips:
            for op in popped:
                if op is not None:
                    self._check_skipped(op)
        for op in popped:
            if op is not None:
                del index[id(op)]
        del stack[keep:]

    def _positions_to_visit(self, seed: list[Op], patterns: dict) -> list[int]:
        """Positions in `seed` of the ops `_greedy` visits while the previous run vouches for
        the module: those the previous run left unsettled, and those whose `_visit_key` says
        so (directions changed, or not comparable). The others are settled with the same
        directions, or have no rule: their visits would change nothing."""
        previous = self.previous_directions
        assert previous is not None
        if self.seed_keys is None:
            # Each key's positions, and the first op with it (to compute its directions).
            by_key: dict = {}
            firsts: dict[tuple, Op] = {}
            for position, op in enumerate(seed):
                key = self._visit_key(op, patterns)
                if key is None:
                    continue
                positions_of_key = by_key.get(key)
                if positions_of_key is None:
                    by_key[key] = [position]
                    if key is not _ALWAYS:
                        firsts[key] = op
                else:
                    positions_of_key.append(position)
            self.seed_keys = (by_key, firsts)
        by_key, firsts = self.seed_keys
        positions = list(by_key.get(_ALWAYS, ()))
        per_op = self.previous_op_directions
        for key, op in firsts.items():
            directions = self._directions(op, key[1])
            if per_op is not None:  # each op against the directions of its latest step
                for position in by_key[key]:
                    old = per_op.get(id(seed[position]))
                    if old is not ANY_DIRECTIONS and old != directions:
                        positions.append(position)
            elif previous.get(key) != directions:
                positions += by_key[key]
        index, last = self.worklist._index, len(seed) - 1
        positions += [last - index[i] for i in self.previous_unsettled if i in index]
        return sorted(set(positions))

    def _visit_key(self, op: Op, patterns: dict) -> tuple | object | None:
        """What decides whether `_greedy` visits `op`: its directions memo key (visited if
        its directions changed), `_ALWAYS`, or None for an op whose visit does nothing (no rule
        and no rule function)."""
        rule = op.attributes.get(SHARDING_RULE_ATTR)
        if type(rule) is OpShardingRule:
            key = self._memo_key(op, rule)
            return _ALWAYS if key is None else key
        if op.name in patterns or has_rule_function(op.name) or SHARDING_RULE_ATTR in op.attributes:
            return _ALWAYS
        return None

    def _check_skipped(self, op: Op) -> None:
        """`check_skips`: a skipped visit would neither erase `op` nor change a sharding."""
        if not any(result.uses for result in op.results) and has_no_memory_effect(op):
            raise AssertionError(f"skipped a dead {op.name} at {op.location}")
        rule = op.attributes.get(SHARDING_RULE_ATTR)
        if type(rule) is not OpShardingRule:
            return
        operands = get_operand_shardings(op)
        results = get_result_shardings(op)
        directions = self._directions(op, rule)
        mesh_name = self._common_mesh_name(operands + results)
        if mesh_name is None or self.meshes[mesh_name].is_maximal or not any(directions):
            return
        new_operands, new_results = propagate_op_shardings.__wrapped__(
            self.strategy,
            rule,
            tuple(operands),
            tuple(results),
            mesh_name,
            self.meshes[mesh_name],
            directions,
            self.conservative,
            is_elementwise(op),
        )
        for olds, news in ((operands, new_operands), (results, new_results)):
            for old, new in zip(olds, news, strict=True):
                if new is None or new == old or (old is None and new.empty_axes):
                    continue
                raise AssertionError(f"skipped a step that changes {op.name} at {op.location}")

    def _note_unrequeued_readers(
        self, written: Value, owner: Value, old: TensorSharding | None, notify: bool
    ) -> None:
        """Handle a write of `written` (stored with `owner`) that may change what an op reads
        without Shardy's requeue reaching that op (which then waits for its next visit in
        seed order): mark the ops that read it `unsettled`, so the next run visits them, or,
        when they cannot all be named, set `unrequeued_write`: the next run skips no op.

        Such writes: unrequeued ones (the main func's results step writing a returned value);
        the first sharding of one result of a multi-result op, which gives its siblings open
        shardings; and (never named) a value whose sharding is stored with another's (a
        data-flow op's result or block argument without a data-flow edge: the users of the
        other are not requeued).
        """
        defining = owner.defining_op
        if owner is not written or (defining is not None and data_flow.is_data_flow_op(defining)):
            self.unrequeued_write = True
            return
        if old is None and defining is not None and len(defining.results) > 1:
            readers = self._plain_readers(defining.results)
        elif not notify:
            readers = self._plain_readers([written])
        else:
            return
        if readers is None:
            self.unrequeued_write = True
        else:
            self.unsettled.update(readers)
            self.worklist.require(readers)

    def _plain_readers(self, values: Sequence[Value]) -> list[int] | None:
        """The ids of the ops that read the shardings of `values` (their defining ops and
        users), or None if one reads them outside a registered op's visit (a terminator, a
        call, a data-flow edge's source, an op of the three other patterns). The main func's
        return is read by the func-results step, which starts every run."""
        readers = []
        for value in values:
            defining = value.defining_op
            if defining is not None:
                readers.append(id(defining))
            for user, index in value.uses:
                if user.is_terminator:
                    if user.name == "func.return" and user.parent_op is self.main:
                        continue
                    return None
                if (
                    user.name in _NOT_PLAIN_READERS
                    or data_flow_edge_for_source(user, index) is not None
                ):
                    return None
                readers.append(id(user))
        return readers


# Ops that read their operands' shardings other than in `_propagate_registered_op`.
_NOT_PLAIN_READERS = frozenset(
    {
        "func.call",
        "sdy.propagation_barrier",
        "sdy.data_flow_edge",
        "sdy.func_data_flow_edge",
    }
)

# `_visit_key` of an op `_greedy` always visits.
_ALWAYS = object()
# `PropagationDriver.op_directions` of an op whose latest visit found no sharding.
ANY_DIRECTIONS = object()
