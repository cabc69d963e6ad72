"""`shardwise check` end to end: programs partitioned by the reference (Shardy in jaxlib) run
on simulated CPU devices and equal their unsharded program; broken ones are caught and the
first diverging op is named.

One XLA worker process serves every test (`executor` in conftest.py).
"""

from __future__ import annotations

import dataclasses
import functools

import pytest

from shardwise import cli, passes
from shardwise.check import check
from shardwise.check.cli import PARTITION_CHAIN
from shardwise.io.mlir import load_text, write_text
from shardwise.io.reference import run_pass

MESH_2X2 = 'sdy.mesh @mesh = <["x"=2, "y"=2]>\n'

PROGRAMS = {
    "elementwise": MESH_2X2
    + """
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>},
                %arg1: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<8x8xf32>
  %1 = stablehlo.exponential %0 : tensor<8x8xf32>
  %2 = stablehlo.multiply %1, %arg0 : tensor<8x8xf32>
  return %2 : tensor<8x8xf32>
}
""",
    "matmul": MESH_2X2
    + """
func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>},
                %arg1: tensor<16x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>})
    -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0]
      : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %1 = stablehlo.add %0, %0 : tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}
""",
    "all_gather": """sdy.mesh @mesh = <["x"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>})
    -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
  %0 = stablehlo.exponential %arg0 : tensor<8x8xf32>
  %1 = sdy.sharding_constraint %0 <@mesh, [{}, {}]> : tensor<8x8xf32>
  %2 = stablehlo.negate %1 : tensor<8x8xf32>
  return %2 : tensor<8x8xf32>
}
""",
    # all_slice (a dynamic_slice at offsets from partition_id), all_reduce, collective_permute,
    # all_to_all.
    "slice_permute_all_to_all": MESH_2X2
    + """
func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                %arg1: tensor<16x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>})
    -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {"x"}]>},
        tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0]
      : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %1 = stablehlo.exponential %0 : tensor<8x4xf32>
  %2 = stablehlo.negate %arg0 : tensor<8x16xf32>
  return %1, %2 : tensor<8x4xf32>, tensor<8x16xf32>
}
""",
    "reduce": MESH_2X2
    + """
func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>})
    -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) {
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [1]
      : (tensor<8x16xf32>, tensor<f32>) -> tensor<8xf32>
  %1 = stablehlo.sine %0 : tensor<8xf32>
  return %1 : tensor<8xf32>
}
""",
    # With `canonicalize` in the chain, all_reduce + all_slice fuse into a reduce_scatter.
    "reduce_scatter": MESH_2X2
    + """
func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>})
    -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}]>}) {
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [1]
      : (tensor<8x16xf32>, tensor<f32>) -> tensor<8xf32>
  %1 = stablehlo.sine %0 : tensor<8xf32>
  return %1 : tensor<8xf32>
}
""",
    # Sub-axes, and two axes on one dimension, on 8 devices; the replicated result is one
    # all_gather over all devices, reordered by reshape/transpose (so a wrong reading of the
    # sub-axes would show: elementwise ops alone commute with any permutation of devices).
    "sub_axes": """sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @main(
    %arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(1)2}, {"x":(2)2, "y"}]>},
    %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(1)2}, {"x":(2)2, "y"}]>})
    -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(1)2}, {"x":(2)2, "y"}]>},
        tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
  %0 = stablehlo.subtract %arg0, %arg1 : tensor<8x8xf32>
  %1 = stablehlo.tanh %0 : tensor<8x8xf32>
  return %1, %0 : tensor<8x8xf32>, tensor<8x8xf32>
}
""",
    "device_ids": """sdy.mesh @mesh = <["x"=2, "y"=2], device_ids=[3, 1, 2, 0]>
func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>},
                %arg1: tensor<16x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>})
    -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0]
      : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}
""",
    "ints_and_bools": MESH_2X2
    + """
func.func @main(%arg0: tensor<8x4xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                %arg1: tensor<8x4xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                %arg2: tensor<8x4xi1> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>})
    -> (tensor<8x4xi32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}, tensor<8x4xi1>) {
  %0 = stablehlo.multiply %arg0, %arg1 : tensor<8x4xi32>
  %1 = stablehlo.compare GT, %0, %arg1 : (tensor<8x4xi32>, tensor<8x4xi32>) -> tensor<8x4xi1>
  %2 = stablehlo.and %1, %arg2 : tensor<8x4xi1>
  %3 = stablehlo.select %2, %0, %arg1 : tensor<8x4xi1>, tensor<8x4xi32>
  return %3, %2 : tensor<8x4xi32>, tensor<8x4xi1>
}
""",
    # bf16 crosses the process boundary as its bits; a scalar gets a device dim of its own.
    "bf16_and_scalar": """sdy.mesh @mesh = <["x"=2]>
func.func @main(%arg0: tensor<8x4xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                %arg1: tensor<f32>) -> (tensor<8x4xbf16>, tensor<f32>) {
  %0 = stablehlo.exponential %arg0 : tensor<8x4xbf16>
  %1 = stablehlo.negate %arg1 : tensor<f32>
  return %0, %1 : tensor<8x4xbf16>, tensor<f32>
}
""",
}

