"""Random inputs and the comparison of results (numpy only).

Two ways to compare a float result:

- **Against a float64 truth** (`compare` with ``truth``; the checker runs the unsharded
  program a second time with every float type promoted to f64, `check/promote.py`). The
  unsharded f32 program's own error against the truth sets the scale: an element of the
  program under test passes when ``|actual - truth| <= K * (|expected - truth| + Q) +
  FLOOR_ULPS * eps * (|truth| + sqrt(F))``, or when it equals the reference within that
  floor. ``eps`` is the dtype's machine epsilon, 1 the scale of the inputs and ``F`` the
  program's fan-in (`programs.fan_in`: the most elements one reduction folds into one), so
  that a reassociated sum of F unit terms that cancels (its rounding grows like
  ``sqrt(F)``, not like its value) is not held to its own value's ulps. ``Q`` is the
  reference's error at the ``ceil(n / 1000)``-th worst element *on the truth's path*: the
  elements where the reference is within ``sqrt(eps) * (|truth| + S)`` of the truth (``S``
  the array's largest ``|truth|``). Off the path, the f64 program took other discrete
  decisions (a routing, an eigenvector's sign), so there the reference's own error is no
  yardstick: the element must be within ``K * Q + floor`` of the truth or of the reference.
  A sum added in another order has an error of the reference's order; a wrong collective
  or slice is off by the values' own size.
- **A fixed tolerance** (no truth: f64 results, or a program the truth cannot be built for):
  ``|actual - expected| <= rtol * (|expected| + scale + ABS_FLOOR)``, ``scale`` the largest
  ``|expected|`` of the array, so that a reassociated sum near zero is not held to a
  relative error it cannot reach.

Integers and booleans compare exactly. `bad_elements` gives the mask of failing elements
(what `conditioning` looks at).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from shardwise.errors import UnsupportedError
from shardwise.ir import TensorType

__all__ = [
    "numpy_dtype",
    "random_input",
    "compare",
    "bad_elements",
    "reference_scale",
    "vacuous",
    "Difference",
    "RTOL",
]

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

# Against a float64 truth: how many times the reference's own error the program under test
# may have, the outliers ignored when measuring that error, and the floor in ulps.
K_REFERENCE = 8.0
OUTLIER_FRACTION = 1e-3
FLOOR_ULPS = 16.0
EPS = {"float32": 2.0**-23, "float16": 2.0**-10, "bfloat16": 2.0**-7}

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


def vacuous(array: np.ndarray) -> bool:
    """A float array with elements, every one NaN or infinite: a check of it tests nothing."""
    return array.dtype.kind in "fc" and array.size > 0 and not np.isfinite(array).any()


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
    """How far one array is from the expected one (from the float64 truth when the
    comparison had one: then `reference_error` is the unsharded program's own largest error
    against it)."""

    equal: bool
    max_abs_error: float
    max_rel_error: float
    mismatches: int  # elements outside the tolerance
    size: int
    reference_error: float | None = None
    # Against the truth: elements where the f32 reference is off the truth by more than
    # sqrt(eps) of the array's scale (not determined at f32 precision; see the docstring).
    off_path: int = 0
    # Against the truth: the largest ``(|actual - truth| - floor) / (|expected - truth| + Q)``
    # over the elements, the multiple of the reference's own error (it passes up to
    # `K_REFERENCE`, or where it equals the reference).
    error_ratio: float | None = None

    def __str__(self) -> str:
        verdict = "equal" if self.equal else f"{self.mismatches}/{self.size} elements differ"
        text = f"{verdict}, max abs error {self.max_abs_error:.3g}, max rel error {self.max_rel_error:.3g}"
        if self.reference_error is not None:
            text += f" (vs float64; the unsharded f32 program's own: {self.reference_error:.3g}"
            if self.error_ratio:
                text += f", at most {self.error_ratio:.2g}x it"
            if self.off_path:
                text += f"; off the truth by over sqrt(eps) at {self.off_path} elements"
            text += ")"
        return text


def compare(
    actual: np.ndarray,
    expected: np.ndarray,
    truth: np.ndarray | None = None,
    scale: tuple[float, float] | None = None,
    fan_in: int = 1,
) -> Difference:
    """Exact for integers and booleans; floats against `truth` when given and `expected` has
    a dtype below f64, else with `RTOL` (module docstring). `scale`: ``(Q, S)`` measured on
    a larger array this one is a piece of (`reference_scale`); `fan_in` the program's
    (`programs.fan_in`)."""
    bad, err, mag, ref = _judge(actual, expected, truth, scale, fan_in)
    if bad is None:
        return Difference(False, float("inf"), float("inf"), expected.size, expected.size)
    return _difference(bad, err, mag, ref)


def bad_elements(
    actual: np.ndarray, expected: np.ndarray, truth: np.ndarray | None = None, fan_in: int = 1
) -> np.ndarray:
    """The mask of elements `compare` counts as mismatches (shapes must agree)."""
    bad, _, _, _ = _judge(actual, expected, truth, None, fan_in)
    assert bad is not None, (actual.shape, expected.shape)
    return bad


def reference_scale(expected: np.ndarray, truth: np.ndarray) -> tuple[float, float]:
    """``(Q, S)`` of the module docstring: the reference's error at its worst on-path
    elements but 0.1%, and the array's largest ``|truth|``."""
    eps = EPS.get(expected.dtype.name, 2.0**-52)
    with np.errstate(all="ignore"):
        e, t = expected.astype(np.float64), truth.astype(np.float64)
        return _scales(e, t, eps)


