"""`sdy-aggressive-propagate`: one driver run per strategy of ``propagation-strategy``
(aggressive by default; Shardy's `prop/aggressive_propagation.cc`).
"""

from __future__ import annotations

from shardwise.passes import sdy_pass
from shardwise.propagation.aggressive_factor_propagation import AggressiveFactorPropagation
from shardwise.propagation.basic_propagation import (
    BASIC,
    DirectionFn,
    PropagationContext,
    propagation_pass,
    run_driver,
)
from shardwise.propagation.options import PropagationOptions

__all__ = [
    "aggressive_propagate",
]


_AGGRESSIVE = AggressiveFactorPropagation()


def aggressive_level(ctx: PropagationContext, direction_fn: DirectionFn) -> None:
    strategies = {
        "aggressive": [_AGGRESSIVE],
        "basic": [BASIC],
        "basic-then-aggressive": [BASIC, _AGGRESSIVE],
    }[ctx.options.propagation_strategy]
    for strategy in strategies:
        run_driver(ctx, strategy, direction_fn)


aggressive_propagate = sdy_pass("sdy-aggressive-propagate", options=PropagationOptions)(
    propagation_pass(aggressive_level)
)