# The collectives each reference partitioning contains (so the equal cases exercise them).
COLLECTIVES = {
    "elementwise": [],
    "matmul": ["all_reduce", "all_gather"],
    "all_gather": ["all_gather"],
    "slice_permute_all_to_all": ["all_reduce", "collective_permute", "all_to_all", "partition_id"],
    "reduce": ["all_reduce"],
    "reduce_scatter": ["reduce_scatter"],
    "sub_axes": ["all_gather", "transpose"],
    "device_ids": ["all_reduce", "all_gather"],
    "ints_and_bools": ["all_gather", "dynamic_slice"],
    "bf16_and_scalar": [],
}


@functools.cache
def local(name: str) -> str:
    """The per-device program the reference makes from PROGRAMS[name]."""
    chain = list(PARTITION_CHAIN)
    if name == "reduce_scatter":
        chain.insert(-1, "canonicalize")
    return run_pass(PROGRAMS[name], chain)


def run_check(executor, name: str, local_text: str | None = None, seed: int = 0):
    return check(
        PROGRAMS[name],
        local(name) if local_text is None else local_text,
        seed=seed,
        executor=executor,
        global_name="global.mlir",
        local_name="local.mlir",
    )


def line_of(text: str, needle: str) -> int:
    """1-based line of the first line containing `needle`."""
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def replace_once(text: str, old: str, new: str) -> str:
    assert old in text, f"{old!r} not in the reference's output"
    return text.replace(old, new, 1)


# -- the reference's partitionings compute what the global program does -----------------------


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_reference_partitioning_is_equal(executor, name):
    text = local(name)
    for collective in COLLECTIVES[name]:
        assert f"stablehlo.{collective}" in text
    result = run_check(executor, name)
    assert result.equal, str(result)
    assert result.divergence is None
    assert all(r.difference.mismatches == 0 for r in result.results)
    assert "EQUAL" in str(result)


def test_other_seeds_are_equal_too(executor):
    assert run_check(executor, "slice_permute_all_to_all", seed=123).equal


def test_modules_are_accepted_and_named_by_their_file(executor):
    glob = load_text(PROGRAMS["matmul"], "g.mlir")
    part = load_text(
        replace_once(local("matmul"), "[[0, 1], [2, 3]]", "[[0, 2], [1, 3]]"), "l.mlir"
    )
    result = check(glob, part, executor=executor)
    assert not result.equal and result.divergence is not None
    assert result.divergence.location.file == "l.mlir"
    assert str(result.divergence).startswith(f"l.mlir:{result.divergence.location.line}:")


def test_result_is_frozen(executor):
    result = run_check(executor, "elementwise")
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.seed = 1  # type: ignore[misc]


# -- broken partitionings are caught, and the first diverging op is named ----------------------


def _remove_first(text: str, op_name: str) -> str:
    module = load_text(text, "local.mlir")
    op = next(op for op in module.walk() if op.name == op_name)
    op.results[0].replace_all_uses_with(op.operands[0])
    op.erase()
    return write_text(module)


def test_removed_all_reduce_is_localized_to_the_dot(executor):
    text = _remove_first(local("matmul"), "stablehlo.all_reduce")
    result = run_check(executor, "matmul", text)
    assert not result.equal
    d = result.divergence
    assert d is not None and d.op_name == "stablehlo.dot_general"
    assert d.location.line == line_of(text, "stablehlo.dot_general")
    assert d.global_location is not None and d.global_location.line == line_of(
        PROGRAMS["matmul"], "stablehlo.dot_general"
    )
    assert d.compared_after == ()
    assert d.sharding == '#sdy.sharding<@mesh, [{"x"}, {}]>'


