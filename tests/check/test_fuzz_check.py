"""`shardwise fuzz --check` (fuzz/check_campaign.py) and what its first campaigns found.

- Offsets along a skewed sub-axis: jaxlib 0.10.2's global-to-local reads ``"x":(p)s`` as the
  digit ``(coord // p) % s``; Shardy's definition (and XLA's) is ``(coord // (|x|/(p*s))) % s``.
  The reference's own chain makes programs that XLA computes wrongly; `partition` now rejects
  them (`export/wrong_conversions.py`). A centred sub-axis, where both readings agree, still
  partitions and runs EQUAL.
- A reverse along a sharded dim: reversed in place on each device (fuzz findings 11-5-4,
  11-82-0); rejected too.
- A dynamic_update_slice into a sharded dim: each shard updated at the global indices
  (11-26-0); rejected.
- A slice whose operand is sharded on another mesh made padding raise a KeyError.
"""

from __future__ import annotations

import numpy as np
import pytest

from shardwise import cli
from shardwise.axis import AxisRef, SubAxisInfo
from shardwise.check import check
from shardwise.errors import ShardwiseError, UnsupportedError
from shardwise.export.wrong_conversions import skewed
from shardwise.fuzz.check_campaign import (
    OUTCOMES,
    _runnable_meshes,
    check_module,
    run_check_campaign,
)
from shardwise.fuzz.generator import generate_program
from shardwise.fuzz.program import print_program
from shardwise.io.mlir import load_text, write_text
from shardwise.io.reference import ReferenceError, run_pass
from shardwise.mesh import Mesh, MeshAxis
from shardwise.partition import partition, reference_chain

# Fuzz finding 7-1-3, shrunk: an all-slice along "x":(4)2 of x=8 (the minor bit).
ALL_SLICE_MINOR = """
module {
  sdy.mesh @mesh = <["x"=8]>
  func.func @main(%a0: tensor<4x16x8xf32>) -> (tensor<8x4x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {"x":(4)2, ?}]>}) {
    %v1 = stablehlo.transpose %a0, dims = [2, 0, 1] : (tensor<4x16x8xf32>) -> tensor<8x4x16xf32>
    return %v1 : tensor<8x4x16xf32>
  }
}
"""

# Fuzz finding 7-18-4, shrunk: an all-slice along "w":(1)2 of w=4 (the major half).
ALL_SLICE_MAJOR = """
module {
  sdy.mesh @mesh = <["w"=4]>
  func.func @main(%a1: tensor<16x4x16xf32>, %a2: tensor<f32>) -> (tensor<4xf32>) {
    %v0 = stablehlo.transpose %a1, dims = [0, 2, 1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"w":(1)2, ?}, {}, {?}]>]>} : (tensor<16x4x16xf32>) -> tensor<16x16x4xf32>
    %v2 = stablehlo.reduce(%v0 init: %a2) applies stablehlo.add across dimensions = [0, 1] : (tensor<16x16x4xf32>, tensor<f32>) -> tensor<4xf32>
    return %v2 : tensor<4xf32>
  }
}
"""

# The centred sub-axis "x":(2)2 of x=8: both readings agree.
ALL_SLICE_CENTRED = ALL_SLICE_MINOR.replace('"x":(4)2', '"x":(2)2')

# Fuzz finding 7-31-4, shrunk further: a slice of a value sharded on @mesh2 whose result is
# on @mesh (padding looked the operand's axis "y" up in @mesh).
SLICE_ACROSS_MESHES = """
module {
  sdy.mesh @mesh = <["z"=8]>
  sdy.mesh @mesh2 = <["y"=2]>
  func.func @main(%a: tensor<6x8xf32> {sdy.sharding = #sdy.sharding<@mesh2, [{"y"}, {}]>}) -> (tensor<2x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"z"}]>}) {
    %v = stablehlo.slice %a [0:6:3, 0:8:2] : (tensor<6x8xf32>) -> tensor<2x4xf32>
    return %v : tensor<2x4xf32>
  }
}
"""


# Fuzz finding 11-5-4, shrunk.
REVERSE_SHARDED = """
module {
  sdy.mesh @mesh = <["z"=2]>
  func.func @main(%a1: tensor<16x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"z"}, {}]>}) -> (tensor<16x2xf32>) {
    %v3 = stablehlo.reverse %a1, dims = [0, 1] : tensor<16x2xf32>
    return %v3 : tensor<16x2xf32>
  }
}
"""


# Fuzz finding 11-26-0, shrunk.
UPDATE_SHARDED = """
module {
  sdy.mesh @mesh = <["x"=2]>
  func.func @main(%a2: tensor<4x2xf32>, %a4: tensor<i32>, %a5: tensor<4x6xf32>) -> (tensor<4x6xf32>) {
    %v9 = stablehlo.dynamic_update_slice %a5, %a2, %a4, %a4 : (tensor<4x6xf32>, tensor<4x2xf32>, tensor<i32>, tensor<i32>) -> tensor<4x6xf32>
    %v10 = stablehlo.optimization_barrier {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"x", ?}]>]>} %v9 : tensor<4x6xf32>
    return %v10 : tensor<4x6xf32>
  }
}
"""


# Fuzz finding 13-36-20: the update sharded, the operand not.
UPDATE_FROM_SHARDS = """
module {
  sdy.mesh @mesh = <["w"=2]>
  func.func @main(%a0: tensor<8xf32>, %a2: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"w", ?}]>}) -> (tensor<8xf32>) {
    %v10 = stablehlo.constant dense<0> : tensor<i32>
    %v11 = stablehlo.dynamic_update_slice %a0, %a2, %v10 : (tensor<8xf32>, tensor<4xf32>, tensor<i32>) -> tensor<8xf32>
    return %v11 : tensor<8xf32>
  }
}
"""

# Fuzz finding 2020-313-0: a reshape that does not factor, its result sharded.
RESHAPE_UNFACTORED = """
module {
  sdy.mesh @mesh = <["z"=2]>
  func.func @main(%a0: tensor<3x32xf32>) -> (tensor<4x24xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"z"}]>}) {
    %v3 = stablehlo.reshape %a0 : (tensor<3x32xf32>) -> tensor<4x24xf32>
    return %v3 : tensor<4x24xf32>
  }
}
"""

# Fuzz finding 2021-365-7: a strided slice along a sharded dim.
STRIDED_SLICE = """
module {
  sdy.mesh @mesh = <["w"=2]>
  func.func @main(%a0: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"w", ?}, {}]>}) -> (tensor<2x2xf32>) {
    %v2 = stablehlo.slice %a0 [0:4:3, 0:4:2] : (tensor<4x8xf32>) -> tensor<2x2xf32>
    return %v2 : tensor<2x2xf32>
  }
}
"""

# Fuzz finding 2022-171-3: the operand on a mesh with device_ids, the result on an iota mesh.
TWO_DEVICE_ORDERS = """
module {
  sdy.mesh @mesh = <["x"=4], device_ids=[2, 3, 1, 0]>
  sdy.mesh @mesh2 = <["z"=4]>
  func.func @main(%a0: tensor<8x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {?}]>}) -> (tensor<8x2x1x32xf32> {sdy.sharding = #sdy.sharding<@mesh2, [{"z"}, {}, {}, {?}]>}) {
    %v0 = stablehlo.broadcast_in_dim %a0, dims = [0, 3] : (tensor<8x32xf32>) -> tensor<8x2x1x32xf32>
    return %v0 : tensor<8x2x1x32xf32>
  }
}
"""

# Fuzz finding 2022-297-5: a reduce over a dim sharded on @mesh2, its result on @mesh.
REDUCE_ACROSS_MESHES = """
module {
  sdy.mesh @mesh = <["y"=4]>
  sdy.mesh @mesh2 = <["w"=4]>
  func.func @main(%a2: tensor<8x16xf32>, %a4: tensor<4x16xf32> {sdy.sharding = #sdy.sharding<@mesh2, [{?}, {"w"}]>}) -> (tensor<12xf32>) {
    %v2 = stablehlo.concatenate %a2, %a4, dim = 0 : (tensor<8x16xf32>, tensor<4x16xf32>) -> tensor<12x16xf32>
    %v5 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %v6 = stablehlo.reduce(%v2 init: %v5) applies stablehlo.add across dimensions = [1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{?}]>]>} : (tensor<12x16xf32>, tensor<f32>) -> tensor<12xf32>
    return %v6 : tensor<12xf32>
  }
}
"""

# Fuzz finding 12-76-1, shrunk: an unreduced argument gets two all-reduces over "z".
UNREDUCED_TWICE = """
module {
  sdy.mesh @mesh = <["z"=4]>
  func.func @main(%a1: tensor<4x8x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {?}], unreduced={"z"}>}, %a2: tensor<4x4x2xf32>) -> (tensor<4x1xf32>) {
    %v0 = stablehlo.dot_general %a1, %a2, contracting_dims = [0, 2] x [1, 2] : (tensor<4x8x2xf32>, tensor<4x4x2xf32>) -> tensor<8x4xf32>
    %v4 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %v5 = stablehlo.reduce(%v0 init: %v4) applies stablehlo.add across dimensions = [0] : (tensor<8x4xf32>, tensor<f32>) -> tensor<4xf32>
    %v14 = stablehlo.reshape %v5 : (tensor<4xf32>) -> tensor<4x1xf32>
    return %v14 : tensor<4x1xf32>
  }
}
"""

