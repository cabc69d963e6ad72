"""Result comparison: exact for integers/booleans, a reassociation tolerance for floats."""

import numpy as np
import pytest

from shardwise.check.values import compare, random_input
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
