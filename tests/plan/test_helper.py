"""The helper process on the second core (`plan/helper.py`): jobs run in order in a forked
child that shares the planner's state; the stack's cuts and the whole module's evaluations it
gives are the planner's own; a plan made with it is the plan made without it, byte for byte."""

from __future__ import annotations

import multiprocessing
import os
import signal
import time

import pytest

from shardwise.io.mlir import write_text
from shardwise.plan import evaluate, search
from shardwise.plan.cost import DEFAULT_COST
from shardwise.plan.helper import HelperDied, HelperProcess
from shardwise.plan.search import _key, parse_mesh_spec
from shardwise.plan.standard import standard_plans
from tests.plan.test_stack import _stack_text, _with_mesh

# Here JAX is loaded (the models are lowered with it), so the planner would not fork
# (`HelperProcess.possible`); the tests fork all the same, the child running only shardwise.
pytestmark = [
    pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="no fork"),
    pytest.mark.filterwarnings("ignore:os.fork:RuntimeWarning"),
]


def _add(state: int, x: int) -> int:
    return state + x


def _fail(state: int) -> int:
    raise ValueError(f"job failed with state {state}")


def _sleep(state: int, seconds: float) -> int:
    time.sleep(seconds)
    return state


def test_jobs_run_in_order_with_the_state_the_fork_shared():
    helper = HelperProcess(40)
    try:
        first, second = helper.submit(_add, 1), helper.submit(_add, 2)
        assert helper.result(second) == 42
        assert helper.done(first) and helper.result(first) == 41
    finally:
        helper.close()


def test_a_jobs_exception_is_raised_by_result():
    helper = HelperProcess(7)
    try:
        job = helper.submit(_fail)
        with pytest.raises(ValueError, match="job failed with state 7"):
            helper.result(job)
    finally:
        helper.close()


def _big(state: int, size: int) -> str:
    return "x" * size


def test_a_reply_larger_than_the_pipe_is_read_when_the_next_job_is_sent():
    """The child cannot finish sending a reply of 4 MB until the planner reads it: `submit`
    reads the replies already there, so the child is free for the job it sends."""
    helper = HelperProcess(0)
    try:
        big = helper.submit(_big, 4 << 20)
        assert helper._conn.poll(None)  # the child has started to send it
        small = helper.submit(_add, 1)
        assert big in helper._received  # read in full, before the next job was sent
        assert helper.result(small) == 1 and len(helper.result(big)) == 4 << 20
    finally:
        helper.close()


def test_close_drops_a_job_still_running():
    helper = HelperProcess(0)
    job = helper.submit(_sleep, 60.0)
    assert not helper.done(job)
    start = time.perf_counter()
    helper.close()
    assert time.perf_counter() - start < 5.0


def _loaded(mesh: str):
    """The 5-layer stack with the planner's mesh, as the planner holds it: the master."""
    text = _stack_text(5)
    module, _, space = _with_mesh(text, mesh)
    named = evaluate.WithMesh(text, parse_mesh_spec(mesh))
    evaluate.use_as_master(named, "<t>", module)
    return module, named, space


def test_the_helpers_cuts_are_the_planners():
    module, named, _ = _loaded("data=2,model=4")
    helper = HelperProcess((named, "<t>"))
    try:
        got = helper.result(helper.submit(evaluate.cuts_job))
    finally:
        helper.close()
    assert got is not None
    assert got == evaluate.stack_cuts(module, named, "<t>")


def test_a_guess_the_helper_is_busy_with_is_dropped_for_the_next():
    """`expect` twice in a row: the first guess is still running, so the helper is forked
    again for the second; `full` gives the second's whole-module evaluation as costed here."""
    module, named, space = _loaded("data=2,model=4")
    first, second = list(standard_plans(space).values())[:2]
    helper = HelperProcess((named, "<t>"))
    ev = evaluate.Evaluator(named, "<t>", DEFAULT_COST, None, helper=helper)
    try:
        ev.print_input()
        assert helper._conn.poll(None)  # the printout has started to come
        ev.expect(first)
        ev.expect(second)
        assert ev.helper is not helper and list(ev.expected) == [_key(second)]
        (got,) = ev.full([second])
    finally:
        ev.close()
    assert ev.helper is None
    assert got == evaluate.evaluate_candidate(named, "<t>", _key(second), DEFAULT_COST)
    # The printout the first helper made is kept: the second has none.
    assert ev.printed_input() == write_text(module)