# Fuzz finding 12-25-12: a reshard reading a barrier of an earlier reshard; converting both
# made ours erase a reshard that still had a use (AssertionError), where Shardy's rewriter has
# rewired it. Now the chain stops where the reference does, at the barrier.
RESHARD_THROUGH_BARRIER = """
module {
  sdy.mesh @mesh = <["y"=4]>
  func.func @main(%a6: tensor<4x8x2xf32>, %a7: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) -> (tensor<4x8x2xf32>) {
    %v12 = sdy.sharding_constraint %a6 <@mesh, [{}, {"y"}, {}]> : tensor<4x8x2xf32>
    %v14 = stablehlo.dot_general %v12, %a7, batching_dims = [0] x [0], contracting_dims = [] x [] : (tensor<4x8x2xf32>, tensor<4xf32>) -> tensor<4x8x2xf32>
    %v16 = sdy.propagation_barrier %v14 allowed_direction=BACKWARD : tensor<4x8x2xf32>
    %v17 = sdy.sharding_constraint %v16 <@mesh, [{"y", ?}, {}, {?}]> : tensor<4x8x2xf32>
    return %v17 : tensor<4x8x2xf32>
  }
}
"""


def _sub(name: str, pre: int, size: int) -> AxisRef:
    return AxisRef(name, SubAxisInfo(pre, size))


@pytest.mark.parametrize(
    ("axis_size", "pre", "size", "expected"),
    [(8, 4, 2, True), (8, 1, 2, True), (8, 2, 2, False), (4, 1, 2, True), (16, 2, 4, False)],
)
def test_skewed_sub_axes(axis_size, pre, size, expected) -> None:
    mesh = Mesh((MeshAxis("x", axis_size),))
    assert skewed(_sub("x", pre, size), mesh) is expected


# The default mode's fallback replicates the dim these ops work along, so it converts them
# right where the reference (and `--like-shardy`) cannot.
CONVERTED_RIGHT_BY_DEFAULT = {
    ALL_SLICE_MINOR,
    REVERSE_SHARDED,
    UPDATE_SHARDED,
    STRIDED_SLICE,
    UNREDUCED_TWICE,  # the second all-reduce is erased (`fallback._drop_repeated_sum`)
}
# What the default mode rejects instead: that program's sub-axis offsets are right there, but
# its reduce starts from an argument, not the identity, and the all-reduce adds it per device.
DEFAULT_MESSAGE = {ALL_SLICE_MAJOR: "not the identity of its reduction"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (ALL_SLICE_MINOR, "'sdy.all_slice'.*sub-axis"),
        (ALL_SLICE_MAJOR, "'sdy.all_slice'.*sub-axis"),
        (REVERSE_SHARDED, "'stablehlo.reverse' reverses dimension 0"),
        (UPDATE_SHARDED, "'stablehlo.dynamic_update_slice' updates 2 of the 6"),
        (UPDATE_FROM_SHARDS, "updates 4 of the 8 elements of dimension 0, which its update"),
        (RESHAPE_UNFACTORED, "'stablehlo.reshape' result dimension 0 is sharded on"),
        (STRIDED_SLICE, "'stablehlo.slice' takes elements at stride 3 along dimension 0"),
        (TWO_DEVICE_ORDERS, "'stablehlo.broadcast_in_dim' reads a value sharded on the mesh"),
        (REDUCE_ACROSS_MESHES, "'stablehlo.reduce' reads a value sharded on the mesh"),
        (UNREDUCED_TWICE, "'sdy.all_reduce' over \\['z'\\] sums a value"),
    ],
)
def test_reference_chain_is_wrong_and_partition_rejects_it(executor, text, message) -> None:
    """`--like-shardy` rejects the program the reference gets wrong; the default mode either
    converts it right (the fallback replicates the dim) or rejects it too, never wrong."""
    local = run_pass(text, reference_chain())
    assert not check(text, local, executor=executor).equal
    with pytest.raises(ShardwiseError, match="wrong program|" + message):
        partition(load_text(text, "f.mlir"), like_shardy=True)
    if text in CONVERTED_RIGHT_BY_DEFAULT:
        module = load_text(text, "f.mlir")
        partition(module)
        assert check(text, write_text(module), executor=executor).equal
        assert check_module(text).kind == "equal"
    else:
        with pytest.raises(ShardwiseError, match=DEFAULT_MESSAGE.get(text, message)):
            partition(load_text(text, "f.mlir"))
        assert check_module(text).kind == "skipped-by-partition"


def test_centred_sub_axis_still_partitions_and_checks_equal(executor) -> None:
    module = load_text(ALL_SLICE_CENTRED, "f.mlir")
    partition(module)
    assert check_module(ALL_SLICE_CENTRED).kind == "equal"


def test_slice_across_meshes_is_an_error_not_a_crash() -> None:
    with pytest.raises(ShardwiseError, match="cannot be padded without communication"):
        partition(load_text(SLICE_ACROSS_MESHES, "f.mlir"))


def test_campaign_counts_every_module(executor) -> None:
    report = run_check_campaign(7, 6)
    assert report.modules == 6 and sum(report.counts.values()) == 6
    assert set(report.counts) == set(OUTCOMES)
    assert report.counts["equal"] >= 1
    assert not report.failures, report.summary()


def test_cli_fuzz_check(executor, capsys) -> None:
    assert cli.main(["fuzz", "--check", "--seed", "3", "--count", "2"]) == 0
    out = capsys.readouterr().out
    assert "modules: 2" in out and "failure 0" in out


def test_cli_fuzz_check_only_one_key(executor, capsys) -> None:
    """``--only KEY`` checks the module a campaign generated as KEY and prints it."""
    keys = (f"3-0-{attempt}" for attempt in range(100))
    key = next(k for k in keys if _runnable_meshes(generate_program(k, conformance_extras=False)))
    assert cli.main(["fuzz", "--check", "--only", key]) == 0
    out = capsys.readouterr().out
    assert out.startswith("module {") and "modules: 1 " in out
    assert cli.main(["fuzz", "--check", "--only", "3-0"]) == 2
    assert "expected a key seed-index-attempt" in capsys.readouterr().err
    assert cli.main(["fuzz", "--only", key]) == 2


def test_reshard_through_a_barrier_stops_like_the_reference() -> None:
    from shardwise.partition import STEPS

    module = load_text(RESHARD_THROUGH_BARRIER, "-")
    with pytest.raises(ShardwiseError, match="'sdy.propagation_barrier'"):
        partition(module)
    local = run_pass(RESHARD_THROUGH_BARRIER, list(STEPS[:3]))
    from shardwise.export.explicit_reshards.insert_explicit_reshards import (
        insert_explicit_reshards,
    )
    from shardwise.export.reshard_to_collectives.conversion import reshard_to_collectives
    from shardwise.io.mlir import write_text
    from shardwise.propagation.propagation_pipeline import propagation_pipeline

    ours = load_text(RESHARD_THROUGH_BARRIER, "-")
    propagation_pipeline(ours)
    insert_explicit_reshards(ours, enable_full_version=True)
    reshard_to_collectives(ours)
    assert write_text(ours) == local


def test_unreduced_argument_is_split_into_partial_sums() -> None:
    # Every unreduced argument gets the double all-reduce above, so no partitioned program
    # runs one; the split itself: the pieces over "z" sum to the value.
    import numpy as np

    from shardwise.check.slicing import split
    from shardwise.syntax import parse_tensor_sharding

    mesh = Mesh((MeshAxis("x", 2), MeshAxis("z", 4)))
    sharding = parse_tensor_sharding('#sdy.sharding<@mesh, [{"x"}], unreduced={"z"}>')
    value = np.arange(8.0)
    pieces = split(value, sharding, mesh)
    assert pieces.shape == (8, 4)
    np.testing.assert_array_equal(pieces[0:4].sum(axis=0), value[:4])
    np.testing.assert_array_equal(pieces[4:8].sum(axis=0), value[4:])
    assert (pieces[1:4] == 0).all() and (pieces[0] == value[:4]).all()


def test_a_partitioned_program_that_does_not_verify_is_skipped_not_checked() -> None:
    # Fuzz module 2111-322-0: a dot_general reading values sharded on two meshes; the
    # reference's chain stops with "inferred shape ... is incompatible with return type",
    # ours writes the program and MLIR's verifier rejects it when it is written.
    text = print_program(generate_program("2111-322-0", conformance_extras=False))
    outcome = check_module(text)
    assert outcome.kind == "skipped-by-partition"
    assert "inferred shape '[3, 2, 12]' is incompatible" in outcome.reason


def test_a_dot_on_one_mesh_of_values_replicated_on_another_checks_equal() -> None:
    # Fuzz module 13-26-9: a dot on @mesh2 of a value replicated on @mesh. It was skipped
    # (the reference's explicit reshards find no common mesh, and the program did not
    # verify); a replicated value is whole on every device whatever its mesh, so the default
    # mode slices it on @mesh2 (`fallback._reshard_from_another_mesh`).
    text = print_program(generate_program("13-26-9", conformance_extras=False))
    assert check_module(text).kind == "equal"


def test_reshards_in_a_manual_body_are_dropped_for_xla(executor) -> None:
    # Fuzz module 13-58-35: an sdy.reshard in a manual computation's body made XLA's own
    # partitioning (the reference of such a program) fail with "unknown mesh: @mesh".
    from shardwise.check.xla_spmd import spmd_program
    from shardwise.fuzz.generator import generate_program
    from shardwise.fuzz.program import print_program

    text = print_program(generate_program("13-58-35", conformance_extras=False))
    assert "sdy.reshard" in text and "sdy.manual_computation" in text
    assert "sdy.reshard" not in spmd_program(text, "f.mlir").text
    assert check_module(text).kind == "equal"


