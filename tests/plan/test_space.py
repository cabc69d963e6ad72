"""The search space (classes of linked dims, groups, candidates), the standard plans read from
it, input parsing, and candidate evaluation through an executor."""

from __future__ import annotations

import itertools
import math
import multiprocessing
from concurrent.futures import ProcessPoolExecutor

import pytest

import shardwise
from shardwise.errors import InputError
from shardwise.io.mlir import load_text
from shardwise.mesh import Mesh, MeshAxis
from shardwise.plan.search import parse_memory, parse_mesh_spec
from shardwise.plan.space import build_space
from shardwise.plan.standard import batch_class, standard_plans

MESH = Mesh((MeshAxis("data", 2), MeshAxis("model", 4)))

# x[b, d] @ w1[d, h] -> tanh -> @ w2[h, d] + y[b, d]: classes b (x0, y0), d (x1, w1_0),
# h (w1_1, w2_0), d' (w2_1, y1): the two model dims are different classes (no op links them).
MLP = """
func.func @main(%x: tensor<32x64xf32>, %w1: tensor<64x256xf32>, %w2: tensor<256x64xf32>,
                %y: tensor<32x64xf32>) -> tensor<32x64xf32> {
  %0 = stablehlo.dot_general %x, %w1, contracting_dims = [1] x [0] : (tensor<32x64xf32>, tensor<64x256xf32>) -> tensor<32x256xf32>
  %1 = stablehlo.tanh %0 : tensor<32x256xf32>
  %2 = stablehlo.dot_general %1, %w2, contracting_dims = [1] x [0] : (tensor<32x256xf32>, tensor<256x64xf32>) -> tensor<32x64xf32>
  %3 = stablehlo.add %2, %y : tensor<32x64xf32>
  return %3 : tensor<32x64xf32>
}
"""

# A call and a while loop carry dims: the callee's and the body's dims join the caller's.
CALLS = """
func.func @main(%x: tensor<8x16xf32>, %w: tensor<16x16xf32>) -> tensor<8x16xf32> {
  %0 = func.call @layer(%x, %w) : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
  %c = stablehlo.constant dense<0> : tensor<i32>
  %1:2 = stablehlo.while(%a = %0, %i = %c) : tensor<8x16xf32>, tensor<i32>
    cond {
      %n = stablehlo.constant dense<3> : tensor<i32>
      %p = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %t = stablehlo.tanh %a : tensor<8x16xf32>
      %one = stablehlo.constant dense<1> : tensor<i32>
      %j = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %t, %j : tensor<8x16xf32>, tensor<i32>
    }
  return %1#0 : tensor<8x16xf32>
}
func.func private @layer(%h: tensor<8x16xf32>, %v: tensor<16x16xf32>) -> tensor<8x16xf32> {
  %0 = stablehlo.dot_general %h, %v, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}
"""


def test_mlp_classes_by_hand():
    space = build_space(load_text(MLP), "mesh", MESH)
    assert [a.classes for a in space.args] == [(0, 1), (1, 2), (2, 3), (0, 3)]
    assert [(c.size, c.arg_dims) for c in space.classes] == [
        (32, ((0, 0), (3, 0))),
        (64, ((0, 1), (1, 0))),
        (256, ((1, 1), (2, 0))),
        (64, ((2, 1), (3, 1))),
    ]
    assert space.groups[0].candidates == ((), ("data",), ("model",), ("data", "model"))
    assert space.conflicts() == [(0, 1), (0, 3), (1, 2), (2, 3)]


def test_calls_and_loops_join_classes():
    space = build_space(load_text(CALLS), "mesh", MESH)
    # x1 is contracted with w0 inside @layer; w1 goes on to the result and through the loop.
    assert [a.classes for a in space.args] == [(0, 1), (1, 2)]


# One helper called on x[b, d] and on w's transpose: two copies of @f, as Shardy's import
# flattens calls; sharing the callee's arguments tied x's dims to w's.
HELPER = """
func.func @main(%x: tensor<8x16xf32>, %w: tensor<16x8xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %0 = func.call @f(%x) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %t = stablehlo.transpose %w, dims = [1, 0] : (tensor<16x8xf32>) -> tensor<8x16xf32>
  %1 = func.call @f(%t) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0, %1 : tensor<8x16xf32>, tensor<8x16xf32>
}
func.func private @f(%a: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = stablehlo.tanh %a : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}
"""


