"""The four propagation passes, nested as in Shardy: user priority > op priority > strategy > run.

* `basic_propagate` (``sdy-basic-propagate``): one greedy run with the basic strategy.
* `aggressive_propagate` (``sdy-aggressive-propagate``): one run per strategy of
  ``propagation-strategy`` (aggressive by default).
* `op_priority_propagate` (``sdy-op-priority-propagate``): the aggressive level five times,
  each round allowing more op kinds/directions (the schedule in `_OP_SCHEDULE`).
* `user_priority_propagate` (``sdy-user-priority-propagate``): dims with priority p>0 are
  held back (closed, axes replicated) until round p.

Every pass syncs sharding groups first, and at the end drops the non-custom sharding rules it
stored on ops unless ``keep-sharding-rules``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from shardwise.ir import SHARDING_RULE_ATTR, Module, Op, TensorType, Value, func_result_types
from shardwise.mesh import Mesh
from shardwise.passes import sdy_pass
from shardwise.propagation.debug_info import DebugInfoRecorder, combine_observers
from shardwise.propagation.driver import (
    DirectionFn,
    PropagationDriver,
    check_static_shapes,
    propagate_any,
)
from shardwise.propagation.factor_propagation import (
    AggressiveFactorPropagation,
    BasicFactorPropagation,
    PropagationDirection,
)
from shardwise.propagation.groups import ShardingGroupMap
from shardwise.propagation.options import PropagationOptions
from shardwise.rules.rule import FactorType, OpShardingRule
from shardwise.sdy import data_flow
from shardwise.sdy.op_properties import is_elementwise
from shardwise.sdy.shardings import (
    data_flow_edge_for_target,
    get_func_result_sharding,
    get_op_shardings,
    get_sharding,
    set_func_result_sharding,
    set_sharding,
    stores_no_result_sharding,
)
from shardwise.sharding import DimensionSharding, TensorSharding, TensorShardingPerValue

__all__ = [
    "basic_propagate",
    "aggressive_propagate",
    "op_priority_propagate",
    "user_priority_propagate",
    "remove_sharding_rules",
]

_BASIC = BasicFactorPropagation()
_AGGRESSIVE = AggressiveFactorPropagation()


@dataclass
class _Context:
    module: Module
    options: PropagationOptions
    groups: ShardingGroupMap
    observer: object = None
    # The driver run just before, in the same op-priority level (see the driver's
    # `previous_directions`); None at the start of a level (user priorities rewrite shardings
    # between levels, behind the drivers' backs).
    previous_run: PropagationDriver | None = None


# -- the levels -------------------------------------------------------------------------------


def _run(ctx: _Context, strategy, direction_fn: DirectionFn) -> None:
    driver = PropagationDriver(
        ctx.module,
        strategy,
        direction_fn,
        ctx.options.conservative_propagation,
        ctx.groups,
        ctx.observer,
        ctx.options.memoize_steps,
        ctx.previous_run,
    )
    driver.run()
    ctx.previous_run = driver


def _aggressive_level(ctx: _Context, direction_fn: DirectionFn) -> None:
    strategies = {
        "aggressive": [_AGGRESSIVE],
        "basic": [_BASIC],
        "basic-then-aggressive": [_BASIC, _AGGRESSIVE],
    }[ctx.options.propagation_strategy]
    for strategy in strategies:
        _run(ctx, strategy, direction_fn)


def _op_priority_level(ctx: _Context, direction_fn: DirectionFn) -> None:
    ctx.previous_run = None
    if not ctx.options.run_op_priority_propagation:
        _aggressive_level(ctx, direction_fn)
        return
    for priority in range(len(_OP_SCHEDULE)):
        _aggressive_level(ctx, _op_based_direction(priority, direction_fn))


def _user_priority_level(ctx: _Context, direction_fn: DirectionFn) -> None:
    per_priority = _initialize_user_priorities(ctx.module)
    _op_priority_level(ctx, direction_fn)
    for priority, references in per_priority:
        for ref, original in references:
            current = ref.get()
            if current is not None:
                ref.set(_updated_sharding_for_priority(current, original, priority))
        _op_priority_level(ctx, direction_fn)


# -- public passes ----------------------------------------------------------------------------


def _pass(level: Callable[[_Context, DirectionFn], None]):
    def run(module: Module, options: PropagationOptions | None = None, observer=None) -> None:
        options = options or PropagationOptions()
        debug = DebugInfoRecorder(
            module, options.debug_sharding_origins, options.debug_propagation_edge_sharding
        )
        check_static_shapes(module)
        groups = ShardingGroupMap(module)
        groups.sync_group_member_shardings()
        if debug.enabled:
            observer = combine_observers(observer, debug)
        level(_Context(module, options, groups, observer), propagate_any)
        if not options.keep_sharding_rules:
            remove_sharding_rules(module)
        if debug.enabled:
            debug.save()

    return run


def _basic_level(ctx: _Context, direction_fn: DirectionFn) -> None:
    _run(ctx, _BASIC, direction_fn)


basic_propagate = sdy_pass("sdy-basic-propagate", options=PropagationOptions)(_pass(_basic_level))
aggressive_propagate = sdy_pass("sdy-aggressive-propagate", options=PropagationOptions)(
    _pass(_aggressive_level)
)
op_priority_propagate = sdy_pass("sdy-op-priority-propagate", options=PropagationOptions)(
    _pass(_op_priority_level)
)
user_priority_propagate = sdy_pass("sdy-user-priority-propagate", options=PropagationOptions)(
    _pass(_user_priority_level)
)


def remove_sharding_rules(module: Module) -> None:
    """Drop every ``sdy.sharding_rule`` that is not a custom rule."""
    for op in module.walk():
        rule = op.attributes.get(SHARDING_RULE_ATTR)
        if isinstance(rule, OpShardingRule) and not rule.is_custom_rule:
            del op.attributes[SHARDING_RULE_ATTR]


# -- op priority ------------------------------------------------------------------------------


# The directions are the bit sets {} {fwd} {bwd} {fwd, bwd}: union and intersection are bitwise,
# read from tables indexed by the two directions.
_UNION = tuple(tuple(PropagationDirection(a | b) for b in range(4)) for a in range(4))
_INTERSECTION = tuple(tuple(PropagationDirection(a & b) for b in range(4)) for a in range(4))


def _intersection(a: PropagationDirection, b: PropagationDirection) -> PropagationDirection:
    return _INTERSECTION[a][b]


def _is_scalar(value: Value) -> bool:
    return isinstance(value.type, TensorType) and value.type.rank == 0


def _direction_based_on_uses(op: Op, allow_multi_use: bool) -> PropagationDirection:
    if allow_multi_use:
        return PropagationDirection.BOTH
    multi = any(len(v.uses) != 1 and not _is_scalar(v) for v in op.operands)
    return PropagationDirection.NONE if multi else PropagationDirection.BOTH


def _is_offload_custom_call(op: Op) -> bool:
    if op.name != "stablehlo.custom_call":
        return False
    return str(op.get_attr("call_target_name")).strip('"') in ("MoveToDevice", "MoveToHost")


_PASS_THROUGH_OPS = frozenset(
    {"stablehlo.reshape", "stablehlo.transpose", "sdy.data_flow_edge", "sdy.func_data_flow_edge"}
)


def _pass_through(op: Op, allow_multi_use: bool) -> PropagationDirection:
    if is_elementwise(op) or _is_offload_custom_call(op) or op.name in _PASS_THROUGH_OPS:
        return _direction_based_on_uses(op, allow_multi_use)
    if op.name in ("stablehlo.dynamic_slice", "stablehlo.dynamic_update_slice"):
        return _intersection(
            _direction_based_on_uses(op, allow_multi_use), PropagationDirection.FORWARD
        )
    return PropagationDirection.NONE


def _only_pass_through_broadcast_backward(op: Op, factor: int) -> PropagationDirection:
    rule = op.attributes.get(SHARDING_RULE_ATTR)
    if isinstance(rule, OpShardingRule) and rule.factor_type(factor) != FactorType.PASS_THROUGH:
        return PropagationDirection.NONE
    if op.name == "stablehlo.broadcast_in_dim":
        return PropagationDirection.BACKWARD
    return PropagationDirection.BOTH


def _any_except_broadcast_forward(op: Op, _factor: int) -> PropagationDirection:
    if op.name == "stablehlo.broadcast_in_dim":
        return PropagationDirection.BACKWARD
    return PropagationDirection.BOTH


_OP_SCHEDULE: tuple[Callable[[Op, int], PropagationDirection], ...] = (
    lambda op, _f: _pass_through(op, False),
    lambda op, _f: _pass_through(op, True),
    _only_pass_through_broadcast_backward,
    _any_except_broadcast_forward,
    propagate_any,
)


# How many op-priority rounds ``sdy-op-priority-propagate`` runs.
OP_PRIORITY_ROUNDS = len(_OP_SCHEDULE)


def op_priority_round(direction_fn: object) -> int:
    """The op-priority round a driver's direction function belongs to; 0 outside them."""
    return getattr(direction_fn, "round", 0)