def test_a_manual_result_not_replicated_as_declared_is_not_run() -> None:
    # Fuzz finding 2020-138-2, shrunk: out_shardings [{}] over the manual axis "w", but the
    # body returns its own shard (no collective): the program says nothing definite.
    text = """
module {
  sdy.mesh @mesh = <["w"=8]>
  func.func @main(%a0: tensor<32xf32>) -> (tensor<4xf32>) {
    %v2 = sdy.manual_computation(%a0) in_shardings=[<@mesh, [{"w"}]>] out_shardings=[<@mesh, [{}]>] manual_axes={"w"} (%m: tensor<4xf32>) {
      %n = stablehlo.abs %m : tensor<4xf32>
      sdy.return %n : tensor<4xf32>
    } : (tensor<32xf32>) -> tensor<4xf32>
    return %v2 : tensor<4xf32>
  }
}
"""
    outcome = check_module(text)
    assert outcome.kind == "cannot-run" and outcome.reason.startswith("ill-defined")


def test_xla_reference_takes_an_unreduced_argument_as_partial_values(executor) -> None:
    # Fuzz module 2021-4-5: a manual computation (so XLA's partitioning is the reference)
    # and an argument XLA shards {unreduced}: its devices hold partial values.
    from shardwise.fuzz.generator import generate_program
    from shardwise.fuzz.program import print_program

    text = print_program(generate_program("2021-4-5", conformance_extras=False))
    assert 'unreduced={"z"}' in text and "sdy.manual_computation" in text
    assert check_module(text).kind == "equal"


# A sum over a sharded dim starting from an argument: every device adds it once.
REDUCE_FROM_ARGUMENT = """sdy.mesh @mesh = <["x"=2]>
func.func @main(%a: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %i: tensor<f32>) -> tensor<4xf32> {
  %0 = stablehlo.reduce(%a init: %i) applies stablehlo.add across dimensions = [0] : (tensor<8x4xf32>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""


def test_reduce_from_a_non_identity_init_is_rejected_in_both_modes(executor) -> None:
    local = run_pass(REDUCE_FROM_ARGUMENT, reference_chain())
    assert not check(REDUCE_FROM_ARGUMENT, local, executor=executor).equal
    for like_shardy in (True, False):
        with pytest.raises(ShardwiseError, match="not the identity of its reduction"):
            partition(load_text(REDUCE_FROM_ARGUMENT, "f.mlir"), like_shardy=like_shardy)
    # From the identity it partitions and checks equal.
    zero = REDUCE_FROM_ARGUMENT.replace(
        "  %0 = stablehlo.reduce(%a init: %i)",
        "  %z = stablehlo.constant dense<0.000000e+00> : tensor<f32>\n"
        "  %0 = stablehlo.reduce(%a init: %z)",
    )
    module = load_text(zero, "f.mlir")
    partition(module)
    assert check(zero, write_text(module), executor=executor).equal


# Fuzz finding 2023-487-2: padding fills dim 1 (2 on 3 shards) with zeros, `exp` makes them
# ones, and a sum over that dim would add them; the padded elements are masked with the
# reduce's init before it (`padding_masks.py`).
PAD_THEN_EXP_THEN_SUM = """sdy.mesh @mesh = <["z"=3]>
func.func @main(%a0: tensor<4x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"z"}]>}) -> tensor<4xf32> {
  %0 = stablehlo.exponential %a0 : tensor<4x2xf32>
  %c = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %1 = stablehlo.reduce(%0 init: %c) applies stablehlo.add across dimensions = [1] : (tensor<4x2xf32>, tensor<f32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
"""


def test_sum_over_a_padded_dim_after_exp_checks_equal(executor) -> None:
    module = load_text(PAD_THEN_EXP_THEN_SUM, "f.mlir")
    partition(module)
    assert check(PAD_THEN_EXP_THEN_SUM, write_text(module), executor=executor).equal
    assert check_module(PAD_THEN_EXP_THEN_SUM).kind == "equal"


# Fuzz --check finding 2030-129-3: a reshape whose sharding does not divide (4 -> 2x2 on 8
# devices): padding both sides (8, 2x4) moves the elements; the reference's chain writes that
# program, ours rejects the reshape in both modes.
RESHAPE_PADDED = """sdy.mesh @mesh = <["y"=8]>
func.func @main(%a6: tensor<4xf32>, %a7: tensor<4xf32>) -> (tensor<2x2xf32>, tensor<4xf32>) {
  %v9 = sdy.sharding_constraint %a7 <@mesh, [{"y", ?}]> : tensor<4xf32>
  %v12 = stablehlo.add %v9, %a6 : tensor<4xf32>
  %v13 = stablehlo.reshape %a6 : (tensor<4xf32>) -> tensor<2x2xf32>
  return %v13, %v12 : tensor<2x2xf32>, tensor<4xf32>
}
"""


def test_reshape_of_padded_dims_is_rejected(executor) -> None:
    local = run_pass(RESHAPE_PADDED, reference_chain(pad=True))
    assert not check(RESHAPE_PADDED, local, executor=executor).equal
    for like_shardy in (True, False):
        with pytest.raises(ShardwiseError, match="padding both sides moves elements"):
            partition(load_text(RESHAPE_PADDED, "f.mlir"), like_shardy=like_shardy)
    assert check_module(RESHAPE_PADDED).kind == "skipped-by-partition"


def _partitioned(text: str, like_shardy: bool = False) -> str:
    module = load_text(text, "f.mlir")
    partition(module, like_shardy=like_shardy)
    return write_text(module)


# Fuzz --check finding 2030-436-2, shrunk (indices i64, so that the reference partitions it):
# dim 0 of the gather's operand (2 on 8 devices) is padded to 8; the gather clamps an index
# to 7 instead of 1 and reads padding. The default mode clamps to the unpadded bounds first.
GATHER_PADDED = """sdy.mesh @mesh = <["w"=8]>
func.func @main(%a0: tensor<2x8x3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"w", ?}, {?}, {}]>}, %a2: tensor<4x1xi64>) -> (tensor<4xf32>) {
  %v0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %v1 = stablehlo.reduce(%a0 init: %v0) applies stablehlo.add across dimensions = [1, 2] : (tensor<2x8x3xf32>, tensor<f32>) -> tensor<2xf32>
  %v5 = "stablehlo.gather"(%v1, %a2) <{dimension_numbers = #stablehlo.gather<offset_dims = [], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1>}> : (tensor<2xf32>, tensor<4x1xi64>) -> tensor<4xf32>
  return %v5 : tensor<4xf32>
}
"""

# Two padded dims indexed by one index vector (3x3 on 2x2: each padded to 4); the clamp's
# bound of each component is picked along the index vector dim.
GATHER_PADDED_2D = """sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%a: tensor<3x5xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}, %i: tensor<6x2xi64>) -> (tensor<6xf32>) {
  %0 = "stablehlo.gather"(%a, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [], collapsed_slice_dims = [0, 1], start_index_map = [1, 0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 1>}> : (tensor<3x5xf32>, tensor<6x2xi64>) -> tensor<6xf32>
  return %0 : tensor<6xf32>
}
"""

# Fuzz --check finding 2030-127-4, shrunk: a scatter into a padded dim (9 on 8 devices, each
# piece 2 of the padded 16). The local scatter's operand is a dynamic_slice of the replicated
# padded value and most devices' indices are out of their piece; XLA's CPU backend does not
# skip those windows then (StableHLO leaves it implementation-defined). The default mode
# gives each piece a spare window that out-of-piece indices point into.
SCATTER_PADDED = """sdy.mesh @mesh = <["y"=8]>
func.func @main(%a4: tensor<9xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}]>}, %a5: tensor<1x1xi32>, %a6: tensor<1xf32>) -> (tensor<9xf32>) {
  %v11 = "stablehlo.scatter"(%a4, %a5, %a6) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%lhs: tensor<f32>, %rhs: tensor<f32>):
    %sum = stablehlo.add %lhs, %rhs : tensor<f32>
    stablehlo.return %sum : tensor<f32>
  }) : (tensor<9xf32>, tensor<1x1xi32>, tensor<1xf32>) -> tensor<9xf32>
  return %v11 : tensor<9xf32>
}
"""


@pytest.mark.parametrize("text", [GATHER_PADDED, SCATTER_PADDED], ids=["gather", "scatter"])
def test_indexing_a_padded_dim_checks_equal(executor, text) -> None:
    """The reference's program is wrong, `--like-shardy` prints it byte for byte (documented
    in docs/fuzzing.md), the default mode's program checks equal."""
    local = run_pass(text, reference_chain(pad=True))
    assert not check(text, local, executor=executor).equal
    assert _partitioned(text, like_shardy=True) == local
    assert check(text, _partitioned(text), executor=executor).equal
    assert check_module(text).kind == "equal"


def test_gather_of_two_padded_dims_clamps_each_component(executor) -> None:
    for seed in range(3):
        assert check(GATHER_PADDED_2D, _partitioned(GATHER_PADDED_2D), seed=seed).equal


# Fuzz --check finding 2030-258-2 (in a loop body), shrunk further: a reshard from
# "z":(2)3 (the minor 3 of z=6) on dim 1 to "z":(1)3 (the major 3) on dim 2. Reshard-to-
# collectives slices dim 2 first, through a sharding with both sub-axes, whose tiles are no
# partition (the reference's verifier rejects it); the default mode gathers dim 1 first.
RESHARD_CLASHING_SUB_AXES = """sdy.mesh @mesh = <["z"=6]>
func.func @main(%a: tensor<4x6x12xf32>) -> tensor<4x6x12xf32> {
  %0 = stablehlo.negate %a {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"z":(2)3}, {}]>]>} : tensor<4x6x12xf32>
  %1 = sdy.sharding_constraint %0 <@mesh, [{}, {}, {"z":(1)3}]> : tensor<4x6x12xf32>
  %2 = stablehlo.negate %1 : tensor<4x6x12xf32>
  return %2 : tensor<4x6x12xf32>
}
"""


