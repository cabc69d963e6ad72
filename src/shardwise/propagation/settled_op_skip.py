"""Skipping settled ops: what lets a driver run pop an op without a visit (ours, a cache).

A run of the propagation driver (`basic_propagation.PropagationDriver`) right after another of
the same op-priority level starts where most ops are at a fixed point: the previous run left
them settled (their last step changed nothing) under the same per-factor directions. Such an op
stays at its fixed point until a write reaches it, and every write either requeues the ops that
read it (Shardy's `notifyShardingModified`), names them (`note_write`), or marks the run
(`unrequeued_write`): then the next run skips nothing. The driver pops the ops it may skip
without a visit, in the order its full loop would pop them, so the result is Shardy's.
An op the previous run did not settle under this run's directions (they changed from one
op-priority round to the next, or its last step wrote) is settled all the same when its step
writes nothing at the start of the run; the step reads the shardings the op's latest visit
read (`states`) where they are known to be current. ``SettledOpSkip.check_skips`` computes every skipped visit and fails if it would change
anything (the tests and fuzz campaigns turn it on).

`SettledOpSkip` is the component: the record one run leaves for the next (`unsettled`,
`unrequeued_write`, `op_directions`, `states`) and what it takes from the previous run. It asks the
driver, through `SkipHost`, only for what a visit would compute.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Protocol

from shardwise.ir import SHARDING_RULE_ATTR, Op, Value
from shardwise.mesh import Mesh
from shardwise.propagation.factor_propagation import (
    PropagationDirection,
    propagate_op_shardings,
)
from shardwise.propagation.worklist import Worklist
from shardwise.rules.registry import has_rule_function
from shardwise.rules.rule import OpShardingRule
from shardwise.sdy import data_flow
from shardwise.sdy.op_properties import has_no_memory_effect
from shardwise.sdy.shardings import (
    data_flow_edge_for_source,
    get_operand_shardings,
    get_result_shardings,
)
from shardwise.sharding import TensorSharding

__all__ = ["ANY_DIRECTIONS", "COMPUTATIONS", "WRITES_NOTHING", "SettledOpSkip", "SkipHost"]


class SkipHost(Protocol):
    """What the skip reads of the driver it serves."""

    worklist: Worklist
    main: Op | None
    conservative: bool

    def directions(self, op: Op, rule: OpShardingRule) -> tuple: ...

    @property
    def observer(self) -> object | None: ...

    def step_updates(
        self,
        op: Op,
        operand_shardings: list[TensorSharding | None],
        result_shardings: list[TensorSharding | None],
        rule: OpShardingRule,
        directions: tuple,
        conservative: bool,
        step: Callable[..., tuple[tuple, tuple]] | None = None,
    ) -> tuple[str, Mesh, tuple[tuple, tuple]] | None: ...

    def memo_key(self, op: Op, rule: OpShardingRule) -> tuple | None: ...

    def common_mesh_name(self, shardings: list[TensorSharding | None]) -> str | None: ...

    def edge_direction(self, edge: Op) -> object: ...

    def check_skipped_edge(self, edge: Op) -> None: ...


class SettledOpSkip:
    """One driver run's settled-op skip: which seeded ops it visits, and what it leaves for the
    next run (see the module doc)."""

    # For tests: every visit the driver skips is checked to change nothing.
    check_skips = False

    def __init__(
        self,
        previous: SettledOpSkip | None,
        previous_memo: dict[tuple, tuple] | None,
        vouched: bool,
        per_op: bool,
    ) -> None:
        """`previous`: the skip of the run just before (None: none), `previous_memo` that
        run's directions memo. `vouched`: the previous run may vouch for this one (same
        strategy, back to back, steps memoized, this run's directions memoized by
        op name and rule). `per_op`: this run records each op's directions for the next (its
        own are not memoized by name and rule: the first op-priority round). The driver is
        passed to each method that needs it (`SkipHost`), not kept: no cycle holds the module."""
        # Registered ops whose latest step in this run changed a sharding: not known to be at
        # a fixed point (a step's own writes do not requeue its op).
        self.unsettled: set[int] = set()
        # Whether a write may have changed what an op reads without requeuing it (see
        # `note_write`): then not every op outside `unsettled` is known to be at a fixed point
        # when this run ends.
        self.unrequeued_write = False
        # The directions of each op's latest step by op id, `ANY_DIRECTIONS` if its latest
        # visit found no sharding (a step that changes nothing under any directions), for the
        # next run to compare with; None when the run's directions are memoized by name.
        self.op_directions: dict[int, object] | None = {} if per_op else None
        # The seeded ops' positions by `_visit_key` (and the first op of each key), computed
        # once and kept from run to run while no op is erased (`keep_seed_keys`).
        self.seed_keys: tuple[dict, dict] | None = None
        # What the previous run vouches for: when it ended, every registered op outside its
        # `unsettled` was at a fixed point of its step under the directions in its memo. An op
        # whose directions are the same again is at that fixed point still until a write of
        # this run reaches it, and its visit is skipped.
        self.previous_directions: dict[tuple, tuple] | None = None
        self.previous_op_directions: dict[int, object] | None = None
        self.previous_unsettled: set[int] = set()
        # The direction of each `sdy.data_flow_edge`'s latest step by op id, in this run or
        # an earlier one (an edge is skipped only if its direction is the same again). One
        # dict from run to run: the edges of a module stay the same ops.
        self.edge_directions: dict[int, object] = (
            previous.edge_directions if previous is not None else {}
        )
        # The shardings each registered op's latest visit read when it wrote nothing: its
        # operands' and results' lists (`WRITES_NOTHING`: no sharding at all), by op id. Kept
        # from run to run while the previous run vouches for this one: an op outside the
        # previous run's `unsettled` has had these shardings since (a write reaching it would
        # have requeued it, or named it in `unsettled`; a write that could do neither sets
        # `unrequeued_write`, and the next run starts afresh). No run creates an op, so an id
        # names one op for as long as the dict is kept.
        self.states: dict[int, object] = {}
        if previous is None or previous.unrequeued_write or not vouched:
            return
        memo = previous_memo
        if memo is None and previous.op_directions is None:
            return
        self.previous_directions = memo
        if memo is None:  # compared op by op instead
            self.previous_directions = {}
            self.previous_op_directions = previous.op_directions
        self.previous_unsettled = previous.unsettled
        self.states = previous.states

    @property
    def active(self) -> bool:
        """Whether the previous run vouches for this one (some visits may be skipped)."""
        return self.previous_directions is not None

    def forget_previous(self) -> None:
        """A write before the loop (the func-results step) requeued nothing: vouch for none."""
        self.previous_directions = None
        self.states = {}

    def keep_seed_keys(self, previous: SettledOpSkip) -> None:
        """The previous run seeded the same ops (none was erased): reuse its keys."""
        self.seed_keys = previous.seed_keys

    # -- which seeded ops to visit ----------------------------------------------------------

    def pop_unvisited(self, host: SkipHost, keep: int) -> None:
        """Pop the worklist's entries above the first `keep` without visiting them: each
        visit is known to change nothing (`check_skips` computes it to make sure)."""
        worklist = host.worklist
        stack, index = worklist._stack, worklist._index
        popped = stack[keep:]
        if self.check_skips:
            for op in popped:
                if op is not None:
                    self._check_skipped(host, op)
        for op in popped:
            if op is not None:
                del index[id(op)]
        del stack[keep:]

    def positions_to_visit(
        self, host: SkipHost, seed: list[Op], patterns: Collection[str]
    ) -> list[int]:
        """Positions in `seed` of the ops the driver visits while the previous run vouches for
        the module: those the previous run left unsettled, and those whose `_visit_key` says
        so (directions changed, or not comparable). The others are settled with the same
        directions, or have no rule: their visits would change nothing. `patterns`: the op
        names the driver handles with a pattern of their own."""
        previous = self.previous_directions
        assert previous is not None
        if self.seed_keys is None:
            # Each key's positions, and the first op with it (to compute its directions).
            by_key: dict = {}
            firsts: dict[tuple, Op] = {}
            for position, op in enumerate(seed):
                key = self._visit_key(host, op, patterns)
                if key is None:
                    continue
                positions_of_key = by_key.get(key)
                if positions_of_key is None:
                    by_key[key] = [position]
                    if key is not _ALWAYS and key is not _EDGE:
                        firsts[key] = op  # type: ignore[index]
                else:
                    positions_of_key.append(position)
            self.seed_keys = (by_key, firsts)
        by_key, firsts = self.seed_keys
        positions = list(by_key.get(_ALWAYS, ()))
        per_op = self.previous_op_directions
        index, last = host.worklist._index, len(seed) - 1
        unsettled = {last - index[i] for i in self.previous_unsettled if i in index}
        for key, op in firsts.items():
            directions = host.directions(op, key[1])
            if per_op is not None:  # each op against the directions of its latest step
                changed = [
                    position
                    for position in by_key[key]
                    if per_op.get(id(seed[position])) not in (ANY_DIRECTIONS, directions)
                ]
            elif previous.get(key) != directions:
                changed = by_key[key]
            else:
                changed = [position for position in by_key[key] if position in unsettled]
            # Not settled under these directions by the previous run, but maybe now: an op
            # whose step writes nothing at the start of the run is at a fixed point, as one
            # the previous run settled (a write reaching it requeues it all the same). What an
            # unsettled op's latest visit read is stale (it wrote since): read again.
            writes_nothing, states, rule = self._step_writes_nothing, self.states, key[1]
            answers: dict[tuple, tuple] = {}  # the ops of one key: one answer per shardings
            for position in changed:
                op = seed[position]
                if position in unsettled:
                    states.pop(id(op), None)
                if not writes_nothing(host, op, rule, directions, answers):
                    positions.append(position)
            unsettled.difference_update(changed)
        # A data-flow edge (no rule, a pattern of its own) against its latest step's direction.
        edge_directions = self.edge_directions
        for position in by_key.get(_EDGE, ()):
            edge = seed[position]
            old = edge_directions.get(id(edge))
            if type(old) is not PropagationDirection or old != host.edge_direction(edge):
                positions.append(position)
        positions += unsettled
        return sorted(set(positions))

    def _step_writes_nothing(
        self,
        host: SkipHost,
        op: Op,
        rule: OpShardingRule,
        directions: tuple,
        answers: dict[tuple, tuple] | None = None,
    ) -> bool:
        """Whether a visit of `op` (its rule `rule`, stored on it) with `directions` would
        find nothing to write now: no sharding, no factor to move, no mesh, or a step that
        updates no tensor (the tests of the driver's `_propagate_registered_op`, in its
        order). The shardings the op's latest visit read stand for its own where `states`
        keeps them, else they are read. Always False while an observer watches: it sees
        every step of an op whose directions change.

        `answers`: the answers for ops of `op`'s name, rule and directions so far, by the
        identity of the shardings read (a step is a function of those and of the op's name:
        the layers of a model repeat one sharding object on many ops); each entry keeps its
        shardings alive, so their ids stay theirs."""
        if host.observer is not None:
            return False
        state = self.states.get(id(op))
        if state is None:
            operand_shardings = get_operand_shardings(op)
            result_shardings = get_result_shardings(op)
            if not any(operand_shardings) and not any(result_shardings):
                self.states[id(op)] = WRITES_NOTHING
                return True
            self.states[id(op)] = (operand_shardings, result_shardings)
        elif state is WRITES_NOTHING:
            return True
        else:
            operand_shardings, result_shardings = state  # type: ignore[misc]
        if not any(directions):
            return True
        if answers is not None:
            key = (len(operand_shardings), *map(id, operand_shardings), *map(id, result_shardings))
            found = answers.get(key)
            if found is not None:
                return found[0]
        computed = host.step_updates(
            op, operand_shardings, result_shardings, rule, directions, host.conservative
        )
        if computed is None:
            answer = True
        else:
            _, _, (new_operands, new_results) = computed
            answer = not any(new_operands) and not any(new_results)
        if answers is not None:
            answers[key] = (answer, operand_shardings, result_shardings)
        return answer

    def _visit_key(
        self, host: SkipHost, op: Op, patterns: Collection[str]
    ) -> tuple | object | None:
        """What decides whether the driver visits `op`: its directions memo key (visited if
        its directions changed), `_ALWAYS`, or None for an op whose visit does nothing (no rule
        and no rule function)."""
        rule = op.attributes.get(SHARDING_RULE_ATTR)
        if type(rule) is OpShardingRule:
            key = host.memo_key(op, rule)
            return _ALWAYS if key is None else key
        if op.name == "sdy.data_flow_edge":
            # A manual computation's edges also read its in/out shardings (the manual axes).
            owner = data_flow.owning_data_flow_op(op.operands[0])
            return _ALWAYS if owner is None or owner.name == "sdy.manual_computation" else _EDGE
        if op.name in patterns or has_rule_function(op.name) or SHARDING_RULE_ATTR in op.attributes:
            return _ALWAYS
        return None

    def _check_skipped(self, host: SkipHost, op: Op) -> None:
        """`check_skips`: a skipped visit would neither erase `op` nor change a sharding."""
        if not any(result.uses for result in op.results) and has_no_memory_effect(op):
            raise AssertionError(f"skipped a dead {op.name} at {op.location}")
        if op.name == "sdy.data_flow_edge":
            host.check_skipped_edge(op)
            return
        rule = op.attributes.get(SHARDING_RULE_ATTR)
        if type(rule) is not OpShardingRule:
            return
        operands = get_operand_shardings(op)
        results = get_result_shardings(op)
        directions = host.directions(op, rule)
        if not any(directions):
            return
        unmemoized: Callable = propagate_op_shardings.__wrapped__  # type: ignore[attr-defined]
        computed = host.step_updates(
            op, operands, results, rule, directions, host.conservative, unmemoized
        )
        if computed is None:
            return
        _, _, (new_operands, new_results) = computed
        for olds, news in ((operands, new_operands), (results, new_results)):
            for old, new in zip(olds, news, strict=True):
                if new is None or new == old or (old is None and new.empty_axes):
                    continue
                raise AssertionError(f"skipped a step that changes {op.name} at {op.location}")

    # -- what a write tells the next run ------------------------------------------------------

    def note_write(
        self, host: SkipHost, written: Value, owner: Value, old: TensorSharding | None, notify: bool
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
        self._note_computation_operand(host, owner)
        defining = owner.defining_op
        if owner is not written or (defining is not None and data_flow.is_data_flow_op(defining)):
            self.unrequeued_write = True
            return
        if old is None and defining is not None and len(defining.results) > 1:
            readers = self._plain_readers(host, defining.results)
        elif not notify:
            readers = self._plain_readers(host, [written])
        else:
            return
        if readers is None:
            self.unrequeued_write = True
        else:
            self.unsettled.update(readers)
            host.worklist.require(readers)

    def _note_computation_operand(self, host: SkipHost, owner: Value) -> None:
        """A named/manual computation's operand is the source of its block argument's edge,
        but a write of it does not requeue that edge (Shardy's `getEdgeOwnerFromSource` names
        the operand itself): mark the edge `unsettled` so that it is visited. The values
        whose sharding is `owner`'s: it, and a while's block arguments if it is an edge's."""
        values = [owner]
        edge = owner.defining_op
        if edge is not None and edge.name == "sdy.data_flow_edge":
            op = data_flow.owning_data_flow_op(edge.operands[0])
            if op is not None:
                values += data_flow.non_edge_owner_targets(op, edge.operands[0])
        for user, index in [use for value in values for use in value.uses]:
            if user.name in _COMPUTATIONS:
                edges = [
                    u
                    for u, _ in user.regions[0].entry.args[index].uses
                    if u.name == "sdy.data_flow_edge"
                ]
                self.unsettled.update(map(id, edges))
                host.worklist.require([id(e) for e in edges])

    def _plain_readers(self, host: SkipHost, values: Sequence[Value]) -> list[int] | None:
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
                    if user.name == "func.return" and user.parent_op is host.main:
                        continue
                    return None
                if (
                    user.name in _NOT_PLAIN_READERS
                    or data_flow_edge_for_source(user, index) is not None
                ):
                    return None
                readers.append(id(user))
        return readers


# Ops that read their operands' shardings other than in a registered op's visit.
_NOT_PLAIN_READERS = frozenset(
    {
        "func.call",
        "sdy.propagation_barrier",
        "sdy.data_flow_edge",
        "sdy.func_data_flow_edge",
    }
)

# `_visit_key` of an op the driver always visits.
_ALWAYS = object()
# `_visit_key` of a data-flow edge, visited unless its direction is that of its latest step.
_EDGE = object()
# The data-flow ops whose operands feed their block arguments' edges.
_COMPUTATIONS = frozenset({"sdy.named_computation", "sdy.manual_computation"})
COMPUTATIONS = _COMPUTATIONS
# `SettledOpSkip.op_directions` of an op whose latest visit found no sharding.
ANY_DIRECTIONS = object()
# `SettledOpSkip.states` of an op whose visit found no sharding (it writes nothing under any
# directions).
WRITES_NOTHING = object()