def _op_based_direction(priority: int, direction_fn: DirectionFn) -> DirectionFn:
    return _OpBasedDirection(_OP_SCHEDULE[: priority + 1], direction_fn)


# Heuristics of `_OP_SCHEDULE` whose answer depends on the factor (the others only on the op).
_FACTOR_DEPENDENT = frozenset({_only_pass_through_broadcast_backward})


class _OpBasedDirection:
    """The union of the schedule's heuristics, intersected with `direction_fn`.

    Union is commutative and BOTH absorbs it, so `for_op` evaluates the heuristics that do not
    depend on the factor once per step (most permissive first, stopping at BOTH) and only the
    factor-dependent one per factor. The driver uses `for_op` when a direction function has it.
    """

    def __init__(self, schedule: tuple, direction_fn: DirectionFn) -> None:
        self.per_op = [h for h in reversed(schedule) if h not in _FACTOR_DEPENDENT]
        self.per_factor = [h for h in schedule if h in _FACTOR_DEPENDENT]
        self.direction_fn = direction_fn
        self.round = len(schedule) - 1
        # After the first round the use-count heuristic is absorbed by its multi-use variant
        # (which allows a superset of its directions), so every heuristic reads only the op's
        # name and rule (custom calls and bitcasts aside, see the driver's `_directions`).
        self.op_invariant = self.round >= 1 and direction_fn is propagate_any

    def __call__(self, op: Op, factor: int) -> PropagationDirection:
        direction = self.for_op(op)
        return direction if isinstance(direction, PropagationDirection) else direction(factor)

    def for_op(self, op: Op) -> PropagationDirection | Callable[[int], PropagationDirection]:
        """The direction of every factor of `op`, or one function of the factor."""
        both = PropagationDirection.BOTH
        base = PropagationDirection.NONE
        for heuristic in self.per_op:
            base = _UNION[base][heuristic(op, 0)]
            if base is both:
                break
        per_factor = [] if base is both else self.per_factor
        direction_fn = self.direction_fn
        if not per_factor and direction_fn is propagate_any:
            return base

        def direction(factor: int) -> PropagationDirection:
            result = base
            for heuristic in per_factor:
                result = _UNION[result][heuristic(op, factor)]
            if direction_fn is propagate_any:  # intersection with BOTH is the identity
                return result
            return _INTERSECTION[result][direction_fn(op, factor)]

        return direction


