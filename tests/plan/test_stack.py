"""Repeated layers (`plan/stack.py`): the stack is found, a module cut to k of its layers is the
program of k layers, the estimate from the cuts to 2 and 3 layers equals the whole module's
evaluation candidate for candidate, and the planner's answer is the one it gives without cuts
(the same bytes), falling back to the whole module when an estimate misses."""

from __future__ import annotations

import functools
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

import shardwise
from shardwise.io.mlir import load_text, write_text
from shardwise.ir import Module
from shardwise.plan import evaluate, search
from shardwise.plan.cost import DEFAULT_COST, estimate
from shardwise.plan.milp import probe_choices
from shardwise.plan.search import _key, _resolve_mesh, evaluate_candidate, parse_mesh_spec
from shardwise.plan.space import build_space
from shardwise.plan.stack import (
    CUT,
    _periodic_segments,
    cut,
    cut_copy,
    extrapolate,
    find_stack,
)
from shardwise.plan.standard import standard_plans
from tests.plan import models

MESHES = ["data=2,model=4", "data=2,model=2,seq=2"]
INTS = ("comm_bytes_per_device", "peak_memory_bytes_per_device")
FLOATS = ("time_s", "comm_s", "compute_s", "flops_per_device")


@functools.cache
def _stack_text(layers: int) -> str:
    fn, args = models.attention_train(layers=layers, batch=4, seq=16, d=64)
    return shardwise.from_jax(fn, *args).text


def _with_mesh(text: str, mesh: str):
    module = load_text(text, "<t>")
    name, value, _ = _resolve_mesh(module, parse_mesh_spec(mesh))
    return module, write_text(module), build_space(module, name, value)


def _cut(text: str, k: int) -> tuple[str, tuple[int, ...]]:
    """The module cut to k layers, and the arguments it keeps."""
    module = load_text(text, "<t>")
    stack = find_stack(module)
    assert stack is not None
    kept = cut(module, stack, k)
    assert kept is not None
    return write_text(module), kept


def _cut_text(text: str, k: int) -> str:
    return _cut(text, k)[0]


def _on(kept: tuple[int, ...], key):
    """A key of the whole module's arguments on the cut that keeps `kept`."""
    position = {a: i for i, a in enumerate(kept)}
    return tuple((position[i], s) for i, s in key if i in position)