def test_two_calls_of_one_helper_do_not_tie_their_callers_dims():
    """gpt_scan: a helper that JAX calls for every residual tied the attention's head dim to
    the model dim, and Megatron of the scanned GPT lost its column split (0.0615 s against
    the hand-written tp's 0.0273 s)."""
    space = build_space(load_text(HELPER), "mesh", MESH)
    assert [a.classes for a in space.args] == [(0, 1), (2, 3)]


def test_value_bytes_by_hand():
    """A class's `value_bytes`: the elements of each value with a dim in it, once per value
    and call context (not once per dim), summed."""
    mlp = build_space(load_text(MLP), "mesh", MESH)
    # b: x, y, %0..%3; d: x, w1; h: w1, %0, %1, w2; d': w2, %2, %3, y
    assert [c.value_bytes for c in mlp.classes] == [24576, 18432, 49152, 22528]
    # @f's argument and tanh once per call: x, the first call's result, a and tanh (call 1)
    helper = build_space(load_text(HELPER), "mesh", MESH)
    assert [c.value_bytes for c in helper.classes] == [512, 512, 640, 640]
    # x's two dims are one class (through the transpose): x, %t and %0 counted once each
    square = build_space(load_text(SQUARE), "mesh", MESH)
    assert [a.classes for a in square.args] == [(0, 0)]
    assert [c.value_bytes for c in square.classes] == [768]


SQUARE = """
func.func @main(%x: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %t = stablehlo.transpose %x, dims = [1, 0] : (tensor<16x16xf32>) -> tensor<16x16xf32>
  %0 = stablehlo.add %x, %t : tensor<16x16xf32>
  return %0 : tensor<16x16xf32>
}
"""


# A scan over stacked MLP weights ws1[l, d, h], ws2[l, h, d]: the layer dim l is only indexed
# (dynamic_slice); h is what a dot splits.
SCAN = """
func.func @main(%x: tensor<8x16xf32>, %ws1: tensor<4x16x32xf32>, %ws2: tensor<4x32x16xf32>) -> tensor<8x16xf32> {
  %c = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%a = %x, %i = %c) : tensor<8x16xf32>, tensor<i32>
    cond {
      %n = stablehlo.constant dense<4> : tensor<i32>
      %p = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %z = stablehlo.constant dense<0> : tensor<i32>
      %s1 = stablehlo.dynamic_slice %ws1, %i, %z, %z, sizes = [1, 16, 32] : (tensor<4x16x32xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x16x32xf32>
      %w1 = stablehlo.reshape %s1 : (tensor<1x16x32xf32>) -> tensor<16x32xf32>
      %s2 = stablehlo.dynamic_slice %ws2, %i, %z, %z, sizes = [1, 32, 16] : (tensor<4x32x16xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x32x16xf32>
      %w2 = stablehlo.reshape %s2 : (tensor<1x32x16xf32>) -> tensor<32x16xf32>
      %h = stablehlo.dot_general %a, %w1, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
      %t = stablehlo.tanh %h : tensor<8x32xf32>
      %y = stablehlo.dot_general %t, %w2, contracting_dims = [1] x [0] : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>
      %one = stablehlo.constant dense<1> : tensor<i32>
      %j = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %y, %j : tensor<8x16xf32>, tensor<i32>
    }
  return %r#0 : tensor<8x16xf32>
}
"""


def test_megatron_of_a_scan_splits_the_dot_dims_not_the_layer_dim():
    """The scan's layer dims (one weight each) were taken first as Megatron's hidden dims,
    which left no room for the feed-forward dim."""
    space = build_space(load_text(SCAN), "mesh", MESH)
    plans = {name: {i: str(s) for i, s in p.items()} for name, p in standard_plans(space).items()}
    assert plans["megatron"][1] == '#sdy.sharding<@mesh, [{}, {}, {"model"}]>'
    assert plans["megatron"][2] == '#sdy.sharding<@mesh, [{}, {"model"}, {}]>'