def test_reshard_between_sub_axes_that_cannot_coexist_gathers_first(executor) -> None:
    with pytest.raises(ReferenceError, match="overlapping sub-axes"):
        run_pass(RESHARD_CLASHING_SUB_AXES, reference_chain())
    local = _partitioned(RESHARD_CLASHING_SUB_AXES)
    # dim 1 gathered before dim 2 is sliced by "z":(1)3 (offsets 0, 0, 4, 4, 8, 8)
    assert local.index("all_gather_dim = 1") < local.index("dense<[0, 0, 4, 4, 8, 8]>")
    assert check(RESHARD_CLASHING_SUB_AXES, local, executor=executor).equal
    assert check_module(RESHARD_CLASHING_SUB_AXES).kind == "equal"


# Fuzz --check finding 2030-397-5, shrunk: a pad of dim 0 by low -1, high 1 keeps its size,
# so its rule (Shardy's) lets the sharded dim pass through, and each device shifted its own
# shard; the default mode replicates every dim a pad pads (`fallback._padded_factors`).
PAD_SHIFT = """sdy.mesh @mesh = <["y"=4]>
func.func @main(%a7: tensor<11xf32>, %a11: tensor<8x8xf32>, %a12: tensor<f32>) -> (tensor<8xf32>) {
  %v9 = stablehlo.transpose %a11, dims = [1, 0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y"}, {?}]>]>} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %v12 = stablehlo.pad %v9, %a12, low = [-1, 0], high = [1, 3], interior = [0, 0] : (tensor<8x8xf32>, tensor<f32>) -> tensor<8x11xf32>
  %v14 = stablehlo.dot_general %v12, %a7, contracting_dims = [1] x [0] : (tensor<8x11xf32>, tensor<11xf32>) -> tensor<8xf32>
  return %v14 : tensor<8xf32>
}
"""


def test_pad_that_keeps_a_sharded_dim_size_is_replicated(executor) -> None:
    local = run_pass(PAD_SHIFT, reference_chain())
    assert not check(PAD_SHIFT, local, executor=executor).equal
    with pytest.raises(ShardwiseError, match="'stablehlo.pad' pads dimension 0"):
        partition(load_text(PAD_SHIFT, "f.mlir"), like_shardy=True)
    assert check(PAD_SHIFT, _partitioned(PAD_SHIFT), executor=executor).equal
    assert check_module(PAD_SHIFT).kind == "equal"


# A result with unreduced axes: each device returns its partial sums of the dot (the local
# program written by hand: partition's chain does not convert sdy.replicated_to_unreduced).
UNREDUCED_RESULT = """sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%a: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {"x"}]>}, %b: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}], unreduced={"x"}>}) {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
"""
UNREDUCED_RESULT_LOCAL = """sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%a: tensor<2x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {"x"}]>}, %b: tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<2x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}], unreduced={"x"}>}) {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
"""
# The same, all-reduced over "x" (device id 2x + y) before returning: summed twice.
SUMMED_TWICE_LOCAL = UNREDUCED_RESULT_LOCAL.replace(
    "  return %0 : tensor<2x4xf32>",
    """  %1 = "stablehlo.all_reduce"(%0) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 2], [1, 3]]> : tensor<2x2xi64>, use_global_device_ids}> ({
  ^bb0(%l: tensor<f32>, %r: tensor<f32>):
    %s = stablehlo.add %l, %r : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  return %1 : tensor<2x4xf32>""",
)


def test_a_result_with_unreduced_axes_is_summed(executor) -> None:
    assert check(UNREDUCED_RESULT, UNREDUCED_RESULT_LOCAL, executor=executor).equal
    assert not check(UNREDUCED_RESULT, SUMMED_TWICE_LOCAL, executor=executor).equal


@pytest.mark.parametrize("key", ["2040-3-3", "2040-4-3", "2040-11-1"])
def test_check_campaigns_generate_well_defined_manual_computations(key) -> None:
    """These keys made a manual result replicated over an axis its body splits (cannot-run in
    the campaign of seed 2040); generated for --check, each result is sharded over them."""
    from shardwise.fuzz.check_campaign import _unreplicated_manual_result

    def ill_defined(well_defined: bool) -> str:
        prog = generate_program(key, conformance_extras=False, well_defined_manual=well_defined)
        return _unreplicated_manual_result(load_text(print_program(prog), "f.mlir"))

    assert ill_defined(False).startswith("ill-defined")
    assert ill_defined(True) == ""


# From fuzz --check 2030-127-4 and 2030-436-2: reshapes whose padded dim is one they keep
# (the last dim of 16x16x4 -> 256x4, and 9 -> 9x1), on 8 devices; padding moves no element
# there, so they partition (a reshape that merges a padded dim is still rejected above).
RESHAPE_KEEPS_PADDED_DIM = """sdy.mesh @mesh = <["w"=8]>
func.func @main(%a: tensor<16x16x4xf32>, %b: tensor<9xf32>) -> (tensor<256x4xf32>, tensor<9x1xf32>) {
  %0 = sdy.sharding_constraint %a <@mesh, [{}, {}, {"w"}]> : tensor<16x16x4xf32>
  %1 = stablehlo.exponential %0 : tensor<16x16x4xf32>
  %2 = stablehlo.reshape %1 : (tensor<16x16x4xf32>) -> tensor<256x4xf32>
  %3 = sdy.sharding_constraint %2 <@mesh, [{}, {}]> : tensor<256x4xf32>
  %4 = sdy.sharding_constraint %b <@mesh, [{"w"}]> : tensor<9xf32>
  %5 = stablehlo.exponential %4 : tensor<9xf32>
  %6 = stablehlo.reshape %5 : (tensor<9xf32>) -> tensor<9x1xf32>
  %7 = sdy.sharding_constraint %6 <@mesh, [{}, {}]> : tensor<9x1xf32>
  return %3, %7 : tensor<256x4xf32>, tensor<9x1xf32>
}
"""


def test_reshape_keeping_its_padded_dim_partitions(executor) -> None:
    local = _partitioned(RESHAPE_KEEPS_PADDED_DIM)
    assert "(tensor<16x16x1xf32>) -> tensor<256x1xf32>" in local
    assert check(RESHAPE_KEEPS_PADDED_DIM, local, executor=executor).equal
    assert check_module(RESHAPE_KEEPS_PADDED_DIM).kind == "equal"


@pytest.mark.parametrize(
    ("source", "target", "groups"),
    [
        ((9,), (9, 1), [([0], [0]), ([], [1])]),
        ((16, 16, 4), (256, 4), [([0, 1], [0]), ([2], [1])]),
        ((4,), (2, 2), [([0], [0, 1])]),
        ((1, 4), (4,), [([0, 1], [0])]),
        ((2, 3), (3, 2), [([0, 1], [0, 1])]),
        ((4,), (3,), None),
    ],
)
def test_reshape_groups(source, target, groups) -> None:
    from shardwise.partition import _reshape_groups

    assert _reshape_groups(source, target) == groups


# Fuzz --check finding 2041-136-23: a replicated argument returned as a result unreduced over
# "z":(2)2; every device returned it whole, so their sum over the axis doubled it (the
# reference's program too). The default mode inserts an sdy.replicated_to_unreduced and
# converts it: one device of each pair keeps the value, the other returns zeros.
RETURNED_AS_UNREDUCED = """sdy.mesh @mesh = <["z"=4]>
func.func @main(%a1: tensor<6xf32>) -> (tensor<6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}], unreduced={"z":(2)2}>}) {
  return %a1 : tensor<6xf32>
}
"""


def test_a_replicated_value_returned_as_unreduced_is_zeroed_off_the_leaders(executor) -> None:
    local = run_pass(RETURNED_AS_UNREDUCED, reference_chain())
    assert not check(RETURNED_AS_UNREDUCED, local, executor=executor).equal
    assert _partitioned(RETURNED_AS_UNREDUCED, like_shardy=True) == local
    ours = _partitioned(RETURNED_AS_UNREDUCED)
    assert "dense<[true, false, true, false]>" in ours  # z % 2 == 0 keeps it
    assert check(RETURNED_AS_UNREDUCED, ours, executor=executor).equal
    # An op that adds unreduced axes: explicit reshards insert the op, converted the same way.
    assert check(UNREDUCED_RESULT, _partitioned(UNREDUCED_RESULT), executor=executor).equal


# Fuzz --check finding 2048-23-9: a replicated argument with no sharding resharded to unreduced
# over "y":(2)2, returned unreduced over all of "y". Explicit reshards make the return's
# replicated-to-unreduced over "y":(1)2 but leave the reshard, which reshard-to-collectives
# drops: only the major half was zeroed, and the sum over "y" doubled the value (the
# reference's chain stops on the op it made, whose operand has no sharding). The default mode
# makes the reshard a replicated-to-unreduced too: only device 0 keeps the value.
RESHARDED_TO_UNREDUCED = """sdy.mesh @mesh = <["y"=4]>
func.func @main(%a4: tensor<f32>) -> (tensor<f32> {sdy.sharding = #sdy.sharding<@mesh, [], unreduced={"y"}>}) {
  %v6 = sdy.reshard %a4 <@mesh, [], unreduced={"y":(2)2}> : tensor<f32>
  return %v6 : tensor<f32>
}
"""

