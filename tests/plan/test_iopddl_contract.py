"""The contracted MILP of the IOPDDL solver: nodes tied by edges that allow one strategy per
row and per column, solved as one component.

The expected optima are worked out by hand in the comments, and checked against brute force
over every assignment (written here, independent of the solver)."""

from __future__ import annotations

import time

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from shardwise.plan.highs import Forked
from shardwise.plan.iopddl import Problem, evaluate
from shardwise.plan.iopddl_contract import contract, search
from shardwise.plan.iopddl_solver import _build_model, solve
from tests.plan.iopddl_oracle import brute_force

P = 10**18  # the contest's forbidden cost


def _tied(limit: int) -> Problem:
    """Nodes 0, 1 (three strategies each) and 2 (four) tied in a cycle, node 3 free beside them.

    Tie (0, 1) swaps 0 and 1 and keeps 2 (costs 1, 2, 3); tie (1, 2) keeps 0, 1 and 2; tie
    (0, 2) takes 0 to 1, 1 to 0 and 2 to 3. From node 0's strategy: 0 gives (0, 1, 1), 1 gives
    (1, 0, 0), 2 gives node 1 strategy 2, so node 2 strategy 2 by way of node 1 but 3 by tie
    (0, 2): the cycle rules it out, and the component has two strategies. Their costs: (0, 1,
    1) is 10 + 0 + 4 (nodes) + 1 (tie) = 15, (1, 0, 0) is 0 + 0 + 0 + 2 = 2. Edge (2, 3) costs
    [[0, 7], [6, 0], [9, 9], [9, 9]] by node 2's strategy; node 3 costs [1, 0]. Best without
    memory: (1, 0, 0, 0) = 2 + 0 + 1 = 3. Usages: node 0 takes 1 over [0, 2), node 2 [1, 3, 1,
    1] over [1, 3), node 3 [5, 1] over [1, 3): (1, 0, 0, 0) needs 1 + 1 + 5 = 7 at t = 1; with
    `limit` 6 the best is (1, 0, 0, 1) = 2 + 7 + 0 = 9 (1 + 1 + 1 at t = 1).
    """
    return Problem(
        "tied",
        ((0, 2), (0, 1), (1, 3), (1, 3)),
        ((10, 0, 0), (0, 0, 0), (0, 4, 0, 0), (1, 0)),
        ((1, 1, 1), (0, 0, 0), (1, 3, 1, 1), (5, 1)),
        ((0, 1), (1, 2), (0, 2), (2, 3)),
        (
            (P, 1, P, 2, P, P, P, P, 3),
            (0, P, P, P, P, 0, P, P, P, P, 0, P),
            (P, 0, P, P, 0, P, P, P, P, P, P, 0),
            (0, 7, 6, 0, 9, 9, 9, 9),
        ),
        limit,
    )


def test_contract_joins_the_tied_nodes_and_keeps_what_every_tie_allows():
    con = contract(_build_model(_tied(100)))
    assert con is not None
    assert [m.tolist() for m in con.members] == [[0, 1, 2], [3]]
    # node 0's strategies 0 and 1 survive; each column is one component strategy
    assert con.strategy[0].tolist() == [[0, 1], [1, 0], [1, 0]]
    assert con.cost[0].tolist() == [15.0, 2.0]
    assert con.cost[1].tolist() == [1.0, 0.0]
    ((c, d, table),) = con.pairs
    assert (c, d) == (0, 1) and table.tolist() == [[6.0, 0.0], [0.0, 7.0]]
    assert con.expand([1, 0], 4).tolist() == [1, 0, 0, 0]


def test_search_adds_the_memory_rows_the_answer_needs():
    for limit, cost, assign in [(100, 3, [1, 0, 0, 0]), (6, 9, [1, 0, 0, 1])]:
        prob = _tied(limit)
        model = _build_model(prob)
        found = []
        search(model, contract(model), time.monotonic() + 10, found.append)
        f = found[-1]
        assert f.assign.tolist() == assign and f.optimal and f.objective == cost
        assert evaluate(prob, tuple(assign)).cost == cost == brute_force(prob)


def test_solve_takes_the_contracted_answer():
    prob = _tied(6)
    res = solve(prob, time_limit=10)
    assert res.strategies == (1, 0, 0, 1) and res.cost == 9
    assert res.status == "optimal" and res.method == "contracted-milp"