def test_a_choice_that_puts_one_axis_twice_on_a_tensor_is_not_a_plan():
    space = build_space(load_text(MLP), "mesh", MESH)
    data = space.groups[0].candidates.index(("data",))
    assert space.shardings((data, data, 0, 0)) is None  # x would be {"data"}, {"data"}
    plan = space.shardings((data, 0, 0, 0))
    assert plan is not None and str(plan[0]) == '#sdy.sharding<@mesh, [{"data"}, {}]>'


def test_a_choice_asked_for_again_gives_the_same_shardings_for_the_caller_to_change():
    """`shardings` remembers each choice's answer (the search asks for one many times); what
    a caller does to the dict it got does not reach the next caller."""
    space = build_space(load_text(MLP), "mesh", MESH)
    data = space.groups[0].candidates.index(("data",))
    first = space.shardings((data, 0, 0, 0))
    assert first is not None
    want = {i: str(s) for i, s in first.items()}
    first.clear()
    again = space.shardings((data, 0, 0, 0))
    assert again is not None and {i: str(s) for i, s in again.items()} == want
    assert space.shardings((data, data, 0, 0)) is None
    assert space.shardings((data, data, 0, 0)) is None


# Two residual layers: the model dim d is one class through the adds, each layer's hidden dim
# its own class; the two hidden classes form one group, so a1/a2 (and b1/b2) have the same
# groups in the same order.
TWO_LAYERS = """
func.func @main(%x: tensor<32x64xf32>, %a1: tensor<64x256xf32>, %b1: tensor<256x64xf32>,
                %a2: tensor<64x256xf32>, %b2: tensor<256x64xf32>) -> tensor<32x64xf32> {
  %0 = stablehlo.dot_general %x, %a1, contracting_dims = [1] x [0] : (tensor<32x64xf32>, tensor<64x256xf32>) -> tensor<32x256xf32>
  %1 = stablehlo.dot_general %0, %b1, contracting_dims = [1] x [0] : (tensor<32x256xf32>, tensor<256x64xf32>) -> tensor<32x64xf32>
  %2 = stablehlo.add %x, %1 : tensor<32x64xf32>
  %3 = stablehlo.dot_general %2, %a2, contracting_dims = [1] x [0] : (tensor<32x64xf32>, tensor<64x256xf32>) -> tensor<32x256xf32>
  %4 = stablehlo.dot_general %3, %b2, contracting_dims = [1] x [0] : (tensor<32x256xf32>, tensor<256x64xf32>) -> tensor<32x64xf32>
  %5 = stablehlo.add %2, %4 : tensor<32x64xf32>
  return %5 : tensor<32x64xf32>
}
"""


def test_every_choice_gives_each_argument_its_groups_candidates():
    """`shardings` of every choice against the definition (each dim: its class's group's
    candidate), `is_plan` against `shardings`; the layers' arguments share one object."""
    space = build_space(load_text(TWO_LAYERS), "mesh", MESH)
    assert [a.classes for a in space.args] == [(0, 1), (1, 2), (2, 1), (1, 3), (3, 1)]
    group = space.group_of_class()
    assert group[2] == group[3]
    ranges = [range(len(g.candidates)) for g in space.groups]
    plans = 0
    for choice in itertools.product(*ranges):
        got = space.shardings(choice)
        assert space.is_plan(choice) == (got is not None)
        axes = [
            [space.groups[group[c]].candidates[choice[group[c]]] for c in arg.classes]
            for arg in space.args
        ]
        if any(len(set(a for dim in dims for a in dim)) < sum(map(len, dims)) for dims in axes):
            assert got is None
            continue
        plans += 1
        assert got is not None
        for arg, dims in zip(space.args, axes, strict=True):
            assert [tuple(a.name for a in d.axes) for d in got[arg.index].dim_shardings] == dims
            assert all(d.is_closed for d in got[arg.index].dim_shardings)
        assert got[1] is got[3] and got[2] is got[4]
    assert 0 < plans < math.prod(map(len, ranges))