# The same with a sharded dim, where the reference's chain runs and gets it wrong.
RESHARDED_TO_SHARDED_AND_UNREDUCED = """sdy.mesh @mesh = <["y"=4]>
func.func @main(%a: tensor<6xf32>) -> (tensor<6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y":(1)2}], unreduced={"y":(2)2}>}) {
  %0 = sdy.reshard %a <@mesh, [{"y":(1)2}], unreduced={"y":(2)2}> : tensor<6xf32>
  return %0 : tensor<6xf32>
}
"""


def test_a_reshard_of_a_replicated_value_to_unreduced_zeroes_it_off_the_leaders(executor) -> None:
    ours = _partitioned(RESHARDED_TO_UNREDUCED)
    assert "dense<[true, false, true, false]>" in ours  # "y":(2)2, the minor bit
    assert "dense<[true, true, false, false]>" in ours  # "y":(1)2, the major bit
    assert check(RESHARDED_TO_UNREDUCED, ours, executor=executor).equal
    local = run_pass(RESHARDED_TO_SHARDED_AND_UNREDUCED, reference_chain())
    assert not check(RESHARDED_TO_SHARDED_AND_UNREDUCED, local, executor=executor).equal
    ours = _partitioned(RESHARDED_TO_SHARDED_AND_UNREDUCED)
    assert check(RESHARDED_TO_SHARDED_AND_UNREDUCED, ours, executor=executor).equal


# An unreduced argument resharded to replicated (JAX's `reshard(x, P())` of a partial sum):
# jaxlib 0.10.2's explicit reshards insert two all-reduces over "y" before the reshard, and
# the second sums the sum again (4 times the value). `--like-shardy` rejects it; the default
# mode erases the second.
UNREDUCED_RESHARDED_TO_REPLICATED = """sdy.mesh @mesh = <["y"=4]>
func.func @main(%a: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}], unreduced={"y"}>}) -> (tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) {
  %0 = sdy.reshard %a <@mesh, [{}]> : tensor<4xf32>
  %1 = stablehlo.multiply %0, %0 : tensor<4xf32>
  return %1 : tensor<4xf32>
}
"""


def test_an_unreduced_value_resharded_to_replicated_is_summed_once(executor) -> None:
    text = UNREDUCED_RESHARDED_TO_REPLICATED
    local = run_pass(text, reference_chain())
    assert local.count("stablehlo.all_reduce") == 2
    assert not check(text, local, executor=executor).equal
    with pytest.raises(ShardwiseError, match="already summed"):
        _partitioned(text, like_shardy=True)
    ours = _partitioned(text)
    assert ours.count("stablehlo.all_reduce") == 1
    assert check(text, ours, executor=executor).equal


# Fuzz --check finding 2049-46-7: a sum of 4,096 terms to a scalar (see
# test_values.py::test_a_cancelling_sum_of_many_terms_is_held_to_their_count_not_its_value);
# the unused arguments draw the inputs that made the unsharded run's own error lucky.
SUM_OF_MANY_TERMS = """sdy.mesh @mesh = <["y"=4]>
func.func @main(%a0: tensor<3x8x2x2xf32>, %a1: tensor<8xf32>, %a2: tensor<12x8x6xf32>, %a3: tensor<4xf32>, %a4: tensor<1x1xi32>, %a5: tensor<1x4xf32>, %a6: tensor<1x8x32x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y", ?}, {?}, {}]>}) -> (tensor<f32>) {
  %v5 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %v6 = stablehlo.reduce(%a6 init: %v5) applies stablehlo.add across dimensions = [0, 1, 2, 3] : (tensor<1x8x32x16xf32>, tensor<f32>) -> tensor<f32>
  return %v6 : tensor<f32>
}
"""


def test_a_partitioned_sum_of_many_terms_checks_equal(executor) -> None:
    from shardwise.check.programs import fan_in

    assert fan_in(load_text(SUM_OF_MANY_TERMS, "f.mlir")) == 4096
    result = check(SUM_OF_MANY_TERMS, _partitioned(SUM_OF_MANY_TERMS), executor=executor)
    assert result.equal, result


# Fuzz --check finding 2050-225-16: a dynamic_update_slice of replicated operands annotated
# unreduced over "w" (3 devices), returned replicated. Every device computed the whole value
# and explicit reshards' all-reduce summed three of them (their second all-reduce nine). The
# default mode makes such a result replicated and partial after the op.
WHOLE_RESULT_ANNOTATED_UNREDUCED = """sdy.mesh @mesh = <["w"=3]>
func.func @main(%a1: tensor<1xf32>, %a4: tensor<i32>) -> (tensor<1xf32>) {
  %v10 = stablehlo.dynamic_update_slice %a1, %a1, %a4 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{?}], unreduced={"w"}>]>} : (tensor<1xf32>, tensor<1xf32>, tensor<i32>) -> tensor<1xf32>
  return %v10 : tensor<1xf32>
}
"""


def test_a_whole_result_annotated_unreduced_is_summed_once(executor) -> None:
    text = WHOLE_RESULT_ANNOTATED_UNREDUCED
    ours = _partitioned(text)
    assert "sdy.replicated_to_unreduced" not in ours and "dense<[true, false, false]>" in ours
    assert check(text, ours, executor=executor).equal


# Fuzz --check finding 2051-394-7, shrunk: the same for a pad (an op that moves elements),
# whose operands and result had no sharded dim: the fallback skipped the op before the
# unreduced result was looked at, and 4 whole values were summed.
WHOLE_PAD_ANNOTATED_UNREDUCED = """sdy.mesh @mesh = <["x"=8]>
func.func @main(%a: tensor<4x8xf32>, %p: tensor<f32>) -> tensor<6x8xf32> {
  %v = stablehlo.pad %a, %p, low = [2, 0], high = [0, 0], interior = [0, 0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {?}], unreduced={"x":(1)4}>]>} : (tensor<4x8xf32>, tensor<f32>) -> tensor<6x8xf32>
  return %v : tensor<6x8xf32>
}
"""


def test_a_whole_pad_annotated_unreduced_is_summed_once(executor) -> None:
    text = WHOLE_PAD_ANNOTATED_UNREDUCED
    assert check(text, _partitioned(text), executor=executor).equal


# Fuzz --check findings 2053-163-4 and 2053-52-11, in one: a result sharded on one part of an
# axis and unreduced over the other. The operand resharded to its dims has that axis's
# name, so the unreduced part passed for one the operand had, and two whole values were
# summed. Parts are compared now, not names.
WHOLE_RESULT_UNREDUCED_OVER_ANOTHER_PART = """sdy.mesh @mesh = <["y"=4]>
func.func @main(%a: tensor<8x6xf32>) -> tensor<8x6xf32> {
  %v = stablehlo.negate %a {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y":(1)2}, {}], unreduced={"y":(2)2}>]>} : tensor<8x6xf32>
  return %v : tensor<8x6xf32>
}
"""


def test_a_result_unreduced_over_another_part_of_an_axis_is_summed_once(executor) -> None:
    text = WHOLE_RESULT_UNREDUCED_OVER_ANOTHER_PART
    assert check(text, _partitioned(text), executor=executor).equal


# Fuzz --check finding 2054-151-5, shrunk: the same for a reduce (an op with a reducer region)
# of a replicated value, constrained unreduced: four whole sums were summed.
WHOLE_SUM_ANNOTATED_UNREDUCED = """sdy.mesh @mesh = <["z"=4]>
func.func @main(%a: tensor<6xf32>) -> tensor<f32> {
  %z = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %s = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [0] : (tensor<6xf32>, tensor<f32>) -> tensor<f32>
  %u = sdy.sharding_constraint %s <@mesh, [], unreduced={"z"}> : tensor<f32>
  return %u : tensor<f32>
}
"""


def test_a_whole_sum_annotated_unreduced_is_summed_once(executor) -> None:
    text = WHOLE_SUM_ANNOTATED_UNREDUCED
    assert check(text, _partitioned(text), executor=executor).equal


# Fuzz --check finding 2042-8-15: a pad with a negative low edge along a sharded dim, and a
# manual computation whose result nothing uses. The manual computation made XLA's own
# partitioning the reference, and XLA's partitioner gets that pad wrong (with --against xla:
# DIFFERENT from the unsharded run, where ours is EQUAL). Dead computations are erased now.
DEAD_MANUAL_COMPUTATION = """sdy.mesh @mesh = <["x"=4, "z"=2]>
func.func @main(%a2: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, %a6: tensor<8xf32>, %a7: tensor<f32>) -> (tensor<5x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {"z", ?}]>}) {
  %v12 = stablehlo.pad %a2, %a7, low = [0, -1], high = [1, 1], interior = [0, 0] : (tensor<4x8xf32>, tensor<f32>) -> tensor<5x8xf32>
  %v18 = sdy.manual_computation(%a6, %a2) in_shardings=[<@mesh, [{"x"}]>, <@mesh, [{"x", "z"}, {}]>] out_shardings=[<@mesh, [{"x"}]>] manual_axes={"x"} (%m18_a0: tensor<2xf32>, %m18_a1: tensor<1x8xf32>) {
    sdy.return %m18_a0 : tensor<2xf32>
  } : (tensor<8xf32>, tensor<4x8xf32>) -> tensor<8xf32>
  return %v12 : tensor<5x8xf32>
}
"""


