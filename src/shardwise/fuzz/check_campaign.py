"""``shardwise fuzz --check``: random modules through `partition` and `check`.

Each generated module (without the conformance extras: XLA cannot run unregistered ops) is
partitioned by shardwise's own chain and checked on simulated XLA CPU devices. Outcomes:

- ``equal``: the partitioned program computes what the unsharded one does;
- ``skipped-by-partition``: the chain rejects the module with a `ShardwiseError` naming the op
  (a construct it does not partition); the module is regenerated from the next attempt seed,
  up to `_MAX_ATTEMPTS` times, so most indices end in a checked module;

(A module whose meshes do not all have one device count, from 2 to `MAX_DEVICES`, is
regenerated before it is partitioned: the simulated devices run one mesh size at a time.)
- ``cannot-run``: the checker raised `UnsupportedError` (XLA's CPU backend cannot run a
  program, or the checker cannot model it; see docs/check.md, Limits);
  A module whose manual computation returns, unsharded over a manual axis, a value its
  body computes from an argument split over that axis, without a collective, is ill-defined
  (the result is not the same on every device, as its out sharding says; JAX rejects such a
  `shard_map`): counted here too, and not run. The campaign generates its modules with
  ``well_defined_manual`` (each manual result sharded over all its manual axes), so only a
  scalar result can still be one;
- ``failure``: a result differs, or partition or check raised anything else (an internal
  error, or a local program that does not fit its global one). A failure is shrunk with
  `shrink.shrink_program` while it keeps failing the same way, and saved as
  ``<out>/check-<seed>.mlir``.
"""

from __future__ import annotations

import math
import os
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from shardwise.fuzz.generator import generate_program
from shardwise.fuzz.program import Program, op_bodies, print_program

__all__ = [
    "CheckCampaign",
    "CheckFailure",
    "OUTCOMES",
    "check_key",
    "check_module",
    "run_check_campaign",
]

OUTCOMES = ("equal", "skipped-by-partition", "cannot-run", "failure")
MAX_DEVICES = 8
INVALID_LOCAL = "the partitioned program does not verify"
_MAX_ATTEMPTS = 10


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
    mesh_regenerated: int = 0  # attempts dropped for their meshes (`MAX_DEVICES`)
    invalid_local: int = 0  # skipped: ours wrote a program the verifier rejects
    failures: list[CheckFailure] = field(default_factory=list)
    cannot_run: list[str] = field(default_factory=list)  # "<seed>: <reason>"
    seconds: float = 0.0

    def summary(self) -> str:
        counts = ", ".join(f"{k} {self.counts[k]}" for k in OUTCOMES)
        lines = [
            f"modules: {self.modules} ({self.seconds:.1f}s, {self.attempts} generated, "
            f"{self.mesh_regenerated} of them dropped for meshes of different sizes, of one or "
            f"more than {MAX_DEVICES} devices; a module partition rejects is regenerated up to "
            f"{_MAX_ATTEMPTS} times)",
            f"  last attempt of each module: {counts}",
            f"  of the skipped, partition wrote a program that does not verify: "
            f"{self.invalid_local}",
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
            unreplicated = _unreplicated_manual_result(module)
            if unreplicated:
                return Outcome("cannot-run", unreplicated)
            partition(module)
            local = write_text(module)
        except ShardwiseError as e:
            return Outcome("skipped-by-partition", _line(e))
        except Exception as e:  # noqa: BLE001 - any other failure of ours is a finding
            return Outcome("failure", f"partition raised {type(e).__name__}: {_line(e)}")
        try:
            load_text(local, "local.mlir")
        except ShardwiseError as e:
            # Ours wrote a program MLIR's verifier rejects (where the reference's chain stops
            # with the same verifier error after its conversion pass): not checkable.
            return Outcome("skipped-by-partition", f"{INVALID_LOCAL}: {_line(e)}")
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


_COLLECTIVE_PREFIXES = ("stablehlo.all_", "stablehlo.reduce_scatter", "stablehlo.collective_")


def _unreplicated_manual_result(module: object) -> str:
    """Why a manual computation of `module` is ill-defined (see the module docstring), or "".

    A result is ill-defined when its out sharding leaves out a manual axis that the in
    sharding of a block argument it depends on uses, and the body holds no collective."""
    from shardwise.ir import Module

    assert isinstance(module, Module)
    for op in module.walk():
        if op.name != "sdy.manual_computation":
            continue
        if any(o.name.startswith(_COLLECTIVE_PREFIXES) for o in op.walk()):
            continue
        why = _ill_defined_result(op)
        if why:
            return f"ill-defined: {op.location}: {why}"
    return ""


def _ill_defined_result(op: Any) -> str:
    from shardwise.sharding import ManualAxes, TensorShardingPerValue

    manual, ins = op.properties.get("manual_axes"), op.properties.get("in_shardings")
    outs = op.properties.get("out_shardings")
    if not isinstance(manual, ManualAxes):
        return ""
    if not isinstance(ins, TensorShardingPerValue) or not isinstance(outs, TensorShardingPerValue):
        return ""
    block = op.regions[0].entry
    ret = block.terminator
    if ret is None:
        return ""
    arg_axes = [{a.name for d in s.dim_shardings for a in d.axes} for s in ins.shardings]
    for value, sharding in zip(ret.operands, outs.shardings, strict=True):
        missing = set(manual.axes) - {a.name for d in sharding.dim_shardings for a in d.axes}
        varying = set()
        for arg in _block_args_reached(value, block):
            varying |= arg_axes[arg] & set(manual.axes)
        if missing & varying:
            return (
                f"a result unsharded over manual axes {sorted(missing & varying)} comes from "
                "a block argument split over them, with no collective in the body (it is not "
                "the same on every device)"
            )
    return ""


def _block_args_reached(value: Any, block: Any) -> set[int]:
    """The indices of `block`'s arguments that `value` depends on (through nested regions)."""
    args = {id(a): i for i, a in enumerate(block.args)}
    found: set[int] = set()
    stack, seen = [value], set()
    while stack:
        v = stack.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        if id(v) in args:
            found.add(args[id(v)])
            continue
        owner = v.defining_op
        if owner is None:
            continue
        for nested in owner.walk():
            stack.extend(nested.operands)
    return found


def _line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0][:200] if text else type(error).__name__


