"""`sdy-basic-propagate`, and what every propagation pass shares (Shardy's
`BasicPropagationPass`, prop/basic_propagation.cc): the checks before propagation, the
sharding groups synced, debug info recorded, sharding rules dropped afterwards, one driver run
per level step (`run_driver`). The passes above it (`aggressive_propagation`,
`op_priority_propagation`, `user_priority_propagation`) are levels over this one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from shardwise.errors import PropagationError
from shardwise.ir import (
    Module,
    OpaqueType,
    TensorType,
)
from shardwise.passes import sdy_pass
from shardwise.propagation.basic_factor_propagation import BasicFactorPropagation
from shardwise.propagation.driver import (
    DirectionFn,
    PropagationDriver,
    PropagationObserver,
    propagate_any,
)
from shardwise.propagation.options import PropagationOptions
from shardwise.propagation.sharding_group_map import ShardingGroupMap
from shardwise.propagation.source_sharding import DebugInfoRecorder, combine_observers
from shardwise.rules.populate import drop_sharding_rules

__all__ = [
    "PropagationContext",
    "basic_propagate",
    "check_static_shapes",
    "propagation_pass",
    "run_driver",
]


def check_static_shapes(module: Module) -> None:
    """Shardy's `allValidShapes`: every result is a static ranked tensor or non-tensor, no tuple."""
    valid: set[int] = set()  # ids of the types found valid: values share few type objects
    for op in module.op.walk_list():
        for result in op.results:
            t = result.type
            if id(t) in valid:
                continue
            if isinstance(t, TensorType) and not t.is_static:
                raise PropagationError(
                    "Shardy propagation only supports ranked tensors with a static shape. "
                    f"type: '{t}'",
                    op.location,
                )
            if isinstance(t, OpaqueType) and t.text.startswith("tuple<"):
                raise PropagationError(
                    f"Shardy propagation doesn't support tuples: '{t}'", op.location
                )
            if isinstance(t, OpaqueType) and t.text.startswith("tensor<"):
                raise PropagationError(
                    "Shardy propagation only supports ranked tensors with a static shape. "
                    f"type: '{t}'",
                    op.location,
                )
            valid.add(id(t))


BASIC = BasicFactorPropagation()


@dataclass
class PropagationContext:
    module: Module
    options: PropagationOptions
    groups: ShardingGroupMap
    observer: PropagationObserver | None = None
    # The driver run just before, in the same op-priority level (see the driver's
    # `previous_directions`); None at the start of a level (user priorities rewrite shardings
    # between levels, behind the drivers' backs).
    previous_run: PropagationDriver | None = None


def run_driver(ctx: PropagationContext, strategy, direction_fn: DirectionFn) -> None:
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


def propagation_pass(level: Callable[[PropagationContext, DirectionFn], None]):
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
        level(PropagationContext(module, options, groups, observer), propagate_any)
        if not options.keep_sharding_rules:
            drop_sharding_rules(module.op)
        if debug.enabled:
            debug.save()

    return run


def basic_level(ctx: PropagationContext, direction_fn: DirectionFn) -> None:
    run_driver(ctx, BASIC, direction_fn)


basic_propagate = sdy_pass("sdy-basic-propagate", options=PropagationOptions)(
    propagation_pass(basic_level)
)