def test_a_dead_manual_computation_needs_no_xla_reference(executor) -> None:
    local = _partitioned(DEAD_MANUAL_COMPUTATION)
    result = check(DEAD_MANUAL_COMPUTATION, local, executor=executor, against_xla=True)
    assert result.reference == "unsharded" and result.equal
    assert result.xla_equal is False  # XLA's own partitioning of the pad
    assert check_module(DEAD_MANUAL_COMPUTATION).kind == "equal"


# Fuzz --check findings 2043-472-8 and 2043-483-5: a `case` whose index is an argument with
# unreduced axes (each device holds a partial sum of it). Nothing all-reduced the index, and
# each device took the branch of its own partial value (the reference's chain too); the
# default mode all-reduces the index first.
CASE_ON_UNREDUCED_INDEX = """sdy.mesh @mesh = <["z"=2, "x"=2]>
func.func @main(%i: tensor<i32> {sdy.sharding = #sdy.sharding<@mesh, [], unreduced={"z"}>},
                %a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<8xf32> {
  %0 = "stablehlo.case"(%i) ({
    %1 = stablehlo.negate %a : tensor<8xf32>
    stablehlo.return %1 : tensor<8xf32>
  }, {
    %2 = stablehlo.abs %a : tensor<8xf32>
    stablehlo.return %2 : tensor<8xf32>
  }, {
    %3 = stablehlo.exponential %a : tensor<8xf32>
    stablehlo.return %3 : tensor<8xf32>
  }) : (tensor<i32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
"""


def test_case_on_an_unreduced_index_all_reduces_it_first(executor) -> None:
    wrong = _partitioned(CASE_ON_UNREDUCED_INDEX, like_shardy=True)
    assert "stablehlo.all_reduce" not in wrong
    result = check(CASE_ON_UNREDUCED_INDEX, wrong, executor=executor)
    assert not result.equal
    local = _partitioned(CASE_ON_UNREDUCED_INDEX)
    assert local.count("stablehlo.all_reduce") == 1
    assert check(CASE_ON_UNREDUCED_INDEX, local, executor=executor).equal


# Fuzz --check finding 2043-476-10: a broadcast_in_dim whose operand is sharded along the
# size-1 dim it expands (propagated from the dot's operand). Padded to 8 on 8 devices, that
# dim no longer expands (it maps one to one) and 7 devices broadcast padding; the default mode
# replicates the dim first.
BROADCAST_OF_SHARDED_UNIT_DIM = """sdy.mesh @mesh = <["w"=2, "z"=4]>
func.func @main(%a1: tensor<3x16xf32>, %a4: tensor<1x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"z", "w"}, {?}]>}) -> (tensor<3x8xf32>) {
  %v4 = stablehlo.dot_general %a1, %a4, contracting_dims = [1] x [1] : (tensor<3x16xf32>, tensor<1x16xf32>) -> tensor<3x1xf32>
  %v6 = stablehlo.broadcast_in_dim %v4, dims = [0, 1] : (tensor<3x1xf32>) -> tensor<3x8xf32>
  return %v6 : tensor<3x8xf32>
}
"""


def test_broadcast_expanding_a_sharded_unit_dim_replicates_it_first(executor) -> None:
    local = _partitioned(BROADCAST_OF_SHARDED_UNIT_DIM)
    assert check(BROADCAST_OF_SHARDED_UNIT_DIM, local, executor=executor).equal
    assert check_module(BROADCAST_OF_SHARDED_UNIT_DIM).kind == "equal"


# Fuzz --check finding 2044-137-18: a scatter whose updates are sharded on one mesh and whose
# indices are replicated on another. The reference's explicit reshards find no common mesh and
# leave the op as it is (each device scatters its piece of the updates into the whole
# operand); a replicated value is the same on every device whatever its mesh, so the default
# mode reshards the op on the mesh of its sharded tensors.
SCATTER_ACROSS_MESHES = """sdy.mesh @mesh = <["y"=3, "x"=2]>
sdy.mesh @mesh2 = <["w"=1, "z"=6]>
func.func @main(%a2: tensor<4x12x8xf32>, %a3: tensor<4x1xi32> {sdy.sharding = #sdy.sharding<@mesh2, [{}, {?}]>}, %a4: tensor<4x12x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}, {}]>}) -> (tensor<4x12x8xf32>) {
  %v4 = "stablehlo.scatter"(%a2, %a3, %a4) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1, 2], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%lhs: tensor<f32>, %rhs: tensor<f32>):
    %sum = stablehlo.add %lhs, %rhs : tensor<f32>
    stablehlo.return %sum : tensor<f32>
  }) : (tensor<4x12x8xf32>, tensor<4x1xi32>, tensor<4x12x8xf32>) -> tensor<4x12x8xf32>
  return %v4 : tensor<4x12x8xf32>
}
"""


def test_replicated_operand_on_another_mesh_does_not_stop_the_reshards(executor) -> None:
    wrong = _partitioned(SCATTER_ACROSS_MESHES, like_shardy=True)
    assert wrong == run_pass(SCATTER_ACROSS_MESHES, reference_chain())
    assert "stablehlo.all_gather" not in wrong
    assert not check(SCATTER_ACROSS_MESHES, wrong, executor=executor).equal
    local = _partitioned(SCATTER_ACROSS_MESHES)
    assert local.count("stablehlo.all_gather") == 1
    assert check(SCATTER_ACROSS_MESHES, local, executor=executor).equal


# Fuzz --check finding 2043-366-3: a manual computation whose results only a dead reshape
# reads is dead too (it made XLA's partitioning the reference, which returns the replicated
# sum declared `unreduced={"y"}` whole on both devices: twice the value once summed).
DEAD_THROUGH_A_RESHAPE = """sdy.mesh @mesh = <["y"=2]>
func.func @main(%a0: tensor<4x8xf32>, %a6: tensor<4x1x1xf32>) -> (tensor<f32> {sdy.sharding = #sdy.sharding<@mesh, [], unreduced={"y"}>}) {
  %v1:2 = sdy.manual_computation(%a0) in_shardings=[<@mesh, [{"y"}, {}]>] out_shardings=[<@mesh, [{}, {"y"}]>, <@mesh, [{}, {"y"}]>] manual_axes={"y"} (%m1_a0: tensor<2x8xf32>) {
    sdy.return %m1_a0, %m1_a0 : tensor<2x8xf32>, tensor<2x8xf32>
  } : (tensor<4x8xf32>) -> (tensor<2x16xf32>, tensor<2x16xf32>)
  %v2 = stablehlo.reshape %v1#1 : (tensor<2x16xf32>) -> tensor<2x4x4xf32>
  %v15 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %v16 = stablehlo.reduce(%a6 init: %v15) applies stablehlo.add across dimensions = [0, 1, 2] : (tensor<4x1x1xf32>, tensor<f32>) -> tensor<f32>
  return %v16 : tensor<f32>
}
"""


def test_a_computation_read_only_by_dead_code_is_dead(executor, monkeypatch) -> None:
    result = check(DEAD_THROUGH_A_RESHAPE, _partitioned(DEAD_THROUGH_A_RESHAPE), executor=executor)
    assert result.reference == "unsharded" and result.equal
    # Live, the computation makes XLA's partitioning the reference of the result it reaches;
    # the unreduced sum it does not reach is compared with the unsharded run.
    live = DEAD_THROUGH_A_RESHAPE.replace(
        "-> (tensor<f32> {", "-> (tensor<2x4x4xf32>, tensor<f32> {"
    ).replace("return %v16 : tensor<f32>", "return %v2, %v16 : tensor<2x4x4xf32>, tensor<f32>")
    result = check(live, _partitioned(live), executor=executor)
    assert result.reference == "xla+unsharded" and result.xla_results == (0,) and result.equal
    # XLA's partitioning cannot be compared on an unreduced result the computation reaches
    # (it returns the replicated sum declared unreduced whole on both devices). The ops
    # around the computation are then run unsharded on its result from XLA.
    reached = live.replace(
        "stablehlo.reduce(%a6 init: %v15) applies stablehlo.add across dimensions = [0, 1, 2] "
        ": (tensor<4x1x1xf32>",
        "stablehlo.reduce(%v2 init: %v15) applies stablehlo.add across dimensions = [0, 1, 2] "
        ": (tensor<2x4x4xf32>",
    )
    assert reached != live
    local = _partitioned(reached)
    result = check(reached, local, executor=executor)
    assert result.reference == "around-computations" and result.equal, result
    # Without the zeroing off the leader, each of the two devices holds the whole sum.
    zeroed = local.replace("dense<[true, false]>", "dense<[true, true]>")
    assert zeroed != local, local
    assert not check(reached, zeroed, executor=executor).results[1].equal
    # Where no program around the computation can be made (it is in a loop body), the error
    # names why, not a false DIFFERENT.
    from shardwise.check import checker

    monkeypatch.setattr(checker.programs, "cut_at_computations", lambda *_: None)
    with pytest.raises(UnsupportedError, match="result 1 has unreduced axes"):
        check(reached, local, executor=executor)


# Fuzz --check findings 2045-68-37 and 2045-418-9: a live manual computation made XLA's own
# partitioning the reference for every result, and XLA's partitioner gets another op of the
# module wrong (a pad with interior padding along a sharded dim; a case on an unreduced
# index). Only the results a computation reaches take XLA's reference now; the others are
# compared with the unsharded run of the program without them.
PAD_BESIDE_LIVE_COMPUTATION = DEAD_MANUAL_COMPUTATION.replace(
    "-> (tensor<5x8xf32> {", "-> (tensor<8xf32>, tensor<5x8xf32> {"
).replace("return %v12 : tensor<5x8xf32>", "return %v18, %v12 : tensor<8xf32>, tensor<5x8xf32>")