# Attention-like logits over x[b, s, d] plus a mask of s x s: the sequence class reaches more
# bytes than the batch class, in the same argument (as GPT's token ids and causal mask).
LOGITS = """
func.func @main(%x: tensor<8x16x32xf32>) -> tensor<8x16x16xf32> {
  %0 = stablehlo.dot_general %x, %x, batching_dims = [0] x [0], contracting_dims = [2] x [2] : (tensor<8x16x32xf32>, tensor<8x16x32xf32>) -> tensor<8x16x16xf32>
  %m = stablehlo.constant dense<0.0> : tensor<16x16xf32>
  %1 = stablehlo.broadcast_in_dim %m, dims = [1, 2] : (tensor<16x16xf32>) -> tensor<8x16x16xf32>
  %2 = stablehlo.add %0, %1 : tensor<8x16x16xf32>
  return %2 : tensor<8x16x16xf32>
}
"""


def test_the_batch_is_the_outer_dim_of_an_input_whose_sequence_reaches_more():
    """gpt_8x8 put the batch of token ids on "model" and the sequence on "data" (8% slower
    than the benchmark's tp_sp at half of data parallel's memory): the sequence was taken
    for the batch."""
    space = build_space(load_text(LOGITS), "mesh", MESH)
    batch = batch_class(space)
    assert batch is not None and space.classes[batch].arg_dims == ((0, 0),)
    plans = standard_plans(space)
    assert str(plans["megatron_sp"][0]) == '#sdy.sharding<@mesh, [{"data"}, {"model"}, {}]>'


def test_standard_plans_of_the_mlp():
    space = build_space(load_text(MLP), "mesh", MESH)
    assert batch_class(space) == 0
    plans = {name: {i: str(s) for i, s in p.items()} for name, p in standard_plans(space).items()}
    assert set(plans) == {"data_parallel", "fsdp", "megatron", "fsdp_tp"}
    assert plans["megatron"] == {
        0: '#sdy.sharding<@mesh, [{"data"}, {}]>',
        1: '#sdy.sharding<@mesh, [{}, {"model"}]>',
        2: '#sdy.sharding<@mesh, [{"model"}, {}]>',
        3: '#sdy.sharding<@mesh, [{"data"}, {}]>',
    }
    assert plans["data_parallel"][0] == '#sdy.sharding<@mesh, [{"data", "model"}, {}]>'
    assert plans["fsdp"][2] == '#sdy.sharding<@mesh, [{"data", "model"}, {}]>'


# x[b, s, d] through two weights: a batch, a sequence (no weight has it), hidden dims.
SEQ_MLP = """
func.func @main(%x: tensor<8x16x32xf32>, %w1: tensor<32x64xf32>, %w2: tensor<64x32xf32>) -> tensor<8x16x32xf32> {
  %0 = stablehlo.dot_general %x, %w1, contracting_dims = [2] x [0] : (tensor<8x16x32xf32>, tensor<32x64xf32>) -> tensor<8x16x64xf32>
  %1 = stablehlo.tanh %0 : tensor<8x16x64xf32>
  %2 = stablehlo.dot_general %1, %w2, contracting_dims = [2] x [0] : (tensor<8x16x64xf32>, tensor<64x32xf32>) -> tensor<8x16x32xf32>
  return %2 : tensor<8x16x32xf32>
}
"""


def test_fsdp_tp_sp_is_2d_weights_with_sequence_parallel_data():
    """gpt_wide at a quarter of data parallel's peak: the planner returned FSDP (0.0377 s);
    Megatron + sequence parallel with the weights' free dim on "data" fits and takes 0.0171 s."""
    space = build_space(load_text(SEQ_MLP), "mesh", MESH)
    plans = {name: {i: str(s) for i, s in p.items()} for name, p in standard_plans(space).items()}
    assert plans["fsdp_tp_sp"][0] == plans["megatron_sp"][0] != plans["fsdp_tp"][0]
    assert plans["fsdp_tp_sp"][0] == '#sdy.sharding<@mesh, [{"data"}, {"model"}, {}]>'
    for w in (1, 2):
        assert plans["fsdp_tp_sp"][w] == plans["fsdp_tp"][w] != plans["megatron_sp"][w]


