"""The IOPDDL format, the exact evaluator and the solver, on hand-made instances.

Expected optima come from brute force over every assignment (written here, independent of
the solver); the evaluator's expected scores are worked out by hand in the comments.
"""

from __future__ import annotations

import json
import math
import time

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from shardwise.cli import main
from shardwise.errors import InputError
from shardwise.plan import iopddl_solver
from shardwise.plan.iopddl import (
    InfeasibleError,
    Problem,
    evaluate,
    parse_problem,
    problem_to_json,
    read_problem,
)
from shardwise.plan.iopddl_solver import solve
from tests.plan.iopddl_oracle import brute_force

# Three nodes, a chain 0-1-2. Node 1 is live over [1, 3) and node 2 over [2, 4), so they
# overlap at t = 2; node 0 lives over [0, 2).
CHAIN = {
    "problem": {
        "name": "chain",
        "nodes": {
            "intervals": [[0, 2], [1, 3], [2, 4]],
            "costs": [[10, 20], [5, 1], [7, 3, 9]],
            "usages": [[4, 2], [5, 9], [1, 6, 2]],
        },
        "edges": {
            "nodes": [[0, 1], [1, 2]],
            # edge [0,1]: index s0 * 2 + s1; edge [1,2]: index s1 * 3 + s2
            "costs": [[0, 30, 30, 0], [0, 1, 2, 3, 4, 5]],
        },
        "usage_limit": 12,
    }
}


@pytest.mark.parametrize(
    ("solution", "cost", "peak", "feasible"),
    [
        # nodes 10+5+7, edges 0 + 0 = 22; t=1: 4+5, t=2: 5+1 -> peak 9 at t=1
        ((0, 0, 0), 22, 9, True),
        # nodes 10+1+3, edges 30 + 4 = 48; t=1: 4+9=13, t=2: 9+6=15 -> peak 15, over 12
        ((0, 1, 1), 48, 15, False),
        # nodes 20+1+3, edges 0 + 4 = 28; t=1: 2+9, t=2: 9+6=15 -> over
        ((1, 1, 1), 28, 15, False),
        # nodes 20+1+7, edges 0 + 3 = 31; t=1: 11, t=2: 9+1=10 -> peak 11
        ((1, 1, 0), 31, 11, True),
    ],
    ids=["cheap-start", "over-at-1", "over-at-2", "fits"],
)
def test_evaluate_by_hand(solution, cost, peak, feasible):
    ev = evaluate(parse_problem(CHAIN), solution)
    assert (ev.cost, ev.peak_usage, ev.feasible) == (cost, peak, feasible)


def test_evaluate_half_open_intervals():
    # Node 0 ends at 2 where node 1 starts: they never overlap, the peak is max(7, 8).
    prob = Problem("touch", ((0, 2), (2, 3)), ((0,), (0,)), ((7,), (8,)), (), (), 8)
    ev = evaluate(prob, (0, 0))
    assert (ev.peak_usage, ev.feasible) == (8, True)


def test_solve_chain_optimal():
    # (0, 0, 1): nodes 10+5+3, edges 0 + 1 = 19; t=1: 4+5, t=2: 5+6 -> peak 11
    prob = parse_problem(CHAIN)
    res = solve(prob, time_limit=10)
    assert res.strategies == (0, 0, 1)
    assert res.cost == brute_force(prob) == 19
    assert res.status == "optimal"
    assert evaluate(prob, res.strategies).feasible


def test_round_trip_json():
    prob = parse_problem(CHAIN)
    assert parse_problem(json.loads(json.dumps(problem_to_json(prob)))) == prob


@st.composite
def problems(
    draw, max_nodes: int = 5, max_strategies: int = 3, arity3: bool = False, penalty: bool = False
):
    """Small random instances: up to 3**5 = 243 assignments, brute-forced in the test.
    With `penalty`, some costs are the contest's 10**18 ("forbidden")."""
    n = draw(st.integers(1, max_nodes))
    counts = [draw(st.integers(1, max_strategies)) for _ in range(n)]
    val = st.integers(0, 50)
    if penalty:
        val = st.one_of(val, st.just(PENALTY))
    costs = [draw(st.lists(val, min_size=k, max_size=k)) for k in counts]
    usages = [draw(st.lists(st.integers(0, 20), min_size=k, max_size=k)) for k in counts]
    intervals = []
    for _ in range(n):
        lo = draw(st.integers(0, 6))
        intervals.append([lo, lo + draw(st.integers(0, 4))])
    pairs = [(i, j) for i in range(n) for j in range(n) if i != j]
    edges = draw(st.lists(st.sampled_from(pairs), max_size=6)) if pairs else []
    if arity3 and n >= 3:
        edges.append(tuple(draw(st.permutations(range(n)))[:3]))
    if n >= 1 and draw(st.booleans()):
        edges.append((0, 0))  # an edge joining a node to itself
    edge_costs = [
        draw(
            st.lists(
                val,
                min_size=math.prod(counts[m] for m in e),
                max_size=math.prod(counts[m] for m in e),
            )
        )
        for e in edges
    ]
    min_peak_limit = draw(st.integers(0, 60))
    data = {
        "problem": {
            "name": "random",
            "nodes": {"intervals": intervals, "costs": costs, "usages": usages},
            "edges": {"nodes": [list(e) for e in edges], "costs": edge_costs},
            "usage_limit": min_peak_limit,
        }
    }
    return parse_problem(data)


