"""A propagation step with an observer watching (debug info, ``shardwise explain``): the
driver's step (`propagate_op_shardings`) with the projections before and after it."""

from __future__ import annotations

from typing import Any

from shardwise.ir import Op
from shardwise.mesh import Mesh
from shardwise.propagation.factor_propagation import new_tensor_shardings
from shardwise.propagation.projection import ShardingProjection
from shardwise.rules.rule import OpShardingRule
from shardwise.sdy.op_properties import is_elementwise

__all__ = ["observed_step"]


def observed_step(
    driver: Any,
    op: Op,
    operands: Any,
    results: Any,
    rule: OpShardingRule,
    mesh_name: str,
    mesh: Mesh,
    directions: tuple,
    conservative: bool,
) -> tuple:
    """The same step as `propagate_op_shardings`, with the projections before and after it
    for the observer (which only reads them); memoized by the step's arguments, as the step
    is (`driver.observed_steps`). `operands`, `results`: the driver's `_Tensors` sides."""
    elementwise = is_elementwise(op)
    shardings = (tuple(operands.shardings), tuple(results.shardings))
    key = (driver.strategy, rule, shardings, mesh_name, directions, conservative, elementwise)
    found = driver.observed_steps.get(key)
    if found is None:
        before = ShardingProjection.build(operands.shardings, results.shardings, rule, mesh)
        after = ShardingProjection.build(operands.shardings, results.shardings, rule, mesh)
        updates = driver.strategy.propagate_factor_shardings(
            after, directions.__getitem__, rule.factor_sizes, mesh, conservative, elementwise
        )
        news = new_tensor_shardings(after, updates, rule, mesh_name, mesh)
        found = driver.observed_steps[key] = (before, after, news)
    observer = driver.observer
    assert observer is not None
    observer.step_info(driver, op, operands.values, results.values, rule, directions, mesh_name)
    observer.before_step(op, found[0])
    driver.observer_projection = found[1]
    return found[2]
