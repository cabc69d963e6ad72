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
from shardwise.propagation.factor_propagation import FactorPropagation
from shardwise.propagation.options import PropagationOptions

__all__ = [
    "aggressive_propagate",
]


_AGGRESSIVE = AggressiveFactorPropagation()


def aggressive_level(ctx: PropagationContext, direction_fn: DirectionFn) -> None:
    strategies: dict[str, list[FactorPropagation]] = {
        "aggressive": [_AGGRESSIVE],
        "basic": [BASIC],
        "basic-then-aggressive": [BASIC, _AGGRESSIVE],
    }
    for strategy in strategies[ctx.options.propagation_strategy]:
        run_driver(ctx, strategy, direction_fn)


aggressive_propagate = sdy_pass("sdy-aggressive-propagate", options=PropagationOptions)(
    propagation_pass(aggressive_level)
)