@given(problems(arity3=True))
def test_solver_matches_brute_force(prob):
    best = brute_force(prob)
    if best is None:
        with pytest.raises(InfeasibleError):
            solve(prob, time_limit=5)
        return
    res = solve(prob, time_limit=5)
    ev = evaluate(prob, res.strategies)
    assert ev.feasible
    assert res.cost == ev.cost == best
    assert res.status == "optimal"
    assert res.lower_bound is not None and res.lower_bound <= best + 1e-6


PENALTY = 10**18


@given(problems(penalty=True))
def test_solver_avoids_penalties(prob):
    """Forbidden entries are fixed to 0 in the MILP: a penalty-free optimum is found exactly."""
    best = brute_force(prob)
    if best is None:
        return
    res = solve(prob, time_limit=5)
    assert evaluate(prob, res.strategies).feasible
    if best < PENALTY:
        assert res.cost == best and res.status == "optimal"
    else:
        assert res.cost >= best


@given(problems())
def test_few_memory_rows_then_repair_is_valid(prob):
    """With room for one memory row only, the MILP may go over elsewhere: the repair fixes it."""
    best = brute_force(prob)
    if best is None:
        return
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(iopddl_solver, "_MAX_MEMORY_NNZ", 1)
        res = solve(prob, time_limit=5)
    assert evaluate(prob, res.strategies).feasible
    assert res.cost >= best


@given(problems())
def test_local_search_alone_is_valid(prob):
    if brute_force(prob) is None:
        return
    res = solve(prob, time_limit=5, use_milp=False)
    assert evaluate(prob, res.strategies).feasible
    assert res.status == "feasible" and res.method == "local-search"


def test_local_search_moves_both_ends_of_an_edge():
    # Strategy 1 is cheaper on both nodes (10 + 10 vs 50 + 50), but the edge charges 1000 for
    # a mismatch: from (0, 0), the least usages, no single move pays; the joint move does.
    prob = Problem(
        "pair",
        ((0, 2), (1, 3)),
        ((50, 10), (50, 10)),
        ((1, 2), (1, 2)),
        ((0, 1),),
        ((0, 1000, 1000, 0),),
        10,
    )
    res = solve(prob, time_limit=5, use_milp=False)
    assert res.strategies == (1, 1) and res.cost == 20 == brute_force(prob)


def test_infeasible_budget_names_the_smallest_limit():
    data = json.loads(json.dumps(CHAIN))
    data["problem"]["usage_limit"] = 5  # least usages at t=1: 2 + 5 = 7
    with pytest.raises(InfeasibleError, match="smallest possible peak 7 .at time 1") as exc:
        solve(parse_problem(data))
    assert exc.value.notes == ("the smallest feasible usage_limit is 7",)


def _big_problem(n: int, k: int) -> Problem:
    """A chain of `n` nodes with `k` strategies and pseudo-random costs, one long-lived node."""
    costs = tuple(tuple((i * 7919 + s * 104729) % 1000 for s in range(k)) for i in range(n))
    usages = tuple(tuple((i + 3 * s) % 11 for s in range(k)) for i in range(n))
    intervals = tuple((i, i + 3) for i in range(n))
    edges = tuple((i, i + 1) for i in range(n - 1))
    edge_costs = tuple(
        tuple(((a * 31 + b * 17 + i) % 97) * (a != b) for a in range(k) for b in range(k))
        for i in range(n - 1)
    )
    return Problem("big", intervals, costs, usages, edges, edge_costs, 15)


