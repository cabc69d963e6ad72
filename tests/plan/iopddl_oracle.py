"""The IOPDDL tests' oracle: the optimum by brute force over every assignment, with the exact
evaluator (independent of the solver)."""

from __future__ import annotations

import itertools

from shardwise.plan.iopddl import Problem, evaluate


def brute_force(problem: Problem) -> int | None:
    """The optimum over every assignment (None when nothing fits)."""
    best = None
    ranges = [range(problem.num_strategies(i)) for i in range(problem.num_nodes)]
    for sol in itertools.product(*ranges):
        ev = evaluate(problem, sol)
        if ev.feasible and (best is None or ev.cost < best):
            best = ev.cost
    return best