def test_permuted_replica_groups_are_localized_to_the_all_reduce(executor):
    text = replace_once(local("matmul"), "[[0, 1], [2, 3]]", "[[0, 2], [1, 3]]")
    result = run_check(executor, "matmul", text)
    assert not result.equal
    d = result.divergence
    assert d is not None and d.op_name == "stablehlo.dot_general"
    assert [n.name for n in d.compared_after] == ["stablehlo.all_reduce"]
    assert d.compared_after[0].location.line == line_of(text, "stablehlo.all_reduce")
    assert "[[0, 2], [1, 3]]" in d.compared_after[0].detail
    assert set(d.devices) == {0, 1, 2, 3}
    # The wrong groups also leave the replicated result inconsistent across devices.
    assert result.results[0].disagreeing_devices


def test_all_gather_on_the_wrong_dim_is_localized_to_its_user(executor):
    text = local("all_gather")
    text = replace_once(text, "all_gather_dim = 0", "all_gather_dim = 1")
    text = replace_once(
        text,
        "(tensor<4x8xf32>) -> tensor<8x8xf32>",
        "(tensor<4x8xf32>) -> tensor<4x16xf32>\n"
        "    %wrong = stablehlo.reshape %1 : (tensor<4x16xf32>) -> tensor<8x8xf32>",
    )
    text = replace_once(text, "stablehlo.negate %1", "stablehlo.negate %wrong")
    result = run_check(executor, "all_gather", text)
    assert not result.equal
    d = result.divergence
    assert d is not None and d.op_name == "stablehlo.negate"
    gathers = [n for n in d.inputs_via if n.name == "stablehlo.all_gather"]
    assert len(gathers) == 1 and "all_gather_dim=1" in gathers[0].detail
    assert gathers[0].location.line == line_of(text, "stablehlo.all_gather")


def test_wrong_slice_offsets_are_localized_to_the_dot(executor):
    text = replace_once(
        local("slice_permute_all_to_all"), "dense<[0, 8, 0, 8]>", "dense<[8, 0, 8, 0]>"
    )
    result = run_check(executor, "slice_permute_all_to_all", text)
    assert not result.equal
    assert result.results[1].equal  # the all_to_all result does not read the slice
    d = result.divergence
    assert d is not None and d.op_name == "stablehlo.dot_general"
    assert "stablehlo.dynamic_slice" in [n.name for n in d.inputs_via]
    tables = [n for n in d.inputs_via if n.name == "stablehlo.constant"]
    assert [n.detail for n in tables] == ["dense<[8, 0, 8, 0]>"]
    assert tables[0].location.line == line_of(text, "dense<[8, 0, 8, 0]>")


def test_wrong_collective_permute_is_localized_to_its_user(executor):
    text = replace_once(
        local("slice_permute_all_to_all"),
        "[[0, 0], [1, 2], [2, 1], [3, 3]]",
        "[[0, 0], [1, 1], [2, 2], [3, 3]]",
    )
    result = run_check(executor, "slice_permute_all_to_all", text)
    d = result.divergence
    assert not result.equal and d is not None
    assert d.op_name == "stablehlo.exponential"
    assert "stablehlo.collective_permute" in [n.name for n in d.inputs_via]
    assert f"local.mlir:{d.location.line}:" in str(result)


def test_wrong_reduce_scatter_is_localized_to_its_user(executor):
    # The reduce's own value is a partial sum until the reduce_scatter: not compared.
    text = replace_once(local("reduce_scatter"), "[[0, 1], [2, 3]]", "[[0, 2], [1, 3]]")
    result = run_check(executor, "reduce_scatter", text)
    d = result.divergence
    assert not result.equal and d is not None
    assert d.op_name == "stablehlo.sine"
    assert [n.name for n in d.inputs_via] == ["stablehlo.reduce_scatter"]


def test_wrong_compute_op_is_localized_to_itself(executor):
    text = replace_once(local("elementwise"), "stablehlo.exponential", "stablehlo.log_plus_one")
    result = run_check(executor, "elementwise", text)
    d = result.divergence
    assert not result.equal and d is not None
    assert d.op_name == "stablehlo.log_plus_one"
    assert d.location.line == line_of(text, "stablehlo.log_plus_one")


def test_wrong_integer_op_is_caught_exactly(executor):
    text = replace_once(local("ints_and_bools"), "stablehlo.compare GT", "stablehlo.compare GE")
    result = run_check(executor, "ints_and_bools", text)
    assert not result.equal
    assert result.divergence is not None and result.divergence.op_name == "stablehlo.compare"


