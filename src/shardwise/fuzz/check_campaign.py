"""``shardwise fuzz --check``: random modules through `partition` and `check`.

Each generated module (without the conformance extras: XLA cannot run unregistered ops) is
partitioned by shardwise's own chain and checked on simulated XLA CPU devices. Outcomes:

- ``equal``: the partitioned program computes what the unsharded one does;
- ``skipped-by-partition``: the chain rejects the module with a `ShardwiseError` naming the op
  (a construct it does not partition); the module is regenerated from the next attempt seed,
  up to `_MAX_ATTEMPTS` times, so most indices end in a checked module;
- ``cannot-run``: the checker raised `UnsupportedError` (XLA's CPU backend cannot run a
  program, or the checker cannot model it; see docs/check.md, Limits);
- ``failure``: a result differs, or partition or check raised anything else (an internal
  error, or a local program that does not fit its global one). A failure is shrunk with
  `shrink.shrink_program` while it keeps failing the same way, and saved as
  ``<out>/check-<seed>.mlir``.
"""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

from shardwise.fuzz.generator import generate_program
from shardwise.fuzz.program import Program, print_program

__all__ = ["CheckCampaign", "CheckFailure", "OUTCOMES", "check_module", "run_check_campaign"]

OUTCOMES = ("equal", "skipped-by-partition", "cannot-run", "failure")
_MAX_ATTEMPTS = 5


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one module gave: one of `OUTCOMES`, and a one-line reason (the kind of failure)."""

    kind: str
    reason: str = ""

    @property
    def failure_class(self) -> str:
        """What a shrunk variant must keep: the verdict or the exception's type."""
        return self.reason.split(":", 1)[0]


@dataclass(slots=True)
class CheckFailure:
    seed: str
    reason: str
    original: str
    shrunk: str
    path: str | None


@dataclass(slots=True)
class CheckCampaign:
    seed: int
    modules: int = 0
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(OUTCOMES, 0))
    attempts: int = 0
    failures: list[CheckFailure] = field(default_factory=list)
    cannot_run: list[str] = field(default_factory=list)  # "<seed>: <reason>"
    seconds: float = 0.0

    def summary(self) -> str:
        counts = ", ".join(f"{k} {self.counts[k]}" for k in OUTCOMES)
        lines = [
            f"modules: {self.modules} ({self.seconds:.1f}s, {self.attempts} generated; "
            f"a module partition rejects is regenerated up to {_MAX_ATTEMPTS} times)",
            f"  last attempt of each module: {counts}",
        ]
        lines += [f"  CANNOT RUN {c}" for c in self.cannot_run[:10]]
        lines += [f"  FAILURE seed {f.seed}: {f.reason} -> {f.path}" for f in self.failures]
        return "\n".join(lines)


def check_module(text: str, seed: int = 0) -> Outcome:
    """Partition `text` with shardwise's chain and check it (see the module docstring)."""
    from shardwise.check.checker import check
    from shardwise.errors import ShardwiseError, UnsupportedError
    from shardwise.io.mlir import load_text, write_text
    from shardwise.partition import partition

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # propagation's warnings are not findings here
        try:
            module = load_text(text, "fuzz.mlir")
            partition(module)
            local = write_text(module)
        except ShardwiseError as e:
            return Outcome("skipped-by-partition", _line(e))
        except Exception as e:  # noqa: BLE001 - any other failure of ours is a finding
            return Outcome("failure", f"partition raised {type(e).__name__}: {_line(e)}")
        try:
            result = check(text, local, seed=seed, global_name="fuzz.mlir")
        except UnsupportedError as e:
            return Outcome("cannot-run", _line(e))
        except Exception as e:  # noqa: BLE001
            return Outcome("failure", f"check raised {type(e).__name__}: {_line(e)}")
    if result.equal:
        return Outcome("equal")
    where = result.divergence
    named = f"{where.op_name} at {where.location}" if where else "no op named"
    return Outcome("failure", f"DIFFERENT: first divergence {named}")


def _line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0][:200] if text else type(error).__name__


def _still_fails(outcome: Outcome) -> Callable[[Program], bool]:
    def fails(prog: Program) -> bool:
        again = check_module(print_program(prog))
        return again.kind == "failure" and again.failure_class == outcome.failure_class

    return fails


def _module(seed: int, index: int, report: CheckCampaign) -> tuple[str, Program, Outcome]:
    for attempt in range(_MAX_ATTEMPTS):
        key = f"{seed}-{index}-{attempt}"
        prog = generate_program(key, conformance_extras=False)
        outcome = check_module(print_program(prog))
        report.attempts += 1
        if outcome.kind != "skipped-by-partition":
            break
    return key, prog, outcome


def run_check_campaign(
    seed: int,
    count: int,
    out: str | None = None,
    shrink: bool = True,
    progress: Callable[[CheckCampaign], None] | None = None,
) -> CheckCampaign:
    """Check `count` modules generated from `seed`; shrink and save the failures."""
    from shardwise.fuzz.shrink import shrink_program

    start = time.monotonic()
    report = CheckCampaign(seed)
    for index in range(count):
        key, prog, outcome = _module(seed, index, report)
        report.modules += 1
        report.counts[outcome.kind] += 1
        if outcome.kind == "cannot-run":
            report.cannot_run.append(f"{key}: {outcome.reason}")
        if outcome.kind == "failure":
            report.failures.append(_failure(key, prog, outcome, out, shrink, shrink_program))
        report.seconds = time.monotonic() - start
        if progress and (index + 1) % 25 == 0:
            progress(report)
    report.seconds = time.monotonic() - start
    return report


def _failure(
    key: str,
    prog: Program,
    outcome: Outcome,
    out: str | None,
    shrink: bool,
    shrink_program: Callable[[Program, Callable[[Program], bool]], Program],
) -> CheckFailure:
    small = shrink_program(prog, _still_fails(outcome)) if shrink else prog
    text = print_program(small)
    path = None
    if out:
        os.makedirs(out, exist_ok=True)
        path = os.path.join(out, f"check-{key}.mlir")
        with open(path, "w", encoding="utf-8") as f:
            f.write(f"// shardwise fuzz --check: {outcome.reason}\n{text}")
    return CheckFailure(key, outcome.reason, print_program(prog), text, path)