def test_time_limit_respected():
    prob = _big_problem(3000, 8)
    start = time.monotonic()
    res = solve(prob, time_limit=2.0)
    elapsed = time.monotonic() - start
    assert elapsed < 2.0 + 0.75  # HiGHS runs in a process stopped at the deadline
    assert evaluate(prob, res.strategies).feasible


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        (
            {"nodes": {"intervals": [[0, 1]], "costs": [[1, 2]], "usages": [[1]]}},
            "2 costs and 1 usages",
        ),
        ({"edges": {"nodes": [[0, 5]], "costs": [[0]]}}, "edge 0 joins nodes .0, 5."),
        ({"edges": {"nodes": [[0, 1]], "costs": [[0, 1, 2]]}}, "expected 4, the product"),
        ({"usage_limit": "big"}, "usage_limit = 'big'"),
        ({"nodes": {"intervals": [[3, 1]], "costs": [[1]], "usages": [[1]]}}, r"intervals\[0\]"),
    ],
    ids=["usages-short", "edge-node-range", "edge-table-size", "limit-type", "interval-order"],
)
def test_bad_problems(patch, message):
    data = json.loads(json.dumps(CHAIN))
    data["problem"].update(patch)
    with pytest.raises(InputError, match=message):
        parse_problem(data, "p.json")


def test_read_problem_not_json(tmp_path):
    path = tmp_path / "p.json"
    path.write_text("{\n  oops")
    with pytest.raises(InputError, match="not JSON") as exc:
        read_problem(path)
    assert exc.value.location.line == 2


def test_cli_writes_solution(tmp_path, capsys):
    path, out = tmp_path / "chain.json", tmp_path / "sol.json"
    path.write_text(json.dumps(CHAIN))
    assert main(["iopddl", str(path), "--time-limit", "5", "-o", str(out)]) == 0
    sol = json.loads(out.read_text())
    assert sol["solution"] == [0, 0, 1] and sol["cost"] == 19
    assert "[0, 0, 1]" in capsys.readouterr().out.splitlines()[-1]


def test_cli_infeasible_exits_1(tmp_path, capsys):
    data = json.loads(json.dumps(CHAIN))
    data["problem"]["usage_limit"] = 5
    path = tmp_path / "chain.json"
    path.write_text(json.dumps(data))
    assert main(["iopddl", str(path)]) == 1
    assert "smallest possible peak 7" in capsys.readouterr().err


def _split_chain(n: int = 6) -> Problem:
    """A chain whose every edge forbids (10**18) its two ends to differ. The first half of
    the nodes prefers strategy 0 (in cost and in usage), the second half strategy 1, so both
    older starts (each node at its cheapest, each at its least usage) split the chain and take
    one penalty in the middle, and every move of one node or of both ends of one edge only
    shifts it along: escaping takes moving half the chain at once."""
    half = n // 2
    costs = tuple((0, 10) if i < half else (10, 0) for i in range(n))
    usages = tuple((0, 1) if i < half else (1, 0) for i in range(n))
    edges = tuple((i, i + 1) for i in range(n - 1))
    forbid_unequal = (0, PENALTY, PENALTY, 0)
    return Problem(
        "split", tuple((0, 1) for _ in range(n)), costs, usages, edges,
        (forbid_unequal,) * (n - 1), 100,
    )  # fmt: skip


def test_penalty_free_start_avoids_what_the_local_search_cannot_escape():
    prob = _split_chain()
    res = solve(prob, time_limit=5, use_milp=False)
    assert res.cost == 30 == brute_force(prob)  # all equal: half the nodes pay 10
    assert evaluate(prob, res.strategies).feasible


def test_penalty_free_start_leaves_memory_for_the_forced_choices():
    # Node 0 is cheap at strategy 1 (usage 5), which leaves no room for node 1 (live at the
    # same time) to take the only strategy its edge to node 0 allows then; at strategy 0
    # (usage 1) both fit. The cheapest choices would take the penalty, the frugal start not.
    prob = Problem(
        "memory",
        ((0, 2), (1, 3)),
        ((5, 0), (0, 0)),
        ((1, 5), (1, 5)),
        ((0, 1),),
        ((0, PENALTY, PENALTY, 0),),
        6,
    )
    model = iopddl_solver._build_model(prob)
    start = iopddl_solver._penalty_free_start(model, time.monotonic() + 5, frugal=True)
    assert iopddl_solver._penalties(model, start) == 0
    res = solve(prob, time_limit=5, use_milp=False)
    assert res.cost == 5 == brute_force(prob)


# Three nodes, every pair costing 5 when both take strategy 0, 0 when both take 1, 20 when
# they differ: all at 0 (15) is where both starts land, and no single or pair move leaves it
# (one node or two moved to 1 leave two differing pairs); all at 1 costs 0.
TRIANGLE = {
    "problem": {
        "name": "triangle",
        "nodes": {
            "intervals": [[0, 1], [0, 1], [0, 1]],
            "costs": [[0, 0], [0, 0], [0, 0]],
            "usages": [[1, 1], [1, 1], [1, 1]],
        },
        "edges": {"nodes": [[0, 1], [1, 2], [0, 2]], "costs": [[5, 20, 20, 0]] * 3},
        "usage_limit": 3,
    }
}