def test_a_helper_that_died_is_dropped_and_the_evaluation_made_here():
    _, named, space = _loaded("data=2,model=4")
    first = next(iter(standard_plans(space).values()))
    helper = HelperProcess((named, "<t>"))
    os.kill(helper._process.pid, signal.SIGKILL)
    helper._process.join()
    with pytest.raises(HelperDied):
        helper.result(helper.submit(_add, 1))
    ev = evaluate.Evaluator(named, "<t>", DEFAULT_COST, None, helper=HelperProcess((named, "<t>")))
    ev.helper._process.kill()
    ev.helper._process.join()
    ev.expect(first)
    assert ev.helper is None
    (got,) = ev.full([first])
    assert got == evaluate.evaluate_candidate(named, "<t>", _key(first), DEFAULT_COST)


@pytest.mark.parametrize("mesh", ["data=2,model=4", "data=2,model=2,seq=2"])
def test_a_plan_made_with_the_helper_is_the_plan_made_without_it(mesh, monkeypatch):
    text = _stack_text(5)
    alone = search.plan_module(text, mesh, executor="inline")
    replies = []

    def forced(executor, pool, module, source, name):  # the GPT cases' path, on a small stack
        helper = HelperProcess((source, name))
        replies.append(helper)
        return helper

    monkeypatch.setattr(search, "make_helper", forced)
    helped = search.plan_module(text, mesh)
    assert replies and all(h._read >= 2 for h in replies)  # the cuts and the answer, at least
    assert helped.text == alone.text  # byte for byte
    got, want = helped.to_json(), alone.to_json()
    got.pop("search_time_s")
    want.pop("search_time_s")
    assert got == want


class _Recorder:
    """An evaluator that records what it is asked, and estimates nothing."""

    def __init__(self) -> None:
        self.runs: list[list[tuple]] = []
        self.expected: list[tuple] = []

    def run(self, candidates, memory=True):
        self.runs.append([_key(c) for c in candidates])
        raise AssertionError("the guess estimates nothing")

    def expect(self, candidate) -> None:
        self.expected.append(_key(candidate))


def _probe_results(space, faster: dict) -> dict:
    from shardwise.plan.milp import probe_choices

    return {
        p: {"time_s": faster.get(p, 1.0), "peak_memory_bytes_per_device": 1}
        for p in probe_choices(space)
    }


def test_the_answer_is_guessed_from_the_probes_alone():
    """`_guess_answer` sends the helper the descent's first neighbour of the best probe (0.5 s
    faster than replicated): moved in the group whose probe gains most from there (0.3 s),
    without estimating anything."""
    _, _, space = _loaded("data=2,model=4")
    probes = list(_probe_results(space, {}))
    first = probes[1]

    def with_first(probe: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(max(a, b) for a, b in zip(first, probe, strict=True))

    second = next(  # a probe of another group that can join the first
        p
        for p in probes[2:]
        if p.index(max(p)) != first.index(max(first)) and space.shardings(with_first(p))
    )
    results = _probe_results(space, {first: 0.5, second: 0.7})
    ev = _Recorder()
    search._guess_answer(space, ev, None, (results, results))
    assert ev.runs == []
    assert ev.expected == [_key(space.shardings(with_first(second)))]


def test_no_guess_without_a_neighbour_the_probes_predict_to_gain():
    _, _, space = _loaded("data=2,model=4")
    results = _probe_results(space, {})
    ev = _Recorder()
    search._guess_answer(space, ev, None, (results, results))
    assert ev.expected == []


@pytest.mark.parametrize("mesh", ["data=2,model=4", "data=2,model=2,seq=2", "data=2,one=1,model=4"])
def test_the_helpers_copy_imported_ahead_costs_what_the_whole_pipeline_does(mesh):
    """`prepare_job` runs Shardy's import pipeline before the shardings are written: the
    whole module's evaluation is the same, candidate for candidate (a mesh with an axis of
    size 1 included: the import rewrites every sharding then)."""
    master, named, space = _loaded(mesh)
    state = (named, "<t>")
    for shardings in standard_plans(space).values():
        key = _key(shardings)
        evaluate.prepare_job(state)
        # Imported: the constants are `sdy.constant`s (`sdy-constant-or-scalar-splitter`).
        names = {op.name for op in evaluate._PREPARED[state].walk()}
        assert "sdy.constant" in names and "stablehlo.constant" not in names
        assert "sdy.constant" not in {op.name for op in master.walk()}
        spent = list(evaluate._SPENT)
        got = evaluate.whole_module_job(state, key, DEFAULT_COST)
        assert state not in evaluate._PREPARED
        assert got == evaluate.evaluate_candidate(named, "<t>", key, DEFAULT_COST)
        # The module costed is freed when the next one is, after this reply; the last freed.
        (costed,) = evaluate._SPENT
        assert costed.op.regions[0].parent is not None
        assert all(m.op.regions[0].parent is None for m in spent)
