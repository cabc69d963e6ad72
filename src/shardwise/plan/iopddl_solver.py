"""Solve an IOPDDL problem: HiGHS on a MILP, a local search that always has a valid answer.

The MILP (`_build_milp`): one binary ``x[i, s]`` per node strategy with ``sum_s x[i, s] = 1``;
per edge of two nodes a continuous ``y[e, a, b]`` in [0, 1] tied to both nodes by the
marginal rows ``sum_b y[e, a, b] = x[i, a]`` and ``sum_a y[e, a, b] = x[j, b]`` (the local
polytope: exact for integral ``x``, and tighter than the big-M linearization); one memory row
per time point where the live set stops growing (the other time points are dominated when
usages are non-negative). Before that, edges whose table splits into a row part plus a column
part, and edges of fixed nodes, are folded into node costs, so they cost no variables.

The local search (`_local_search`) starts from `_penalty_free_start`: arc consistency over
the edges' forbidden entries (the contest's ~1e18 costs), then a greedy assignment that keeps
every time point under the limit (every node at its least usage fits whenever anything fits;
`iopddl.check_feasible` raises otherwise) and takes no forbidden entry where it can avoid
one. A second start is every node at its cheapest strategy after `_repair` brought it under
the limit, where time allows. It moves one node, or the two ends of an edge together, to
their cheapest strategies that keep every time point under the limit, until no move pays or
the time is up; a move that adds a forbidden entry costs ~1e18 more, so it never pays. It
runs before the MILP (so a solution exists even if HiGHS finds none in time) and after it,
to polish HiGHS's incumbent. The answer is the best solution the exact evaluator
(`iopddl.evaluate`) accepts.

Where edges tie nodes (one allowed entry per row and column: in a penalty-free solution one
node's strategy fixes the other's), the contracted MILP of `iopddl_contract` (a node per
component of ties, memory rows added where its answer goes over) runs in a child process
beside all of this, from the start, on the other core; it takes the place of the whole MILP,
and once HiGHS proves its answer optimal the local search and the neighbourhood search stop.
On the contest's instances about 65% of the edges are ties: A's 6.1M-variable MILP contracts
to 54k variables and is solved to optimality in ~20 s.

Where the whole MILP has more than `_WHOLE_MILP_VARS` variables (HiGHS finds no incumbent of
such in the contest's time), a large neighbourhood search (`_lns`) takes its place: a node at
random and the nodes reached from it over two-node edges, up to `_LNS_VARS` MILP variables,
re-solved exactly with every other node fixed (their edges folded into the neighbourhood's
node costs, their memory into the rows' bounds, rows only at the time points the
neighbourhood could push over the limit); the new strategies are kept when they cost less and
every time point fits. It moves many nodes at once where single and pair moves are stuck.
Where there are ties, it runs on the contracted problem (`iopddl_contract.pairwise`: a node
per component), so a chain of ties moves as a whole; there the starts' local search, which
cannot move such chains, is kept short. When the other core is free (no contracted MILP
beside it), two neighbourhoods apart from each other are solved at a time.
"""

from __future__ import annotations

import heapq
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from shardwise.plan.highs import Forked, MilpBuilder, run_forked
from shardwise.plan.iopddl import Evaluation, Problem, check_feasible, evaluate
from shardwise.plan.iopddl_contract import Contraction, Found, contract, pairwise, search
from shardwise.plan.iopddl_lns import Pairwise, lns
from shardwise.plan.iopddl_model import (
    _PENALTY,
    _better,
    _load,
    _Model,
    _move,
    _pairwise_milp,
    _x_index,
)

__all__ = ["IopddlResult", "solve"]

# Above this many memory-row nonzeros, only the most loaded time points get rows (and the
# MILP's answer is repaired where the others go over).
_MAX_MEMORY_NNZ = 2_000_000
# Above this many MILP variables the whole MILP is not tried (HiGHS finds nothing in the
# contest's time): the neighbourhood search (`iopddl_lns`) is.
_WHOLE_MILP_VARS = 1_500_000
# Variables of one neighbourhood of the contracted problem at first, then adapted to how fast
# HiGHS solves them (`lns(adapt=True)`): no one cap suits every instance (100 s from the same
# start, K: 1.5k 8.2e9, 3k 7.8e9, 10k 8.0e9, adapted 7.3e9; V: 3k 38.6e6, 60k 6.8e6, adapted
# 5.7e6, where 3k holds one component with none of its 24k-entry tables).
_CONTRACTED_LNS_VARS = 3_000


