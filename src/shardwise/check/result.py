"""What `check` returns: the verdict per result (`ResultCheck`) and for the whole program
(`CheckResult`), as terminal text, JSON and a notebook's HTML."""

from __future__ import annotations

from dataclasses import dataclass

from shardwise.check.localize import Divergence
from shardwise.check.values import Difference

__all__ = ["DEFAULT_INPUTS", "CheckResult", "ResultCheck"]


@dataclass(frozen=True, slots=True)
class ResultCheck:
    """One result of main: how far the partitioned value is from the reference."""

    index: int
    sharding: str
    difference: Difference  # of the reassembled value (the first replica of each slice)
    differing_devices: tuple[int, ...]  # device ids whose piece differs from the reference's
    disagreeing_devices: tuple[int, ...]  # device ids whose replica differs from an earlier one
    name: str = ""  # the user's name of the result (``jax.result_info``), if the module has it
    # It differs only where the unsharded program itself is unstable (`conditioning`).
    ill_conditioned: bool = False
    # It differs only by rounding the unsharded program itself magnifies there, by no more
    # than rounding-level changes of its inputs move it (`conditioning`): equal.
    amplified: bool = False
    # A float result with no finite element in the reference: equal proves only that the
    # NaNs and infinities are in the same places.
    vacuous: bool = False

    @property
    def equal(self) -> bool:
        return (self.difference.equal and not self.differing_devices) or self.amplified

    def __str__(self) -> str:
        named = f" {self.name}" if self.name else ""
        text = f"result {self.index}{named} ({self.sharding}): {self.difference}"
        if self.differing_devices and not self.amplified:
            text += f"; wrong on devices {', '.join(map(str, self.differing_devices))}"
        if self.disagreeing_devices:
            ids = ", ".join(map(str, self.disagreeing_devices))
            text += f"; replicas disagree on devices {ids}"
        if self.vacuous:
            text += "; vacuous: every element is NaN or infinite in the unsharded program"
        if self.amplified:
            text += (
                "; equal within the unsharded program's own sensitivity: it moves as far when "
                "its inputs change at rounding level (rounding it magnifies, no flipped decision)"
            )
        if self.ill_conditioned:
            text += (
                "; ill-conditioned: every differing element also moves when the unsharded "
                "program's inputs change at rounding level (a near-tie of a discrete decision)"
            )
        return text


DEFAULT_INPUTS = "normal(0, 1)"


