"""A mixed-integer linear program, built by rows and solved by HiGHS (`scipy.optimize.milp`).

The planner's solvers state their problems with `MilpBuilder`: variables (binary or
continuous, with bounds and an objective coefficient), sparse rows ``lo <= a.x <= hi``, and
one `solve` with a wall-clock limit. What comes back (`MilpResult`) says whether HiGHS proved
optimality, stopped at the limit with a solution, or found none, plus its dual bound, so a
caller always knows how far a solution may be from the optimum.
"""

from __future__ import annotations

import math
import multiprocessing
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp  # type: ignore[import-untyped]
from scipy.sparse import csr_array  # type: ignore[import-untyped]

__all__ = ["Forked", "MilpBuilder", "MilpResult", "run_forked"]

# scipy.optimize.milp's status codes (HiGHS underneath).
_OPTIMAL, _LIMIT, _INFEASIBLE, _UNBOUNDED = 0, 1, 2, 3
# (status, x, objective, dual bound), as a forked solve sends it back.
_Answer = tuple[str, "np.ndarray | None", "float | None", "float | None"]
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class MilpResult:
    """HiGHS's answer: `x` is None when no feasible point was found in time."""

    status: str  # "optimal", "time_limit", "infeasible", "unbounded", "error"
    x: np.ndarray | None
    objective: float | None
    dual_bound: float | None
    solve_time_s: float

    @property
    def has_solution(self) -> bool:
        return self.x is not None


class MilpBuilder:
    """Variables and sparse rows of one MILP; `solve` hands them to HiGHS once."""

    def __init__(self) -> None:
        self._cost: list[np.ndarray] = []
        self._lower: list[np.ndarray] = []
        self._upper: list[np.ndarray] = []
        self._integral: list[np.ndarray] = []
        self._n = 0
        self._rows: list[np.ndarray] = []
        self._cols: list[np.ndarray] = []
        self._vals: list[np.ndarray] = []
        self._row_lo: list[float] = []
        self._row_hi: list[float] = []

    @property
    def num_vars(self) -> int:
        return self._n

    @property
    def num_rows(self) -> int:
        return len(self._row_lo)

    def add_vars(
        self,
        cost: np.ndarray,
        *,
        binary: bool,
        lower: float = 0.0,
        upper: float | np.ndarray = 1.0,
    ) -> np.ndarray:
        """Add ``len(cost)`` variables (`upper`: one bound for all, or one each); return
        their indices."""
        cost = np.asarray(cost, dtype=np.float64)
        k = len(cost)
        self._cost.append(cost)
        self._lower.append(np.full(k, lower))
        self._upper.append(np.broadcast_to(np.asarray(upper, dtype=np.float64), (k,)).copy())
        self._integral.append(np.full(k, 1 if binary else 0, dtype=np.int8))
        idx = np.arange(self._n, self._n + k)
        self._n += k
        return idx

    def add_row(
        self, cols: np.ndarray, vals: np.ndarray, lo: float = -math.inf, hi: float = math.inf
    ) -> None:
        """Add the row ``lo <= sum(vals * x[cols]) <= hi``."""
        cols = np.asarray(cols, dtype=np.int64)
        self._rows.append(np.full(len(cols), len(self._row_lo), dtype=np.int64))
        self._cols.append(cols)
        self._vals.append(np.asarray(vals, dtype=np.float64))
        self._row_lo.append(lo)
        self._row_hi.append(hi)

    def add_rows(
        self,
        rows: np.ndarray,
        cols: np.ndarray,
        vals: np.ndarray,
        lo: np.ndarray,
        hi: np.ndarray,
    ) -> None:
        """Add ``len(lo)`` rows at once, in coordinate form: entry k is ``vals[k]`` at row
        ``rows[k]`` (0-based among the new rows) and column ``cols[k]``."""
        first = len(self._row_lo)
        self._rows.append(np.asarray(rows, dtype=np.int64) + first)
        self._cols.append(np.asarray(cols, dtype=np.int64))
        self._vals.append(np.asarray(vals, dtype=np.float64))
        self._row_lo.extend(np.asarray(lo, dtype=np.float64).tolist())
        self._row_hi.extend(np.asarray(hi, dtype=np.float64).tolist())

    def solve(self, time_limit_s: float, mip_rel_gap: float = 0.0) -> MilpResult:
        """Solve within `time_limit_s` seconds: HiGHS's own limit, which its presolve may
        overrun (run it under `run_forked` for a deadline that holds)."""
        start = time.monotonic()
        if self._n == 0:
            return MilpResult("optimal", np.zeros(0), 0.0, 0.0, 0.0)
        status, x, objective, bound = self._run_highs(time_limit_s, mip_rel_gap)
        return MilpResult(status, x, objective, bound, time.monotonic() - start)

    def _run_highs(self, time_limit_s: float, mip_rel_gap: float) -> _Answer:
        constraints = []
        if self._row_lo:
            matrix = csr_array(
                (
                    np.concatenate(self._vals),
                    (np.concatenate(self._rows), np.concatenate(self._cols)),
                ),
                shape=(len(self._row_lo), self._n),
            )
            constraints.append(
                LinearConstraint(matrix, np.array(self._row_lo), np.array(self._row_hi))
            )
        res = milp(
            c=np.concatenate(self._cost),
            integrality=np.concatenate(self._integral),
            bounds=Bounds(np.concatenate(self._lower), np.concatenate(self._upper)),
            constraints=constraints,
            options={"time_limit": max(time_limit_s, 0.01), "mip_rel_gap": mip_rel_gap},
        )
        status = {
            _OPTIMAL: "optimal",
            _LIMIT: "time_limit",
            _INFEASIBLE: "infeasible",
            _UNBOUNDED: "unbounded",
        }.get(res.status, "error")
        x = None if res.x is None else np.asarray(res.x)
        bound = res.get("mip_dual_bound")
        bound = None if bound is None or not math.isfinite(bound) else float(bound)
        objective = None if res.fun is None else float(res.fun)
        return (status, x, objective, bound)


