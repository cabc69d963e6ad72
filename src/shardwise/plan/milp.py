"""The MILP over group choices, solved by HiGHS (`scipy.optimize.milp`).

Variables: x[g, k] = 1 when group g takes candidate k (one per group). Costs and memory are
the deltas each candidate makes alone against the replicated baseline (its probe):

    minimize    sum dt[g, k] x[g, k]
    subject to  sum_k x[g, k] = 1                                  for each group g
                sum_{k uses axis a} (x[g, k] + x[h, k])  <= 1      for groups g, h in one
                                                                   argument, each axis a
                sum dm[g, k] x[g, k] <= budget - m0                (if a budget is given)
                sum_{(g, k) in s} x[g, k] <= G - 1                 for each solution s found

The additive model ignores how groups interact (an all-reduce shrinks when its operand is
sharded on another axis too); the exact evaluation of the solutions corrects that.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp  # type: ignore[import-untyped]

from shardwise.plan.space import SearchSpace

__all__ = ["milp_choices", "probe_choices", "probe_stand_ins"]

Choice = tuple[int, ...]


def probe_choices(space: SearchSpace, symmetric: bool = False) -> list[Choice]:
    """The replicated baseline, then each valid candidate of each group alone; `symmetric`
    (`probe_stand_ins`): only the first candidate of each set of interchangeable ones."""
    base = tuple(0 for _ in space.groups)
    stand_in = probe_stand_ins(space) if symmetric else {}
    out = [base]
    for g, group in enumerate(space.groups):
        for k in range(1, len(group.candidates)):
            choice = base[:g] + (k,) + base[g + 1 :]
            if stand_in.get(choice, choice) == choice and space.is_plan(choice):
                out.append(choice)
    return out


def probe_stand_ins(space: SearchSpace) -> dict[Choice, Choice]:
    """Each probe -> the probe of the group's first candidate with the same axis sizes.

    When nothing in the module names a mesh axis and every link is priced alike, renaming
    axes of one size is a symmetry of the cost: a probe (one group sharded, the rest
    replicated) on ``("a",)`` costs what it costs on ``("b",)`` if both have size 2. The
    caller checks those conditions; the MILP and the descent read the stand-in's probe.
    """
    sizes = {a.name: a.size for a in space.mesh.axes}
    base = tuple(0 for _ in space.groups)
    out: dict[Choice, Choice] = {}
    for g, group in enumerate(space.groups):
        first: dict[tuple[int, ...], int] = {}
        for k, cand in enumerate(group.candidates):
            j = first.setdefault(tuple(sizes[a] for a in cand), k)
            out[base[:g] + (k,) + base[g + 1 :]] = base[:g] + (j,) + base[g + 1 :]
    return out


def milp_choices(
    space: SearchSpace, probes: dict[Choice, dict[str, Any]], budget: int | None, top_k: int
) -> list[Choice]:
    """Up to `top_k` choices, best first by the additive model (module docstring)."""
    base = tuple(0 for _ in space.groups)
    t0 = probes[base]["time_s"]
    m0 = probes[base]["peak_memory_bytes_per_device"]
    index: list[tuple[int, int]] = [
        (g, k) for g, group in enumerate(space.groups) for k in range(len(group.candidates))
    ]
    position = {v: i for i, v in enumerate(index)}
    n = len(index)
    cost, mem, upper = np.zeros(n), np.zeros(n), np.ones(n)
    for i, (g, k) in enumerate(index):
        choice = base[:g] + (k,) + base[g + 1 :]
        probe = probes.get(choice)
        if probe is None:
            upper[i] = 0.0  # invalid alone: never valid
            continue
        cost[i] = probe["time_s"] - t0
        mem[i] = probe["peak_memory_bytes_per_device"] - m0
    rows: list[np.ndarray] = []
    lower: list[float] = []
    upper_rows: list[float] = []

    def add(row: np.ndarray, lo: float, hi: float) -> None:
        rows.append(row)
        lower.append(lo)
        upper_rows.append(hi)

    for g, group in enumerate(space.groups):
        row = np.zeros(n)
        for k in range(len(group.candidates)):
            row[position[(g, k)]] = 1.0
        add(row, 1.0, 1.0)
    for g, h in space.conflicts():
        for axis in space.mesh.axis_names:
            row = np.zeros(n)
            for grp in (g, h):
                for k, cand in enumerate(space.groups[grp].candidates):
                    if axis in cand:
                        row[position[(grp, k)]] = 1.0
            if row.any():
                add(row, -np.inf, 1.0)
    if budget is not None:
        add(mem, -np.inf, float(budget - m0))
    found: list[Choice] = []
    for _ in range(top_k):
        result = milp(
            cost,
            integrality=np.ones(n),
            bounds=Bounds(np.zeros(n), upper),
            constraints=[LinearConstraint(np.array(rows), lower, upper_rows)],
        )
        if result.x is None:
            break
        chosen = [index[i] for i in range(n) if result.x[i] > 0.5]
        choice = tuple(k for _, k in sorted(chosen))
        found.append(choice)
        cut = np.zeros(n)
        for v in chosen:
            cut[position[v]] = 1.0
        add(cut, -np.inf, float(len(space.groups) - 1))
    return found
