"""The planner end to end on JAX-lowered models: never worse than the standard plans, memory
budgets, errors, determinism, and its cost model's collectives equal Shardy's op for op."""

from __future__ import annotations

import json
import re

import pytest
from jax.sharding import PartitionSpec as P

import shardwise
from shardwise.cli import main
from shardwise.io.reference import run_pass
from shardwise.plan.cost import estimate
from tests.plan import models

MESH = {"data": 2, "model": 4}
PASSES = [
    "sdy-propagation-pipeline",
    "sdy-insert-explicit-reshards{enable-full-version=true}",
    "sdy-reshard-to-collectives",
]
_COLLECTIVE = re.compile(
    r"= sdy\.(all_reduce|all_gather|all_slice|all_to_all|collective_permute|reduce_scatter)\b(.*)$"
)
_AXIS = re.compile(r'"([^"]+)"((?::\(\d+\)\d+)?)')


@pytest.fixture(scope="module")
def mlp_plan():
    fn, args = models.mlp_train()
    return shardwise.plan(fn, *args, mesh=MESH)


@pytest.fixture(scope="module")
def attention_plan():
    fn, args = models.attention_train(layers=2)
    return shardwise.plan(fn, *args, mesh=MESH)


@pytest.fixture(scope="module")
def tiny_mlp_text():
    fn, args = models.mlp_train(batch=32, d=64, h=256)
    return shardwise.from_jax(fn, *args).text


def _reference_collectives(text: str) -> list[tuple[str, tuple[str, ...]]]:
    """(kind, axes) of each collective Shardy inserts, in the order of its printed module."""
    found = []
    for line in run_pass(text, PASSES).splitlines():
        m = _COLLECTIVE.search(line)
        if m is None:
            continue
        kind, rest = m.group(1), m.group(2)
        if kind == "collective_permute":
            body = rest.split("out_sharding=<", 1)[1].split(">", 1)[0]
        else:
            body = rest.split(" out_sharding=", 1)[0]
        axes = tuple(dict.fromkeys(name + sub for name, sub in _AXIS.findall(body)))
        found.append((kind, axes))
    return found


@pytest.mark.parametrize("which", ["mlp_plan", "attention_plan"])
def test_plan_is_never_worse_than_a_standard_plan(which, request):
    plan = request.getfixturevalue(which)
    assert {"data_parallel", "fsdp", "megatron", "fsdp_tp"} <= set(plan.standard)
    for name, summary in plan.standard.items():
        assert summary is not None, name  # no budget: every plan fits
        assert plan.summary["time_s"] <= summary["time_s"], name
    assert 0 < plan.lower_bound <= plan.summary["time_s"]


def test_mlp_plan_beats_every_standard_plan_by_sharding_the_hidden_dim_everywhere(mlp_plan):
    """Weights dominate this MLP: the hidden dim on both axes (8-way Megatron) wins."""
    best_standard = min(s["time_s"] for s in mlp_plan.standard.values() if s)
    assert mlp_plan.name == "search"
    assert mlp_plan.summary["time_s"] < 0.95 * best_standard
    w1, w2, x, y = (
        mlp_plan.in_shardings[0]["w1"],
        mlp_plan.in_shardings[0]["w2"],
        *mlp_plan.in_shardings[1:],
    )
    assert (w1, w2, x, y) == (P(None, ("data", "model")), P(("data", "model")), P(), P())


@pytest.mark.parametrize("which", ["mlp_plan", "attention_plan"])
def test_estimate_counts_the_collectives_shardy_inserts_op_for_op(which, request):
    plan = request.getfixturevalue(which)
    ours = [(c["kind"], tuple(c["axes"])) for c in estimate(plan.text)["collectives"]]
    assert ours == _reference_collectives(plan.text)
    assert ours  # the plans communicate: the comparison is not vacuous


def test_plan_summary_is_the_estimate_of_its_module(attention_plan):
    again = estimate(attention_plan.module)
    assert {k: again[k] for k in attention_plan.summary} == attention_plan.summary


def test_attention_plan_shards_the_batch_and_the_heads(attention_plan):
    specs = attention_plan.in_shardings
    assert specs[1] == P("data")
    assert all(layer["q"] == P(None, "model") and layer["o"] == P("model") for layer in specs[0])


def test_memory_budget_forces_the_weights_to_be_sharded(tiny_mlp_text):
    free = shardwise.plan(tiny_mlp_text, mesh=MESH)
    # Latency dominates this small MLP: unconstrained, nothing is worth sharding.
    assert all(not any(d.axes for d in a.sharding.dim_shardings) for a in free.args)
    budget = int(0.5 * free.summary["peak_memory_bytes_per_device"])
    tight = shardwise.plan(tiny_mlp_text, mesh=MESH, memory=budget)
    assert tight.summary["peak_memory_bytes_per_device"] <= budget
    weights = [a for a in tight.args if a.name.startswith("params")]
    assert all(any(d.axes for d in a.sharding.dim_shardings) for a in weights)
    for name, summary in tight.standard.items():
        if summary is not None:
            assert tight.summary["time_s"] <= summary["time_s"], name
            assert summary["peak_memory_bytes_per_device"] <= budget