def run_forked(work: Callable[[], T], limit_s: float) -> T | None:
    """`work()` in a forked process, stopped after `limit_s` seconds (then None).

    HiGHS cannot be interrupted from Python, and building a large MILP takes time too: in a
    child process both can be abandoned at a deadline that holds, whatever they are doing.
    The child inherits everything by fork (no pickling of the problem); only the answer comes
    back through a pipe. None also when the child dies (out of memory, ...).
    """
    job: Forked[T] = Forked(lambda send: send(work()))
    return job.wait(time.monotonic() + max(limit_s, 0.0))


class Forked(Generic[T]):
    """`work(send)` in a forked process running beside the caller, which takes what it has
    sent when it likes (`latest`, `wait`) and stops it wherever it is (as `run_forked`: HiGHS
    cannot be interrupted from Python). The child gets everything by fork; what it sends
    comes back through a pipe."""

    def __init__(self, work: Callable[[Callable[[T], None]], None]) -> None:
        ctx = multiprocessing.get_context("fork")
        self._receive, send = ctx.Pipe(duplex=False)

        def child() -> None:
            try:
                work(send.send)
            finally:
                send.close()

        self._proc = ctx.Process(target=child, daemon=True)
        with warnings.catch_warnings():  # fork of a process with threads: the child only computes
            warnings.simplefilter("ignore", DeprecationWarning)
            self._proc.start()
        send.close()
        self._last: T | None = None
        self._ended = False

    def latest(self) -> T | None:
        """The last thing sent so far, without waiting."""
        self._take(0.0)
        return self._last

    def wait(self, until: float) -> T | None:
        """Wait until the work ends or `until` (a `time.monotonic` time), then stop it; the
        last thing it sent."""
        while not self._ended and (left := until - time.monotonic()) > 0:
            self._take(left)
        self.stop()
        return self._last

    def stop(self) -> None:
        if not self._ended:
            self._ended = True
            self._receive.close()
        if self._proc.is_alive():
            self._proc.kill()
        self._proc.join(1.0)

    def _take(self, timeout: float) -> None:
        if self._ended:
            return
        try:
            while self._receive.poll(timeout):
                self._last = self._receive.recv()
                timeout = 0.0
        except EOFError:  # the work has ended (or died): nothing more will come
            self._ended = True
            self._receive.close()
