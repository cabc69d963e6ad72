"""The IOPDDL problem format (ASPLOS/EuroSys 2025 contest) and its exact evaluator.

A problem (JSON, as the contest's `iopddl.h` reads it)::

    {"problem": {
        "name": "example",
        "nodes": {"intervals": [[lo, hi], ...],        # node i is live at lo <= t < hi
                  "costs":     [[c0, c1, ...], ...],    # cost of each strategy of node i
                  "usages":    [[u0, u1, ...], ...]},   # memory of each strategy of node i
        "edges": {"nodes": [[i, j], ...],               # the nodes an edge joins
                  "costs": [[c00, c01, ..., c10, ...], ...]},  # row-major over their strategies
        "usage_limit": 100}}                             # optional

A solution picks one strategy per node. Its cost is the sum of the chosen node costs and of
each edge's entry at the chosen strategies (edge ``[i, j]``: index ``s_i * len(s_j) + s_j``);
it is feasible when at every time point the usages of the live nodes sum to at most
``usage_limit``. All values are integers (64-bit in the contest); sums here are exact Python
integers.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shardwise.errors import InputError, Location, ShardwiseError

__all__ = [
    "Problem",
    "Evaluation",
    "InfeasibleError",
    "parse_problem",
    "read_problem",
    "problem_to_json",
    "evaluate",
    "min_usage_peak",
    "check_feasible",
]


class InfeasibleError(ShardwiseError):
    """No strategy choice keeps the memory under the problem's usage limit."""


@dataclass(frozen=True, slots=True)
class Problem:
    """One IOPDDL instance; tuples throughout, so it hashes and compares by value."""

    name: str
    intervals: tuple[tuple[int, int], ...]
    costs: tuple[tuple[int, ...], ...]
    usages: tuple[tuple[int, ...], ...]
    edges: tuple[tuple[int, ...], ...]
    edge_costs: tuple[tuple[int, ...], ...]
    usage_limit: int | None = None

    @property
    def num_nodes(self) -> int:
        return len(self.costs)

    def num_strategies(self, node: int) -> int:
        return len(self.costs[node])


@dataclass(frozen=True, slots=True)
class Evaluation:
    """A solution's exact score: cost, the peak memory and when it happens."""

    cost: int
    peak_usage: int
    peak_time: int
    feasible: bool


def read_problem(path: str | Path) -> Problem:
    """Read a problem file (JSON in the contest's layout)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"cannot read IOPDDL problem: {e}", Location(str(path))) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        loc = Location(str(path), e.lineno, e.colno)
        raise InputError(f"not JSON: {e.msg}", loc) from None
    return parse_problem(data, str(path))


def parse_problem(data: Any, source: str = "-") -> Problem:
    """Check and convert the decoded JSON of a problem; errors name the field and the fix."""
    where = Location(source)

    def fail(message: str) -> InputError:
        return InputError(message, where)

    if not isinstance(data, dict) or not isinstance(data.get("problem"), dict):
        raise fail('expected an object {"problem": {...}} (the IOPDDL contest format)')
    prob = data["problem"]
    nodes, edges = prob.get("nodes"), prob.get("edges", {"nodes": [], "costs": []})
    if not isinstance(nodes, dict):
        raise fail('"problem.nodes" is missing: expected {"intervals", "costs", "usages"}')
    intervals = _int_rows(nodes.get("intervals"), "problem.nodes.intervals", fail)
    costs = _int_rows(nodes.get("costs"), "problem.nodes.costs", fail)
    usages = _int_rows(nodes.get("usages"), "problem.nodes.usages", fail)
    if not len(intervals) == len(costs) == len(usages):
        raise fail(
            f"problem.nodes: {len(intervals)} intervals, {len(costs)} cost lists and "
            f"{len(usages)} usage lists; each node needs one of each"
        )
    for i, (iv, c, u) in enumerate(zip(intervals, costs, usages, strict=True)):
        if len(iv) != 2 or iv[0] < 0 or iv[0] > iv[1]:
            raise fail(f"problem.nodes.intervals[{i}] = {list(iv)}: expected [lo, hi], 0<=lo<=hi")
        if not c or len(c) != len(u):
            raise fail(
                f"node {i} has {len(c)} costs and {len(u)} usages: expected the same number, >= 1"
            )
    if not isinstance(edges, dict):
        raise fail('"problem.edges" must be {"nodes": [[i, j], ...], "costs": [[...], ...]}')
    edge_nodes = _int_rows(edges.get("nodes", []), "problem.edges.nodes", fail)
    edge_costs = _int_rows(edges.get("costs", []), "problem.edges.costs", fail)
    if len(edge_nodes) != len(edge_costs):
        raise fail(f"{len(edge_nodes)} edges in problem.edges.nodes but {len(edge_costs)} costs")
    for e, (members, ec) in enumerate(zip(edge_nodes, edge_costs, strict=True)):
        if not members or any(not 0 <= n < len(costs) for n in members):
            raise fail(
                f"edge {e} joins nodes {list(members)}: expected indices in [0, {len(costs)})"
            )
        size = math.prod(len(costs[n]) for n in members)
        if len(ec) != size:
            raise fail(
                f"edge {e} {list(members)} has {len(ec)} costs: expected {size}, the product "
                "of its nodes' strategy counts (row-major)"
            )
    limit = prob.get("usage_limit")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)):
        raise fail(f"problem.usage_limit = {limit!r}: expected an integer")
    return Problem(
        name=str(prob.get("name", "")),
        intervals=tuple((iv[0], iv[1]) for iv in intervals),
        costs=costs,
        usages=usages,
        edges=edge_nodes,
        edge_costs=edge_costs,
        usage_limit=limit,
    )


def _int_rows(value: Any, field: str, fail: Any) -> tuple[tuple[int, ...], ...]:
    if not isinstance(value, list):
        raise fail(f'"{field}" is missing or not a list of lists of integers')
    rows = []
    for i, row in enumerate(value):
        if not isinstance(row, list) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in row
        ):
            raise fail(f"{field}[{i}] = {row!r}: expected a list of integers")
        rows.append(tuple(row))
    return tuple(rows)


def problem_to_json(problem: Problem) -> dict[str, Any]:
    """The problem in the contest's JSON layout (`parse_problem` reads it back)."""
    body: dict[str, Any] = {
        "name": problem.name,
        "nodes": {
            "intervals": [list(iv) for iv in problem.intervals],
            "costs": [list(c) for c in problem.costs],
            "usages": [list(u) for u in problem.usages],
        },
        "edges": {
            "nodes": [list(e) for e in problem.edges],
            "costs": [list(c) for c in problem.edge_costs],
        },
    }
    if problem.usage_limit is not None:
        body["usage_limit"] = problem.usage_limit
    return {"problem": body}