@dataclass(frozen=True, slots=True)
class IopddlResult:
    """The chosen strategy per node, its exact cost, and how good it is known to be."""

    strategies: tuple[int, ...]
    cost: int
    peak_usage: int
    lower_bound: float | None
    status: str  # "optimal" (proved by HiGHS) or "feasible"
    method: str  # what produced the answer: "contracted-milp", "milp", "lns", "local-search"
    solve_time_s: float

    @property
    def gap(self) -> float | None:
        """Relative gap to the lower bound (0 when proved optimal)."""
        if self.lower_bound is None or self.cost == 0:
            return None
        return max(0.0, (self.cost - self.lower_bound) / abs(self.cost))

    def to_json(self) -> dict[str, Any]:
        return {
            "solution": list(self.strategies),
            "cost": self.cost,
            "peak_usage": self.peak_usage,
            "lower_bound": self.lower_bound,
            "gap": self.gap,
            "status": self.status,
            "method": self.method,
            "solve_time_s": round(self.solve_time_s, 3),
        }

    def to_text(self) -> str:
        return json.dumps(self.to_json())


def solve(problem: Problem, time_limit: float = 60.0, use_milp: bool = True) -> IopddlResult:
    """The best solution found within `time_limit` seconds (wall clock, end to end).

    Raises `InfeasibleError` when no solution fits the usage limit.
    """
    start = time.monotonic()
    check_feasible(problem)
    model = _build_model(problem)
    # The contracted MILP (`iopddl_contract`) runs beside everything below, on the other core.
    job_end = start + 0.85 * time_limit
    con = contract(model) if use_milp else None
    job = _contracted_job(model, con, job_end) if con is not None else None
    done = (lambda: _proved_by(job.latest())) if job is not None else (lambda: False)
    big = use_milp and _milp_size(model) > _WHOLE_MILP_VARS
    # Where the contracted problem's neighbourhoods follow, the single-node local search of
    # the starts is kept short: it cannot move a chain of ties (K: 67 s of it gained 7%, as
    # much as 8 s of neighbourhoods).
    brief = big and con is not None
    best, best_ev, end = _starts(problem, model, start, time_limit, done, brief)
    method, bound = "local-search", None
    if big and not done() and end - time.monotonic() > 0.2:
        # Too big for HiGHS as a whole: small parts of it re-solved exactly, a few at a time
        # (two when the other core is not taken by the contracted MILP); of the contracted
        # problem where there is one, so chains of ties move as a whole. (No local search
        # after: on A its first pass took 2.7 s.)
        width = 2 if job is None and (os.cpu_count() or 1) > 1 else 1
        picked = con.pick(best) if con is not None else None
        if con is not None and picked is not None:
            view = pairwise(model, con)
            cap = _CONTRACTED_LNS_VARS
            lns(view, picked, end, stop=done, size_cap=cap, width=width, adapt=True)
            cand = con.expand(picked, len(model.node_cost))
        else:
            cand = best.copy()
            lns(Pairwise.of_model(model), cand, end, stop=done, width=width)
        ev = evaluate(problem, tuple(cand.tolist()))
        if ev.feasible and ev.cost <= best_ev.cost:
            best, best_ev, method = cand, ev, "lns"
    elif use_milp and job is None and end - time.monotonic() > 0.1:
        reduced = _tightest_points(model, best, _MAX_MEMORY_NNZ)
        hard = end - time.monotonic()
        res = run_forked(lambda: _build_milp(reduced).solve(0.75 * hard), hard)
        x_index = _x_index(model.node_cost)
        if res is not None and res.dual_bound is not None:
            bound = min(res.dual_bound, _PENALTY) + model.constant
        if res is not None and res.x is not None:
            cand = np.array([int(np.argmax(res.x[idx])) for idx in x_index], dtype=np.int64)
            if reduced is not model:  # rows were left out: they may be over the limit
                _repair(model, cand, end)
            _local_search(model, cand, end)
            ev = evaluate(problem, tuple(cand.tolist()))
            if ev.feasible and ev.cost <= best_ev.cost:
                best, best_ev, method = cand, ev, "milp"
    found = job.wait(job_end) if job is not None else None
    if found is not None:
        ev = evaluate(problem, tuple(found.assign.tolist()))
        if found.bound is not None:
            bound = max(bound or -np.inf, found.bound + model.constant)
        if ev.feasible and ev.cost <= best_ev.cost:
            best, best_ev, method = found.assign, ev, "contracted-milp"
    if not _proved(best_ev.cost, bound) and time.monotonic() < end:
        polished = best.copy()
        _local_search(model, polished, end)
        ev = evaluate(problem, tuple(polished.tolist()))
        if ev.feasible and ev.cost <= best_ev.cost:
            best, best_ev = polished, ev
    return IopddlResult(
        strategies=tuple(best.tolist()),
        cost=best_ev.cost,
        peak_usage=best_ev.peak_usage,
        lower_bound=bound,
        status="optimal" if _proved(best_ev.cost, bound) else "feasible",
        method=method,
        solve_time_s=time.monotonic() - start,
    )


