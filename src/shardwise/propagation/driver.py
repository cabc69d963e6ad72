"""The propagation driver: one greedy run of a factor-propagation strategy over a module
(Shardy's `BasicPropagationPassImpl::propagate`: MLIR's greedy pattern rewrite driver with four
patterns). Visit order changes the result when shardings conflict; the worklist is MLIR's:

* top-down: seeded with every op below the module in pre-order, processed in program order;
* LIFO with set semantics: pushing an op already queued does nothing;
* when an op's sharding changes, the affected ops are pushed, each followed by its ancestors
  up to the func (so the outermost ancestor is popped first);
* an op popped while trivially dead (unused, no side effects) is erased, and its operands'
  defining ops are pushed when they are left with at most one other user.

A run right after another of the same level may skip visits that are known to change nothing
(`settled_op_skip`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from shardwise.errors import PropagationError
from shardwise.ir import (
    SHARDING_RULE_ATTR,
    Block,
    Module,
    Op,
    TensorType,
    Value,
    ops_in_pre_order,
    ops_named,
)
from shardwise.mesh import Mesh
from shardwise.propagation.driver_writes import DriverWrites, Tensors
from shardwise.propagation.factor_propagation import (
    FactorPropagation,
    PropagationDirection,
    propagate_op_shardings,
)
from shardwise.propagation.observed_step import observed_step
from shardwise.propagation.projection import ShardingProjection
from shardwise.propagation.settled_op_skip import ANY_DIRECTIONS, WRITES_NOTHING, SettledOpSkip
from shardwise.propagation.sharding_group_map import ShardingGroupMap
from shardwise.propagation.step_directions import (
    DIRECTIONS_BY_MORE_THAN_NAME,
    StepDirection,
    barrier_direction,
    step_directions,
)
from shardwise.propagation.worklist import Worklist
from shardwise.rules.builder import create_identity_sharding_rule
from shardwise.rules.registry import get_or_create_sharding_rule, has_rule_function
from shardwise.rules.rule import OpShardingRule
from shardwise.sdy import data_flow
from shardwise.sdy.funcs import CALL, callee_name, main_func
from shardwise.sdy.op_properties import has_no_memory_effect, is_elementwise
from shardwise.sdy.shardings import (
    get_func_result_sharding,
    get_operand_shardings,
    get_result_shardings,
    get_sharding,
    set_func_result_sharding,
)
from shardwise.sharding import MeshRef, TensorSharding, common_mesh_or_ref

__all__ = [
    "DirectionFn",
    "PropagationObserver",
    "StepDirection",
    "propagate_any",
    "PropagationDriver",
]


class DirectionFn(Protocol):
    """How far a driver run may propagate each factor of an op (Shardy's
    `GetDirectionToPropagateFn`)."""

    # The op-priority round the function belongs to (0 outside op-priority propagation).
    round: int
    # Whether the answer depends on nothing but the op's name and rule (then the driver
    # memoizes the directions by those; see `PropagationDriver.directions`).
    op_invariant: bool

    def __call__(self, op: Op, factor: int) -> PropagationDirection: ...

    def for_op(self, op: Op) -> StepDirection:
        """The direction of every factor of `op`, or one function of the factor."""
        ...


class PropagationObserver(Protocol):
    """Watches a driver's steps without changing them (debug info, ``shardwise explain``);
    steps are computed uncached while one watches."""

    def step_info(
        self,
        driver: PropagationDriver,
        op: Op,
        operands: Sequence[Value],
        results: Sequence[Value],
        rule: OpShardingRule,
        directions: tuple,
        mesh_name: str,
    ) -> None: ...

    def before_step(self, op: Op, projection: ShardingProjection) -> None: ...

    def after_step(self, op: Op, projection: ShardingProjection | None) -> None: ...


class _PropagateAny:
    """Every factor, both ways: the direction function outside op-priority propagation."""

    round = 0
    op_invariant = True

    def __call__(self, op: Op, factor: int) -> PropagationDirection:
        return PropagationDirection.BOTH

    def for_op(self, op: Op) -> StepDirection:
        return PropagationDirection.BOTH


propagate_any: DirectionFn = _PropagateAny()


def main_func_for_propagation(module: Module) -> Op:
    func = main_func(module)
    if func is not None:
        return func
    raise PropagationError(
        "cannot find the main function: the module has "
        + (
            "several functions and none is named 'main'; rename the entry function to 'main'"
            if module.funcs
            else "no function; propagation needs a func.func (named 'main' if there are several)"
        ),
        module.op.location,
    )


def _static_tensor_type(value: Value) -> TensorType | None:
    t = value.type
    return t if isinstance(t, TensorType) and t.is_static else None


class PropagationDriver(DriverWrites):
    """Runs one strategy to a fixed point over a module (`BasicPropagationPassImpl::propagate`)."""

    def __init__(
        self,
        module: Module,
        strategy: FactorPropagation,
        direction_fn: DirectionFn,
        conservative: bool,
        groups: ShardingGroupMap,
        observer: PropagationObserver | None = None,
        memoize_steps: bool = True,
        previous: PropagationDriver | None = None,
        ops: list[Op] | None = None,
    ) -> None:
        """`ops`: the module's ops in pre-order if the caller has them (a first run's seed)."""
        self.module = module
        self.strategy = strategy
        self.direction_fn = direction_fn
        self.conservative = conservative
        self.groups = groups
        self.observer = observer
        # The step is a pure function of frozen values; unmemoized it computes the same.
        self.step = propagate_op_shardings if memoize_steps else propagate_op_shardings.__wrapped__
        self.meshes: dict[str, Mesh] = {k: v for k, v in module.meshes().items()}
        if previous is None:
            self.funcs = {module.symbol_name(f): f for f in module.funcs}
            self.callers = self._collect_callers(ops)
            self.edge_parts: dict[int, tuple] = {}  # what edges' steps read but shardings
        else:  # no run adds or removes funcs, calls or operands
            self.funcs, self.callers = previous.funcs, previous.callers
            self.edge_parts = previous.edge_parts
        # The main func's result steps that wrote nothing, by result index: the returned value
        # and the two shardings the step read (`propagate_func_results`). The step is a pure
        # function of those (and of the strategy): the same ones again write nothing again.
        self.quiet_func_results: dict[int, tuple] = (
            previous.quiet_func_results
            if previous is not None and previous.strategy is strategy and memoize_steps
            else {}
        )
        self.memoize_steps = memoize_steps
        self.worklist = Worklist()
        # Op names with no rule function (their lookup, with no rule attached, yields None).
        self.ruleless_names: set[str] = set()
        self.current: Op | None = None
        self.main: Op | None = None  # the main func, set by `run`
        self.observer_projection: ShardingProjection | None = None
        # The observed steps by their arguments (`observed_step`), kept from run to run.
        self.observed_steps: dict[tuple, tuple] = previous.observed_steps if previous else {}
        # Per-factor directions by (op name, rule) when the direction function depends on
        # nothing else (`op_invariant`; see `_directions`).
        self.directions_memo: dict[tuple, tuple] | None = {} if direction_fn.op_invariant else None
        # The direction of every `sdy.data_flow_edge` when it is op-invariant (`edge_direction`).
        self.edge_direction_memo: StepDirection | None = None
        # An edge step's directions by (rule, direction) when that is one for every factor.
        self.edge_step_directions: dict[tuple, tuple] = {}
        # Whether this run has written a sharding or erased an op yet.
        self.changed = False
        self.skip: SettledOpSkip = SettledOpSkip(
            previous.skip if previous is not None else None,
            previous.directions_memo if previous is not None else None,
            vouched=(
                previous is not None
                and previous.strategy is strategy
                and memoize_steps
                and self.directions_memo is not None
            ),
            per_op=self.directions_memo is None and memoize_steps,
        )
        # The seeded ops (pre-order, the module op left out) and `_visit_key` of each, kept
        # from run to run while no op is erased (the walk would find the same ops).
        self.erased = False
        self.seed: list[Op] | None = None
        self.seed_index: dict[int, int] | None = None
        if previous is not None and not previous.erased:
            self.seed, self.seed_index = previous.seed, previous.seed_index
            self.skip.keep_seed_keys(previous.skip)
        elif ops is not None:
            self.seed = ops[1:]  # every op below the module

    # -- entry point ------------------------------------------------------------------------

    def run(self) -> None:
        main = self.main = main_func_for_propagation(self.module)
        self.propagate_func_results(main)
        if self.changed:  # written without requeuing: the previous fixed point is gone
            self.skip.forget_previous()
        self._greedy()
        self.propagate_func_results(main)

    def _collect_callers(self, ops: list[Op] | None) -> dict[str, list[Op]]:
        callers: dict[str, list[Op]] = {}
        for op in ops_in_pre_order(self.module.op, CALL) if ops is None else ops_named(ops, CALL):
            callee = callee_name(op)
            callers.setdefault(callee, []).append(op)
        return callers

    # -- the greedy rewrite loop ------------------------------------------------------------

    def _greedy(self) -> None:
        if self.seed is None:
            self.seed = self.module.op.walk_list()[1:]  # every op below the module
        seed = self.seed
        worklist = self.worklist
        self.seed_index = worklist.seed(seed, self.seed_index)
        # The loop of every visit of every round: the worklist's pop and the dispatch to the
        # four patterns inline (`push` and `remove` work on the same list and dict).
        stack, index = worklist._stack, worklist._index
        patterns = {
            "sdy.propagation_barrier": self._propagate_barrier,
            "sdy.data_flow_edge": self._propagate_data_flow_edge,
            "sdy.func_data_flow_edge": self._propagate_func_data_flow_edge,
        }
        # When the previous run vouches for the module, a seeded op is at a fixed point until
        # a write reaches it, which requeues it (a write that does not requeue every reader
        # sets `unrequeued_write`, or names them). Only the seeded ops `_positions_to_visit`
        # names and those a push asks for are visited; the others are popped without a visit,
        # in the order the full loop would pop them.
        skip = self.skip
        skipping = skip.active
        if skipping:
            last = len(seed) - 1
            required = worklist.required = bytearray(len(seed))
            for position in skip.positions_to_visit(self, seed, patterns):
                required[last - position] = 1
            worklist.skippable = len(seed)
        registered_op, ruleless = self._propagate_registered_op, self.ruleless_names
        while stack:
            if skipping and len(stack) == worklist.skippable:  # no pushed op above the seeded
                if skip.unrequeued_write:
                    skipping = False
                    worklist.skippable = 0
                else:
                    # The next seeded op to visit: the highest flagged stack index.
                    target = required.rfind(1, 0, len(stack))
                    if target < len(stack) - 1:
                        skip.pop_unvisited(self, target + 1)
                    if target < 0:
                        break
                    worklist.skippable = target
            op = stack.pop()
            if op is None:  # removed
                continue
            del index[id(op)]
            # `is_trivially_dead`, its use check inline: most popped ops have a used result.
            dead = False
            for result in op.results:
                if result.uses:
                    break
            else:
                dead = has_no_memory_effect(op)
            if dead:
                # Not a match: the op matched last must not shield its operands from requeuing.
                self.current = None
                self._erase(op)
                continue
            self.current = op
            name = op.name
            pattern = patterns.get(name)
            if pattern is None:
                if name in ruleless and SHARDING_RULE_ATTR not in op.attributes:
                    continue  # `_rule_of`'s first test inline: constants, returns, computations
                registered_op(op)
            else:
                pattern(op)
        self.current = None

    # -- the four patterns ------------------------------------------------------------------

    def _propagate_registered_op(self, op: Op) -> None:
        # The hot path of the driver (every op, every round): the rule stored on the op, the
        # shardings read once, and the step skipped when no value has a sharding (no mesh:
        # `propagate_tensor_shardings` would return at once). Without an observer, that
        # method's checks and memoized step are inline, and its sides built only to write.
        rule = op.attributes.get(SHARDING_RULE_ATTR)
        stored = True  # whether `rule` is the op's attribute (`memo_key` reads that)
        if type(rule) is not OpShardingRule:
            rule = self._rule_of(op)
            if rule is None:
                return
            stored = op.attributes.get(SHARDING_RULE_ATTR) is rule
        operand_shardings = get_operand_shardings(op)
        result_shardings = get_result_shardings(op)
        states = self.skip.states
        # `any` is false only for all-None lists (a TensorSharding is always truthy).
        if not any(operand_shardings) and not any(result_shardings):
            if self.skip.op_directions is not None:
                self.skip.op_directions[id(op)] = ANY_DIRECTIONS
            states[id(op)] = WRITES_NOTHING
            return
        # What the step read, kept for the next run when the visit writes nothing (None: not
        # read, or written over).
        state: object = None
        if self.observer is not None:
            changed = self.propagate_tensor_shardings(
                op,
                Tensors(op.operands, operand_shardings),
                Tensors(op.results, result_shardings),
                rule,
                self.directions(op, rule),
                self.conservative,
            )
        else:
            changed = False
            memo = self.directions_memo
            if memo is not None and stored and op.name not in DIRECTIONS_BY_MORE_THAN_NAME:
                # `directions` inline (`memo_key` is (name, rule) here).
                directions = memo.get((op.name, rule))
                if directions is None:
                    directions = self.directions(op, rule)
            else:
                directions = self.directions(op, rule)
            state = (operand_shardings, result_shardings)
            if any(directions):
                mesh_name = self.common_mesh_name(operand_shardings + result_shardings)
                if mesh_name is not None:
                    mesh = self.meshes[mesh_name]
                    if not mesh.is_maximal:
                        new_operands, new_results = self.step(
                            self.strategy,
                            rule,
                            tuple(operand_shardings),
                            tuple(result_shardings),
                            mesh_name,
                            mesh,
                            directions,
                            self.conservative,
                            is_elementwise(op),
                        )
                        if any(new_operands) or any(new_results):
                            changed = self._write_op_step(
                                op, operand_shardings, result_shardings, new_operands, new_results
                            )
        if changed or state is None:
            states.pop(id(op), None)
        else:
            states[id(op)] = state
        if changed:
            self.skip.unsettled.add(id(op))
        elif self.skip.unsettled:
            self.skip.unsettled.discard(id(op))

    def directions(self, op: Op, rule: OpShardingRule) -> tuple:
        """The direction of every factor of `rule` in a step on `op` (`step_directions`),
        looked up by op name and rule when the direction function allows it: the op-priority
        heuristics after the first round read only those, except for the two ops whose
        answer depends on more (a custom call's target, a bitcast's types)."""
        memo_key = self.memo_key(op, rule)
        if memo_key is None:
            directions = step_directions(rule, self._direction_for(op))
            if self.skip.op_directions is not None:
                self.skip.op_directions[id(op)] = directions
            return directions
        memo = self.directions_memo
        assert memo is not None, "a memo key without a memo"
        memoized = memo.get(memo_key)
        if memoized is None:
            memoized = memo[memo_key] = step_directions(rule, self._direction_for(op))
        return memoized

    def memo_key(self, op: Op, rule: OpShardingRule) -> tuple | None:
        """The key of `op`'s directions in `directions_memo`, None if they are not memoized."""
        if (
            self.directions_memo is None
            or op.name in DIRECTIONS_BY_MORE_THAN_NAME
            or op.attributes.get(SHARDING_RULE_ATTR) is not rule  # the heuristics read it
        ):
            return None
        return (op.name, rule)

    def _rule_of(self, op: Op) -> OpShardingRule | None:
        if op.name in self.ruleless_names and SHARDING_RULE_ATTR not in op.attributes:
            return None
        rule = get_or_create_sharding_rule(op, self.conservative)
        if rule is None and not has_rule_function(op.name):
            self.ruleless_names.add(op.name)
        return rule

    def _propagate_barrier(self, op: Op) -> None:
        t = _static_tensor_type(op.results[0])
        if t is None:
            return
        direction = PropagationDirection(barrier_direction(op))
        self.propagate_tensor_shardings(
            op,
            self._value_side(op.operands),
            self._value_side(op.results),
            create_identity_sharding_rule(t),
            lambda _f: direction,
            False,
        )

    def _propagate_data_flow_edge(self, edge: Op) -> None:
        parts = self.edge_parts.get(id(edge))
        if parts is None or parts[0] is not edge:
            t = _static_tensor_type(edge.results[0])
            if t is None:
                return
            target = edge.operands[0]
            owner_op = data_flow.owning_data_flow_op(target)
            assert owner_op is not None, "sdy.data_flow_edge input must be a data-flow op target"
            sources = [user.operands[i] for user, i in data_flow.edge_sources(owner_op, target)]
            rule = create_identity_sharding_rule(t, len(sources))
            parts = self.edge_parts[id(edge)] = (edge, target, owner_op, sources, rule)
        _, target, owner_op, sources, rule = parts
        current = edge.get_attr("sharding")
        source_shardings = [get_sharding(v) for v in sources]
        direction = self.edge_direction(edge)
        self.skip.edge_directions[id(edge)] = direction  # as `unsettled`, for the next run
        if current is None and not any(source_shardings):
            # No sharding on either side: no mesh, the step would change nothing (as a
            # registered op's visit, which returns before the step then).
            if self.skip.unsettled:
                self.skip.unsettled.discard(id(edge))
            return
        if current is not None:
            current = data_flow.transform_target_sharding(
                owner_op, target, current, data_flow.BEFORE_EDGE_PROPAGATION
            )

        def set_target(_i: int, sharding: TensorSharding) -> None:
            edge.properties["sharding"] = data_flow.transform_target_sharding(
                owner_op, target, sharding, data_flow.AFTER_EDGE_PROPAGATION
            )

        if self.observer is not None:
            changed = self.propagate_tensor_shardings(
                edge,
                Tensors(sources, source_shardings),
                Tensors(edge.results, [current], set_target),
                rule,
                direction,
                False,
            )
        else:  # `propagate_tensor_shardings` inline, as for a registered op
            changed = False
            if type(direction) is PropagationDirection:
                directions = self.edge_step_directions.get((rule, direction))
                if directions is None:
                    directions = step_directions(rule, direction)
                    self.edge_step_directions[(rule, direction)] = directions
            else:
                directions = step_directions(rule, direction)
            if any(directions):
                mesh_name = self.common_mesh_name([*source_shardings, current])
                if mesh_name is not None:
                    mesh = self.meshes[mesh_name]
                    if not mesh.is_maximal:
                        new_sources, new_results = self.step(
                            self.strategy,
                            rule,
                            tuple(source_shardings),
                            (current,),
                            mesh_name,
                            mesh,
                            directions,
                            False,
                            False,  # `is_elementwise` of an edge
                        )
                        if any(new_sources) or any(new_results):
                            changed = self._write_step(
                                Tensors(sources, source_shardings),
                                Tensors(edge.results, [current], set_target),
                                new_sources,
                                new_results,
                                True,
                            )
        if changed:
            self.skip.unsettled.add(id(edge))
        elif self.skip.unsettled:
            self.skip.unsettled.discard(id(edge))

    def check_skipped_edge(self, edge: Op) -> None:
        """`SettledOpSkip.check_skips`: a visit of the skipped `edge` would change nothing."""
        self._propagate_data_flow_edge(edge)
        if id(edge) in self.skip.unsettled:
            raise AssertionError(f"skipped a step that changes {edge.name} at {edge.location}")

    def _propagate_func_data_flow_edge(self, edge: Op) -> None:
        t = _static_tensor_type(edge.results[0])
        if t is None:
            return
        operand = edge.operands[0]
        if isinstance(operand.owner, Block):  # `operand.is_block_arg`
            func = operand.owner.parent_op
            assert func is not None, "a func data-flow edge of a block argument outside a func"
            calls = self.callers.get(self.module.symbol_name(func) or "", [])
            sources = [call.operands[operand.index] for call in calls]
            if not sources:
                return
        else:
            call = operand.defining_op
            assert call is not None
            callee = self.funcs[callee_name(call)]
            terminator = callee.regions[0].entry.terminator
            sources = []
            if terminator is not None and terminator.name == "func.return":
                sources.append(terminator.operands[operand.index])
        self.propagate_tensor_shardings(
            edge,
            self._value_side(sources),
            self._value_side(edge.results),
            create_identity_sharding_rule(t, len(sources)),
            self._direction_for(edge),
            False,
        )

    def _direction_for(self, op: Op) -> StepDirection:
        """The direction per factor of one step on `op` (work that does not depend on the
        factor is done once per step)."""
        return self.direction_fn.for_op(op)

    def edge_direction(self, edge: Op) -> StepDirection:
        """`_direction_for` a data-flow edge (what `SettledOpSkip` compares for one). Edges
        have no rule, so where the direction function reads only the op's name and rule
        (`op_invariant`) every edge has the first one's direction."""
        direction = self.edge_direction_memo
        if direction is None:
            direction = self.direction_fn.for_op(edge)
            if self.direction_fn.op_invariant:
                self.edge_direction_memo = direction
        return direction

    def _value_side(
        self, values: Sequence[Value], shardings: list[TensorSharding | None] | None = None
    ) -> Tensors:
        """`values` with their shardings (read here unless given), set with `set_sharding`."""
        if shardings is None:
            shardings = [get_sharding(v) for v in values]
        return Tensors(values, shardings)

    # -- func results -------------------------------------------------------------------------

    def propagate_func_results(self, func: Op) -> None:
        """Connect the main func's returned values with its result attributes (identity rule)."""
        if not func.regions or not func.regions[0].blocks:
            return
        terminator = func.regions[0].entry.terminator
        if terminator is None:
            return
        for index, value in enumerate(terminator.operands):
            t = _static_tensor_type(value)
            if t is None:
                continue
            sharding = get_sharding(value)
            result_sharding = get_func_result_sharding(func, index)
            if self.observer is None:
                if sharding == result_sharding:
                    # Both None, or equal: an identity step only expands a factor's axes to
                    # those of another tensor, so it would write nothing (most results, every
                    # run but the first; an observer sees every step).
                    continue
                q = self.quiet_func_results.get(index)  # (value, sharding, result sharding)
                if q and q[0] is value and q[1] is sharding and q[2] is result_sharding:
                    continue  # the step that wrote nothing last time, on the same values

            def set_result(_i: int, new: TensorSharding, index: int = index) -> None:
                set_func_result_sharding(func, index, new)

            changed = self.propagate_tensor_shardings(
                func,
                Tensors([value], [sharding]),
                Tensors([value], [result_sharding], set_result, True),
                create_identity_sharding_rule(t),
                lambda _f: PropagationDirection.BOTH,
                False,
                notify=False,
            )
            if not changed and self.memoize_steps:
                self.quiet_func_results[index] = (value, sharding, result_sharding)

    # -- the shared step (propagateTensorShardings) -----------------------------------------

    def common_mesh_name(self, shardings: list[TensorSharding | None]) -> str | None:
        """The symbol of the mesh every sharding uses (`common_mesh_or_ref`), or None."""
        ref: MeshRef | None = None
        for s in shardings:  # the usual case: every sharding names the same mesh (no set built)
            if s is None:
                continue
            if ref is None:
                ref = s.mesh_or_ref
            elif s.mesh_or_ref != ref:
                mesh_or_ref = common_mesh_or_ref(shardings, self.meshes)
                return mesh_or_ref if isinstance(mesh_or_ref, str) else None
        return ref if isinstance(ref, str) and isinstance(self.meshes.get(ref), Mesh) else None

    def step_updates(
        self,
        op: Op,
        operand_shardings: list[TensorSharding | None],
        result_shardings: list[TensorSharding | None],
        rule: OpShardingRule,
        directions: tuple,
        conservative: bool,
        step: Callable[..., tuple[tuple, tuple]] | None = None,
    ) -> tuple[str, Mesh, tuple[tuple, tuple]] | None:
        """The step of `op` (`step`, by default the driver's): its mesh and its updates of the
        tensors, or None without one to compute (no common mesh, or a maximal one)."""
        mesh_name = self.common_mesh_name(operand_shardings + result_shardings)
        if mesh_name is None or (mesh := self.meshes[mesh_name]).is_maximal:
            return None
        updates = (step or self.step)(
            self.strategy,
            rule,
            tuple(operand_shardings),
            tuple(result_shardings),
            mesh_name,
            mesh,
            directions,
            conservative,
            is_elementwise(op),
        )
        return mesh_name, mesh, updates

    def propagate_tensor_shardings(
        self,
        op: Op,
        operands: Tensors,
        results: Tensors,
        rule: OpShardingRule,
        direction: StepDirection | tuple,
        conservative: bool,
        notify: bool = True,
    ) -> bool:
        # mypy narrows no else branch of `type(...) is tuple` (faster here than `isinstance`).
        directions = (
            direction if type(direction) is tuple else step_directions(rule, direction)  # type: ignore[arg-type]
        )
        if not any(directions) and self.observer is None:
            # Every factor's direction is NONE (blocked, or held back by the op-priority
            # heuristics): no factor takes any axes, the step would change nothing.
            return False
        computed = self.step_updates(
            op, operands.shardings, results.shardings, rule, directions, conservative
        )
        if computed is None:
            return False
        mesh_name, mesh, (new_operands, new_results) = computed
        if self.observer is not None:
            if any(new_operands) or any(new_results):  # the observer sees the steps that write
                new_operands, new_results = observed_step(
                    self, op, operands, results, rule, mesh_name, mesh, directions, conservative
                )
            else:  # and the rule of every step, for its reasons
                values = operands.values, results.values
                self.observer.step_info(self, op, *values, rule, directions, mesh_name)
        if not any(new_operands) and not any(new_results):  # the step changed no tensor
            return False
        changed = self._write_step(operands, results, new_operands, new_results, notify)
        if self.observer is not None and changed:
            self.observer.after_step(op, self.observer_projection)
        return changed