def test_results_no_computation_reaches_are_compared_with_the_unsharded_run(executor) -> None:
    local = _partitioned(PAD_BESIDE_LIVE_COMPUTATION)
    result = check(PAD_BESIDE_LIVE_COMPUTATION, local, executor=executor, against_xla=False)
    assert result.reference == "xla+unsharded" and result.xla_results == (0,)
    assert result.equal, result
    assert "XLA's own SPMD partitioning of the annotated program for results 0" in str(result)
    assert result.to_json()["xla_results"] == [0]
    assert check_module(PAD_BESIDE_LIVE_COMPUTATION).kind == "equal"
    # XLA's own partitioning of the pad is what differs from the unsharded run.
    alone = check(
        DEAD_MANUAL_COMPUTATION,
        _partitioned(DEAD_MANUAL_COMPUTATION),
        executor=executor,
        against_xla=True,
    )
    assert alone.xla_equal is False


CASE_BESIDE_LIVE_COMPUTATION = """sdy.mesh @mesh = <["z"=2, "x"=2]>
func.func @main(%i: tensor<i32> {sdy.sharding = #sdy.sharding<@mesh, [], unreduced={"z"}>},
                %a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> (tensor<8xf32>, tensor<8xf32>) {
  %0 = "stablehlo.case"(%i) ({
    %1 = stablehlo.negate %a : tensor<8xf32>
    stablehlo.return %1 : tensor<8xf32>
  }, {
    %2 = stablehlo.abs %a : tensor<8xf32>
    stablehlo.return %2 : tensor<8xf32>
  }) : (tensor<i32>) -> tensor<8xf32>
  %m = sdy.manual_computation(%a) in_shardings=[<@mesh, [{"x"}]>] out_shardings=[<@mesh, [{"x"}]>] manual_axes={"x"} (%b: tensor<4xf32>) {
    %n = stablehlo.negate %b : tensor<4xf32>
    sdy.return %n : tensor<4xf32>
  } : (tensor<8xf32>) -> tensor<8xf32>
  %s = stablehlo.add %m, %a : tensor<8xf32>
  return %0, %s : tensor<8xf32>, tensor<8xf32>
}
"""


def test_a_case_beside_a_live_computation_is_compared_unsharded(executor) -> None:
    local = _partitioned(CASE_BESIDE_LIVE_COMPUTATION)
    result = check(CASE_BESIDE_LIVE_COMPUTATION, local, executor=executor, against_xla=False)
    assert result.reference == "xla+unsharded" and result.xla_results == (1,), result
    assert result.equal, result
    # The reference chain's program branches on each device's partial index: DIFFERENT
    # against the unsharded run (with XLA's partitioning as the reference it could pass).
    wrong = _partitioned(CASE_BESIDE_LIVE_COMPUTATION, like_shardy=True)
    verdict = check(CASE_BESIDE_LIVE_COMPUTATION, wrong, executor=executor)
    assert not verdict.results[0].equal and verdict.results[1].equal


# Fuzz --check finding 2046-14-4: a dead manual computation read only inside a dead `case`'s
# branch: the case reads it from its region, and is erased with it (before: "erasing
# sdy.manual_computation with uses").
DEAD_READ_IN_A_REGION = """sdy.mesh @mesh = <["w"=4]>
func.func @main(%a0: tensor<6x2xf32>, %i: tensor<i32>, %a: tensor<24x2xf32>, %r: tensor<f32>) -> tensor<f32> {
  %m = sdy.manual_computation(%a0) in_shardings=[<@mesh, [{}, {}]>] out_shardings=[<@mesh, [{"w"}, {}]>] manual_axes={"w"} (%b: tensor<6x2xf32>) {
    sdy.return %b : tensor<6x2xf32>
  } : (tensor<6x2xf32>) -> tensor<24x2xf32>
  %c = "stablehlo.case"(%i) ({
    %n = stablehlo.negate %m : tensor<24x2xf32>
    stablehlo.return %n : tensor<24x2xf32>
  }, {
    stablehlo.return %a : tensor<24x2xf32>
  }) : (tensor<i32>) -> tensor<24x2xf32>
  return %r : tensor<f32>
}
"""


def test_a_computation_read_in_a_dead_region_is_dead(executor) -> None:
    local = _partitioned(DEAD_READ_IN_A_REGION)
    result = check(DEAD_READ_IN_A_REGION, local, executor=executor)
    assert result.reference == "unsharded" and result.equal


# Fuzz --check finding 2047-492-6: a call whose callee holds a manual computation, read only
# by a sharding constraint nothing reads. The constraint counted as an op with effects, so the
# call stayed live and XLA's partitioning became the reference, which branches the case on
# each device's partial index. Constraints are identities here, the dead call is erased with
# its callee, and the unsharded run is the reference.
DEAD_CALL_OF_A_COMPUTATION = """sdy.mesh @mesh = <["y"=4]>
func.func @main(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>, %i: tensor<i32> {sdy.sharding = #sdy.sharding<@mesh, [], unreduced={"y"}>}) -> tensor<4x8xf32> {
  %0 = func.call @callee(%a) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = sdy.sharding_constraint %0 <@mesh, [{}, {}]> : tensor<4x8xf32>
  %2 = "stablehlo.case"(%i) ({
    %3 = stablehlo.tanh %b : tensor<4x8xf32>
    stablehlo.return %3 : tensor<4x8xf32>
  }, {
    %4 = stablehlo.tanh %b {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y"}, {}]>]>} : tensor<4x8xf32>
    stablehlo.return %4 : tensor<4x8xf32>
  }) : (tensor<i32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}
func.func private @callee(%c: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %m = sdy.manual_computation(%c) in_shardings=[<@mesh, [{}, {}]>] out_shardings=[<@mesh, [{}, {}]>] manual_axes={"y"} (%d: tensor<4x8xf32>) {
    sdy.return %d : tensor<4x8xf32>
  } : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %m : tensor<4x8xf32>
}
"""


def test_a_dead_call_of_a_computation_needs_no_xla_reference(executor) -> None:
    result = check(
        DEAD_CALL_OF_A_COMPUTATION, _partitioned(DEAD_CALL_OF_A_COMPUTATION), executor=executor
    )
    assert result.reference == "unsharded" and result.equal, result


# Fuzz --check finding 2050-317-19, shrunk: a scatter into the result of a manual computation
# (an identity of each device's piece) of a replicated argument. The computation made XLA's partitioning the reference,
# and XLA's partitioner writes the scattered element on the wrong device (element 6 got
# element 1's value). The reference is now the unsharded run of the ops around the
# computation, fed with its result from XLA's run.
SCATTER_AFTER_A_COMPUTATION = """sdy.mesh @mesh = <["y"=2]>
func.func @main(%a: tensor<12xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %i: tensor<1x1xi32>, %u: tensor<1xf32>) -> tensor<12xf32> {
  %m = sdy.manual_computation(%a) in_shardings=[<@mesh, [{"y"}]>] out_shardings=[<@mesh, [{"y"}]>] manual_axes={"y"} (%b: tensor<6xf32>) {
    sdy.return %b : tensor<6xf32>
  } : (tensor<12xf32>) -> tensor<12xf32>
  %s = "stablehlo.scatter"(%m, %i, %u) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%l: tensor<f32>, %r: tensor<f32>):
    %sum = stablehlo.add %l, %r : tensor<f32>
    stablehlo.return %sum : tensor<f32>
  }) : (tensor<12xf32>, tensor<1x1xi32>, tensor<1xf32>) -> tensor<12xf32>
  return %s : tensor<12xf32>
}
"""


def test_ops_after_a_computation_are_checked_against_their_unsharded_run(executor) -> None:
    local = _partitioned(SCATTER_AFTER_A_COMPUTATION)
    result = check(SCATTER_AFTER_A_COMPUTATION, local, executor=executor)
    assert result.equal and result.reference == "around-computations", result
    # A device that takes the wrong piece of the argument is still caught.
    offsets = "dense<[0, 6]> : tensor<2xi64>"
    assert local.count(offsets) == 2, local
    head, tail = local.split(offsets, 1)
    wrong = check(
        SCATTER_AFTER_A_COMPUTATION,
        head + "dense<[0, 5]> : tensor<2xi64>" + tail,
        executor=executor,
    )
    assert not wrong.equal and wrong.reference == "around-computations"


# Fuzz --check finding 2050-265-9: an op sharded on "z":(1)2 and "z":(3)2 of z=6, which
# no decomposition of z has together (2x3 and 3x2): device d's tile would be (d // 3, d % 2),
# which devices 0 and 2 share. The collectives from it mixed tiles; partition rejects it.
SUB_AXES_THAT_CANNOT_COEXIST = """sdy.mesh @mesh = <["z"=6]>
func.func @main(%a: tensor<2x4x3x3xf32>) -> tensor<2x4x3x3xf32> {
  %v = stablehlo.negate %a {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"z":(1)2}, {"z":(3)2}, {}]>]>} : tensor<2x4x3x3xf32>
  return %v : tensor<2x4x3x3xf32>
}
"""


def test_a_sharding_with_sub_axes_that_cannot_coexist_is_rejected_at_its_op() -> None:
    with pytest.raises(
        ShardwiseError, match='"z":\\(1\\)2 and "z":\\(3\\)2 that cannot coexist'
    ) as e:
        _partitioned(SUB_AXES_THAT_CANNOT_COEXIST)
    assert e.value.location is not None and e.value.location.line == 3
    coexisting = SUB_AXES_THAT_CANNOT_COEXIST.replace('{"z":(3)2}', '{"z":(2)3}')
    assert "stablehlo.negate" in _partitioned(coexisting)


