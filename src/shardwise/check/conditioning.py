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

A float result whose failing elements are all unstable, off by at most `MAGNITUDE` times the
largest move, and off by little against their own size (at most ``sqrt(eps) * |value|``) is
*amplified* instead: no decision flipped, the program only magnifies rounding there (the
square of a sum that cancels: fuzz --check 2054-2-10; an exponential of an exponential of a
sum, where 4-ulp perturbations of the inputs move the value by 1.4e-3 of itself and the
partitioned order of additions by 1.3e-4: 2060-485-2), and the partitioned program's other
order of additions is such a rounding. That result is equal. A flip leaves a value off by its
own size, a wrong collective by far more than the perturbed runs move it.
"""

from __future__ import annotations

import numpy as np

from shardwise.check.values import EPS, bad_elements

__all__ = ["perturbed_inputs", "Sensitivity", "PAIRS", "ROUNDS", "PERTURBATION_ULPS", "MAGNITUDE"]

PAIRS = 2  # pairs of perturbed runs per round (one compile)
ROUNDS = 8  # at most; a round that explains no further element ends the search
PERTURBATION_ULPS = 4.0
MAGNITUDE = 2.0
_EPS64 = 2.0**-52


def perturbed_inputs(
    inputs: tuple[np.ndarray, ...], seed: int, round_: int = 0
) -> list[list[np.ndarray]]:
    """`2 * PAIRS` copies of `inputs`, their float arrays perturbed (integers kept)."""
    rng = np.random.default_rng([seed, 0x5EED, round_])
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


class Sensitivity:
    """One result that differs: its failing elements, and what the perturbed reference runs
    seen so far say about them (module docstring)."""

    def __init__(
        self,
        actual: np.ndarray,
        expected: np.ndarray,
        truth: np.ndarray | None,
        fan_in: int = 1,
    ):
        self.expected, self.truth, self.fan_in = expected, truth, fan_in
        self.usable = actual.shape == expected.shape
        shape = expected.shape
        self.bad = (
            bad_elements(actual, expected, truth, fan_in) if self.usable else np.ones(shape, bool)
        )
        self.floats = expected.dtype.kind in "fc"
        with np.errstate(all="ignore"):
            e = expected.astype(np.float64) if self.floats else None
            self.off = np.abs(actual.astype(np.float64) - e) if e is not None else None
        self.unstable = np.zeros(shape, dtype=bool)
        self.moved = np.zeros(shape, dtype=np.float64)

    def add(self, run: np.ndarray) -> None:
        """Take one perturbed reference run into account."""
        if not self.usable or run.shape != self.expected.shape:
            self.usable = False
            return
        self.unstable |= bad_elements(run, self.expected, self.truth, self.fan_in)
        if self.floats:
            with np.errstate(all="ignore"):
                move = np.abs(run.astype(np.float64) - self.expected.astype(np.float64))
            self.moved = np.fmax(self.moved, np.nan_to_num(move, nan=np.inf))

    def unexplained(self) -> int:
        """Failing elements not (yet) shown to be unstable near-ties."""
        if not self.usable:
            return int(self.bad.size)
        ok = self.unstable
        if self.off is not None:
            with np.errstate(all="ignore"):
                ok = ok & ((self.off <= MAGNITUDE * self.moved) | np.isnan(self.off))
        return int((self.bad & ~ok).sum())

    def amplified(self) -> bool:
        """Explained, and every failing float element off by little against its size
        (module docstring): rounding the program magnifies, no flip."""
        if not self.explained or self.off is None or self.expected.dtype.name not in EPS:
            return False
        with np.errstate(all="ignore"):
            size = np.abs(self.expected.astype(np.float64))
            small = self.off <= np.sqrt(EPS[self.expected.dtype.name]) * size
        return bool(np.all(small[self.bad]))

    @property
    def explained(self) -> bool:
        """Every failing element is an unstable element of the reference."""
        return bool(self.bad.any()) and self.unexplained() == 0
