"""Is a difference a near-tie? The unsharded program's own sensitivity to rounding.

A discrete decision on floats (``top_k``, an argmax, ``sort``, ``compare``) whose two sides
differ by less than the rounding error flips when the sums before it are added in another
order, and everything after it moves by the values' own size: a token routed to another
expert, a row picked by another index. No tolerance on the results tells such a flip from a
wrong collective. What does: the unsharded program's own behaviour at rounding-level changes
of its inputs. The checker runs the reference again on `PAIRS` pairs of perturbed inputs,
every float input multiplied by ``1 + d`` and ``1 - d`` with ``d`` normal of standard
deviation `PERTURBATION_ULPS` ulps of its dtype (both signs, so a tie that one sign keeps
the other flips). An element of a result is *unstable* when one of those runs fails the
checker's own comparison with the unperturbed reference there (`values.bad_elements`): a
change of the inputs at the level of rounding moves it by more than rounding explains.

A result that differs is *ill-conditioned* (the verdict UNDECIDED, not EQUAL and not
DIFFERENT) when every element that fails is unstable and, for floats, is off from the
reference by at most `MAGNITUDE` times the largest move the perturbed runs made there. A
wrong program differs where the reference is stable, or by more than a flip moves it.
"""

from __future__ import annotations

import numpy as np

from shardwise.check.values import EPS, bad_elements

__all__ = ["perturbed_inputs", "explained", "PAIRS", "PERTURBATION_ULPS", "MAGNITUDE"]

PAIRS = 2
PERTURBATION_ULPS = 4.0
MAGNITUDE = 2.0
_EPS64 = 2.0**-52


def perturbed_inputs(inputs: tuple[np.ndarray, ...], seed: int) -> list[list[np.ndarray]]:
    """`2 * PAIRS` copies of `inputs`, their float arrays perturbed (integers kept)."""
    rng = np.random.default_rng([seed, 0x5EED])
    sets: list[list[np.ndarray]] = []
    for _ in range(PAIRS):
        noise = [rng.standard_normal(x.shape) if x.dtype.kind == "f" else None for x in inputs]
        for sign in (1.0, -1.0):
            sets.append([_perturb(x, d, sign) for x, d in zip(inputs, noise, strict=True)])
    return sets


def _perturb(x: np.ndarray, noise: np.ndarray | None, sign: float) -> np.ndarray:
    if noise is None:
        return x
    ulp = EPS.get(x.dtype.name, _EPS64)
    scale = 1.0 + sign * PERTURBATION_ULPS * ulp * noise
    return (x.astype(np.float64) * scale).astype(x.dtype)


def explained(
    actual: np.ndarray,
    expected: np.ndarray,
    truth: np.ndarray | None,
    perturbed: list[np.ndarray],
) -> bool:
    """Whether every failing element of `actual` is an unstable element of the reference
    (module docstring); False when nothing fails or shapes differ."""
    if actual.shape != expected.shape or any(r.shape != expected.shape for r in perturbed):
        return False
    bad = bad_elements(actual, expected, truth)
    if not bad.any() or not perturbed:
        return False
    unstable = np.zeros(expected.shape, dtype=bool)
    for run in perturbed:
        unstable |= bad_elements(run, expected, truth)
    if not unstable[bad].all():
        return False
    if expected.dtype.kind not in "fc":
        return True
    with np.errstate(all="ignore"):
        e = expected.astype(np.float64)
        moved = np.max([np.abs(r.astype(np.float64) - e) for r in perturbed], axis=0)
        off = np.abs(actual.astype(np.float64) - e)
        within = (off <= MAGNITUDE * moved) | (np.isnan(off) & np.isnan(moved))
    return bool(within[bad].all())