# -- a mistake of the reference itself ------------------------------------------------------

# On this 4x2 mesh the reference's sdy-convert-global-to-local (jaxlib 0.10.2) lowers the
# reshard [{}, {"y"}] -> [{"y"}, {"x"}] (an all_slice on sub-axes of "x", then a
# collective_permute) so that devices 2-5 end up with the wrong tile. Offsets and pairs worked
# out by hand from Shardy's definition of sub-axes ("x":(1)2 is the major half of "x", as XLA
# reads it too) make the same program equal.
RESHARD_4X2 = """sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @main(%arg0: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>})
    -> (tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {"x"}]>}) {
  %0 = stablehlo.tanh %arg0 : tensor<16x16xf32>
  return %0 : tensor<16x16xf32>
}
"""
REFERENCE_PAIRS = "[[0, 0], [1, 2], [2, 4], [3, 6], [4, 1], [5, 3], [6, 5], [7, 7]]"
HAND_PAIRS = "[[0, 0], [2, 1], [4, 2], [6, 3], [1, 4], [3, 5], [5, 6], [7, 7]]"


def test_reference_reshard_on_sub_axes_is_caught(executor):
    text = run_pass(RESHARD_4X2, list(PARTITION_CHAIN))
    assert REFERENCE_PAIRS in text
    result = check(RESHARD_4X2, text, executor=executor)
    d = result.divergence
    assert not result.equal and d is not None
    assert d.op_name == "stablehlo.tanh" and d.devices == (2, 3, 4, 5)
    assert "stablehlo.collective_permute" in [n.name for n in d.inputs_via]
    fixed = replace_once(text, REFERENCE_PAIRS, HAND_PAIRS)
    fixed = replace_once(
        fixed, "dense<[0, 0, 0, 0, 8, 8, 8, 8]>", "dense<[0, 0, 8, 8, 0, 0, 8, 8]>"
    )
    fixed = replace_once(
        fixed, "dense<[0, 0, 4, 4, 0, 0, 4, 4]>", "dense<[0, 0, 0, 0, 4, 4, 4, 4]>"
    )
    assert check(RESHARD_4X2, fixed, executor=executor).equal


# The same mistake without any sub-axis in the program: {"x"} -> {"y"} on the 4x2 mesh goes
# through {"y", "x":(2)2}, and the reference's collective_permute swaps devices 1<->2, 5<->6
# where 1<->4, 3<->6 is needed (every device then gathers the wrong rows).
PERMUTE_4X2 = """sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @main(%arg0: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>})
    -> (tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}) {
  %0 = stablehlo.negate %arg0 : tensor<16x16xf32>
  return %0 : tensor<16x16xf32>
}
"""


def test_reference_permute_on_a_4x2_mesh_is_caught(executor):
    text = run_pass(PERMUTE_4X2, list(PARTITION_CHAIN))
    pairs = "[[0, 0], [1, 2], [2, 1], [3, 3], [4, 4], [5, 6], [6, 5], [7, 7]]"
    result = check(PERMUTE_4X2, text, executor=executor)
    assert not result.equal and result.results[0].differing_devices == tuple(range(8))
    d = result.divergence
    assert d is not None and d.op_name == "stablehlo.all_gather"  # feeds the return
    assert [n.name for n in d.inputs_via] == [
        "stablehlo.all_gather",
        "stablehlo.collective_permute",
    ]
    assert pairs in d.inputs_via[1].detail
    hand = "[[0, 0], [1, 4], [2, 2], [3, 6], [4, 1], [5, 5], [6, 3], [7, 7]]"
    assert check(PERMUTE_4X2, replace_once(text, pairs, hand), executor=executor).equal


# The all-slice mistake at its smallest: {"x"} -> {"x":(1)2} -> {"x"} on x=4 must give each
# device its own rows back. The reference gathers pairs [[0,1],[2,3]] and then slices at
# offsets [0,0,4,4]; a round trip needs [0,4,0,4]. No sub-axis at the program's boundary:
# the verdict does not depend on how the checker reads sub-axes.
ROUND_TRIP_X4 = """sdy.mesh @mesh = <["x"=4]>
func.func @main(%arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>})
    -> (tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
  %0 = sdy.sharding_constraint %arg0 <@mesh, [{"x":(1)2}, {}]> : tensor<16x8xf32>
  %1 = stablehlo.negate %0 : tensor<16x8xf32>
  return %1 : tensor<16x8xf32>
}
"""