def test_infeasible_budget_names_the_tensors_and_the_smallest_budget(
    tmp_path, capsys, tiny_mlp_text
):
    path = tmp_path / "mlp.mlir"
    path.write_text(tiny_mlp_text)
    assert main(["plan", str(path), "--mesh", "data=2,model=4", "--memory", "1KiB"]) == 1
    err = capsys.readouterr().err
    assert "no plan fits 1024 B per device" in err
    live = err.split("the largest tensors live at that peak: ", 1)[1].split("; ")[0]
    assert live.count(" B/device") == 5 and "tensor<" in live
    smallest = int(re.search(r"smallest feasible budget found is --memory (\d+)", err).group(1))
    assert "Traceback" not in err
    assert main(["plan", str(path), "--mesh", "data=2,model=4", "--memory", str(smallest)]) == 0


def test_same_input_same_output_bytes(tmp_path, tiny_mlp_text):
    path = tmp_path / "mlp.mlir"
    path.write_text(tiny_mlp_text)
    outs = []
    for i in range(2):
        out = tmp_path / f"out{i}.mlir"
        args = ["plan", str(path), "--mesh", "data=2,model=4", "--memory", "200KB", "-o", str(out)]
        assert main(args) == 0
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    assert b"sdy.sharding = #sdy.sharding<@mesh" in outs[0]


def test_json_lists_every_argument_as_sdy_text_and_partition_spec(tmp_path, capsys, tiny_mlp_text):
    path = tmp_path / "mlp.mlir"
    path.write_text(tiny_mlp_text)
    assert (
        main(["plan", str(path), "--mesh", "data=2,model=4", "--memory", "200KB", "--json", "-"])
        == 0
    )
    data = json.loads(capsys.readouterr().out)
    assert [a["name"] for a in data["args"]] == ["params['w1']", "params['w2']", "x", "y"]
    for a in data["args"]:
        assert a["sharding"].startswith("#sdy.sharding<@mesh, [")
        assert a["partition_spec"].startswith("P(")
    assert set(data["summary"]) >= {
        "time_s",
        "comm_s",
        "compute_s",
        "comm_bytes_per_device",
        "comm_bytes_per_axis",
        "peak_memory_bytes_per_device",
    }
    assert data["runner_up"]["summary"]["time_s"] >= data["summary"]["time_s"]
    assert data["lower_bound_s"] <= data["summary"]["time_s"]
    assert data["memory_budget_bytes"] == 200_000


def test_the_users_shardings_are_kept():
    fn, args = models.mlp_train(batch=32, d=64, h=256)
    mesh = shardwise.Mesh((shardwise.MeshAxis("data", 2), shardwise.MeshAxis("model", 4)))
    module = shardwise.from_jax(fn, *args, mesh=MESH, in_shardings=(None, P("model"), None))
    plan = shardwise.plan(module, mesh=mesh, memory=200_000)
    x = plan.args[2]
    assert x.user and str(x.sharding) == '#sdy.sharding<@mesh, [{"model"}, {}]>'
    assert str(plan.module.sharding_of("x")) == str(module.sharding_of("x"))


def test_plan_of_a_sharded_module_and_its_notebook_view(tiny_mlp_text):
    """`shardwise.plan` takes a `ShardedModule`, and its answer shows in a notebook and as
    JSON like the other views."""
    plan = shardwise.plan(shardwise.load(tiny_mlp_text), mesh=MESH)
    assert plan.text == shardwise.plan(tiny_mlp_text, mesh=MESH).text
    html_view = plan._repr_html_()
    assert html_view.startswith("<pre>") and html_view.endswith("</pre>")
    assert str(plan).splitlines()[0] in html_view.replace("&#x27;", "'").replace("&quot;", '"')
    assert json.loads(json.dumps(plan.to_json()))["args"]


def test_search_reports_progress_per_candidate(tiny_mlp_text):
    from shardwise.plan.search import plan_module

    seen: list[tuple[int, int, str | None]] = []

    class Recorder:
        def update(self, done: int, total: int, label: str | None = None) -> None:
            seen.append((done, total, label))

    plan = plan_module(shardwise.load(tiny_mlp_text), MESH, progress=Recorder())
    assert seen and all(label == "evaluating candidates" for _, _, label in seen)
    assert all(0 <= done <= total for done, total, _ in seen)
    assert max(done for done, _, _ in seen) == plan.candidates_evaluated