def _contracted_job(model: _Model, con: Contraction, deadline: float) -> Forked[Found] | None:
    """The contracted MILP's search in a child process, when the contracted MILP is smaller
    than the whole one and not too big for HiGHS (K, L and M of the contest contract to
    1.7-2.4M variables, where it found nothing in 60 s)."""
    if not con.milp_size() < min(_milp_size(model), _WHOLE_MILP_VARS):
        return None
    return Forked(lambda send: search(model, con, deadline, send))


def _proved_by(found: Found | None) -> bool:
    return found is not None and found.optimal


def _starts(
    problem: Problem,
    model: _Model,
    start: float,
    time_limit: float,
    done: Callable[[], bool],
    brief: bool = False,
) -> tuple[np.ndarray, Evaluation, float]:
    """The local search's best start (`best`, its evaluation) and the `end` the rest keeps:
    a start that avoids the forbidden entries, then every node at its cheapest strategy,
    each improved by the local search; the later steps are skipped once `done()`. `brief`:
    the first only, its local search for 5% of the time."""
    safe = np.array([int(np.argmin(u)) for u in problem.usages], dtype=np.int64)
    # The first start avoids the forbidden entries; on a huge instance it may take most of
    # the time, and the local search after it only takes moves that pay, so adds no penalty.
    best = _penalty_free_start(model, start + 0.8 * time_limit)
    if _penalties(model, best) and time.monotonic() < start + 0.5 * time_limit and not done():
        # The cheapest choices may have used the memory a later node needed to avoid a
        # penalty: the least-usage choices leave it.
        frugal = _penalty_free_start(model, start + 0.85 * time_limit, frugal=True)
        if _penalties(model, frugal) < _penalties(model, best):
            best = frugal
    if not done():
        share = 0.05 if brief else 0.25
        later = max(start + share * time_limit, time.monotonic() + 0.05 * time_limit)
        _local_search(model, best, later)
    tick = time.monotonic()
    best_ev = evaluate(problem, tuple(best.tolist()))
    # What the end needs: one more exact evaluation, with room to spare.
    end = start + time_limit - 2 * (time.monotonic() - tick) - 0.02 * time_limit
    if not best_ev.feasible:
        best, best_ev = safe.copy(), evaluate(problem, tuple(safe.tolist()))
    # A second start: every node at its cheapest strategy, brought under the limit.
    if not brief and time.monotonic() < start + 0.3 * time_limit and not done():
        greedy = np.array([int(np.argmin(c)) for c in model.node_cost], dtype=np.int64)
        _repair(model, greedy, start + 0.3 * time_limit)
        _local_search(model, greedy, start + 0.4 * time_limit)
        ev = evaluate(problem, tuple(greedy.tolist()))
        if ev.feasible and ev.cost < best_ev.cost:
            best, best_ev = greedy, ev
    return best, best_ev, end