def _init_is_an_argument(prog: Program) -> bool:
    """Whether a reduce's init value became a func argument (the shrinker rewires deleted
    constants to arguments). A partitioned reduce adds its init once per device: only an
    identity, such as the generator's zero, gives one answer (StableHLO leaves it open)."""
    args = {a.name for a in prog.args}
    stack = list(prog.ops)
    while stack:
        op = stack.pop()
        if op.kind == "reduce" and len(op.operands) > 1 and op.operands[1] in args:
            return True
        for body in op_bodies(op):
            stack.extend(body.ops)
    return False


def _still_fails(outcome: Outcome) -> Callable[[Program], bool]:
    def fails(prog: Program) -> bool:
        if _init_is_an_argument(prog) or not _runnable_meshes(prog):
            return False
        again = check_module(print_program(prog))
        return again.kind == "failure" and again.failure_class == outcome.failure_class

    return fails


def _runnable_meshes(prog: Program) -> bool:
    sizes = {math.prod(size for _, size in mesh.axes) for mesh in prog.meshes}
    return len(sizes) == 1 and 2 <= max(sizes) <= MAX_DEVICES


def _module(seed: int, index: int, report: CheckCampaign) -> tuple[str, Program, Outcome]:
    attempt, tries = 0, 0
    while True:
        key = f"{seed}-{index}-{attempt}"
        attempt += 1
        prog = generate_program(key, conformance_extras=False, well_defined_manual=True)
        report.attempts += 1
        if not _runnable_meshes(prog) and attempt < 1000:
            report.mesh_regenerated += 1
            continue
        outcome = check_module(print_program(prog))
        tries += 1
        if outcome.kind != "skipped-by-partition" or tries == _MAX_ATTEMPTS:
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
        if outcome.reason.startswith(INVALID_LOCAL):
            report.invalid_local += 1
        if outcome.kind == "cannot-run":
            report.cannot_run.append(f"{key}: {outcome.reason}")
        if outcome.kind == "failure":
            report.failures.append(_failure(key, prog, outcome, out, shrink, shrink_program))
        report.seconds = time.monotonic() - start
        if progress and (index + 1) % 25 == 0:
            progress(report)
    report.seconds = time.monotonic() - start
    return report


def check_key(key: str, out: str | None = None, shrink: bool = True) -> tuple[CheckCampaign, str]:
    """Check the one module a campaign generated as attempt `key` (``seed-index-attempt``, as
    a campaign's FAILURE line names it): a report of one module, and the module's text
    (shrunk if it failed and `shrink`)."""
    parts = key.split("-")
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        raise ValueError(f"expected a key seed-index-attempt such as 2030-127-4, got {key!r}")
    from shardwise.fuzz.shrink import shrink_program

    start = time.monotonic()
    report = CheckCampaign(int(parts[0]), modules=1, attempts=1)
    prog = generate_program(key, conformance_extras=False, well_defined_manual=True)
    outcome = check_module(print_program(prog))
    report.counts[outcome.kind] += 1
    text = print_program(prog)
    if outcome.kind in ("cannot-run", "skipped-by-partition"):
        report.cannot_run.append(f"{key} ({outcome.kind}): {outcome.reason}")
    if outcome.kind == "failure":
        failure = _failure(key, prog, outcome, out, shrink, shrink_program)
        report.failures.append(failure)
        text = failure.shrunk
    report.seconds = time.monotonic() - start
    return report, text


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