@pytest.mark.parametrize(
    ("text", "expected"),
    [("16GiB", 16 * 2**30), ("512MiB", 512 * 2**20), ("2.5GB", 2_500_000_000), ("1e9", 10**9)],
    ids=["GiB", "MiB", "GB", "plain"],
)
def test_parse_memory(text, expected):
    assert parse_memory(text) == expected


def test_bad_memory_and_mesh_are_input_errors():
    with pytest.raises(InputError, match="expected bytes like 16GiB"):
        parse_memory("lots")
    with pytest.raises(InputError, match="expected NAME=SIZE"):
        parse_mesh_spec("data:2")
    with pytest.raises(InputError, match="give the mesh to plan on"):
        shardwise.plan(MLP)


def test_candidates_evaluated_in_other_processes_give_the_same_plan():
    inline = shardwise.plan(MLP, mesh="data=2,model=4", memory=40_000, executor="inline")
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(2, mp_context=context) as pool:
        pooled = shardwise.plan(MLP, mesh="data=2,model=4", memory=40_000, executor=pool)
    assert pooled.text == inline.text
    assert pooled.summary == inline.summary


def test_plan_reports_and_explains_its_module():
    plan = shardwise.plan(MLP, mesh="data=2,model=4", memory=40_000)
    assert plan.summary["peak_memory_bytes_per_device"] <= 40_000
    assert plan.standard["data_parallel"] is None  # over the budget
    report = plan.report().to_json()
    assert report["summary"]["time_s"] == pytest.approx(plan.summary["time_s"])
    explanation = str(plan.explain("main:arg1"))
    assert explanation.startswith("main:arg1") and str(plan.args[1].sharding) in explanation
    assert str(plan).splitlines()[0].startswith(f"plan ({plan.name}): ")


def test_a_dask_executor_without_a_cluster_is_an_input_error():
    # Without the `dask` extra: how to install it; with it: the scheduler cannot be reached.
    with pytest.raises(InputError, match=r"dask://127\.0\.0\.1:9"):
        shardwise.plan(MLP, mesh="data=2,model=4", executor="dask://127.0.0.1:9")


def test_a_standard_plan_made_of_class_choices_is_a_choice():
    space = build_space(load_text(MLP), "mesh", MESH)
    megatron = standard_plans(space)["megatron"]
    choice = space.choice_of(megatron)
    assert choice is not None
    assert {i: str(s) for i, s in space.shardings(choice).items()} == {
        i: str(s) for i, s in megatron.items()
    }
    assert space.choice_of(standard_plans(space)["fsdp_tp"]) is None  # one dim per weight


def test_same_output_bytes_under_different_hash_seeds(tmp_path):
    import os
    import subprocess
    import sys

    path = tmp_path / "mlp.mlir"
    path.write_text(MLP)
    outs = []
    for seed in ("1", "2"):
        out = tmp_path / f"out{seed}.mlir"
        env = {**os.environ, "PYTHONHASHSEED": seed}
        argv = [sys.executable, "-m", "shardwise", "plan", str(path), "--mesh", "data=2,model=4"]
        done = subprocess.run([*argv, "--memory", "40000", "-o", str(out)], env=env, timeout=120)
        assert done.returncode == 0
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]


def test_a_key_prints_each_sharding_object_once(monkeypatch):
    """`_key`: the (argument, sharding text) pairs in argument order, the text printed once
    per sharding object (a stack's layers share a few), not once per argument."""
    from shardwise.plan import evaluate

    space = build_space(load_text(TWO_LAYERS), "mesh", MESH)
    model = space.groups[space.group_of_class()[2]].candidates.index(("model",))
    choice = tuple(model if g == space.group_of_class()[2] else 0 for g in range(len(space.groups)))
    shardings = space.shardings(choice)
    assert shardings is not None
    shuffled = {i: shardings[i] for i in (3, 0, 4, 1, 2)}
    printed = []

    def text(sharding):
        printed.append(sharding)
        return str(sharding)

    monkeypatch.setattr(evaluate, "_text", text)
    key = evaluate._key(shuffled)
    assert key == tuple((i, str(shardings[i])) for i in range(5))
    assert len(printed) == len({id(s) for s in shardings.values()}) == 3
