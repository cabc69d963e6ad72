"""Run OpenXLA Shardy (the C++ reference inside jaxlib) on MLIR text.

This module owns every call into ``jax._src`` that runs Shardy passes; the differential tests
and `shardwise fuzz` go through it. `run_pass` runs in this process; `run_pass_isolated` runs
in a child process, because the reference aborts or segfaults on some inputs.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass

__all__ = ["ReferenceResult", "pipeline_text", "run_pass", "run_pass_isolated", "ReferenceError"]

# Passes that are anchored on functions must be nested under func.func.
FUNC_PASSES = frozenset(
    {
        "sdy-populate-op-sharding-rules",
        "sdy-insert-explicit-reshards",
        "sdy-reshard-to-collectives",
        "sdy-sharding-constraint-to-reshard",
        "sdy-sink-data-flow-edges",
        "sdy-sink-func-data-flow-edges",
        "sdy-drop-sharding-rules",
        "sdy-constant-or-scalar-merger",
        "sdy-verify-unreduced-axes",
        "sdy-explicit-gather-scatter-batching",
        "sdy-remove-all-gather-reduce-scatter-for-cmv1",
        "sdy-pad-for-divisibility",
        "sdy-resolve-single-device-sharding",
    }
)


class ReferenceError(Exception):
    """The reference rejected the input (parse/verify error or a pass failure)."""

    def __init__(self, message: str, diagnostics: list[str] | None = None) -> None:
        super().__init__(message)
        self.diagnostics = diagnostics or []


@dataclass(frozen=True)
class ReferenceResult:
    ok: bool
    text: str  # printed module (pretty form) when ok, else the error text
    crashed: bool = False


def pipeline_text(passes: str | list[str]) -> str:
    """``"sdy-basic-propagate{a=b}"`` -> ``"builtin.module(sdy-basic-propagate{a=b})"``.

    A string already starting with ``builtin.module(`` is returned unchanged.
    """
    if isinstance(passes, str):
        if passes.startswith("builtin.module("):
            return passes
        passes = [passes]
    parts = []
    for p in passes:
        base = p.split("{", 1)[0]
        parts.append(f"func.func({p})" if base in FUNC_PASSES else p)
    return "builtin.module(" + ",".join(parts) + ")"


def _context(threads: bool = True):
    from jax._src.interpreters import mlir as jax_mlir

    ctx = jax_mlir.make_ir_context()
    if not threads:
        # Shardy on jax's shared LLVM thread pool can hang: `sdy-pad-for-divisibility` after
        # the pipeline never returns on fuzz module 2099-32-0 (in process or forked), and on
        # one thread stops with the verifier error it should give. Same output otherwise.
        ctx.enable_multithreading(False)
    return ctx


def parse_and_print(text: str, generic: bool = False) -> str:
    """Parse with the reference (which verifies) and print; raises `ReferenceError`."""
    return run_pass(text, None, generic=generic)


def run_pass(
    text: str,
    passes: str | list[str] | None,
    generic: bool = False,
    debug_info: bool = False,
    allow_unregistered_dialect: bool = False,
    threads: bool = True,
) -> str:
    """Run `passes` on `text` with Shardy in this process and return the printed module.

    `debug_info` prints locations too (to compare the locations passes give new ops);
    `allow_unregistered_dialect` accepts ops of unknown dialects (``sdy_opt
    -allow-unregistered-dialect``); `threads=False` runs the passes on this thread only (what
    a process forked from one that imported jax must do, see `_context`).
    """
    from jax._src.lib.mlir import ir, passmanager

    with _context(threads) as ctx:
        ctx.allow_unregistered_dialects = allow_unregistered_dialect
        try:
            module = ir.Module.parse(text)
            if passes:
                passmanager.PassManager.parse(pipeline_text(passes)).run(module.operation)
        except ir.MLIRError as e:
            diags = [f"{d.location}: {d.message}" for d in e.error_diagnostics]
            raise ReferenceError(str(e), diags) from None
        asm = module.operation.get_asm(print_generic_op_form=generic, enable_debug_info=debug_info)
        assert isinstance(asm, str), "get_asm prints text unless asked for bytecode"
        return asm


_CHILD = r"""
import json, sys
from shardwise.io.reference import run_pass, ReferenceError
req = json.loads(sys.stdin.read())
try:
    out = run_pass(
        req["text"], req["passes"], req["generic"],
        allow_unregistered_dialect=req.get("unregistered", False),
    )
    sys.stdout.write(json.dumps({"ok": True, "text": out}))
except ReferenceError as e:
    sys.stdout.write(json.dumps({"ok": False, "text": "\n".join(e.diagnostics) or str(e)}))
"""


def run_pass_isolated(
    text: str,
    passes: str | list[str] | None,
    generic: bool = False,
    timeout: float = 120,
    allow_unregistered_dialect: bool = False,
) -> ReferenceResult:
    """Like `run_pass`, in a child process: a crash is reported, not inherited."""
    req = json.dumps(
        {
            "text": text,
            "passes": passes,
            "generic": generic,
            "unregistered": allow_unregistered_dialect,
        }
    )
    try:
        proc = subprocess.run(
            [sys.executable, "-c", _CHILD],
            input=req,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return ReferenceResult(False, "reference timed out", crashed=True)
    if proc.returncode != 0:
        return ReferenceResult(False, proc.stderr[-2000:], crashed=True)
    data = json.loads(proc.stdout)
    return ReferenceResult(data["ok"], data["text"])
