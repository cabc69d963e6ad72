"""`sdy-op-priority-propagate`: the aggressive level five times, each round letting more op
kinds and directions propagate (`_OP_SCHEDULE`; Shardy's `prop/op_priority_propagation.cc`).
"""

from __future__ import annotations

from collections.abc import Callable

from shardwise.ir import SHARDING_RULE_ATTR, Op, TensorType, Value
from shardwise.passes import sdy_pass
from shardwise.propagation.aggressive_propagation import aggressive_level
from shardwise.propagation.basic_propagation import (
    DirectionFn,
    PropagationContext,
    propagate_any,
    propagation_pass,
)
from shardwise.propagation.factor_propagation import PropagationDirection
from shardwise.propagation.options import PropagationOptions
from shardwise.rules.rule import FactorType, OpShardingRule
from shardwise.sdy.op_properties import is_elementwise

__all__ = [
    "OP_PRIORITY_ROUNDS",
    "op_priority_propagate",
    "op_priority_round",
]


def op_priority_level(ctx: PropagationContext, direction_fn: DirectionFn) -> None:
    ctx.previous_run = None
    if not ctx.options.run_op_priority_propagation:
        aggressive_level(ctx, direction_fn)
        return
    for priority in range(len(_OP_SCHEDULE)):
        aggressive_level(ctx, _op_based_direction(priority, direction_fn))


op_priority_propagate = sdy_pass("sdy-op-priority-propagate", options=PropagationOptions)(
    propagation_pass(op_priority_level)
)


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