def _milp_size(model: _Model) -> int:
    return sum(len(c) for c in model.node_cost) + sum(t.size for _, _, t in model.pairs)


def _proved(cost: int, bound: float | None) -> bool:
    """Whether `cost` meets HiGHS's dual bound (which holds for the uncapped problem too:
    capping only lowers costs)."""
    return bound is not None and cost <= bound + 1e-6 * max(1.0, abs(bound))


def _build_model(problem: Problem) -> _Model:
    n = problem.num_nodes
    node_cost = [np.array(c, dtype=np.float64) for c in problem.costs]
    constant = 0.0
    pairs: dict[tuple[int, int], np.ndarray] = {}
    others: list[tuple[tuple[int, ...], np.ndarray]] = []
    for members, flat in zip(problem.edges, problem.edge_costs, strict=True):
        shape = tuple(problem.num_strategies(m) for m in members)
        table = np.array(flat, dtype=np.float64).reshape(shape)
        free = [k for k, m in enumerate(members) if shape[k] > 1]
        if len(set(members)) != len(members):
            others.append((members, table))
            continue
        # Fixed nodes (one strategy) take index 0: drop their axes.
        table = table.reshape([shape[k] for k in free]) if free else table.reshape(())
        members = tuple(members[k] for k in free)
        if not members:
            constant += float(table)
        elif len(members) == 1:
            node_cost[members[0]] += table
        elif len(members) == 2:
            i, j = members
            if i > j:
                i, j, table = j, i, table.T
            pairs[(i, j)] = pairs[(i, j)] + table if (i, j) in pairs else table
        else:
            others.append((members, table))
    pair_list: list[tuple[int, int, np.ndarray]] = []
    for (i, j), table in pairs.items():
        row, col = table[:, :1], table[:1, :]
        rest = table - row - col + table[0, 0]
        if not np.any(rest):  # separable: a cost per strategy of i plus one per strategy of j
            node_cost[i] += row[:, 0] - table[0, 0]
            node_cost[j] += col[0, :]
            continue
        pair_list.append((i, j, table))
    incident: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    for e, (i, j, _) in enumerate(pair_list):
        incident[i].append((e, 0))
        incident[j].append((e, 1))
    incident_other: list[list[int]] = [[] for _ in range(n)]
    for e, (members, _) in enumerate(others):
        for m in set(members):
            incident_other[m].append(e)
    usage = [np.array(u, dtype=np.float64) for u in problem.usages]
    times, span = _memory_points(problem, usage)
    return _Model(
        node_cost=node_cost,
        pairs=pair_list,
        others=others,
        constant=constant,
        incident=incident,
        incident_other=incident_other,
        usage=usage,
        limit=None if problem.usage_limit is None else float(problem.usage_limit),
        times=times,
        span=span,
        intervals=np.array(problem.intervals, dtype=np.int64).reshape(n, 2),
    )