def _scales(e: np.ndarray, t: np.ndarray, eps: float) -> tuple[float, float]:
    finite = np.isfinite(e) & np.isfinite(t)
    s = float(np.abs(t[finite]).max()) if finite.any() else 0.0
    ref_err = np.abs(e - t)
    on_path = finite & (ref_err <= np.sqrt(eps) * (np.abs(t) + s))
    return _tolerant_max(ref_err[on_path]), s


def _judge(
    actual: np.ndarray,
    expected: np.ndarray,
    truth: np.ndarray | None,
    scale: tuple[float, float] | None,
    fan_in: int = 1,
) -> tuple[np.ndarray | None, np.ndarray, np.ndarray, tuple[float, float, int] | None]:
    """(mask of failing elements, error, magnitude the relative error divides by, the
    reference's own error and the error ratio, or None); mask None when the shapes differ."""
    if actual.shape != expected.shape:
        return None, np.zeros(0), np.zeros(0), None
    if expected.dtype.kind in "biu":
        bad = actual != expected
        err = np.abs(actual.astype(np.float64) - expected.astype(np.float64))
        return bad, err, np.abs(expected.astype(np.float64)), None
    with np.errstate(all="ignore"):
        a, e = actual.astype(np.float64), expected.astype(np.float64)
        usable = truth is not None and truth.shape == expected.shape
        if usable and expected.dtype.name in EPS:
            assert truth is not None
            eps = EPS[expected.dtype.name]
            return _against_truth(a, e, truth.astype(np.float64), eps, scale, fan_in)
        bad, err, mag = _compare_floats(a, e, expected)
        return bad, err, mag, None


def _against_truth(
    a: np.ndarray,
    e: np.ndarray,
    t: np.ndarray,
    eps: float,
    scale: tuple[float, float] | None,
    fan_in: int = 1,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[float, float, int]]:
    """The float64-truth rule of the module docstring."""
    q, s = scale if scale is not None else _scales(e, t, eps)
    finite = np.isfinite(e) & np.isfinite(t)
    ref_err = np.where(finite, np.abs(e - t), 0.0)
    on_path = finite & (ref_err <= np.sqrt(eps) * (np.abs(t) + s))
    floor = FLOOR_ULPS * eps * (np.where(finite, np.abs(t), 0.0) + np.sqrt(max(fan_in, 1)))
    # Off the path, the reference's own error says nothing: the on-path scale only.
    bound = K_REFERENCE * (np.where(on_path, ref_err, 0.0) + q) + floor
    err_t = np.abs(a - t)
    close_to_truth = finite & (err_t <= bound)
    to_reference = np.where(on_path, FLOOR_ULPS * eps * (np.abs(e) + 1.0), bound)
    close_to_reference = np.isfinite(e) & (np.abs(a - e) <= to_reference)
    # Where the reference is not finite the program under test must give the same special.
    same_special = (np.isnan(a) & np.isnan(e)) | (np.isinf(a) & (a == e))
    good = close_to_truth | close_to_reference | same_special
    err = np.where(
        same_special, 0.0, np.nan_to_num(np.where(finite, err_t, np.abs(a - e)), nan=np.inf)
    )
    mag = np.where(finite, np.abs(t), np.abs(e))
    over = np.maximum(err_t - floor, 0.0)
    denominator = np.where(on_path, ref_err, 0.0) + q
    ratio = np.where(over > 0, over / np.where(denominator > 0, denominator, 1.0), 0.0)
    ratio = np.where((over > 0) & (denominator == 0), np.inf, ratio)
    counted = finite & ~close_to_reference
    worst = float(ratio[counted].max()) if counted.any() else 0.0
    largest = float(ref_err.max()) if ref_err.size else 0.0
    return ~good, err, mag, (largest, worst, int((finite & ~on_path).sum()))


def _tolerant_max(errors: np.ndarray) -> float:
    """The ``ceil(n * OUTLIER_FRACTION)``-th largest error (the maximum for n <= 1000)."""
    if errors.size == 0:
        return 0.0
    k = max(1, int(np.ceil(errors.size * OUTLIER_FRACTION)))
    return float(np.partition(errors.ravel(), errors.size - k)[errors.size - k])


def _compare_floats(
    a: np.ndarray, e: np.ndarray, expected: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
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
    return bad, err, mag


def _difference(
    bad: np.ndarray,
    err: np.ndarray,
    mag: np.ndarray,
    ref: tuple[float, float, int] | None = None,
) -> Difference:
    ref_err, ratio, off = ref if ref is not None else (None, None, 0)
    if err.size == 0:
        return Difference(True, 0.0, 0.0, 0, 0, ref_err, off, ratio)
    with np.errstate(all="ignore"):
        rel = np.where(mag > 0, err / np.where(mag > 0, mag, 1), np.where(err > 0, np.inf, 0))
    return Difference(
        not bool(bad.any()),
        float(err.max()),
        float(np.nan_to_num(rel, nan=np.inf).max()),
        int(bad.sum()),
        int(bad.size),
        ref_err,
        off,
        ratio,
    )
