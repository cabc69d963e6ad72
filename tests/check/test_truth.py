"""The float64 truth (`check/promote.py`) and near-ties (`check/conditioning.py`).

The truth is the unsharded program with its floats in f64, run by XLA; the verdict on a
result that differs only where the unsharded program itself moves under rounding-level
input perturbations is UNDECIDED (exit 3), neither EQUAL nor DIFFERENT.
"""

from __future__ import annotations

import numpy as np

import shardwise
from shardwise import cli
from shardwise.check import programs
from shardwise.check.checker import check
from shardwise.check.cli import EXIT_UNDECIDED
from shardwise.check.conditioning import Sensitivity, perturbed_inputs
from shardwise.check.promote import promote_to_f64
from shardwise.io.mlir import load_text

# Hex constants (a NaN splat and a blob), the random bits of dropout made a float by a
# bitcast, a LAPACK call.
PROMOTABLE = """func.func @main(%x: tensor<2xf32>, %bits: tensor<2xui32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %nan = stablehlo.constant dense<0x7FC00000> : tensor<2xf32>
  %blob = stablehlo.constant dense<"0x0000803F00000040"> : tensor<2xf32>
  %s = stablehlo.add %x, %blob : tensor<2xf32>
  %f = stablehlo.bitcast_convert %bits : (tensor<2xui32>) -> tensor<2xf32>
  %m = stablehlo.maximum %s, %nan : tensor<2xf32>
  return %m, %f : tensor<2xf32>, tensor<2xf32>
}
"""


def test_promotion_rewrites_types_constants_and_keeps_bitcasts() -> None:
    text = promote_to_f64(load_text(PROMOTABLE, "p.mlir"))
    assert text.count("f32") == 2  # the bitcast's result, and the convert of it
    assert "dense<0x7FF8000000000000> : tensor<2xf64>" in text
    assert "dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf64>" in text
    # the bitcast still makes an f32 of the bits, converted to f64 after it
    assert "stablehlo.bitcast_convert %arg1 : (tensor<2xui32>) -> tensor<2xf32>" in text
    assert "(tensor<2xf32>) -> tensor<2xf64>" in text


def test_lapack_targets_get_their_f64_kernels() -> None:
    text = (
        "func.func @main(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {\n"
        "  %0:2 = stablehlo.custom_call @lapack_spotrf_ffi(%a) {mhlo.backend_config = {uplo = 76 : ui8}} : (tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<i32>)\n"
        "  return %0#0 : tensor<4x4xf32>\n}\n"
    )
    promoted = promote_to_f64(load_text(text, "l.mlir"))
    assert "@lapack_dpotrf_ffi" in promoted and "f32" not in promoted


def test_the_truth_program_runs_in_float64(executor) -> None:
    truth = programs.truth_program(PROMOTABLE, "p.mlir")
    x = np.array([0.1, -5.0])
    bits = np.array([0x3F800000, 0x40490FDB], np.uint32)
    m, f = executor.run(truth, [x, bits], 1)
    assert m.dtype == np.float64 and np.isnan(m).all()
    assert np.array_equal(f, bits.view(np.float32).astype(np.float64))


# `a > b` where b is a computed again as dot(3x, w) / 3: equal but for rounding, so the
# comparison is a coin toss that any other order of the sums tosses again.
NEAR_TIES = """sdy.mesh @mesh = <["x"=4]>
func.func @main(%x: tensor<16x256xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>},
                %w: tensor<256x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>})
    -> (tensor<16x16xf32>, tensor<16x16xi1>) {
  %a = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<16x256xf32>, tensor<256x16xf32>) -> tensor<16x16xf32>
  %three = stablehlo.constant dense<3.000000e+00> : tensor<16x256xf32>
  %x3 = stablehlo.multiply %x, %three : tensor<16x256xf32>
  %d = stablehlo.dot_general %x3, %w, contracting_dims = [1] x [0] : (tensor<16x256xf32>, tensor<256x16xf32>) -> tensor<16x16xf32>
  %third = stablehlo.constant dense<3.000000e+00> : tensor<16x16xf32>
  %b = stablehlo.divide %d, %third : tensor<16x16xf32>
  %c = stablehlo.compare GT, %a, %b, FLOAT : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xi1>
  return %a, %c : tensor<16x16xf32>, tensor<16x16xi1>
}
"""