# -- user priority ----------------------------------------------------------------------------


class _ShardingRef:
    """A place holding a sharding (`ValueOrFuncResult`): `get()` and `set(sharding)`.

    One small object per stored sharding (the walk makes one for every value of the module),
    hence slots and methods rather than a pair of closures."""

    __slots__ = ()

    def get(self) -> TensorSharding | None:
        raise NotImplementedError

    def set(self, sharding: TensorSharding) -> None:
        raise NotImplementedError


class _ValueRef(_ShardingRef):
    __slots__ = ("value",)

    def __init__(self, value: Value) -> None:
        self.value = value

    def get(self) -> TensorSharding | None:
        return get_sharding(self.value)

    def set(self, sharding: TensorSharding) -> None:
        set_sharding(self.value, sharding)


class _FuncResultRef(_ShardingRef):
    __slots__ = ("func", "index")

    def __init__(self, func: Op, index: int) -> None:
        self.func, self.index = func, index

    def get(self) -> TensorSharding | None:
        return get_func_result_sharding(self.func, self.index)

    def set(self, sharding: TensorSharding) -> None:
        set_func_result_sharding(self.func, self.index, sharding)


class _PerValueRef(_ShardingRef):
    """Entry `index` of the per-value list stored under `key` (a property or an attribute)."""

    __slots__ = ("op", "key", "index")

    def __init__(self, op: Op, key: str, index: int) -> None:
        self.op, self.key, self.index = op, key, index

    def get(self) -> TensorSharding | None:
        return self.op.get_attr(self.key).shardings[self.index]

    def set(self, sharding: TensorSharding) -> None:
        op, key = self.op, self.key
        shardings = list(op.get_attr(key).shardings)
        shardings[self.index] = sharding
        new = TensorShardingPerValue(tuple(shardings))
        if key in op.properties:
            op.properties[key] = new
        else:
            op.attributes[key] = new


