"""Random inputs and the comparison of results (numpy only).

Floats are compared with a tolerance that allows for sums computed in another order (a
partitioned dot or reduce adds partial sums per device, then across devices): a value passes
when ``|actual - expected| <= rtol * (|expected| + scale)``, where ``scale`` is the largest
``|expected|`` of the whole array, so that a reassociated sum near zero is not held to a
relative error it cannot reach. Integers and booleans compare exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from shardwise.errors import UnsupportedError
from shardwise.ir import TensorType

__all__ = ["numpy_dtype", "random_input", "compare", "Difference", "RTOL"]

_DTYPES = {
    "f64": "float64",
    "f32": "float32",
    "f16": "float16",
    "i1": "bool",
    "i8": "int8",
    "i16": "int16",
    "i32": "int32",
    "i64": "int64",
    "ui8": "uint8",
    "ui16": "uint16",
    "ui32": "uint32",
    "ui64": "uint64",
}

# Per float dtype: a few hundred ulps, since a partitioned sum of k terms can differ from the
# sequential one by about k ulps of the largest partial sum.
RTOL = {"float64": 1e-10, "float32": 1e-4, "float16": 1e-2, "bfloat16": 5e-2}
ABS_FLOOR = 1e-2  # times rtol: the absolute error always allowed (inputs are of scale 1)

# Integers stay small (products and sums do not overflow in the shapes one checks, and the
# values are valid indices into any dimension of size >= 4 — XLA clamps larger ones anyway).
INT_RANGE = 4


def numpy_dtype(element_type: str) -> np.dtype:
    """The numpy dtype of an MLIR element type (bf16 through ml_dtypes, shipped with jax)."""
    if element_type == "bf16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    name = _DTYPES.get(element_type)
    if name is None:
        raise UnsupportedError(f"element type {element_type}: the checker cannot make inputs")
    return np.dtype(name)


def random_input(type_: TensorType, rng: np.random.Generator) -> np.ndarray:
    """Floats normal(0, 1), integers in [0, INT_RANGE), booleans fair coins."""
    dtype = numpy_dtype(type_.element_type)
    shape = type_.shape
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dtype.kind in "iu":
        return rng.integers(0, INT_RANGE, size=shape).astype(dtype)
    return rng.standard_normal(size=shape).astype(dtype)


@dataclass(frozen=True, slots=True)
class Difference:
    """How far one array is from the expected one."""

    equal: bool
    max_abs_error: float
    max_rel_error: float
    mismatches: int  # elements outside the tolerance
    size: int

    def __str__(self) -> str:
        verdict = "equal" if self.equal else f"{self.mismatches}/{self.size} elements differ"
        return f"{verdict}, max abs error {self.max_abs_error:.3g}, max rel error {self.max_rel_error:.3g}"


def compare(actual: np.ndarray, expected: np.ndarray) -> Difference:
    """Compare exactly for integers and booleans, with `RTOL` for floats (module docstring)."""
    if actual.shape != expected.shape:
        return Difference(False, float("inf"), float("inf"), expected.size, expected.size)
    if expected.dtype.kind in "biu":
        bad = actual != expected
        err = np.abs(actual.astype(np.float64) - expected.astype(np.float64))
        return _difference(bad, err, np.abs(expected.astype(np.float64)))
    with np.errstate(all="ignore"):
        return _compare_floats(actual.astype(np.float64), expected.astype(np.float64), expected)


def _compare_floats(a: np.ndarray, e: np.ndarray, expected: np.ndarray) -> Difference:
    rtol = RTOL.get(expected.dtype.name, 1e-4)
    mag = np.abs(e)
    finite = np.isfinite(mag)
    scale = float(mag[finite].max()) if finite.any() else 0.0
    same_special = (np.isnan(a) & np.isnan(e)) | (np.isinf(a) & (a == e))
    # A NaN or infinity where the other side has none is an infinite error.
    err = np.where(same_special, 0.0, np.nan_to_num(np.abs(a - e), nan=np.inf))
    # The floor rtol * ABS_FLOOR: a value that cancels to zero (x - x with x computed twice,
    # differently fused) keeps rounding noise of the inputs' scale (about 1), not its own.
    bad = ~(err <= rtol * (np.where(finite, mag, 0.0) + scale + ABS_FLOOR))
    return _difference(bad, err, mag)


def _difference(bad: np.ndarray, err: np.ndarray, mag: np.ndarray) -> Difference:
    if err.size == 0:
        return Difference(True, 0.0, 0.0, 0, 0)
    with np.errstate(all="ignore"):
        rel = np.where(mag > 0, err / np.where(mag > 0, mag, 1), np.where(err > 0, np.inf, 0))
    return Difference(
        not bool(bad.any()),
        float(err.max()),
        float(np.nan_to_num(rel, nan=np.inf).max()),
        int(bad.sum()),
        int(bad.size),
    )