def _memory_points(problem: Problem, usage: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The time points to check and each node's live range over them.

    With non-negative usages the live set at a start time is contained in the one at the
    next start unless some interval ends in between, so only the starts followed by an end
    (and the last start) can hold the peak.
    """
    n = problem.num_nodes
    iv = np.array(problem.intervals, dtype=np.int64).reshape(n, 2)
    varies = np.array([u.size > 0 and np.any(u != 0) for u in usage], dtype=bool)
    active = varies & (iv[:, 0] < iv[:, 1])
    if problem.usage_limit is None or not np.any(active):
        return np.zeros(0, dtype=np.int64), np.zeros((n, 2), dtype=np.int64)
    starts = np.unique(iv[active, 0])
    if all(np.all(u >= 0) for u in usage):
        ends = np.sort(iv[active, 1])
        nxt = np.append(starts[1:], np.iinfo(np.int64).max)
        # an end e with starts[k] < e <= nxt[k]
        first_end_after = np.searchsorted(ends, starts, side="right")
        keep = (first_end_after < len(ends)) & (
            ends[np.minimum(first_end_after, len(ends) - 1)] <= nxt
        )
        keep[-1] = True
        starts = starts[keep]
    span = np.zeros((n, 2), dtype=np.int64)
    span[active, 0] = np.searchsorted(starts, iv[active, 0], side="left")
    span[active, 1] = np.searchsorted(starts, iv[active, 1], side="left")
    return starts, span


def _tightest_points(model: _Model, assign: np.ndarray, max_nnz: int) -> _Model:
    """`model` with only as many memory time points as `max_nnz` nonzeros allow, the most
    loaded under `assign` first (the model itself when all fit)."""
    total = _memory_nnz(model)
    if total <= max_nnz or len(model.times) == 0:
        return model
    keep = max(1, int(len(model.times) * max_nnz / total))
    load = _load(model, assign)
    chosen = np.sort(model.times[np.argsort(-load, kind="stable")[:keep]])
    span = np.zeros_like(model.span)
    live = model.span[:, 0] < model.span[:, 1]
    span[live, 0] = np.searchsorted(chosen, model.intervals[live, 0], side="left")
    span[live, 1] = np.searchsorted(chosen, model.intervals[live, 1], side="left")
    return replace(model, times=chosen, span=span)


def _repair(model: _Model, assign: np.ndarray, deadline: float) -> None:
    """Bring `assign` under the limit: at the most overloaded time point, move the live node
    that saves the most memory to its least usage, until every point fits (all nodes at their
    least usage fit, so this ends) or the time is up."""
    if model.limit is None or len(model.times) == 0:
        return
    load = _load(model, assign)
    least = np.array([u.min() for u in model.usage])
    current = np.array([u[s] for u, s in zip(model.usage, assign, strict=True)])
    while time.monotonic() < deadline:
        t = int(np.argmax(load))
        if load[t] <= model.limit:
            return
        live = (model.span[:, 0] <= t) & (t < model.span[:, 1])
        saving = np.where(live, current - least, 0.0)
        node = int(np.argmax(saving))
        if saving[node] <= 0:
            return  # cannot happen when the least usages fit
        s = int(np.argmin(model.usage[node]))
        _move(model, assign, load, node, s)
        current[node] = model.usage[node][s]


def _penalty_free_start(model: _Model, deadline: float, frugal: bool = False) -> np.ndarray:
    """A start that takes no forbidden entry where it can avoid one, under the memory limit.

    Each node's domain begins as its penalty-free strategies; arc consistency over the
    two-node edges prunes a strategy that no strategy left in a neighbour's domain joins
    without a penalty, and propagates. Then nodes are fixed smallest domain first: each takes,
    among the strategies that keep every time point fitting (the unfixed nodes counted at
    their least usage, which fits), the one with the fewest penalties against the fixed
    neighbours, preferring its domain, then the cheapest, then the least usage (with `frugal`,
    the least usage before the cheapest); each choice is propagated again. A domain that
    would empty is left as it was (there the fewest penalties win). Nodes still unfixed at
    `deadline` take their least usage.
    """
    n = len(model.node_cost)
    dom = [c < _PENALTY for c in model.node_cost]
    dom = [d if d.any() else np.ones(d.shape, dtype=bool) for d in dom]
    # Only edges with a forbidden entry constrain; `ok[e]` is their penalty-free matrix.
    ok: dict[int, np.ndarray] = {}
    adj: list[list[tuple[int, int, int]]] = [[] for _ in range(n)]  # (edge, side, other)
    for e, (i, j, table) in enumerate(model.pairs):
        bad = table >= _PENALTY
        if bad.any():
            ok[e] = ~bad
            adj[i].append((e, 0, j))
            adj[j].append((e, 1, i))

    def propagate(queue: list[int]) -> list[int]:
        """Prune from the nodes in `queue` on; the nodes whose domain shrank."""
        changed = []
        while queue:
            x = queue.pop()
            for e, side, y in adj[x]:
                m = ok[e]
                support = m[dom[x]].any(axis=0) if side == 0 else m[:, dom[x]].any(axis=1)
                new = dom[y] & support
                if new.any() and not np.array_equal(new, dom[y]):
                    dom[y] = new
                    queue.append(y)
                    changed.append(y)
        return changed

    propagate([x for x in range(n) if adj[x]])
    safe = np.array([int(np.argmin(u)) for u in model.usage], dtype=np.int64)
    assign = safe.copy()
    load = _load(model, assign)
    fixed = np.zeros(n, dtype=bool)
    # Smallest domain per constraining edge first: a hub before the leaves that hang on it.
    weight = [1.0 / (1 + len(a)) for a in adj]

    def key(x: int) -> tuple[float, int]:
        return (int(dom[x].sum()) * weight[x], x)

    heap = [key(x) for x in range(n)]
    heapq.heapify(heap)
    while heap:
        size, x = heapq.heappop(heap)
        if fixed[x] or size != key(x)[0]:
            continue  # done, or a stale entry (the domain shrank since)
        if time.monotonic() > deadline:
            break
        fixed[x] = True
        cost = model.node_cost[x].copy()
        penalties = (cost >= _PENALTY).astype(np.int64)
        for e, side in model.incident[x]:
            i, j, table = model.pairs[e]
            other = j if side == 0 else i
            if fixed[other]:
                col = table[:, assign[j]] if side == 0 else table[assign[i], :]
                cost += col
                penalties += col >= _PENALTY
        fits = model.usage[x] - model.usage[x][assign[x]] <= _headroom(model, load, x)
        fits[assign[x]] = True
        # (np.lexsort's last key is its first)
        tie = (cost, model.usage[x]) if frugal else (model.usage[x], cost)
        order = np.lexsort((*tie, ~dom[x], penalties, ~fits))
        s = int(order[0])
        _move(model, assign, load, x, s)
        if dom[x].sum() > 1 or not dom[x][s]:
            dom[x] = np.zeros(dom[x].shape, dtype=bool)
            dom[x][s] = True
            for y in set(propagate([x])):
                if not fixed[y]:
                    heapq.heappush(heap, key(y))
    return assign


def _penalties(model: _Model, assign: np.ndarray) -> int:
    """How many forbidden entries (node costs and edge entries) `assign` takes."""
    count = sum(int(c[s] >= _PENALTY) for c, s in zip(model.node_cost, assign, strict=True))
    count += sum(int(t[assign[i], assign[j]] >= _PENALTY) for i, j, t in model.pairs)
    for members, table in model.others:
        count += int(table[tuple(int(assign[m]) for m in members)] >= _PENALTY)
    return count


def _memory_nnz(model: _Model) -> int:
    lengths = model.span[:, 1] - model.span[:, 0]
    return int(sum(int(lengths[i]) * len(u) for i, u in enumerate(model.usage) if lengths[i]))


def _incident_costs(model: _Model, node: int, assign: np.ndarray) -> np.ndarray:
    """The cost of each strategy of `node` given every other node's current strategy."""
    vec = model.node_cost[node].copy()
    for e, side in model.incident[node]:
        i, j, table = model.pairs[e]
        vec += table[:, assign[j]] if side == 0 else table[assign[i], :]
    for e in model.incident_other[node]:
        members, table = model.others[e]
        for s in range(len(vec)):
            picked = tuple(s if m == node else int(assign[m]) for m in members)
            vec[s] += table[picked]
    return vec


def _local_search(model: _Model, assign: np.ndarray, deadline: float) -> None:
    """Improve `assign` in place by moves that keep every time point fitting: single nodes
    to their cheapest strategy, then both ends of an edge at once (which escapes a pair of
    strategies that only pays off together), until neither pays or the time is up."""
    load = _load(model, assign)
    while time.monotonic() < deadline:
        _single_moves(model, assign, load, deadline)
        if not _pair_moves(model, assign, load, deadline):
            return


def _headroom(model: _Model, load: np.ndarray, node: int) -> float:
    a, b = model.span[node]
    if model.limit is None or a >= b:
        return np.inf
    return model.limit - float(load[a:b].max())


def _single_moves(model: _Model, assign: np.ndarray, load: np.ndarray, deadline: float) -> None:
    movable = [i for i, c in enumerate(model.node_cost) if len(c) > 1]
    improved = True
    while improved:
        improved = False
        for i in movable:
            if time.monotonic() > deadline:
                return
            vec = _incident_costs(model, i, assign)
            cur = int(assign[i])
            delta = model.usage[i] - model.usage[i][cur]
            vec = np.where(delta <= _headroom(model, load, i), vec, np.inf)
            s = int(np.argmin(vec))
            if _better(float(vec[s]), float(vec[cur])):
                _move(model, assign, load, i, s)
                improved = True


def _pair_moves(model: _Model, assign: np.ndarray, load: np.ndarray, deadline: float) -> bool:
    """One pass of joint moves over the two ends of each edge; whether any was made."""
    improved = False
    for i, j, table in model.pairs:
        if time.monotonic() > deadline:
            return improved
        if model.incident_other[i] and not set(model.incident_other[i]).isdisjoint(
            model.incident_other[j]
        ):
            # An edge of more nodes joins both: its cost for a joint move is not the sum of
            # each end's (taking it as that once turned an optimum of 1 into 2).
            continue
        si, sj = int(assign[i]), int(assign[j])
        # Each end's cost without this edge, then the joint table.
        vi = _incident_costs(model, i, assign) - table[:, sj]
        vj = _incident_costs(model, j, assign) - table[si, :]
        joint = vi[:, None] + vj[None, :] + table
        di = model.usage[i] - model.usage[i][si]
        dj = model.usage[j] - model.usage[j][sj]
        ok = (di <= _headroom(model, load, i))[:, None] & (dj <= _headroom(model, load, j))[None, :]
        (ai, bi), (aj, bj) = model.span[i], model.span[j]
        lo, hi = max(ai, aj), min(bi, bj)
        if model.limit is not None and lo < hi:  # both live somewhere: their sum must fit
            ok &= di[:, None] + dj[None, :] <= model.limit - float(load[lo:hi].max())
        joint = np.where(ok, joint, np.inf)
        flat = int(np.argmin(joint))
        a, b = divmod(flat, joint.shape[1])
        if (a, b) != (si, sj) and _better(float(joint[a, b]), float(joint[si, sj])):
            _move(model, assign, load, i, a)
            _move(model, assign, load, j, b)
            improved = True
    return improved


def _build_milp(model: _Model) -> MilpBuilder:
    """The MILP of the module docstring. An entry at or above the penalty is forbidden (its
    variable fixed to 0) unless a node has nothing else, where it is capped instead: the
    optimum is then the best penalty-free solution, and its bound, capped at the penalty,
    still bounds every solution (`_pairwise_milp`)."""
    milp, x_index, clip = _pairwise_milp(model.node_cost, model.pairs)
    for members, table in model.others:
        _add_general_edge(milp, x_index, members, clip(table))
    _add_memory_rows(milp, model, x_index)
    return milp


def _add_general_edge(
    milp: MilpBuilder, x_index: list[np.ndarray], members: tuple[int, ...], table: np.ndarray
) -> None:
    """An edge of any arity (or with a repeated node): one y per entry, marginal rows."""
    y = milp.add_vars(table.ravel(), binary=False).reshape(table.shape)
    milp.add_row(y.ravel(), np.ones(y.size), 1.0, 1.0)
    for axis, node in enumerate(members):
        for s in range(table.shape[axis]):
            cols = np.take(y, s, axis=axis).ravel()
            milp.add_row(
                np.append(cols, x_index[node][s]), np.append(np.ones(cols.size), -1.0), 0, 0
            )


def _add_memory_rows(milp: MilpBuilder, model: _Model, x_index: list[np.ndarray]) -> None:
    """``sum of (usage - least usage) . x <= limit - sum of least usages`` at each time point."""
    if model.limit is None or len(model.times) == 0:
        return
    base = np.zeros(len(model.times))
    rows, cols, vals = [], [], []
    for i, u in enumerate(model.usage):
        a, b = (int(v) for v in model.span[i])
        if a >= b:
            continue
        base[a:b] += u.min()
        extra = u - u.min()
        nz = np.nonzero(extra)[0]
        if nz.size == 0:
            continue
        rows.append(np.repeat(np.arange(a, b), nz.size))
        cols.append(np.tile(x_index[i][nz], b - a))
        vals.append(np.tile(extra[nz], b - a))
    if not rows:
        return
    milp.add_rows(
        np.concatenate(rows),
        np.concatenate(cols),
        np.concatenate(vals),
        np.full(len(model.times), -np.inf),
        model.limit - base,
    )
