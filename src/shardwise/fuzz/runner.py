"""Differential campaigns: random modules through the reference and through shardwise.

For each generated module the reference (a persistent child process, `ReferenceWorker`) and
our passes (in this process) run every requested pass; the printed modules must be identical.
A divergence is shrunk (`shrink.shrink_program`) and the minimal module saved as
``<out>/<pass-slug>-<seed>-<index>.mlir``. A reference crash (counted per module and pass) is recorded, not a divergence.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
import warnings
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

from shardwise.errors import ReferenceDefectError
from shardwise.fuzz.generator import generate_program
from shardwise.fuzz.program import Program, print_program
from shardwise.fuzz.worker import ReferenceOutcome, ReferenceWorker, located

__all__ = [
    "CampaignReport",
    "Divergence",
    "PASS_NAMES",
    "compare_module",
    "run_campaign",
    "run_ours",
]

PASS_NAMES = (
    "sdy-basic-propagate",
    "sdy-aggressive-propagate",
    "sdy-op-priority-propagate",
    "sdy-user-priority-propagate",
)
_MAX_ATTEMPTS = 5


def run_ours(text: str, pass_name: str) -> tuple[bool, str]:
    """Our pass (any registered Shardy name, with options; several chained by commas, as in
    ``sdy-propagation-pipeline,sdy-reshard-to-collectives``) on `text`: (True, printed module)
    or (False, the error)."""
    ok, out, _ = _run_ours_checked(text, pass_name)
    return ok, out


def _run_ours_checked(text: str, pass_name: str) -> tuple[bool, str, bool]:
    """`run_ours` plus whether a failure was a clear `ShardwiseError` (not a Python bug)."""
    from shardwise.errors import ShardwiseError
    from shardwise.io.mlir import load_text, write_text
    from shardwise.passes import prepare_pass

    try:
        run = prepare_pass(pass_name)  # a chain verifies between passes, as MLIR does
        # The generator writes ops of unregistered dialects; the reference allows them too. A
        # module with locations is printed with them, named as the reference names it ("-").
        name = "-" if located(text) else "fuzz.mlir"
        module = load_text(text, name, allow_unregistered_dialect=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # Shardy's warnings go to its log, not compared
            run(module)
        return True, write_text(module, debug_info=located(text)), True
    except ShardwiseError as e:
        return False, f"{type(e).__name__}: {e}", True
    except Exception as e:  # noqa: BLE001 - any failure of ours is a finding
        return False, f"{type(e).__name__}: {e}", False


def _same(ref: tuple[bool, str], ours: tuple[bool, str]) -> bool:
    if ref[0] != ours[0]:
        return False
    return ref[1] == ours[1] if ref[0] else True


@dataclass(slots=True)
class Divergence:
    pass_name: str
    seed: str
    original: str
    shrunk: str
    path: str | None
    reason: str


@dataclass(slots=True)
class CampaignReport:
    passes: tuple[str, ...]
    modules: int = 0
    matches: dict[str, int] = field(default_factory=dict)
    divergences: list[Divergence] = field(default_factory=list)
    crashes: int = 0
    crash_seeds: list[str] = field(default_factory=list)  # "<seed> <pass>"
    # Where the reference crashed, ours must still give a result or a ShardwiseError: the
    # "<seed> <pass>: <exception>" cases where ours raised anything else.
    ours_bugs_on_crashes: list[str] = field(default_factory=list)
    rejects: int = 0
    defect_seeds: list[str] = field(default_factory=list)  # "<seed> <pass>"
    seconds: float = 0.0

    def merge(self, other: CampaignReport) -> None:
        self.modules += other.modules
        for p, n in other.matches.items():
            self.matches[p] = self.matches.get(p, 0) + n
        self.divergences += other.divergences
        self.crashes += other.crashes
        self.crash_seeds += other.crash_seeds
        self.ours_bugs_on_crashes += other.ours_bugs_on_crashes
        self.rejects += other.rejects
        self.defect_seeds += other.defect_seeds

    def summary(self) -> str:
        lines = [f"modules: {self.modules} ({self.seconds:.1f}s)"]
        for p in self.passes:
            div = sum(1 for d in self.divergences if d.pass_name == p)
            lines.append(f"  {p}: matches {self.matches.get(p, 0)}, divergences {div}")
        lines.append(
            f"reference crashes (module x pass): {self.crashes}, "
            f"reference rejects (regenerated): {self.rejects}"
        )
        if self.crash_seeds:
            more = len(self.crash_seeds) - 5
            shown = ", ".join(self.crash_seeds[:5]) + (f", ... ({more} more)" if more > 0 else "")
            lines.append(f"  reference crashed on: {shown}")
        lines.append(
            "  of which ours raised a Python error (not a ShardwiseError): "
            f"{len(self.ours_bugs_on_crashes)}"
        )
        lines += [f"    {b}" for b in self.ours_bugs_on_crashes]
        if self.defect_seeds:
            lines.append(
                "  known reference defects (ours refused, the reference wrote a wrong program): "
                f"{len(self.defect_seeds)}: {', '.join(self.defect_seeds[:5])}"
            )
        for d in self.divergences:
            lines.append(f"  DIVERGENCE {d.pass_name} seed {d.seed}: {d.reason} -> {d.path}")
        return "\n".join(lines)


def compare_module(
    worker: ReferenceWorker, text: str, passes: list[str]
) -> tuple[ReferenceOutcome, list[str]]:
    """Reference and ours on every pass: per pass "match", "diverge", "crash" (reference) or
    "defect" (ours raised `ReferenceDefectError`: a construct the reference is known to get
    wrong, e.g. a program with garbage constants, where the reference did not crash).

    Both rejecting a module (say, a verifier error after a pass) is a match when ours raised
    a `ShardwiseError`; a Python error of ours is a divergence even then.
    """
    ref = worker.run(text, passes)
    if not ref.parsed or ref.crashed:
        return ref, ["crash"] * len(passes)
    status = []
    for j, p in enumerate(passes):
        if ref.pass_crashed and ref.pass_crashed[j]:
            status.append("crash")
            continue
        ok, out, clear = _run_ours_checked(text, p)
        if _same(ref.outputs[j], (ok, out)) and clear:
            status.append("match")
        elif out.startswith(f"{ReferenceDefectError.__name__}:"):
            status.append("defect")  # ours refuses a construct the reference mishandles
        else:
            status.append("diverge")
    return ref, status


def _diverges(worker: ReferenceWorker, pass_name: str) -> Callable[[Program], bool]:
    def check(prog: Program) -> bool:
        ref, status = compare_module(worker, print_program(prog), [pass_name])
        return ref.parsed and status[0] == "diverge"

    return check


def _reason(ref: ReferenceOutcome, text: str, pass_name: str, index: int) -> str:
    ok, out = run_ours(text, pass_name)
    if not ok:
        return f"ours failed: {out[:200]}"
    if not ref.outputs[index][0]:
        return f"reference failed: {ref.outputs[index][1][:200]}"
    return "printed modules differ"


def _slug(pass_name: str) -> str:
    """A file-name part for `pass_name`: its words, and for a long chain its first pass and a
    hash of the whole (file names are limited to 255 bytes)."""
    slug = re.sub(r"[^\w]+", "-", pass_name.removeprefix("sdy-")).strip("-")
    if len(slug) <= 80:
        return slug
    digest = hashlib.sha256(pass_name.encode()).hexdigest()[:10]
    return f"{slug[:60].rstrip('-')}-{digest}"


def _chunk(
    seed: int, indices: list[int], passes: tuple[str, ...], out: str | None, shrink: bool
) -> CampaignReport:
    from shardwise.fuzz.shrink import shrink_program

    report = CampaignReport(passes)
    with ReferenceWorker() as worker:
        for i in indices:
            for attempt in range(_MAX_ATTEMPTS):
                key = f"{seed}-{i}-{attempt}"
                prog = generate_program(key)
                text = print_program(prog)
                ref, status = compare_module(worker, text, list(passes))
                if ref.parsed:
                    break
                report.rejects += 1
            report.modules += 1
            if not ref.parsed:
                continue  # every attempt rejected: counted in `rejects` only
            for j, p in enumerate(passes):
                if status[j] == "crash":
                    report.crashes += 1
                    report.crash_seeds.append(f"{key} {p}")
                    _, error, clear = _run_ours_checked(text, p)
                    if not clear:
                        report.ours_bugs_on_crashes.append(f"{key} {p}: {error[:200]}")
                    continue
                if status[j] == "defect":
                    report.defect_seeds.append(f"{key} {p}")
                    continue
                if status[j] == "match":
                    report.matches[p] = report.matches.get(p, 0) + 1
                    continue
                reason = _reason(ref, text, p, j)
                small = shrink_program(prog, _diverges(worker, p)) if shrink else prog
                shrunk = print_program(small)
                path = None
                if out:
                    os.makedirs(out, exist_ok=True)
                    path = os.path.join(out, f"{_slug(p)}-{key}.mlir")
                    with open(path, "w") as f:
                        f.write(shrunk)
                report.divergences.append(Divergence(p, key, text, shrunk, path, reason))
    return report


def run_campaign(
    seed: int,
    count: int,
    passes: list[str] | tuple[str, ...] = PASS_NAMES,
    jobs: int = 1,
    out: str | None = None,
    shrink: bool = True,
    progress: Callable[[CampaignReport], None] | None = None,
) -> CampaignReport:
    """Generate `count` modules from `seed`, compare every pass, shrink and save divergences."""
    passes = tuple(passes)
    start = time.monotonic()
    report = CampaignReport(passes)
    batch = 50
    chunks = [list(range(k, min(count, k + batch))) for k in range(0, count, batch)]
    if jobs <= 1:
        for c in chunks:
            report.merge(_chunk(seed, c, passes, out, shrink))
            report.seconds = time.monotonic() - start
            if progress:
                progress(report)
    else:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            futures = [pool.submit(_chunk, seed, c, passes, out, shrink) for c in chunks]
            for fut in futures:
                report.merge(fut.result())
                report.seconds = time.monotonic() - start
                if progress:
                    progress(report)
    report.seconds = time.monotonic() - start
    return report
