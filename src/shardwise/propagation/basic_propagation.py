"""`sdy-basic-propagate`, and what every propagation pass shares (Shardy's
`BasicPropagationPass`, prop/basic_propagation.cc): the checks before propagation, the
sharding groups synced, debug info recorded, sharding rules dropped afterwards, one driver run
per level step (`run_driver`). The passes above it (`aggressive_propagation`,
`op_priority_propagation`, `user_priority_propagation`) are levels over this one.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass
from itertools import chain

from shardwise.errors import PropagationError
from shardwise.ir import (
    Module,
    Op,
    OpaqueType,
    TensorType,
    Type,
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


def check_static_shapes(module: Module, ops: list[Op] | None = None) -> None:
    """Shardy's `allValidShapes`: every result is a static ranked tensor or non-tensor, no tuple.

    `ops`: the module's ops in pre-order if the caller has them (`module.op.walk_list()`)."""
    if ops is None:
        ops = module.op.walk_list()
    # Values share few type objects: each distinct one is checked, gathered without a Python
    # loop over the module's values; the op of the first invalid one is looked for only then.
    types = list(map(_TYPE_OF, chain.from_iterable(map(_RESULTS_OF, ops))))
    distinct = dict(zip(map(id, types), types, strict=True)).values()
    if all(_invalid_shape(t) is None for t in distinct):
        return
    for op in ops:
        for result in op.results:
            message = _invalid_shape(result.type)
            if message is not None:
                raise PropagationError(message, op.location)


_RESULTS_OF = operator.attrgetter("results")
_TYPE_OF = operator.attrgetter("type")


def _invalid_shape(t: Type) -> str | None:
    """Why propagation rejects a value of type `t`, or None."""
    if isinstance(t, TensorType) and not t.is_static:
        return f"Shardy propagation only supports ranked tensors with a static shape. type: '{t}'"
    if isinstance(t, OpaqueType) and t.text.startswith("tuple<"):
        return f"Shardy propagation doesn't support tuples: '{t}'"
    if isinstance(t, OpaqueType) and t.text.startswith("tensor<"):
        return f"Shardy propagation only supports ranked tensors with a static shape. type: '{t}'"
    return None


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
    # The module's ops in pre-order (`module.op.walk_list()`), taken at the start of the pass
    # and shared by the steps that would each walk the module for them; None once an op may
    # have been inserted or erased (a sharding group's conflict, a driver's dead op).
    ops: list[Op] | None = None


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
        ctx.ops,
    )
    driver.run()
    ctx.previous_run = driver
    if driver.erased:
        ctx.ops = None


def propagation_pass(level: Callable[[PropagationContext, DirectionFn], None]):
    def run(module: Module, options: PropagationOptions | None = None, observer=None) -> None:
        options = options or PropagationOptions()
        debug = DebugInfoRecorder(
            module, options.debug_sharding_origins, options.debug_propagation_edge_sharding
        )
        # One walk for the checks, the groups, user priorities and the first driver's seed
        # and calls: none of them inserts or erases an op, but for the cases that drop it.
        ops: list[Op] | None = module.op.walk_list()
        check_static_shapes(module, ops)
        groups = ShardingGroupMap(module, ops)
        if groups.sync_group_member_shardings():
            ops = None
        if debug.enabled:
            observer = combine_observers(observer, debug)
        level(PropagationContext(module, options, groups, observer, ops=ops), propagate_any)
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