def _segments_by_scan(seq: list[int], min_copies: int) -> list[tuple[int, int, int]]:
    """`_periodic_segments` by its definition: per period P, each maximal run of places i with
    seq[i] == seq[i + P] makes a segment of the run's length + P, kept with `min_copies`
    whole periods; then the longest first (ties: shorter period, earlier), disjoint."""
    found = []
    for p in range(1, len(seq) // max(1, min_copies) + 1):
        same = [seq[i] == seq[i + p] for i in range(len(seq) - p)]
        i = 0
        while i < len(same):
            j = i
            while j < len(same) and same[j]:
                j += 1
            if j > i and j - i + p >= min_copies * p:
                found.append((i, j + p, p))
            i = j + 1
    found.sort(key=lambda s: (-(s[1] - s[0]), s[2], s[0]))
    taken: list[tuple[int, int, int]] = []
    for s, e, p in found:
        if all(e <= s2 or s >= e2 for s2, e2, _ in taken):
            taken.append((s, e, p))
    return sorted(taken)


@given(
    st.lists(st.integers(0, 2), max_size=8),
    st.lists(st.integers(0, 2), min_size=1, max_size=5),
    st.integers(0, 7),
    st.lists(st.integers(0, 3), max_size=8),
    st.integers(0, 5),
)
def test_the_periodic_segments_are_those_of_a_scan_place_by_place(head, unit, copies, tail, k):
    seq = head + unit * copies + tail
    assert _periodic_segments(seq, k) == _segments_by_scan(seq, k)


def test_the_periodic_segments_of_a_repeated_block_between_others():
    seq = [7, 8] + [1, 2, 3] * 4 + [1, 9]
    assert _periodic_segments(seq, 3) == [(2, 15, 3)]  # 4 copies and the next copy's first op
    assert _periodic_segments(seq, 5) == []


def test_the_stack_is_the_forward_the_backward_and_the_updates_of_each_layer():
    module = load_text(_stack_text(5), "<t>")
    stack = find_stack(module)
    assert stack is not None and stack.depth == 5
    # 6 parameters per layer, then the input x.
    assert stack.arg_layer == tuple(i // 6 for i in range(30)) + (-1,)
    assert [r.layers for r in stack.runs] == [(0, 1, 2, 3, 4), (4, 3, 2, 1, 0), (0, 1, 2, 3, 4)]


def test_a_module_without_repeated_layers_is_no_stack():
    fn, args = models.mlp_train(batch=32, d=64, h=256)
    assert find_stack(load_text(shardwise.from_jax(fn, *args).text, "<t>")) is None
    assert find_stack(load_text(_stack_text(2), "<t>")) is None  # too shallow to cut


@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize("plan", ["data_parallel", "megatron"])
def test_a_module_cut_to_k_layers_costs_what_the_k_layer_program_costs(k, plan):
    """The truth is JAX's lowering of k layers: the same arguments (layers 0..k-1, then the
    input), the same results, the same cost."""
    mesh = "data=2,model=4"
    _, cut_text, space = _with_mesh(_cut_text(_stack_text(5), k), mesh)
    _, k_text, k_space = _with_mesh(_stack_text(k), mesh)
    assert space.args == k_space.args
    shardings = standard_plans(k_space)[plan]
    got = evaluate_candidate(cut_text, "<t>", _key(shardings), DEFAULT_COST)
    want = evaluate_candidate(k_text, "<t>", _key(shardings), DEFAULT_COST)
    assert got == want


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_a_copy_cut_to_k_layers_is_the_module_cut_in_place_and_leaves_it_as_it_was(k):
    """`cut_copy` copies only the kept ops: the same text as `cut` on a clone, and the
    module it copies from prints as before (its use lists back as they were too)."""
    text = _stack_text(5)
    module = load_text(text, "<t>")
    before = write_text(module)
    uses = [len(v.uses) for op in module.walk() for v in op.results]
    stack = find_stack(module)
    assert stack is not None
    got = cut_copy(module, stack, k)
    assert got is not None
    top, kept = got
    assert (write_text(Module(top, None, "<t>")), kept) == _cut(text, k)
    assert write_text(module) == before
    assert [len(v.uses) for op in module.walk() for v in op.results] == uses


def test_the_cuts_of_the_cut_to_four_layers_are_the_cuts_of_the_whole_module():
    """`stack_cuts` cuts the whole module once, to 4 layers, and cuts that again: the same
    texts and arguments as cutting the whole module three times."""
    module, text, _ = _with_mesh(_stack_text(7), "data=2,model=4")
    stack = find_stack(module)
    assert stack is not None and stack.depth == 7
    cuts = evaluate.stack_cuts(module, text, "<t>")
    assert cuts is not None and cuts.depth == 7
    for k in (1, 2, 3):
        whole = load_text(text, "<t>")
        kept = cut(whole, stack, k)
        assert kept is not None and cuts.args[k] == kept
        assert cuts.texts[k] == write_text(whole)


@pytest.mark.parametrize("layers", [5, 7])
@pytest.mark.parametrize("mesh", MESHES)
def test_the_estimate_from_two_cuts_is_the_whole_modules_evaluation(layers, mesh):
    module, text, space = _with_mesh(_stack_text(layers), mesh)
    stack = find_stack(module)
    assert stack is not None
    cuts = {k: _cut(text, k) for k in (CUT - 1, CUT, CUT + 1)}
    candidates = [space.shardings(c) for c in probe_choices(space)]
    candidates += list(standard_plans(space).values())
    for shardings in [c for c in candidates if c is not None][::3]:
        key = _key(shardings)
        whole = evaluate_candidate(text, "<t>", key, DEFAULT_COST)
        cost = {
            k: evaluate_candidate(t, "<t>", _on(kept, key), DEFAULT_COST)
            for k, (t, kept) in cuts.items()
        }
        estimate = extrapolate(cost[CUT], cost[CUT + 1], stack.depth)
        for k in INTS:
            assert estimate[k] == whole[k], (k, shardings)
        for k in FLOATS:
            assert math.isclose(estimate[k], whole[k], rel_tol=1e-9), (k, shardings)
        assert estimate["comm_bytes_per_axis"] == whole["comm_bytes_per_axis"]
        # From one and two layers: the same step time (what the search uses without a budget).
        timed = extrapolate(cost[CUT - 1], cost[CUT], stack.depth, CUT - 1)
        for k in ("time_s", "comm_s", "compute_s"):
            assert math.isclose(timed[k], whole[k], rel_tol=1e-9), (k, shardings)
        assert timed["comm_bytes_per_device"] == whole["comm_bytes_per_device"]


def test_the_input_with_the_planners_mesh_is_what_its_printout_loads_as():
    """`WithMesh` names the input with the mesh the planner adds, without printing it: loading
    it (in a worker process, or here once the answer consumed the master) gives the module the
    printout of the input with that mesh gives: the same text, the same costs."""
    text, mesh = _stack_text(5), "data=2,model=4"
    _, printed, space = _with_mesh(text, mesh)
    named = evaluate.WithMesh(text, parse_mesh_spec(mesh))
    assert write_text(evaluate._load(named, "<t>")) == printed
    for shardings in list(standard_plans(space).values())[:2]:
        key = _key(shardings)
        got = evaluate_candidate(named, "<t>", key, DEFAULT_COST)
        assert got == evaluate_candidate(printed, "<t>", key, DEFAULT_COST)


def _plan(text: str, mesh: str, memory=None):
    return search.plan_module(text, mesh, memory=memory, executor="inline")


@pytest.mark.parametrize("mesh", MESHES)
def test_the_plan_from_the_cuts_is_the_plan_of_the_whole_module(mesh, monkeypatch):
    text = _stack_text(5)
    cut_plan = _plan(text, mesh)
    again = _plan(text, mesh)
    monkeypatch.setattr(search, "stack_cuts", lambda *_: None)
    whole_plan = _plan(text, mesh)
    assert cut_plan.text == again.text == whole_plan.text  # byte for byte
    assert cut_plan.name == whole_plan.name
    assert cut_plan.summary == whole_plan.summary  # the whole module's evaluation, not an estimate
    # The runner-up may be a twin of equal cost (the same plan on another axis of size 2):
    # rounding orders ties among the estimates differently from the whole module's numbers.
    ours, theirs = cut_plan.runner_up, whole_plan.runner_up
    assert ours is not None and theirs is not None
    assert math.isclose(ours["summary"]["time_s"], theirs["summary"]["time_s"], rel_tol=1e-12)


def test_an_estimate_that_misses_sends_the_search_to_the_whole_module(monkeypatch):
    text, mesh = _stack_text(5), "data=2,model=4"
    monkeypatch.setattr(search, "stack_cuts", lambda *_: None)
    whole_plan = _plan(text, mesh)
    monkeypatch.undo()

    def wrong(lo, hi, depth, k):  # the step time of the middle layers forgotten
        out = extrapolate(lo, hi, depth, k)
        return {**out, "time_s": lo["time_s"]}

    monkeypatch.setattr(evaluate, "extrapolate", wrong)
    plan = _plan(text, mesh)
    assert plan.text == whole_plan.text
    assert plan.summary == whole_plan.summary


def test_a_budget_is_checked_on_the_whole_module():
    """Half of data parallel's peak: the plan fits it by the whole module's evaluation."""
    text, mesh = _stack_text(5), "data=2,model=4"
    dp = _plan(text, mesh).standard["data_parallel"]
    assert dp is not None
    budget = dp["peak_memory_bytes_per_device"] // 2
    plan = _plan(text, mesh, memory=budget)
    whole = evaluate_candidate(
        _with_mesh(text, mesh)[1],
        "<t>",
        _key({a.index: a.sharding for a in plan.args if a.sharding is not None}),
        DEFAULT_COST,
    )
    assert plan.summary == {k: v for k, v in whole.items() if k != "collectives"}
    assert plan.summary["peak_memory_bytes_per_device"] <= budget


def test_a_plan_from_the_cuts_predicts_the_collectives_shardy_inserts():
    """Fidelity: the plan's summary is its module's estimate, whose collectives are Shardy's
    (jaxlib's passes on the planned module), op for op. (At the widths of `_stack_text` the
    answer communicates nothing; at these, Megatron does.)"""
    from tests.plan.test_plan import _reference_collectives

    fn, args = models.attention_train(layers=4)
    plan = _plan(shardwise.from_jax(fn, *args).text, "data=2,model=4")
    assert plan.name == "megatron"
    again = estimate(plan.text)
    assert {k: again[k] for k in plan.summary} == plan.summary
    ours = [(c["kind"], tuple(c["axes"])) for c in again["collectives"]]
    assert ours == _reference_collectives(plan.text)
    assert ours


def test_a_reported_candidates_estimate_does_not_depend_on_when_it_is_first_asked_for():
    """The standard plans are reported with their peak memory (`Evaluator.reported`): asked
    for first by the search without a budget (the step time alone: the cuts to 1 and 2
    layers), a reported candidate is still estimated from the cuts to 2 and 3, the estimate
    it gets when the report asks first; an unreported one is not."""
    text, mesh = _stack_text(5), "data=2,model=4"
    module, _, space = _with_mesh(text, mesh)
    named = evaluate.WithMesh(text, parse_mesh_spec(mesh))
    evaluate.use_as_master(named, "<t>", module)
    cuts = evaluate.stack_cuts(module, named, "<t>")
    assert cuts is not None
    reported, other = list(standard_plans(space).values())[:2]

    def evaluator() -> evaluate.Evaluator:
        ev = evaluate.Evaluator(named, "<t>", DEFAULT_COST, None, cuts=cuts)
        ev.reported.add(_key(reported))
        return ev

    report_first, search_first = evaluator(), evaluator()
    want = report_first.run([reported, other], memory=True)
    got = search_first.run([reported, other], memory=False)
    assert got[0] == want[0]
    assert _key(reported) in search_first.exact_memory
    assert got[1] != want[1]  # from other cuts: differs at least in rounding or peak memory
    assert _key(other) not in search_first.exact_memory
    assert search_first.run([reported, other], memory=True) == want
