"""Result comparison: exact for integers/booleans, a reassociation tolerance for floats."""

import numpy as np
import pytest

from shardwise.check.values import bad_elements, compare, random_input
from shardwise.ir import TensorType


def test_float_sums_in_another_order_are_equal():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 256)).astype(np.float32)
    sequential = x.sum(axis=1)
    # Four devices each sum a quarter, then the partial sums are added.
    partial = sum(x[:, i * 64 : (i + 1) * 64].sum(axis=1) for i in range(4))
    assert not np.array_equal(sequential, partial)
    assert compare(partial, sequential).equal


@pytest.mark.parametrize(
    "actual, expected, equal",
    [
        (np.array([1, 2, 3], np.int32), np.array([1, 2, 3], np.int32), True),
        (np.array([1, 2, 4], np.int32), np.array([1, 2, 3], np.int32), False),
        (np.array([True, False]), np.array([True, True]), False),
        (np.array([1.0, 2.0], np.float32), np.array([1.0, 2.001], np.float32), False),
        (np.array([np.nan, np.inf], np.float32), np.array([np.nan, np.inf], np.float32), True),
        (np.array([np.nan], np.float32), np.array([1.0], np.float32), False),
        (np.zeros((2, 2), np.float32), np.zeros((2, 3), np.float32), False),
    ],
    ids=["ints-equal", "ints-off-by-one", "bools", "f32-1e-3", "nan-inf", "nan-vs-1", "shape"],
)
def test_compare(actual, expected, equal):
    result = compare(actual, expected)
    assert result.equal is equal
    assert result.equal == (result.mismatches == 0)


@pytest.mark.parametrize("element_type", ["f32", "bf16", "i32", "ui8", "i1"])
def test_random_inputs_are_seeded_and_typed(element_type):
    t = TensorType((3, 5), element_type)
    a = random_input(t, np.random.default_rng(7))
    b = random_input(t, np.random.default_rng(7))
    assert a.shape == (3, 5) and np.array_equal(a, b)
    if element_type.startswith(("i", "u")) and element_type != "i1":
        assert a.min() >= 0 and a.max() < 4


# -- against a float64 truth ------------------------------------------------------------------


def _sums(seed: int = 0):
    """A sum of 512 terms per row: sequential f32, four partial sums in f32, exact (f64)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((64, 512)).astype(np.float32)
    sequential = np.cumsum(x, axis=1, dtype=np.float32)[:, -1]
    partial = sum(x[:, i * 128 : (i + 1) * 128].sum(axis=1) for i in range(4)).astype(np.float32)
    return partial, sequential, x.astype(np.float64).sum(axis=1)


def test_a_sum_in_another_order_is_within_the_references_own_error():
    partial, sequential, truth = _sums()
    assert not np.array_equal(partial, sequential)
    d = compare(partial, sequential, truth)
    assert d.equal, d
    assert d.reference_error == pytest.approx(np.abs(sequential - truth).max())
    assert "vs float64" in str(d)


def test_a_wrong_sum_is_caught_far_below_the_fixed_tolerance():
    partial, sequential, truth = _sums()
    # One row loses a term of size 1e-3: the fixed tolerance (1e-4 of the largest |value|,
    # here about 7e-3) lets it through, the reference's own error (about 1e-5) does not.
    wrong = partial.copy()
    wrong[5] += np.float32(1e-3)
    assert compare(wrong, sequential).equal
    d = compare(wrong, sequential, truth)
    assert not d.equal and d.mismatches == 1


def test_elements_off_the_truths_path_do_not_loosen_the_array():
    rng = np.random.default_rng(1)
    truth = rng.standard_normal(4000)
    expected = (truth + 1e-7 * rng.standard_normal(4000)).astype(np.float32)
    # The f32 reference itself is far off the truth at 2% of the elements (the f64 program
    # took other discrete decisions there): more than the 0.1% of outliers Q ignores.
    expected[:80] += np.float32(0.5)
    actual = expected.copy()
    actual[0] = truth[0]  # the program under test agrees with the truth there,
    actual[1] += np.float32(0.3)  # with neither here (off the path too),
    actual[100] += np.float32(0.01)  # and is wrong on the path, by 50x less than the flips
    bad = bad_elements(actual, expected, truth)
    assert list(np.flatnonzero(bad)) == [1, 100]
    d = compare(actual, expected, truth)
    assert d.off_path == 80 and "off the truth by over sqrt(eps) at 80 elements" in str(d)


def test_equal_to_the_reference_passes_even_where_the_truth_differs():
    truth = np.array([1.0, 2.0, 3.0])
    expected = np.array([1.0, 2.5, 3.0], np.float32)  # the f32 program flipped something
    assert compare(expected.copy(), expected, truth).equal
    assert compare(np.array([1.0, 2.0, 3.0], np.float32), expected, truth).equal


def test_specials_must_match_the_reference():
    truth = np.array([np.nan, 1.0, np.inf])
    expected = np.array([np.nan, 1.0, np.inf], np.float32)
    assert compare(expected.copy(), expected, truth).equal
    assert not compare(np.array([0.0, 1.0, np.inf], np.float32), expected, truth).equal
    assert not compare(np.array([np.nan, 1.0, -np.inf], np.float32), expected, truth).equal


def test_float64_results_keep_the_fixed_tolerance():
    x = np.array([1.0, 2.0])
    d = compare(x + 1e-12, x, x)
    assert d.equal and d.reference_error is None


def test_a_cancelling_sum_of_many_terms_is_held_to_their_count_not_its_value():
    # Fuzz --check finding 2049-46-7: a scalar, the sum of 4,096 normal(0, 1) terms, cancels
    # to about 15. The unsharded f32 run happened to be 4e-7 off; the partitioned one (four
    # partial sums, then an all-reduce) 5e-5, 0.13 ulps of the terms' magnitudes. Held to
    # the value's ulps it failed; the floor grows with sqrt(fan-in).
    truth = np.array([15.5])
    expected = np.array([15.5 + 3.8e-7], np.float32)
    actual = np.array([15.5 + 5e-5], np.float32)
    assert not compare(actual, expected, truth).equal
    assert compare(actual, expected, truth, fan_in=4096).equal
    # A term lost or counted twice (of size 1e-2 and up) is still caught.
    assert not compare(np.array([15.5 + 1e-2], np.float32), expected, truth, fan_in=4096).equal
    assert bad_elements(actual, expected, truth, 4096).sum() == 0
