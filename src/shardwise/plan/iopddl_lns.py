"""The large neighbourhood search of the IOPDDL solver (`iopddl_solver`'s docstring): where
the whole MILP is too big for HiGHS, a node at random and the nodes reached from it over
two-node edges, up to `_LNS_VARS` MILP variables, re-solved exactly with every other node
fixed, kept when they cost less and every time point fits. Nodes on an edge of more than two
nodes are left to the local search: the neighbourhood MILP has rows for two-node edges only."""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from shardwise.plan.highs import MilpBuilder, MilpResult, run_forked
from shardwise.plan.iopddl_model import (
    _better,
    _load,
    _Model,
    _move,
    _pairwise_milp,
)

__all__ = ["lns"]

_LNS_VARS = 60_000  # variables (x and y) of one neighbourhood's MILP, at most
_LNS_SECONDS = 2.0  # HiGHS's time limit per neighbourhood
_LNS_MEMORY_ROWS = 5_000  # memory rows of one neighbourhood's MILP, at most (the tightest)


def _neighbourhood(model: _Model, seed: int, rng: np.random.Generator) -> list[int]:
    """Nodes reached from `seed` over two-node edges (random order among the frontier),
    while their MILP stays under `_LNS_VARS` variables; none on an edge of more nodes."""
    chosen, seen = [seed], {seed}
    size = len(model.node_cost[seed])
    frontier = [seed]
    while frontier:
        x = frontier.pop(int(rng.integers(len(frontier))))
        for e, side in model.incident[x]:
            i, j, table = model.pairs[e]
            y = j if side == 0 else i
            if y in seen or len(model.node_cost[y]) < 2 or model.incident_other[y]:
                continue
            inside = sum(
                model.pairs[f][2].size
                for f, s in model.incident[y]
                if (model.pairs[f][1] if s == 0 else model.pairs[f][0]) in seen
            )
            grown = size + len(model.node_cost[y]) + inside
            if grown > _LNS_VARS:
                continue
            seen.add(y)
            chosen.append(y)
            frontier.append(y)
            size = grown
    return chosen


def _sub_milp(
    model: _Model, assign: np.ndarray, load: np.ndarray, nodes: list[int]
) -> tuple[MilpBuilder, list[np.ndarray], Callable[[list[int]], float]]:
    """The MILP over `nodes` (none on an edge of more than two nodes) with every other node
    at its strategy in `assign`, its x indices per node, and a function giving its objective
    for an assignment of `nodes`."""
    assert not any(model.incident_other[n] for n in nodes)
    pos = {n: k for k, n in enumerate(nodes)}
    cost = [model.node_cost[n].copy() for n in nodes]
    inner: list[tuple[int, int, np.ndarray]] = []
    for n in nodes:
        for e, side in model.incident[n]:
            i, j, table = model.pairs[e]
            other = j if side == 0 else i
            if other in pos:
                if side == 0:
                    inner.append((pos[i], pos[j], table))
            else:
                cost[pos[n]] += table[:, assign[j]] if side == 0 else table[assign[i], :]
    milp, x, _ = _pairwise_milp(cost, inner)
    if model.limit is not None and len(model.times):
        _add_sub_memory_rows(milp, model, assign, load, nodes, x)

    def objective(picked: list[int]) -> float:
        total = sum(float(c[s]) for c, s in zip(cost, picked, strict=True))
        return total + sum(float(t[picked[a], picked[b]]) for a, b, t in inner)

    return milp, x, objective


def _add_sub_memory_rows(
    milp: MilpBuilder,
    model: _Model,
    assign: np.ndarray,
    load: np.ndarray,
    nodes: list[int],
    x: list[np.ndarray],
) -> None:
    """Memory rows at the time points the nodes could push over the limit (the others'
    load is fixed there)."""
    assert model.limit is not None
    worst = np.zeros(len(model.times))
    for n in nodes:
        a, b = model.span[n]
        if a < b:
            worst[a:b] += model.usage[n].max() - model.usage[n][assign[n]]
    points = np.nonzero(load + worst > model.limit)[0]
    if points.size == 0:
        return
    if points.size > _LNS_MEMORY_ROWS:  # the tightest only: `_take` checks every point
        slack = model.limit - load[points]
        points = np.sort(points[np.argsort(slack, kind="stable")[:_LNS_MEMORY_ROWS]])
    fixed = load[points].copy()
    rows, cols, vals = [], [], []
    for k, n in enumerate(nodes):
        a, b = (int(v) for v in model.span[n])
        lo, hi = np.searchsorted(points, a), np.searchsorted(points, b)  # points in [a, b)
        if lo >= hi:
            continue
        hit = np.arange(lo, hi)
        u = model.usage[n]
        fixed[hit] -= u[assign[n]]
        rows.append(np.repeat(hit, len(u)))
        cols.append(np.tile(x[k], len(hit)))
        vals.append(np.tile(u, len(hit)))
    if rows:
        milp.add_rows(
            np.concatenate(rows),
            np.concatenate(cols),
            np.concatenate(vals),
            np.full(points.size, -np.inf),
            model.limit - fixed,
        )


def lns(
    model: _Model,
    assign: np.ndarray,
    deadline: float,
    seed: int = 0,
    stop: Callable[[], bool] = lambda: False,
) -> int:
    """Improve `assign` in place: neighbourhoods of connected nodes re-solved exactly by
    HiGHS with the rest fixed, each kept when it lowers the cost, until `deadline` or
    `stop()`; the neighbourhoods made."""
    rng = np.random.default_rng(seed)
    movable = np.array(
        [i for i, c in enumerate(model.node_cost) if len(c) > 1 and not model.incident_other[i]]
    )
    if movable.size == 0:  # (each node on an edge of more than two nodes: none to re-solve)
        return 0
    load = _load(model, assign)
    made, last = 0, 0.0
    # A neighbourhood is begun only when twice the last one's time is left: HiGHS keeps its
    # own limit, building the rows does not look at the clock.
    while time.monotonic() + max(0.1, 2 * last) < deadline and not stop():
        began = time.monotonic()
        nodes = _neighbourhood(model, int(rng.choice(movable)), rng)
        milp, x, objective = _sub_milp(model, assign, load, nodes)
        budget = min(_LNS_SECONDS, deadline - time.monotonic() - 0.05)
        if budget <= 0.02:
            break
        # In a child process: HiGHS overruns its own limit on some (32 s for 2 s on A).
        res = run_forked(_solver(milp, budget), budget + 0.3)
        made += 1
        if res is not None and res.x is not None:
            _take(model, assign, load, nodes, [int(np.argmax(res.x[idx])) for idx in x], objective)
        last = time.monotonic() - began
        if res is not None and len(nodes) == movable.size and res.status == "optimal":
            break  # the whole problem was that neighbourhood, solved exactly
    return made


def _solver(milp: MilpBuilder, budget: float) -> Callable[[], MilpResult]:
    return lambda: milp.solve(budget)


def _take(
    model: _Model,
    assign: np.ndarray,
    load: np.ndarray,
    nodes: list[int],
    picked: list[int],
    objective: Callable[[list[int]], float],
) -> None:
    """Move `nodes` to `picked` (in place) if that lowers the cost and every time point fits."""
    if not _better(objective(picked), objective([int(assign[n]) for n in nodes])):
        return
    trial, trial_load = assign.copy(), load.copy()
    for n, s in zip(nodes, picked, strict=True):
        _move(model, trial, trial_load, n, s)
    if model.limit is not None and len(trial_load) and trial_load.max() > model.limit:
        return
    assign[:] = trial
    load[:] = trial_load
