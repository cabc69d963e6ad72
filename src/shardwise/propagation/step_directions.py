"""The directions of one propagation step on an op: one per factor of its rule (used by the
driver, `driver.PropagationDriver`)."""

from __future__ import annotations

from collections.abc import Callable

from shardwise.ir import Op
from shardwise.propagation.factor_propagation import PropagationDirection
from shardwise.rules.rule import OpShardingRule

__all__ = ["DIRECTIONS_BY_MORE_THAN_NAME", "StepDirection", "barrier_direction", "step_directions"]

# The directions of one step: one for every factor, or a function of the factor.
StepDirection = PropagationDirection | Callable[[int], PropagationDirection]

# Ops whose op-priority directions depend on more than their name and rule.
DIRECTIONS_BY_MORE_THAN_NAME = frozenset({"stablehlo.custom_call", "stablehlo.bitcast_convert"})


def step_directions(rule: OpShardingRule, direction: StepDirection) -> tuple:
    """The effective direction of every factor of `rule` (NONE for blocked factors)."""
    if isinstance(direction, PropagationDirection):
        directions = [direction] * len(rule.factor_sizes)
    else:
        directions = [direction(f) for f in range(len(rule.factor_sizes))]
    for factor in rule.blocked_propagation_factors:
        directions[factor] = PropagationDirection.NONE
    return tuple(directions)


def barrier_direction(op: Op) -> int:
    """`allowed_direction` is printed generically as ``1 : i32``."""
    text = str(op.get_attr("allowed_direction"))
    names = {"NONE": 0, "FORWARD": 1, "BACKWARD": 2, "BOTH": 3}
    head = text.split(":")[0].strip()
    if head in names:
        return names[head]
    if head.startswith("#sdy<propagation_direction"):
        return names[head.split()[-1].rstrip(">")]
    return int(head)