@st.composite
def tied_problems(draw, max_nodes: int = 5, max_strategies: int = 3):
    """Small random instances where some edges are ties: a random partial matching of the two
    nodes' strategies, finite costs on it, the penalty elsewhere."""
    n = draw(st.integers(2, max_nodes))
    counts = [draw(st.integers(1, max_strategies)) for _ in range(n)]
    val = st.integers(0, 30)
    costs = tuple(tuple(draw(st.lists(val, min_size=k, max_size=k))) for k in counts)
    usages = tuple(tuple(draw(st.lists(st.integers(0, 9), min_size=k, max_size=k))) for k in counts)
    intervals = []
    for _ in range(n):
        lo = draw(st.integers(0, 4))
        intervals.append((lo, lo + draw(st.integers(0, 3))))
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    edges = draw(st.lists(st.sampled_from(pairs), min_size=1, max_size=6, unique=True))
    tables = []
    for i, j in edges:
        ki, kj = counts[i], counts[j]
        if draw(st.booleans()):  # a tie
            table = [P] * (ki * kj)
            cols = draw(st.permutations(range(max(ki, kj))))
            for a in range(ki):
                if cols[a] < kj and draw(st.integers(0, 4)):
                    table[a * kj + cols[a]] = draw(val)
        else:
            table = draw(st.lists(val, min_size=ki * kj, max_size=ki * kj))
        tables.append(tuple(table))
    limit = draw(st.integers(0, 30))
    return Problem(
        "tied-random", tuple(intervals), costs, usages, tuple(edges), tuple(tables), limit
    )


@settings(max_examples=60, deadline=None)
@given(tied_problems())
def test_the_contracted_search_finds_the_penalty_free_optimum(prob):
    best = brute_force(prob)
    model = _build_model(prob)
    con = contract(model)
    if con is None:
        return
    found = []
    search(model, con, time.monotonic() + 10, found.append)
    if best is None or best >= P:  # no penalty-free solution fits: nothing to find
        assert not found or evaluate(prob, tuple(found[0].assign.tolist())).cost >= P
        return
    costs = [evaluate(prob, tuple(f.assign.tolist())).cost for f in found]
    assert costs == sorted(costs, reverse=True)  # each answer sent beats the last or proves it
    f = found[-1]
    ev = evaluate(prob, tuple(f.assign.tolist()))
    assert ev.feasible and ev.cost == best and f.optimal
    assert f.bound is not None and f.bound <= best + 1e-6


@settings(max_examples=25, deadline=None)
@given(tied_problems())
def test_solve_with_ties_is_optimal(prob):
    best = brute_force(prob)
    if best is None:
        return
    res = solve(prob, time_limit=5)
    assert evaluate(prob, res.strategies).feasible
    if best < P:
        assert res.cost == best and res.status == "optimal"


def _counting(send):
    for k in range(3):
        send(k)


def _forever(send):
    send("started")
    while True:
        time.sleep(0.05)


def test_forked_work_runs_beside_the_caller_and_is_stopped_at_the_deadline():
    done = Forked(_counting)
    assert done.wait(time.monotonic() + 10) == 2  # ends by itself: the last thing it sent
    start = time.monotonic()
    endless = Forked(_forever)
    assert endless.wait(time.monotonic() + 0.5) == "started"
    assert time.monotonic() - start < 2.0
    assert not endless._proc.is_alive()
    assert endless.latest() == "started"  # (what it sent stays after it stopped)


def test_the_neighbourhood_search_stops_when_told():
    from shardwise.plan.iopddl_lns import Pairwise, lns

    model = _build_model(_tied(100))
    assert (
        lns(
            Pairwise.of_model(model),
            np.zeros(4, dtype=np.int64),
            time.monotonic() + 5,
            stop=lambda: True,
        )
        == 0
    )


def test_repair_moves_the_component_that_frees_the_excess_for_the_least_cost():
    # Over at t = 1 by 1 (7 of 6). Node 3 to strategy 1 frees 4 there for 6 more (1 -> 7:
    # node cost 1 -> 0, edge 0 -> 7); the tied component to its other strategy frees nothing
    # (node 2's usage goes 1 -> 3). So node 3 moves: (1, 0, 0, 1), cost 9, the optimum.
    from shardwise.plan.iopddl_contract import _Repair

    model = _build_model(_tied(6))
    con = contract(model)
    picked = np.array([1, 0])
    assert _Repair(model, con).run(picked, time.monotonic() + 5)
    assert picked.tolist() == [1, 1] and con.objective(picked) == 9


def test_the_contracted_neighbourhoods_move_a_chain_of_ties():
    # From (0, 1, 1, 0), cost 15 + 1 + 6 = 22 (limit 100: memory never binds), with
    # neighbourhoods of one node (at most 4 variables): in the original problem a move of
    # node 0, 1 or 2 alone breaks a tie, so only node 3 moves, to 1 (15 + 0 + 0 = 15). In the
    # contracted one nodes 0-2 are one component, which moves to (1, 0, 0): 2 + 1 + 0 = 3.
    from shardwise.plan.iopddl_contract import pairwise
    from shardwise.plan.iopddl_lns import Pairwise, lns

    prob = _tied(100)
    model = _build_model(prob)
    con = contract(model)
    start = np.array([0, 1, 1, 0])
    assign = start.copy()
    assert lns(Pairwise.of_model(model), assign, time.monotonic() + 1.0, size_cap=4) > 0
    assert evaluate(prob, tuple(assign.tolist())).cost == 15
    picked = con.pick(start)
    assert picked is not None and picked.tolist() == [0, 0]
    assert lns(pairwise(model, con), picked, time.monotonic() + 1.0, size_cap=4) > 0
    assert evaluate(prob, tuple(con.expand(picked, 4).tolist())).cost == 3 == brute_force(prob)
    assert con.pick(np.array([0, 0, 1, 0])) is None  # breaks tie (0, 1): no component strategy


