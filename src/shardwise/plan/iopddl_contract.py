"""Nodes that must move together, solved as one: the contracted MILP of the IOPDDL solver.

An edge whose table allows at most one entry in each row and in each column (every other
entry at or above the penalty: the contest's "this strategy needs exactly that one") ties its
two nodes: in a solution without a penalty, either node's strategy fixes the other's. Ties join
nodes into components (`contract`). A component's strategies are its first node's strategies
that every tie on the way, and every cycle of ties, allows; each fixes every member's strategy.
The contracted problem has one node per component, costing its members' node costs plus every
edge inside it, and one table per pair of components, the sum of the edges between them. Its
solutions are exactly the original's penalty-free solutions, at the same cost: on the contest's
instances about 65% of the edges are ties, and A's 6.1M-variable MILP becomes one of 1,409
nodes and 54k variables, which HiGHS solves to optimality in seconds.

Memory rows are added where they bind (`search`): solve with none, expand the answer, add a
row at each of the most loaded time points that go over the limit, solve again, until the
answer fits everywhere. With HiGHS's optimum at the last round, that answer is optimal: the
rows left out only relax the problem.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from shardwise.plan.highs import MilpBuilder
from shardwise.plan.iopddl_lns import Pairwise
from shardwise.plan.iopddl_model import _PENALTY, _load, _Model, _pairwise_milp, _x_index

__all__ = ["Contraction", "Found", "contract", "pairwise", "search"]

# Memory rows added per round: the most loaded of the time points over the limit.
_ROWS_PER_ROUND = 200


@dataclass(frozen=True, slots=True)
class Contraction:
    """The components of the ties, their strategies and the contracted costs."""

    members: tuple[np.ndarray, ...]  # component -> its nodes
    strategy: tuple[np.ndarray, ...]  # component -> (members, its strategies): each one's
    cost: tuple[np.ndarray, ...]  # component -> the cost of each of its strategies
    pairs: tuple[tuple[int, int, np.ndarray], ...]  # (c, d, table), c < d, summed edges

    def milp_size(self) -> int:
        return sum(len(c) for c in self.cost) + sum(t.size for _, _, t in self.pairs)

    def objective(self, picked: np.ndarray) -> float:
        """The contracted cost of component strategies `picked` (the original's, less the
        model's constant)."""
        total = sum(float(c[s]) for c, s in zip(self.cost, picked, strict=True))
        return total + sum(float(t[picked[c], picked[d]]) for c, d, t in self.pairs)

    def expand(self, picked: list[int] | np.ndarray, num_nodes: int) -> np.ndarray:
        """Each node's strategy when component `c` takes its strategy `picked[c]`."""
        assign = np.zeros(num_nodes, dtype=np.int64)
        for nodes, strategy, s in zip(self.members, self.strategy, picked, strict=True):
            assign[nodes] = strategy[:, s]
        return assign

    def pick(self, assign: np.ndarray) -> np.ndarray | None:
        """Each component's strategy that gives its members their strategies in `assign`;
        None if some component has none (`assign` breaks a tie: it has a penalty)."""
        picked = np.zeros(len(self.members), dtype=np.int64)
        for c, (nodes, strategy) in enumerate(zip(self.members, self.strategy, strict=True)):
            match = np.nonzero((strategy == assign[nodes][:, None]).all(axis=0))[0]
            if match.size == 0:
                return None
            picked[c] = match[0]
        return picked


@dataclass(frozen=True, slots=True)
class Found:
    """What `search` sends: a solution that fits every time point, and what HiGHS proved."""

    assign: np.ndarray
    objective: float
    bound: float | None
    optimal: bool


def _ties(model: _Model) -> list[list[tuple[int, np.ndarray]]]:
    """node -> (tied node, its strategy for each of this node's strategies, -1 for none)."""
    ties: list[list[tuple[int, np.ndarray]]] = [[] for _ in model.node_cost]
    for i, j, table in model.pairs:
        ok = table < _PENALTY
        if ok.all() or (ok.sum(axis=1) > 1).any() or (ok.sum(axis=0) > 1).any():
            continue
        ties[i].append((j, np.where(ok.any(axis=1), ok.argmax(axis=1), -1)))
        ties[j].append((i, np.where(ok.any(axis=0), ok.argmax(axis=0), -1)))
    return ties


def _component(
    ties: list[list[tuple[int, np.ndarray]]], root: int, k: int
) -> tuple[list[int], np.ndarray]:
    """The nodes tied to `root` (itself first) and, per node, its strategy for each of the
    root's strategies that every tie and every cycle of ties allows."""
    found = {root: np.arange(k)}
    valid = np.ones(k, dtype=bool)
    stack = [root]
    while stack:
        u = stack.pop()
        mu = found[u]
        for v, follow in ties[u]:
            mv = np.where(mu >= 0, follow[np.maximum(mu, 0)], -1)
            if v in found:
                valid &= found[v] == mv
            else:
                found[v] = mv
                stack.append(v)
    nodes = list(found)
    strategy = np.array([found[v] for v in nodes], dtype=np.int64).reshape(len(nodes), k)
    valid &= (strategy >= 0).all(axis=0)
    return nodes, strategy[:, valid]


def contract(model: _Model) -> Contraction | None:
    """The contraction of `model`'s ties; None when there is none to make (no tie, an edge
    of more than two nodes, or a component with no strategy free of penalties)."""
    if model.others:
        return None
    ties = _ties(model)
    if not any(ties):
        return None
    n = len(model.node_cost)
    comp = np.full(n, -1, dtype=np.int64)
    members: list[np.ndarray] = []
    strategies: list[np.ndarray] = []
    for root in range(n):
        if comp[root] >= 0:
            continue
        found, strategy = _component(ties, root, len(model.node_cost[root]))
        if strategy.shape[1] == 0:
            return None
        comp[found] = len(members)
        members.append(np.array(found, dtype=np.int64))
        strategies.append(strategy)
    where = np.zeros(n, dtype=np.int64)  # node -> its row in its component's `strategy`
    for nodes in members:
        where[nodes] = np.arange(len(nodes))
    cost = [np.zeros(s.shape[1]) for s in strategies]
    for c, (nodes, strategy) in enumerate(zip(members, strategies, strict=True)):
        for row, v in enumerate(nodes.tolist()):
            cost[c] += model.node_cost[v][strategy[row]]
    summed: dict[tuple[int, int], np.ndarray] = {}
    for i, j, table in model.pairs:
        c, d = int(comp[i]), int(comp[j])
        si, sj = strategies[c][where[i]], strategies[d][where[j]]
        if c == d:
            cost[c] += table[si, sj]
            continue
        sub = table[np.ix_(si, sj)]
        if c > d:
            c, d, sub = d, c, sub.T
        summed[(c, d)] = summed[(c, d)] + sub if (c, d) in summed else sub
    pairs = tuple((c, d, t) for (c, d), t in summed.items())
    return Contraction(tuple(members), tuple(strategies), tuple(cost), pairs)


def pairwise(model: _Model, con: Contraction) -> Pairwise:
    """The contracted problem for the neighbourhood search (`iopddl_lns`): a node per
    component, its members as memory items, so a neighbourhood moves whole chains of ties."""
    owner: list[int] = []
    span: list[np.ndarray] = []
    usage: list[np.ndarray] = []
    items: list[list[int]] = [[] for _ in con.members]
    for c, (nodes, strategy) in enumerate(zip(con.members, con.strategy, strict=True)):
        for row, v in enumerate(nodes.tolist()):
            if model.span[v, 0] < model.span[v, 1]:
                items[c].append(len(owner))
                owner.append(c)
                span.append(model.span[v])
                usage.append(model.usage[v][strategy[row]])
    incident: list[list[tuple[int, int]]] = [[] for _ in con.members]
    for k, (c, d, _) in enumerate(con.pairs):
        incident[c].append((k, 0))
        incident[d].append((k, 1))
    return Pairwise(
        list(con.cost),
        list(con.pairs),
        incident,
        np.array([len(c) > 1 for c in con.cost], dtype=bool),
        np.array(owner, dtype=np.int64),
        np.array(span, dtype=np.int64).reshape(len(owner), 2),
        usage,
        items,
        model.limit,
        len(model.times),
    )


@dataclass(frozen=True, slots=True)
class _Usage:
    """Each node's memory as a function of its component's strategy: a base it always takes
    (`base`, per node) plus entries ``extra`` on the component's x variable ``col``."""

    base: np.ndarray
    node: np.ndarray  # entry -> its node
    col: np.ndarray  # entry -> the x variable it multiplies
    extra: np.ndarray


def _usage(model: _Model, con: Contraction, x_index: list[np.ndarray]) -> _Usage:
    base = np.zeros(len(model.node_cost))
    node, col, extra = [], [], []
    for nodes, strategy, x in zip(con.members, con.strategy, x_index, strict=True):
        for row, v in enumerate(nodes.tolist()):
            if model.span[v, 0] >= model.span[v, 1]:
                continue
            u = model.usage[v][strategy[row]]
            base[v] = u.min()
            nz = np.nonzero(u > base[v])[0]
            node.append(np.full(nz.size, v))
            col.append(x[nz])
            extra.append(u[nz] - base[v])
    flat = [np.concatenate(a) if a else np.zeros(0) for a in (node, col, extra)]
    return _Usage(base, flat[0].astype(np.int64), flat[1].astype(np.int64), flat[2])


def _add_memory_rows(milp: MilpBuilder, model: _Model, usage: _Usage, points: np.ndarray) -> None:
    """``sum of extras . x <= limit - sum of bases`` at each of `points` (sorted indices
    into ``model.times``)."""
    assert model.limit is not None
    lo = np.searchsorted(points, model.span[:, 0])
    hi = np.searchsorted(points, model.span[:, 1])
    fixed = np.zeros(len(points) + 1)
    np.add.at(fixed, lo, usage.base)
    np.add.at(fixed, hi, -usage.base)
    fixed = np.cumsum(fixed)[:-1]
    count = (hi - lo)[usage.node]
    total = int(count.sum())
    # entry k repeated over the points its node is live at: rows lo, lo + 1, ..., hi - 1
    offset = np.repeat(np.cumsum(count) - count, count)
    rows = np.repeat(lo[usage.node], count) + np.arange(total) - offset
    milp.add_rows(
        rows,
        np.repeat(usage.col, count),
        np.repeat(usage.extra, count),
        np.full(len(points), -np.inf),
        model.limit - fixed,
    )


def search(
    model: _Model,
    con: Contraction,
    deadline: float,
    send: Callable[[Found], None],
    gap: float = 0.0,
) -> None:
    """Solve the contracted MILP (to HiGHS's relative `gap`), adding memory rows where its
    answer goes over, until an answer fits or `deadline`. An answer that goes over is first
    repaired (`_Repair`): where that costs nothing more, it is the optimum already. Each
    answer that fits and beats the last is sent; the search ends at one proved optimal. The
    first rows are where every component at its cheapest strategy goes over. HiGHS runs here,
    unstopped: call this in a child process that can be stopped (`highs.Forked`)."""
    n = len(model.node_cost)
    x_index = _x_index(list(con.cost))
    checked = model.limit is not None and len(model.times) > 0
    usage = _usage(model, con, x_index) if checked else None
    repair = _Repair(model, con) if checked else None
    cheapest = con.expand([int(np.argmin(c)) for c in con.cost], n)
    points = _over(model, cheapest) if checked else np.zeros(0, dtype=np.int64)
    sent = np.inf
    while deadline - time.monotonic() > 0.05:
        milp, _, _ = _pairwise_milp(list(con.cost), list(con.pairs))
        if usage is not None and points.size:
            _add_memory_rows(milp, model, usage, points)
        # HiGHS stops early enough to leave time to repair and send its incumbent.
        left = deadline - time.monotonic()
        res = milp.solve(left - min(0.5 * left, 1.0 + 0.05 * left), gap)
        if res.x is None:
            return
        picked = np.array([int(np.argmax(res.x[x])) for x in x_index], dtype=np.int64)
        over = _over(model, con.expand(picked, n)) if checked else np.zeros(0, dtype=np.int64)
        fixed = picked.copy()
        if over.size and (repair is None or not repair.run(fixed, deadline)):
            points = np.union1d(points, over)
            continue
        bound = None if res.dual_bound is None else min(res.dual_bound, _PENALTY)
        objective = con.objective(fixed)
        proved = res.status == "optimal" and gap == 0.0 and _equal(objective, res.objective)
        if objective < sent or proved:  # (the same answer again, now proved optimal)
            send(Found(con.expand(fixed, n), objective, bound, proved))
            sent = objective
        if proved or not over.size:
            return
        points = np.union1d(points, over)


def _equal(a: float, b: float | None) -> bool:
    return b is not None and abs(a - b) <= 1e-9 * max(1.0, abs(b))


def _over(model: _Model, assign: np.ndarray) -> np.ndarray:
    """Time points (indices into ``model.times``) where `assign` goes over the limit: the
    most loaded of each run of consecutive ones, then the most loaded of the rest, up to
    `_ROWS_PER_ROUND` (a row at each peak of the load, not all at the highest)."""
    assert model.limit is not None
    load = _load(model, assign)
    over = np.nonzero(load > model.limit)[0]
    if over.size <= _ROWS_PER_ROUND:
        return over
    run = np.cumsum(np.diff(over, prepend=over[0]) > 1)  # which run each point is in
    order = np.lexsort((-load[over], run))
    peaks = order[np.diff(run[order], prepend=-1) > 0]  # the first (most loaded) of each run
    by_load = np.argsort(-load[over], kind="stable")
    rest = by_load[~np.isin(by_load, peaks)]
    chosen = np.concatenate([peaks[np.argsort(-load[over[peaks]], kind="stable")], rest])
    return np.sort(over[chosen[:_ROWS_PER_ROUND]])


class _Repair:
    """Bring a contracted answer under the limit by moving whole components: at the most
    loaded time point, the live component move that adds the least cost per unit of memory it
    frees there (a move that frees all the excess for the least cost first). It works on the
    contracted problem as the neighbourhood search sees it (`pairwise`)."""

    def __init__(self, model: _Model, con: Contraction) -> None:
        assert model.limit is not None
        self.con, self.limit = con, model.limit
        self.view = pairwise(model, con)

    def run(self, picked: np.ndarray, deadline: float) -> bool:
        """Repair `picked` in place; whether it fits everywhere now."""
        load = self.view.load(picked)
        for _ in range(10 * len(self.con.members) + 10):
            t = int(np.argmax(load))
            if load[t] <= self.limit:
                return True
            if time.monotonic() > deadline:
                return False
            move = self._best_move(picked, t, load[t] - self.limit)
            if move is None:
                return False
            self.view.move(picked, load, *move)
        return False

    def _best_move(self, picked: np.ndarray, t: int, excess: float) -> tuple[int, int] | None:
        view = self.view
        live = np.nonzero((view.span[:, 0] <= t) & (t < view.span[:, 1]))[0]
        best, best_key = None, (np.inf, np.inf)
        for c in np.unique(view.owner[live]).tolist():
            at_t = sum(view.usage[it] for it in live[view.owner[live] == c].tolist())
            freed = at_t[picked[c]] - at_t
            cost = self._costs(picked, c)
            extra = cost - cost[picked[c]]
            for s in np.nonzero(freed > 0)[0].tolist():
                key = (0.0, extra[s]) if freed[s] >= excess else (1.0, extra[s] / freed[s])
                if key < best_key:
                    best, best_key = (c, s), key
        return best

    def _costs(self, picked: np.ndarray, c: int) -> np.ndarray:
        """Component `c`'s cost at each of its strategies, the others as in `picked`."""
        cost = self.con.cost[c].copy()
        for k, side in self.view.incident[c]:
            a, b, table = self.con.pairs[k]
            cost += table[:, picked[b]] if side == 0 else table[picked[a], :]
        return cost