def evaluate(problem: Problem, solution: tuple[int, ...] | list[int]) -> Evaluation:
    """The exact cost and peak memory of `solution` (one strategy index per node).

    Written independently of the solvers (plain loops over Python integers) so that it can
    judge them: the peak comes from a sweep over interval ends, an end at ``t`` freeing the
    memory before a start at ``t`` takes it (intervals are half-open).
    """
    if len(solution) != problem.num_nodes:
        raise InputError(
            f"the solution has {len(solution)} strategies for {problem.num_nodes} nodes"
        )
    for i, s in enumerate(solution):
        if not 0 <= s < problem.num_strategies(i):
            raise InputError(
                f"node {i}: strategy {s} out of range [0, {problem.num_strategies(i)})"
            )
    cost = sum(problem.costs[i][s] for i, s in enumerate(solution))
    for members, table in zip(problem.edges, problem.edge_costs, strict=True):
        flat = 0
        for n in members:
            flat = flat * problem.num_strategies(n) + solution[n]
        cost += table[flat]
    usage = [problem.usages[i][s] for i, s in enumerate(solution)]
    peak, peak_time = _peak(problem.intervals, usage)
    feasible = problem.usage_limit is None or peak <= problem.usage_limit
    return Evaluation(cost, peak, peak_time, feasible)


def _peak(intervals: tuple[tuple[int, int], ...], usage: list[int]) -> tuple[int, int]:
    """The largest total usage over time and the first time it is reached (0, 0 if none)."""
    events: list[tuple[int, int]] = []
    for (lo, hi), u in zip(intervals, usage, strict=True):
        if lo < hi and u != 0:
            events.append((lo, u))
            events.append((hi, -u))
    # At equal times the ends (negative deltas) come first.
    events.sort(key=lambda e: (e[0], e[1] > 0))
    total, peak, peak_time = 0, 0, 0
    for t, delta in events:
        total += delta
        if total > peak:
            peak, peak_time = total, t
    return peak, peak_time


def min_usage_peak(problem: Problem) -> tuple[int, int]:
    """The smallest peak any solution can have (each node at its least usage) and its time.

    Choosing each node's least usage minimizes every time point at once, so this is the
    smallest usage limit under which the problem is feasible.
    """
    return _peak(problem.intervals, [min(u) for u in problem.usages])


def check_feasible(problem: Problem) -> None:
    """Raise `InfeasibleError` naming the crowded time point if no solution fits the limit."""
    if problem.usage_limit is None:
        return
    peak, t = min_usage_peak(problem)
    if peak <= problem.usage_limit:
        return
    live = [
        i
        for i, (lo, hi) in enumerate(problem.intervals)
        if lo <= t < hi and min(problem.usages[i]) > 0
    ]
    live.sort(key=lambda i: -min(problem.usages[i]))
    heaviest = ", ".join(f"node {i} ({min(problem.usages[i])})" for i in live[:5])
    raise InfeasibleError(
        f"usage limit {problem.usage_limit} is below the smallest possible peak {peak} "
        f"(at time {t}, every node at its least usage); the largest live nodes there: "
        f"{heaviest}",
        notes=(f"the smallest feasible usage_limit is {peak}",),
    )