# Fuzz --check finding 2051-401-11, shrunk: a strided slice of an argument that a manual
# computation reads sharded. XLA's partitioner makes an HLO its verifier rejects (a slice
# of f32[11,2] that is f32[1,2]), so XLA's whole run cannot be the reference (the module was
# `cannot-run`). XLA now partitions only the computation, and the rest runs unsharded.
STRIDED_SLICE_BESIDE_A_COMPUTATION = """sdy.mesh @mesh = <["y"=2, "z"=4]>
func.func @main(%a: tensor<32x6xf32>) -> (tensor<1x2xf32>, tensor<8x4x6xf32>) {
  %s = stablehlo.slice %a [31:32:3, 2:6:3] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>} : (tensor<32x6xf32>) -> tensor<1x2xf32>
  %r = stablehlo.reshape %a : (tensor<32x6xf32>) -> tensor<8x4x6xf32>
  %m = sdy.manual_computation(%r) in_shardings=[<@mesh, [{"y", "z"}, {}, {}]>] out_shardings=[<@mesh, [{"y"}, {}, {"z"}]>] manual_axes={"y"} (%c: tensor<4x4x6xf32>) {
    %t = stablehlo.tanh %c : tensor<4x4x6xf32>
    sdy.return %t : tensor<4x4x6xf32>
  } : (tensor<8x4x6xf32>) -> tensor<8x4x6xf32>
  %n = stablehlo.negate %m : tensor<8x4x6xf32>
  return %s, %n : tensor<1x2xf32>, tensor<8x4x6xf32>
}
"""


def test_a_program_xla_cannot_partition_whole_is_checked_around_its_computation(executor) -> None:
    from shardwise.check import xla_spmd
    from shardwise.check.executor import ExecutionError

    text = STRIDED_SLICE_BESIDE_A_COMPUTATION
    whole = xla_spmd.spmd_program(text, "f.mlir")
    with pytest.raises(ExecutionError, match="hlo verifier"):
        executor.run(whole.text, [np.zeros((32, 6), np.float32)], 8, xla_spmd.result_shapes(whole))
    local = _partitioned(text)
    result = check(text, local, executor=executor)
    assert result.equal and result.reference == "around-computations", result
    assert result.xla_results == (1,)
    # The computation's result is still compared: a local body computing sine is caught.
    wrong = local.replace("stablehlo.tanh", "stablehlo.sine", 1)
    assert wrong != local
    assert not check(text, wrong, executor=executor).results[1].equal


# Fuzz --check finding 2054-2-10, shrunk: the square of a sum of 6,144 products that
# cancels to about 21. The square magnifies the sum's rounding 42 times; the partitioned
# order of additions was 29 ulps off the float64 truth where the unsharded run was by chance
# within one, so the fixed floor failed it and the perturbed runs (which move it as far)
# made it UNDECIDED. It is equal within the program's own sensitivity now ("amplified").
SQUARE_OF_A_CANCELLING_SUM = """sdy.mesh @mesh = <["y"=8]>
func.func @main(%a0: tensor<6xf32>, %a1: tensor<12x8x16xf32>, %a2: tensor<16x4x12xf32>) -> tensor<f32> {
  %v0 = sdy.reshard %a1 <@mesh, [{?}, {?}, {"y", ?}]> : tensor<12x8x16xf32>
  %v2 = stablehlo.dot_general %v0, %a2, batching_dims = [2, 0] x [0, 2], contracting_dims = [] x [] : (tensor<12x8x16xf32>, tensor<16x4x12xf32>) -> tensor<16x12x8x4xf32>
  %v3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %v4 = stablehlo.reduce(%v2 init: %v3) applies stablehlo.add across dimensions = [0, 1, 2, 3] : (tensor<16x12x8x4xf32>, tensor<f32>) -> tensor<f32>
  %v5 = stablehlo.multiply %v4, %v4 : tensor<f32>
  return %v5 : tensor<f32>
}
"""


def test_rounding_the_program_magnifies_is_equal_within_its_sensitivity(executor) -> None:
    text = SQUARE_OF_A_CANCELLING_SUM
    local = _partitioned(text)
    result = check(text, local, executor=executor)
    assert result.verdict == "EQUAL" and result.results[0].amplified, result
    assert not result.results[0].difference.equal  # the fixed floor alone fails it
    # Without the all-reduce, each device squares its own partial sum: DIFFERENT.
    module = load_text(local, "local.mlir")
    (reduce,) = [op for op in module.walk() if op.name == "stablehlo.all_reduce"]
    reduce.results[0].replace_all_uses_with(reduce.operands[0])
    reduce.erase()
    wrong = write_text(module)
    verdict = check(text, wrong, executor=executor)
    assert verdict.verdict == "DIFFERENT" and not verdict.results[0].amplified, verdict


# Fuzz --check finding 2060-485-2, shrunk (the unused arguments keep the inputs the
# campaign drew): exp(exp(x)) of sums of 192 normal(0, 1) values.
# Perturbing the inputs by 4 ulps moves the largest element by 1.4e-3 of itself (the
# exponentials magnify the sum's rounding ~400 times); the partitioned order of additions
# leaves it 8.6e-5 off. "Amplified" asked the perturbed move, not our difference, to be under
# sqrt(eps) of the value, and the verdict was UNDECIDED.
EXP_OF_EXP_OF_A_SUM = """sdy.mesh @mesh = <["y"=4, "w"=2]>
func.func @main(%a0: tensor<32x16xf32>, %a1: tensor<16x12x6x12xf32>, %a2: tensor<6x16x8xf32>, %a3: tensor<16x16x8xf32>, %a4: tensor<6x12x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {?}, {"w", "y", ?}]>}, %a5: tensor<6x16x12x12x8xf32>) -> tensor<6x12x24xf32> {
  %v4 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %v5 = stablehlo.reduce(%a5 init: %v4) applies stablehlo.add across dimensions = [1, 3] : (tensor<6x16x12x12x8xf32>, tensor<f32>) -> tensor<6x12x8xf32>
  %v12 = stablehlo.concatenate %v5, %a4, dim = 2 : (tensor<6x12x8xf32>, tensor<6x12x16xf32>) -> tensor<6x12x24xf32>
  %v13 = stablehlo.exponential %v12 : tensor<6x12x24xf32>
  %v15 = stablehlo.exponential %v13 : tensor<6x12x24xf32>
  return %v15 : tensor<6x12x24xf32>
}
"""


def test_an_exponential_of_an_exponential_of_a_sum_is_equal_within_its_sensitivity(
    executor,
) -> None:
    text = EXP_OF_EXP_OF_A_SUM
    result = check(text, _partitioned(text), executor=executor)
    assert result.verdict == "EQUAL" and result.results[0].amplified, result
    assert not result.results[0].difference.equal  # the fixed floor alone fails it


# Fuzz --check finding 2060-485-2: the same magnified rounding (there an exponential of an
# exponential of a sum), in a result no computation reaches, beside a live manual
# computation. Its reference is the unsharded program without the computation's result, but
# the sensitivity of that program was not measured when XLA's partitioning was the reference
# for another result, so the fixed tolerance failed it.
SQUARE_BESIDE_A_COMPUTATION = SQUARE_OF_A_CANCELLING_SUM.replace(
    "%a2: tensor<16x4x12xf32>) -> tensor<f32> {",
    "%a2: tensor<16x4x12xf32>, %a3: tensor<8xf32>) -> (tensor<f32>, tensor<8xf32>) {",
).replace(
    "  return %v5 : tensor<f32>",
    """  %m = sdy.manual_computation(%a3) in_shardings=[<@mesh, [{"y"}]>] out_shardings=[<@mesh, [{"y"}]>] manual_axes={"y"} (%b: tensor<1xf32>) {
    %n = stablehlo.negate %b : tensor<1xf32>
    sdy.return %n : tensor<1xf32>
  } : (tensor<8xf32>) -> tensor<8xf32>
  return %v5, %m : tensor<f32>, tensor<8xf32>""",
)


def test_magnified_rounding_beside_a_computation_is_equal_within_its_sensitivity(
    executor,
) -> None:
    text = SQUARE_BESIDE_A_COMPUTATION
    assert "manual_computation" in text and "%a3" in text
    result = check(text, _partitioned(text), executor=executor)
    assert result.xla_results == (1,)  # result 0's reference is the unsharded run
    assert result.verdict == "EQUAL" and result.results[0].amplified, result
    assert not result.results[0].difference.equal  # the fixed floor alone fails it


# Fuzz --check finding 2055-494-26, shrunk: a callee's argument sharded unreduced, passed a
# replicated argument of main. Every device passed the whole value, which the callee
# returned as a partial one, and the sum over "z" was twice it.
CALLEE_ARGUMENT_UNREDUCED = """sdy.mesh @mesh = <["z"=2]>
func.func @main(%a: tensor<16xf32>) -> tensor<16xf32> {
  %v = func.call @callee(%a) : (tensor<16xf32>) -> tensor<16xf32>
  return %v : tensor<16xf32>
}
func.func private @callee(%b: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}], unreduced={"z"}>}) -> tensor<16xf32> {
  %n = stablehlo.negate %b : tensor<16xf32>
  return %n : tensor<16xf32>
}
"""


def test_a_replicated_value_passed_to_an_unreduced_callee_argument_is_summed_once(
    executor,
) -> None:
    text = CALLEE_ARGUMENT_UNREDUCED
    assert check(text, _partitioned(text), executor=executor).equal
