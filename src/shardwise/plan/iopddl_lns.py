"""The large neighbourhood search of the IOPDDL solver (`iopddl_solver`'s docstring): where
the whole MILP is too big for HiGHS, a node at random and the nodes reached from it over
two-node edges, up to `_LNS_VARS` MILP variables, re-solved exactly with every other node
fixed, kept when they cost less and every time point fits.

It runs on a `Pairwise` problem: nodes with costs, two-node edges, and memory as items (an
item is live over a span of time points and takes an amount that depends on its owner node's
strategy). The original problem is one (`Pairwise.of_model`: each node its own item, the
nodes on an edge of more than two nodes left to the local search, since the neighbourhood
MILP has rows for two-node edges only); so is the contracted one of `iopddl_contract`, whose
nodes are components of tied nodes and whose items are their members, which is what lets a
chain of ties move as a whole."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from shardwise.plan.highs import Forked, MilpBuilder, MilpResult
from shardwise.plan.iopddl_model import _better, _Model, _pairwise_milp

__all__ = ["Pairwise", "lns"]

_LNS_VARS = 60_000  # variables (x and y) of one neighbourhood's MILP, at most
_LNS_SECONDS = 2.0  # HiGHS's time limit per neighbourhood
_LNS_MEMORY_ROWS = 5_000
_ADAPT_RANGE = (
    1_000,
    120_000,
)  # where an adapted cap on a neighbourhood's variables stays  # memory rows of one neighbourhood's MILP, at most (the tightest)


@dataclass(frozen=True, slots=True)
class Pairwise:
    """Nodes, two-node edges and memory items, as the neighbourhood search re-solves them."""

    node_cost: list[np.ndarray]
    pairs: list[tuple[int, int, np.ndarray]]  # (i, j, table of shape (n_i, n_j)), i != j
    incident: list[list[tuple[int, int]]]  # node -> (pair index, 0 if node is i else 1)
    movable: np.ndarray  # node -> whether a neighbourhood may take it
    owner: np.ndarray  # item -> the node whose strategy sets its memory
    span: np.ndarray  # item -> [first, last) index into the checked time points
    usage: list[np.ndarray]  # item -> its memory at each of its owner's strategies
    items: list[list[int]]  # node -> the items it owns (with a span that is not empty)
    limit: float | None
    num_times: int

    @staticmethod
    def of_model(model: _Model) -> Pairwise:
        """The original problem: each node its own item; a node with one strategy or on an
        edge of more than two nodes is not movable."""
        n = len(model.node_cost)
        span = np.asarray(model.span, dtype=np.int64).reshape(n, 2)
        pairs = zip(model.node_cost, model.incident_other, strict=True)
        movable = np.array([len(c) > 1 and not other for c, other in pairs], dtype=bool)
        return Pairwise(
            model.node_cost,
            model.pairs,
            model.incident,
            movable,
            np.arange(n),
            span,
            model.usage,
            [[i] if span[i, 0] < span[i, 1] else [] for i in range(n)],
            model.limit,
            len(model.times),
        )

    def load(self, assign: np.ndarray) -> np.ndarray:
        """The memory at each checked time point under `assign`."""
        load = np.zeros(self.num_times)
        for it, (a, b) in enumerate(self.span.tolist()):
            if a < b:
                load[a:b] += self.usage[it][assign[self.owner[it]]]
        return load

    def move(self, assign: np.ndarray, load: np.ndarray, node: int, s: int) -> None:
        """Move `node` to strategy `s`, in place, with the load."""
        for it in self.items[node]:
            a, b = self.span[it]
            u = self.usage[it]
            load[a:b] += u[s] - u[assign[node]]
        assign[node] = s


def _neighbourhood(
    view: Pairwise, seed: int, rng: np.random.Generator, size_cap: int, taken: set[int]
) -> list[int]:
    """Nodes reached from `seed` over two-node edges (random order among the frontier),
    while their MILP stays under `size_cap` variables; only movable ones not in `taken`."""
    chosen, seen = [seed], {seed}
    size = len(view.node_cost[seed])
    frontier = [seed]
    while frontier:
        x = frontier.pop(int(rng.integers(len(frontier))))
        for e, side in view.incident[x]:
            i, j, table = view.pairs[e]
            y = j if side == 0 else i
            if y in seen or not view.movable[y] or y in taken:
                continue
            inside = sum(
                view.pairs[f][2].size
                for f, s in view.incident[y]
                if (view.pairs[f][1] if s == 0 else view.pairs[f][0]) in seen
            )
            grown = size + len(view.node_cost[y]) + inside
            if grown > size_cap:
                continue
            seen.add(y)
            chosen.append(y)
            frontier.append(y)
            size = grown
    return chosen


def _sub_milp(
    view: Pairwise, assign: np.ndarray, load: np.ndarray, nodes: list[int]
) -> tuple[MilpBuilder, list[np.ndarray], Callable[[list[int]], float]]:
    """The MILP over `nodes` with every other node at its strategy in `assign`, its x
    indices per node, and a function giving its objective for an assignment of `nodes`."""
    pos = {n: k for k, n in enumerate(nodes)}
    cost = [view.node_cost[n].copy() for n in nodes]
    inner: list[tuple[int, int, np.ndarray]] = []
    for n in nodes:
        for e, side in view.incident[n]:
            i, j, table = view.pairs[e]
            other = j if side == 0 else i
            if other in pos:
                if side == 0:
                    inner.append((pos[i], pos[j], table))
            else:
                cost[pos[n]] += table[:, assign[j]] if side == 0 else table[assign[i], :]
    milp, x, _ = _pairwise_milp(cost, inner)
    if view.limit is not None and view.num_times:
        _add_sub_memory_rows(milp, view, assign, load, nodes, x)

    def objective(picked: list[int]) -> float:
        total = sum(float(c[s]) for c, s in zip(cost, picked, strict=True))
        return total + sum(float(t[picked[a], picked[b]]) for a, b, t in inner)

    return milp, x, objective


def _add_sub_memory_rows(
    milp: MilpBuilder,
    view: Pairwise,
    assign: np.ndarray,
    load: np.ndarray,
    nodes: list[int],
    x: list[np.ndarray],
) -> None:
    """Memory rows at the time points the nodes could push over the limit (the others'
    load is fixed there)."""
    assert view.limit is not None
    worst = np.zeros(view.num_times)
    for n in nodes:
        for it in view.items[n]:
            a, b = view.span[it]
            worst[a:b] += view.usage[it].max() - view.usage[it][assign[n]]
    points = np.nonzero(load + worst > view.limit)[0]
    if points.size == 0:
        return
    if points.size > _LNS_MEMORY_ROWS:  # the tightest only: `_take` checks every point
        slack = view.limit - load[points]
        points = np.sort(points[np.argsort(slack, kind="stable")[:_LNS_MEMORY_ROWS]])
    fixed = load[points].copy()
    rows, cols, vals = [], [], []
    for k, n in enumerate(nodes):
        for it in view.items[n]:
            a, b = (int(v) for v in view.span[it])
            lo, hi = np.searchsorted(points, a), np.searchsorted(points, b)  # points in [a, b)
            if lo >= hi:
                continue
            hit = np.arange(lo, hi)
            u = view.usage[it]
            fixed[hit] -= u[assign[n]]
            rows.append(np.repeat(hit, len(u)))
            cols.append(np.tile(x[k], len(hit)))
            vals.append(np.tile(u, len(hit)))
    if rows:  # (entries of one node's items at one point are summed by the sparse matrix)
        milp.add_rows(
            np.concatenate(rows),
            np.concatenate(cols),
            np.concatenate(vals),
            np.full(points.size, -np.inf),
            view.limit - fixed,
        )


def lns(
    view: Pairwise,
    assign: np.ndarray,
    deadline: float,
    seed: int = 0,
    stop: Callable[[], bool] = lambda: False,
    size_cap: int = _LNS_VARS,
    width: int = 1,
    adapt: bool = False,
) -> int:
    """Improve `assign` in place: neighbourhoods of connected nodes (MILPs of up to
    `size_cap` variables) re-solved exactly by HiGHS with the rest fixed, each kept when it
    lowers the cost, until `deadline` or `stop()`; the neighbourhoods made. With `width` > 1,
    that many neighbourhoods at a time, each in its own process: no node of one is in or next
    to another, so their costs add up (the memory is checked again as each is kept). With
    `adapt`, the cap follows HiGHS: x1.25 after a neighbourhood solved to optimality in under
    a quarter of its time, x0.7 after one it did not solve (between `_ADAPT_RANGE`)."""
    rng = np.random.default_rng(seed)
    movable = np.nonzero(view.movable)[0]
    if movable.size == 0:  # (each node on an edge of more than two nodes: none to re-solve)
        return 0
    load = view.load(assign)
    made, last = 0, 0.0
    # A round is begun only when twice the last one's time is left: HiGHS keeps its own
    # limit, building the rows does not look at the clock.
    while time.monotonic() + max(0.1, 2 * last) < deadline and not stop():
        began = time.monotonic()
        budget = min(_LNS_SECONDS, deadline - began - 0.05)
        if budget <= 0.02:
            break
        jobs, taken = [], set[int]()
        for _ in range(width):
            first = _draw(movable, taken, rng)
            if first is None:
                break
            nodes = _neighbourhood(view, first, rng, size_cap, taken)
            taken.update(nodes)
            taken.update(y for n in nodes for y in _next_to(view, n))
            milp, x, objective = _sub_milp(view, assign, load, nodes)
            # In a child process: HiGHS overruns its own limit on some (32 s for 2 s on A).
            job: Forked[MilpResult] = Forked(_solver(milp, budget))
            jobs.append((job, time.monotonic() + budget + 0.3, nodes, x, objective))
        whole = False
        for job, until, nodes, x, objective in jobs:
            res = job.wait(until)
            made += 1
            if res is not None and res.x is not None:
                picked = [int(np.argmax(res.x[idx])) for idx in x]
                _take(view, assign, load, nodes, picked, objective)
            if adapt:
                size_cap = _adapted(size_cap, res, budget)
            whole |= res is not None and len(nodes) == movable.size and res.status == "optimal"
        last = time.monotonic() - began
        if whole:
            break  # the whole problem was that neighbourhood, solved exactly
    return made


def _adapted(size_cap: int, res: MilpResult | None, budget: float) -> int:
    low, high = _ADAPT_RANGE
    if res is None or res.status != "optimal":
        return int(max(low, size_cap * 0.7))
    if res.solve_time_s < 0.25 * budget:
        return int(min(high, size_cap * 1.25))
    return size_cap


def _draw(movable: np.ndarray, taken: set[int], rng: np.random.Generator) -> int | None:
    """A movable node at random, not in `taken` (None after a few tries)."""
    for _ in range(8):
        node = int(rng.choice(movable))
        if node not in taken:
            return node
    return None


def _next_to(view: Pairwise, node: int) -> list[int]:
    return [int(view.pairs[e][1 - side]) for e, side in view.incident[node]]


def _solver(milp: MilpBuilder, budget: float) -> Callable[[Callable[[MilpResult], None]], None]:
    return lambda send: send(milp.solve(budget))


def _take(
    view: Pairwise,
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
        view.move(trial, trial_load, n, s)
    if view.limit is not None and len(trial_load) and trial_load.max() > view.limit:
        return
    assign[:] = trial
    load[:] = trial_load
