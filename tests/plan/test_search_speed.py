"""The planner's fast evaluation is exact: a candidate evaluated on a clone of the loaded module
(with the memoized shard sizes) costs what `estimate` says of the annotated text, parsed anew;
and the pruned coordinate descent evaluates fewer candidates for the same plan."""

from __future__ import annotations

import functools

import pytest

import shardwise
from shardwise.explain.compute import compute_totals
from shardwise.explain.report import _value_bytes
from shardwise.explain.summary import peak_memory_bytes
from shardwise.io.mlir import load_text, write_text
from shardwise.passes import run_pass
from shardwise.plan.cost import DEFAULT_COST, estimate
from shardwise.plan.milp import probe_choices
from shardwise.plan.search import (
    _key,
    _resolve_mesh,
    evaluate_candidate,
    parse_mesh_spec,
    plan_module,
)
from shardwise.plan.space import build_space
from shardwise.plan.standard import standard_plans
from shardwise.sdy.funcs import main_func
from shardwise.sdy.shardings import set_sharding
from tests.plan import models

MESHES = ["data=2,model=4", "data=2,model=2,seq=2"]


@functools.cache
def _tiny(which: str) -> str:
    if which == "mlp":
        fn, args = models.mlp_train(batch=32, d=64, h=256)
    else:
        fn, args = models.attention_train(layers=1, batch=4, seq=16, d=64)
    return shardwise.from_jax(fn, *args).text


def _candidates(which: str, mesh: str):
    base = load_text(_tiny(which), "<t>")
    name, mesh_value, _ = _resolve_mesh(base, parse_mesh_spec(mesh))
    space = build_space(base, name, mesh_value)
    shardings = [space.shardings(c) for c in probe_choices(space)]
    shardings += list(standard_plans(space).values())
    return write_text(base), [s for s in shardings if s is not None]


def _annotated_text(text: str, shardings) -> str:
    module = load_text(text, "<t>")
    args = main_func(module).regions[0].entry.args
    for i, s in shardings.items():
        set_sharding(args[i], s)
    return write_text(module)


@pytest.mark.parametrize("which", ["mlp", "attention"])
@pytest.mark.parametrize("mesh", MESHES)
def test_a_candidate_on_a_clone_costs_what_estimate_of_its_text_says(which, mesh):
    text, candidates = _candidates(which, mesh)
    for shardings in candidates[::4]:  # a quarter of the probes and standard plans: fast enough
        fast = evaluate_candidate(text, "<t>", _key(shardings), DEFAULT_COST)
        assert fast == estimate(_annotated_text(text, shardings)), shardings


@pytest.mark.parametrize("mesh", MESHES)
def test_memoized_shard_sizes_give_the_reports_compute_and_peak(mesh):
    text, candidates = _candidates("attention", mesh)
    for shardings in candidates[::6]:
        module = load_text(_annotated_text(text, shardings), "<t>")
        result = estimate(write_text(module))
        run_pass(module, "sdy-propagation-pipeline")
        run_pass(module, "sdy-insert-explicit-reshards{enable-full-version=true}")
        run_pass(module, "sdy-reshard-to-collectives")
        plain = functools.partial(_value_bytes, module)
        assert result["compute_s"] == compute_totals(module, plain).seconds
        assert result["peak_memory_bytes_per_device"] == peak_memory_bytes(module, plain)


def test_the_pruned_descent_keeps_the_plan_and_evaluates_fewer_candidates():
    """Before the pruning this plan took 22 evaluations (every neighbour, two rounds)."""
    fn, example = models.mlp_train()
    plan = plan_module(shardwise.from_jax(fn, *example), "data=2,model=4", executor="inline")
    args = {a.index: str(a.sharding) for a in plan.args}
    assert args[0] == '#sdy.sharding<@mesh, [{}, {"data", "model"}]>'
    assert args[1] == '#sdy.sharding<@mesh, [{"data", "model"}, {}]>'
    assert plan.candidates_evaluated < 22