def test_reference_all_slice_on_a_sub_axis_is_caught(executor):
    text = run_pass(ROUND_TRIP_X4, list(PARTITION_CHAIN))
    result = check(ROUND_TRIP_X4, text, executor=executor)
    d = result.divergence
    assert not result.equal and d is not None
    assert d.op_name == "stablehlo.negate" and d.devices == (1, 2)
    tables = [n.detail for n in d.inputs_via if n.name == "stablehlo.constant"]
    assert tables == ["dense<[0, 0, 4, 4]>"]
    fixed = replace_once(text, "dense<[0, 0, 4, 4]>", "dense<[0, 4, 0, 4]>")
    assert check(ROUND_TRIP_X4, fixed, executor=executor).equal


# -- the command line --------------------------------------------------------------------------


CUSTOM_CALL = """sdy.mesh @mesh = <["x"=2]>
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = stablehlo.custom_call @shardwise_no_such_target(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
"""


def _write(tmp_path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_cli_exit_codes(executor, tmp_path, capsys):
    glob = _write(tmp_path, "g.mlir", PROGRAMS["matmul"])
    good = _write(tmp_path, "good.mlir", local("matmul"))
    bad = _write(
        tmp_path, "bad.mlir", replace_once(local("matmul"), "[[0, 1], [2, 3]]", "[[0, 2], [1, 3]]")
    )
    assert cli.main(["check", glob, "--partitioned", good, "--seed", "3"]) == 0
    assert "EQUAL" in capsys.readouterr().out
    assert cli.main(["check", glob, "--partitioned", bad]) == 1
    out = capsys.readouterr().out
    assert "DIFFERENT" in out and f"{bad}:{line_of(local('matmul'), 'dot_general')}:" in out
    assert cli.main(["check", glob, "--partitioned", good, "--devices", "8"]) == 1
    assert "--devices 8" in capsys.readouterr().err


def test_cli_names_ops_xla_cpu_cannot_run(executor, tmp_path, capsys):
    glob = _write(tmp_path, "g.mlir", CUSTOM_CALL)
    assert cli.main(["check", glob, "--partitioned", glob]) == 2
    err = capsys.readouterr().err
    assert "cannot compile" in err
    assert "stablehlo.custom_call @shardwise_no_such_target" in err and "g.mlir:3:8" in err


INDIVISIBLE = """sdy.mesh @mesh = <["x"=4]>
func.func @main(%arg0: tensor<6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<6xf32> {
  return %arg0 : tensor<6xf32>
}
"""


def test_padding_is_not_modelled(tmp_path, capsys):
    glob = _write(tmp_path, "g.mlir", INDIVISIBLE)
    assert cli.main(["check", glob, "--partitioned", glob]) == 2
    assert "not divisible by its 4 shards" in capsys.readouterr().err


def test_mismatched_programs_are_an_input_error(tmp_path, capsys):
    glob = _write(tmp_path, "g.mlir", PROGRAMS["matmul"])
    other = _write(tmp_path, "l.mlir", local("reduce"))
    assert cli.main(["check", glob, "--partitioned", other]) == 1
    assert "must match" in capsys.readouterr().err


def test_cli_without_partitioned_uses_shardwise_partition(executor, tmp_path, capsys):
    glob = _write(tmp_path, "g.mlir", PROGRAMS["matmul"])
    status = cli.main(["check", glob])
    if "sdy-convert-global-to-local" in passes.pass_names():
        assert status == 0, capsys.readouterr()
    else:
        assert status == 1
        assert "partition pass is not available yet" in capsys.readouterr().err


def test_result_names_json_and_notebook_view(executor):
    """Results are named by the user's names (`jax.result_info`); the result object gives
    JSON and a notebook view (issue 23)."""
    import json as _json
    from pathlib import Path

    import shardwise

    data_dir = Path(__file__).resolve().parents[1] / "models" / "data"
    text = (data_dir / "mlp_train.mlir").read_text()
    result = shardwise.load(text).check(executor=executor)
    assert result.equal
    assert result.results[0].name == "result[0][0]"
    assert "result 0 result[0][0] (" in str(result)
    data = _json.loads(_json.dumps(result.to_json()))
    assert data["equal"] is True and data["results"][0]["name"] == "result[0][0]"
    assert result._repr_html_().startswith('<pre style="border-left:4px solid #1a7f37')