def test_the_neighbourhood_search_leaves_what_single_and_pair_moves_cannot(monkeypatch):
    prob = parse_problem(TRIANGLE)
    stuck = solve(prob, time_limit=2, use_milp=False)
    assert stuck.cost == 15  # the local search alone stays at all 0
    monkeypatch.setattr(iopddl_solver, "_WHOLE_MILP_VARS", 0)  # as on the big instances
    res = solve(prob, time_limit=2)
    assert res.method == "lns" and res.cost == 0 and res.strategies == (1, 1, 1)


@given(problems(penalty=True))
def test_the_neighbourhood_search_is_valid(prob):
    """Where the whole MILP is too big, the neighbourhoods' answer fits the limit and is
    never worse than the local search's."""
    if brute_force(prob) is None:
        return
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(iopddl_solver, "_WHOLE_MILP_VARS", 0)
        res = solve(prob, time_limit=0.6)
    alone = solve(prob, time_limit=0.6, use_milp=False)
    assert evaluate(prob, res.strategies).feasible
    assert res.cost <= alone.cost


# Node 0 is on a three-node edge (0, 1, 2) that costs 7 unless all three take strategy 1;
# nodes 1 and 2 are also joined by a two-node edge that costs 9 when they differ.
HYPER = {
    "problem": {
        "name": "hyper",
        "nodes": {
            "intervals": [[0, 1], [0, 1], [0, 1], [0, 1]],
            "costs": [[0, 1], [0, 1], [0, 1], [3, 0]],
            "usages": [[1, 1], [1, 1], [1, 1], [1, 1]],
        },
        "edges": {
            "nodes": [[0, 1, 2], [1, 2], [2, 3]],
            "costs": [[7, 7, 7, 7, 7, 7, 7, 0], [0, 9, 9, 0], [4, 0, 0, 4]],
        },
        "usage_limit": 4,
    }
}


def test_the_neighbourhood_search_leaves_nodes_on_larger_edges_alone(monkeypatch):
    """Its MILP has rows for two-node edges only: a node on an edge of more nodes is never
    put in a neighbourhood (before, such a neighbourhood was drawn, found unusable and drawn
    again until the deadline)."""
    from shardwise.plan import iopddl_lns

    model = iopddl_solver._build_model(parse_problem(HYPER))
    drawn: list[list[int]] = []
    real = iopddl_lns._neighbourhood
    monkeypatch.setattr(
        iopddl_lns, "_neighbourhood", lambda *a: drawn.append(real(*a)) or drawn[-1]
    )
    assign = iopddl_solver._penalty_free_start(model, time.monotonic() + 5, frugal=False)
    iopddl_lns.lns(iopddl_lns.Pairwise.of_model(model), assign, time.monotonic() + 3)
    assert drawn and all(set(n) <= {3} for n in drawn)  # 0, 1, 2 touch the three-node edge

    three = {
        "problem": {
            "name": "only-hyper",
            "nodes": {k: v[:3] for k, v in HYPER["problem"]["nodes"].items()},
            "edges": {"nodes": [[0, 1, 2]], "costs": [[7] * 7 + [0]]},
            "usage_limit": 3,
        }
    }
    model = iopddl_solver._build_model(parse_problem(three))
    drawn.clear()
    view = iopddl_lns.Pairwise.of_model(model)
    assert iopddl_lns.lns(view, np.zeros(3, dtype=np.int64), time.monotonic() + 3) == 0
    assert drawn == []  # every node touches the three-node edge: nothing to draw


def test_pair_moves_leave_alone_two_nodes_on_one_larger_edge():
    # Found by hypothesis: nodes 1, 2 and 3 share a three-node edge, nodes 2 and 3 a two-node
    # edge. The MILP's optimum (0, 0, 0, 0) costs 1 (node 3's strategy 0); a joint move of
    # nodes 2 and 3 counted the three-node edge as each end's change summed and took
    # (0, 1, 1, 2), which costs 2 (node 1's strategy 1).
    prob = Problem(
        "hyper-pair",
        ((0, 0),) * 4,
        ((0,), (0, 2), (0, 0, 0), (1, 1, 0)),
        ((0,), (0, 0), (0, 0, 0), (0, 0, 0)),
        ((0, 1), (0, 1), (2, 3), (3, 1, 2)),
        ((0, 0), (0, 0), (0, 0, 2, 0, 0, 0, 0, 0, 0), (0,) * 13 + (3, 1, 0, 0, 0)),
        0,
    )
    res = solve(prob, time_limit=5)
    assert res.cost == 1 == brute_force(prob) and res.status == "optimal"
