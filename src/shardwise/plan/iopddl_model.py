"""The IOPDDL problem as the solver's arrays (`iopddl_solver`), and what both the solver and
its neighbourhood search (`iopddl_lns`) do with them: the memory at each checked time point,
a move of one node, the MILP of nodes and two-node edges."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from shardwise.plan.highs import MilpBuilder

__all__ = ["_PENALTY", "_Model", "_better", "_load", "_move", "_pairwise_milp", "_x_index"]

# Table entries at or above this are the contest's "forbidden" penalties; the MILP sees them
# capped (a lower bound stays a lower bound), the evaluator sees them as they are.
_PENALTY = 1e15


@dataclass(slots=True)
class _Model:
    """The problem as arrays, with foldable edges folded into node costs."""

    node_cost: list[np.ndarray]
    pairs: list[tuple[int, int, np.ndarray]]  # (i, j, table of shape (n_i, n_j)), i != j
    others: list[tuple[tuple[int, ...], np.ndarray]]  # any other edge, as an n-d table
    constant: float
    incident: list[list[tuple[int, int]]]  # node -> (pair index, 0 if node is i else 1)
    incident_other: list[list[int]]
    usage: list[np.ndarray]
    limit: float | None
    times: np.ndarray  # the time points where memory is checked
    span: np.ndarray  # node -> [first, last) index into `times` where it is live
    intervals: np.ndarray  # node -> [lo, hi) in time (nodes without memory: [0, 0))


def _load(model: _Model, assign: np.ndarray) -> np.ndarray:
    """The memory at each checked time point under `assign`."""
    load = np.zeros(len(model.times))
    for i, u in enumerate(model.usage):
        a, b = model.span[i]
        if a < b:
            load[a:b] += u[assign[i]]
    return load


def _move(model: _Model, assign: np.ndarray, load: np.ndarray, node: int, s: int) -> None:
    a, b = model.span[node]
    if a < b:
        load[a:b] += model.usage[node][s] - model.usage[node][assign[node]]
    assign[node] = s


def _x_index(node_cost: list[np.ndarray]) -> list[np.ndarray]:
    """Each node's x variables in `_pairwise_milp(node_cost, ...)`: its first variables,
    node by node."""
    ends = np.cumsum([len(c) for c in node_cost])
    return [np.arange(e - len(c), e) for e, c in zip(ends, node_cost, strict=True)]


def _better(new: float, old: float) -> bool:
    return new < old - 1e-9 * max(1.0, abs(old))


def _add_pair_edge(
    milp: MilpBuilder, xi: np.ndarray, xj: np.ndarray, table: np.ndarray, upper: np.ndarray
) -> None:
    """``y[a, b]`` in [0, upper] with ``sum_b y[a, b] = x_i[a]`` and ``sum_a y[a, b] = x_j[b]``."""
    ni, nj = table.shape
    y = milp.add_vars(table.ravel(), binary=False, upper=upper)
    a, b = np.divmod(np.arange(ni * nj), nj)
    rows = np.concatenate([a, ni + b, np.arange(ni), ni + np.arange(nj)])
    cols = np.concatenate([y, y, xi, xj])
    vals = np.concatenate([np.ones(2 * ni * nj), -np.ones(ni + nj)])
    zeros = np.zeros(ni + nj)
    milp.add_rows(rows, cols, vals, zeros, zeros)


def _pairwise_milp(
    node_cost: list[np.ndarray], pairs: list[tuple[int, int, np.ndarray]]
) -> tuple[MilpBuilder, list[np.ndarray], Callable[[np.ndarray], np.ndarray]]:
    """One binary ``x`` per node strategy with ``sum_s x[i, s] = 1`` and one ``y`` per entry
    of each two-node edge (`_add_pair_edge`); the MILP, each node's x indices, and the clip
    the costs were given (for edges the caller adds). An entry at or above the penalty is
    forbidden (its variable fixed to 0) unless a node or edge has nothing else, where it is
    capped instead: the optimum is then the best penalty-free solution, and its bound, capped
    at the penalty, still bounds every solution."""
    finite = [c[c < _PENALTY] for c in node_cost] + [t[t < _PENALTY].ravel() for _, _, t in pairs]
    top = max((float(np.abs(f).max()) for f in finite if f.size), default=1.0)
    cap = max(top, 1.0) * 1e4

    def clip(values: np.ndarray) -> np.ndarray:
        return np.minimum(values, cap)

    def allowed(values: np.ndarray) -> np.ndarray:
        ok = values < _PENALTY
        return ok.astype(np.float64) if ok.any() else np.ones(values.shape)

    milp = MilpBuilder()
    x_index = [milp.add_vars(clip(c), binary=True, upper=allowed(c)) for c in node_cost]
    for idx in x_index:
        milp.add_row(idx, np.ones(len(idx)), 1.0, 1.0)
    for i, j, table in pairs:
        _add_pair_edge(milp, x_index[i], x_index[j], clip(table), allowed(table).ravel())
    return milp, x_index, clip