def test_the_contracted_problem_keeps_every_members_memory():
    from shardwise.plan.iopddl_contract import pairwise
    from shardwise.plan.iopddl_model import _load

    model = _build_model(_tied(6))
    con = contract(model)
    view = pairwise(model, con)
    for a in range(2):
        for b in range(2):
            picked = np.array([a, b])
            load = view.load(picked)
            assert load.tolist() == _load(model, con.expand(picked, 4)).tolist()
            view.move(picked, load, 0, 1 - a)
            assert load.tolist() == _load(model, con.expand(picked, 4)).tolist()


def test_neighbourhoods_solved_side_by_side_are_apart(monkeypatch):
    # A path 0 - 1 - ... - 9 of two-strategy nodes (strategy 1 costs 1, an edge 1 where its
    # ends differ); neighbourhoods of at most two nodes (2 + 2 + 4 = 8 variables). Of the two a
    # round draws, the second has no node in or next to the first, so the first's move cannot
    # change the second's costs; the moves add up (from all 1, cost 10, down).
    from shardwise.plan import iopddl_lns

    n = 10
    prob = Problem(
        "path",
        ((0, 1),) * n,
        ((0, 1),) * n,
        ((1, 1),) * n,
        tuple((i, i + 1) for i in range(n - 1)),
        ((0, 1, 1, 0),) * (n - 1),
        n,
    )
    model = _build_model(prob)
    drawn: list[list[int]] = []
    real = iopddl_lns._neighbourhood
    monkeypatch.setattr(
        iopddl_lns, "_neighbourhood", lambda *a: drawn.append(real(*a)) or drawn[-1]
    )
    assign = np.ones(n, dtype=np.int64)
    view = iopddl_lns.Pairwise.of_model(model)
    iopddl_lns.lns(view, assign, time.monotonic() + 1.5, size_cap=8, width=2)
    assert len(drawn) >= 4 and evaluate(prob, tuple(assign.tolist())).cost < 10
    rounds = [(drawn[k], drawn[k + 1]) for k in range(0, len(drawn) - 1, 2)]
    for first, second in rounds:
        assert max(len(first), len(second)) <= 2
        assert all(abs(a - b) > 1 for a in first for b in second)
    # Adapted, the cap grows while HiGHS solves each neighbourhood at once: more than two nodes.
    drawn.clear()
    assign = np.ones(n, dtype=np.int64)
    iopddl_lns.lns(view, assign, time.monotonic() + 1.5, size_cap=8, adapt=True)
    assert max(len(d) for d in drawn) > 2


def test_an_adapted_neighbourhood_cap_follows_how_fast_highs_solves():
    from shardwise.plan.highs import MilpResult
    from shardwise.plan.iopddl_lns import _ADAPT_RANGE, _adapted

    def res(status: str, seconds: float) -> MilpResult:
        return MilpResult(status, None, None, None, seconds)

    assert _adapted(4000, res("optimal", 0.1), 2.0) == 5000  # solved in 5% of its time: grow
    assert _adapted(4000, res("optimal", 1.0), 2.0) == 4000  # half its time: keep
    assert _adapted(4000, res("time_limit", 2.0), 2.0) == 2800  # not solved: shrink
    assert _adapted(4000, None, 2.0) == 2800  # (the child overran its limit)
    assert _adapted(_ADAPT_RANGE[1], res("optimal", 0.1), 2.0) == _ADAPT_RANGE[1]
    assert _adapted(_ADAPT_RANGE[0], None, 2.0) == _ADAPT_RANGE[0]


@settings(max_examples=150, deadline=None)  # (about one in twelve has ties and an answer)
@given(tied_problems(max_nodes=6))
def test_contracted_neighbourhoods_keep_the_answer_valid_and_never_worse(prob):
    # From the best penalty-free answer that fits (brute force, then its worst such answer
    # as the start), the contracted search only takes moves that fit and cost less: the
    # memory rows of a component with several members at one time point hold.
    import itertools

    from shardwise.plan.iopddl_contract import pairwise
    from shardwise.plan.iopddl_lns import lns

    model = _build_model(prob)
    con = contract(model)
    if con is None:
        return
    ranges = [range(prob.num_strategies(i)) for i in range(prob.num_nodes)]
    fits = [s for s in itertools.product(*ranges) if evaluate(prob, s).feasible]
    fits = [s for s in fits if evaluate(prob, s).cost < P]
    if not fits:
        return
    start = max(fits, key=lambda s: evaluate(prob, s).cost)
    picked = con.pick(np.array(start))
    assert picked is not None  # a penalty-free answer keeps every tie
    lns(pairwise(model, con), picked, time.monotonic() + 0.2, size_cap=4, adapt=True)
    ev = evaluate(prob, tuple(con.expand(picked, prob.num_nodes).tolist()))
    assert ev.feasible and ev.cost <= evaluate(prob, start).cost