def test_flipped_near_ties_are_undecided(executor, tmp_path, capsys) -> None:
    module = shardwise.load(NEAR_TIES)
    result = check(NEAR_TIES, module.partition().text, executor=executor)
    assert result.verdict == "UNDECIDED", str(result)
    floats, ties = result.results
    assert floats.equal and floats.difference.reference_error is not None
    assert not ties.equal and ties.ill_conditioned and ties.difference.mismatches > 10
    path = tmp_path / "ties.mlir"
    path.write_text(NEAR_TIES)
    assert cli.main(["check", str(path)]) == EXIT_UNDECIDED
    assert ": UNDECIDED" in capsys.readouterr().out


def test_a_wrong_program_with_near_ties_stays_different(executor) -> None:
    local = shardwise.load(NEAR_TIES).partition().text
    # Drop the all_reduce after the first dot: each device keeps its partial sum.
    wrong = local.replace("return %1, %6", "return %0, %6")
    assert wrong != local
    result = check(NEAR_TIES, wrong, executor=executor)
    assert result.verdict == "DIFFERENT", str(result)
    assert not result.results[0].equal and not result.results[0].ill_conditioned


def test_a_difference_where_the_reference_is_stable_is_not_explained() -> None:
    expected = np.array([1, 0, 1, 0], np.int32)
    actual = np.array([0, 0, 1, 1], np.int32)
    s = Sensitivity(actual, expected, None)
    s.add(np.array([0, 0, 1, 0], np.int32))  # a perturbed run flips element 0 only
    assert s.unexplained() == 1 and not s.explained
    s.add(np.array([1, 0, 1, 1], np.int32))  # another flips element 3
    assert s.explained


def test_a_float_difference_larger_than_the_flips_is_not_explained() -> None:
    truth = np.array([1.0, 2.0, 3.0])
    expected = truth.astype(np.float32)
    s = Sensitivity(np.array([1.0, 2.5, 3.0], np.float32), expected, truth)
    s.add(np.array([1.0, 2.1, 3.0], np.float32))  # unstable there, but moves by 0.1
    assert not s.explained
    s.add(np.array([1.0, 2.3, 3.0], np.float32))  # a move of 0.3: 0.5 is within 2x
    assert s.explained


def test_perturbations_come_in_sign_pairs_and_keep_integers() -> None:
    x = np.ones(5, np.float32)
    i = np.arange(5, dtype=np.int32)
    sets = perturbed_inputs((x, i), seed=0)
    assert len(sets) == 4
    up, down = sets[0][0].astype(np.float64) - 1, sets[1][0].astype(np.float64) - 1
    assert np.allclose(up, -down, atol=2**-24) and 0 < np.abs(up).max() < 1e-5
    assert all(np.array_equal(s[1], i) for s in sets)


# x / 0 - x / 0: NaN everywhere, whatever the inputs.
OVERFLOWS = """sdy.mesh @mesh = <["x"=2]>
func.func @main(%x: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>})
    -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, tensor<8x4xf32>) {
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<8x4xf32>
  %inf = stablehlo.divide %x, %zero : tensor<8x4xf32>
  %nan = stablehlo.subtract %inf, %inf : tensor<8x4xf32>
  return %nan, %x : tensor<8x4xf32>, tensor<8x4xf32>
}
"""


def test_a_result_that_is_nan_everywhere_is_flagged_vacuous(executor) -> None:
    result = check(OVERFLOWS, shardwise.load(OVERFLOWS).partition().text, executor=executor)
    assert result.equal
    assert [r.vacuous for r in result.results] == [True, False]
    assert "warning: 1 of 2 results are NaN or infinite everywhere" in str(result)
    assert result.to_json()["vacuous"] == [0]