@dataclass(frozen=True, slots=True)
class CheckResult:
    """The verdict: equal when every result matches the reference within tolerance."""

    global_name: str
    local_name: str
    devices: int
    seed: int
    results: tuple[ResultCheck, ...]
    divergence: Divergence | None
    # What the results were compared with: "unsharded" (one device), "xla" (XLA's own
    # partitioning of the annotated program, for a program with manual computations), or
    # "xla+unsharded": XLA's for `xla_results` (they depend on a manual or named
    # computation), the unsharded run of the program without them for the rest;
    # "around-computations": for `xla_results`, the unsharded run of the ops around the
    # computations, fed with the computations' results from XLA's run (used where XLA's
    # whole run disagrees: `checker._around_computations`).
    reference: str = "unsharded"
    # --against xla: XLA's own partitioning vs the unsharded reference, per result.
    against_xla: tuple[Difference, ...] | None = None
    # How floats were compared: "float64" (against a float64 run of the unsharded program,
    # `values`), else why not, and the fixed tolerance was used.
    tolerance: str = "float64"
    # How the float inputs were drawn: "normal(0, 1)", or scaled where those overflowed
    # (`scaled_inputs`).
    inputs: str = DEFAULT_INPUTS
    xla_results: tuple[int, ...] = ()
    # What the checker changed in the program under test so that XLA runs it, each an
    # equivalent rewrite (`fft_layout`).
    notes: tuple[str, ...] = ()

    @property
    def equal(self) -> bool:
        """Whether shardwise's partitioned program matches the reference."""
        return all(r.equal for r in self.results)

    @property
    def undecided(self) -> bool:
        """Not equal, but every result that differs does so only where the unsharded program
        is itself unstable at rounding level (`conditioning`): neither EQUAL nor DIFFERENT."""
        wrong = [r for r in self.results if not r.equal]
        return bool(wrong) and all(r.ill_conditioned and not r.disagreeing_devices for r in wrong)

    @property
    def verdict(self) -> str:
        """EQUAL, DIFFERENT or UNDECIDED."""
        return "EQUAL" if self.equal else "UNDECIDED" if self.undecided else "DIFFERENT"

    @property
    def xla_equal(self) -> bool | None:
        """--against xla: whether XLA's own partitioning matches too (None: not asked)."""
        return None if self.against_xla is None else all(d.equal for d in self.against_xla)

    def __bool__(self) -> bool:
        return self.equal

    def to_json(self) -> dict[str, object]:
        """The verdict as data: per result its name, sharding and errors; the named op."""
        return {
            "equal": self.equal,
            "verdict": self.verdict,
            "tolerance": self.tolerance,
            "inputs": self.inputs,
            "vacuous": [r.index for r in self.results if r.vacuous],
            "global": self.global_name,
            "local": self.local_name,
            "devices": self.devices,
            "seed": self.seed,
            "reference": self.reference,
            "xla_results": list(self.xla_results),
            "notes": list(self.notes),
            "results": [
                {
                    "index": r.index,
                    "name": r.name,
                    "sharding": r.sharding,
                    "equal": r.equal,
                    "max_abs_error": r.difference.max_abs_error,
                    "max_rel_error": r.difference.max_rel_error,
                    "reference_error": r.difference.reference_error,
                    "ill_conditioned": r.ill_conditioned,
                    "amplified": r.amplified,
                    "wrong_devices": list(r.differing_devices),
                }
                for r in self.results
            ],
            "divergence": None if self.divergence is None else str(self.divergence),
            "xla_equal": self.xla_equal,
        }

    def _repr_html_(self) -> str:
        """What a notebook shows: the terminal text, verdict first."""
        import html

        color = {"EQUAL": "#1a7f37", "UNDECIDED": "#9a6700"}.get(self.verdict, "#cf222e")
        return f'<pre style="border-left:4px solid {color};padding-left:6px">{html.escape(str(self))}</pre>'

    def __str__(self) -> str:
        lines = [
            f"{self.local_name} vs {self.global_name} on {self.devices} devices "
            f"(seed {self.seed}): {self.verdict}"
        ]
        if self.tolerance != "float64":
            lines.append(f"  floats compared with the fixed tolerance: {self.tolerance}")
        lines.extend(f"  note: {note}" for note in self.notes)
        if self.inputs != DEFAULT_INPUTS:
            lines.append(f"  inputs: {self.inputs}")
        vacuous = [r.index for r in self.results if r.vacuous]
        if vacuous:
            lines.append(
                f"  warning: {len(vacuous)} of {len(self.results)} results are NaN or infinite "
                "everywhere in the unsharded program at these inputs (it overflows); their "
                "check shows only that the partitioned program overflows in the same places"
            )
        if self.reference == "xla":
            lines.append(
                "  reference: XLA's own SPMD partitioning of the annotated program (it has a "
                "manual or named computation, which has no unsharded meaning)"
            )
        elif self.reference == "xla+unsharded":
            lines.append(
                "  reference: XLA's own SPMD partitioning of the annotated program for results "
                f"{', '.join(map(str, self.xla_results))} (they depend on a manual or named "
                "computation, which has no unsharded meaning); the unsharded program without "
                "them for the rest"
            )
        elif self.reference == "around-computations":
            lines.append(
                f"  reference: for result{'s' if len(self.xla_results) > 1 else ''} "
                f"{', '.join(map(str, self.xla_results))}, the unsharded program around its "
                "manual or named computations, fed with their results from XLA's own SPMD "
                "partitioning (used where XLA's run of the whole program disagrees or fails: "
                "the ops around the computations have an unsharded meaning)"
            )
        lines.extend(f"  {r}" for r in self.results)
        if self.divergence is not None:
            lines.append(str(self.divergence))
        elif not self.equal:
            lines.append("no single op could be named (see docs/check.md, localization)")
        if self.against_xla is not None:
            verdict = "EQUAL" if self.xla_equal else "DIFFERENT"
            lines.append(f"XLA's own SPMD partitioning vs {self.global_name}: {verdict}")
            lines.extend(f"  result {i}: {d}" for i, d in enumerate(self.against_xla))
        return "\n".join(lines)