def _per_value_refs(op: Op, key: str, values: list[Value]) -> Iterator[tuple[_ShardingRef, Value]]:
    if not isinstance(op.get_attr(key), TensorShardingPerValue):
        return
    for i, value in enumerate(values):
        yield _PerValueRef(op, key, i), value


def walk_sharding_refs(module: Module) -> Iterator[tuple[_ShardingRef, Value | None]]:
    """Every stored sharding in Shardy's `walkShardings` order, with its value (if any); the
    result of an ordinary op that stores none is left out (its `get()` would be None)."""
    for op in module.walk():
        if op.name == "func.func":
            for arg in op.regions[0].entry.args if op.regions and op.regions[0].blocks else []:
                yield _ValueRef(arg), arg
            n_results = _num_func_results(op)
            for i in range(n_results):
                yield _FuncResultRef(op, i), None
        elif op.name == "sdy.manual_computation":
            yield from _per_value_refs(op, "in_shardings", list(op.regions[0].entry.args))
            yield from _per_value_refs(op, "out_shardings", list(op.results))
        elif data_flow.is_data_flow_op(op):
            for owner in data_flow.edge_owners(op):
                yield _ValueRef(owner), owner
        elif len(op.results) == 1:
            if stores_no_result_sharding(op):
                continue  # most ops before propagation: nothing stored to walk
            yield _ValueRef(op.results[0]), op.results[0]
        elif get_op_shardings(op) is not None:
            yield from _per_value_refs(op, "sdy.sharding", list(op.results))


def _num_func_results(func: Op) -> int:
    return len(func_result_types(func))


def _initialize_user_priorities(
    module: Module,
) -> list[tuple[int, list[tuple[_ShardingRef, TensorSharding]]]]:
    meshes = module.meshes()
    per_priority: dict[int, list[tuple[_ShardingRef, TensorSharding]]] = {}
    for ref, value in walk_sharding_refs(module):
        sharding = ref.get()
        if sharding is None:
            continue
        if len(sharding.replicated_axes) <= 1 and all(
            d.priority is None for d in sharding.dim_shardings
        ):
            continue  # no priority to record, and initializing would leave it as it is
        if value is not None and data_flow_edge_for_target(value) is not None:
            continue
        priorities = sorted({d.priority_or_default for d in sharding.dim_shardings} - {0})
        for p in priorities:
            per_priority.setdefault(p, []).append((ref, sharding))
        initialized = _initialized_sharding(sharding, meshes)
        if initialized != sharding:
            ref.set(initialized)
    return sorted(per_priority.items())


def _initialized_sharding(sharding: TensorSharding, meshes: dict) -> TensorSharding:
    dims: list[DimensionSharding] = []
    replicated = list(sharding.replicated_axes)
    for d in sharding.dim_shardings:
        if d.priority_or_default == 0:
            dims.append(d.drop_priority())
        else:
            replicated.extend(d.axes)
            dims.append(DimensionSharding((), True))
    mesh = sharding.mesh_or_ref if isinstance(sharding.mesh_or_ref, Mesh) else None
    mesh = mesh or meshes.get(sharding.mesh_or_ref)
    if isinstance(mesh, Mesh):
        replicated.sort(key=mesh.axis_key)
    return TensorSharding(
        sharding.mesh_or_ref,
        tuple(dims),
        tuple(replicated),
        sharding.unreduced_axes,
        sharding.reduction_op,
    )


def _updated_sharding_for_priority(
    current: TensorSharding, original: TensorSharding, priority: int
) -> TensorSharding:
    dims = list(current.dim_shardings)
    seen = set()
    for i, orig in enumerate(original.dim_shardings):
        if orig.priority_or_default == priority:
            dims[i] = orig.drop_priority()
            seen.update(orig.axes)
    return TensorSharding(
        current.mesh_or_ref,
        tuple(dims),
        tuple(a for a in current.replicated_axes if a not in seen),
        current.unreduced_axes,
        current.reduction_op,
    )
