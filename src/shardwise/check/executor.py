"""Run programs in a child process that owns jax and its simulated CPU devices.

The device count of jax's CPU client is fixed when jax initialises, from ``XLA_FLAGS``; a
parent that already imported jax (pytest, a notebook) cannot change it. So the executor starts
``python -m shardwise.check.worker`` with the flag in its environment and talks to it over
pipes; one worker serves many programs (start-up and jax import cost ~2 s once). A request
that needs more devices than the worker has restarts it with more.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from shardwise.check.worker import load_arrays, save_arrays

__all__ = ["Executor", "ExecutionError", "shared_executor"]

DEFAULT_DEVICES = 8

# How the worker's XLA compiles: correctness needs no optimized code, and a large unrolled
# program (a 32-layer GPT training step: 377 s to compile at the defaults, of which 42 s is
# the HLO fusion pass and 5 min LLVM at -O3) compiles in about 20 s without fusion and with
# LLVM at -O0. None of these changes what a program computes (XLA CPU does not reassociate
# floats at any level unless fast math is on, and it is off). A flag in the caller's
# XLA_FLAGS comes after these and wins.
CHECK_XLA_FLAGS = (
    "--xla_disable_hlo_passes=fusion",
    "--xla_backend_optimization_level=0",
    "--xla_llvm_disable_expensive_passes=true",
)


class ExecutionError(Exception):
    """XLA could not compile or run a program; `stage` says which ("compile", "run", ...)."""

    def __init__(self, stage: str, message: str) -> None:
        super().__init__(message)
        self.stage = stage
        self.message = message


class Executor:
    """A worker process with `devices` simulated CPU devices (started on first use); a
    program that does not finish within `timeout` seconds is an `ExecutionError`."""

    def __init__(self, devices: int = DEFAULT_DEVICES, timeout: float = 300.0) -> None:
        self.devices = devices
        self.timeout = timeout
        self._proc: subprocess.Popen[str] | None = None
        self._dir = tempfile.TemporaryDirectory(prefix="shardwise-check-")

    def run(
        self,
        text: str,
        inputs: list[np.ndarray],
        devices: int,
        spmd_result_shapes: list[tuple[int, ...]] | None = None,
    ) -> list[np.ndarray]:
        """Compile `text` for `devices` partitions, run it on `inputs`, return its outputs.

        With `spmd_result_shapes` XLA partitions `text` by its own shardings: `inputs` and
        the outputs (of those shapes) are global arrays (see `shardwise.check.worker`)."""
        return self._request(text, [inputs], devices, spmd_result_shapes, batch=False)[0]

    def run_many(
        self, text: str, input_sets: list[list[np.ndarray]], devices: int
    ) -> list[list[np.ndarray]]:
        """`run` for each input set, compiling `text` once."""
        return self._request(text, input_sets, devices, None, batch=True)

    def _request(
        self,
        text: str,
        input_sets: list[list[np.ndarray]],
        devices: int,
        spmd_result_shapes: list[tuple[int, ...]] | None,
        batch: bool,
    ) -> list[list[np.ndarray]]:
        if devices > self.devices:
            self.close()
            self.devices = devices
        proc = self._worker()
        folder = Path(self._dir.name)
        (folder / "program.mlir").write_text(text, encoding="utf-8")
        ins = [str(folder / f"inputs{k}.npz") for k in range(len(input_sets))]
        outs = [str(folder / f"outputs{k}.npz") for k in range(len(input_sets))]
        dtypes = [save_arrays(path, xs) for path, xs in zip(ins, input_sets, strict=True)]
        request: dict[str, Any] = {
            "mlir": str(folder / "program.mlir"),
            "devices": devices,
            "inputs": ins if batch else ins[0],
            "dtypes": dtypes if batch else dtypes[0],
            "outputs": outs if batch else outs[0],
        }
        if spmd_result_shapes is not None:
            request["spmd_result_shapes"] = [list(s) for s in spmd_result_shapes]
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps(request) + "\n")
        proc.stdin.flush()
        line = self._read_reply(proc)
        if not line:  # XLA aborted (a failed CHECK prints its message on stderr)
            self._proc = None
            raise ExecutionError("compile or run", f"XLA crashed (exit code {proc.wait()})")
        reply = json.loads(line)
        if not reply["ok"]:
            raise ExecutionError(reply["stage"], reply["error"])
        got = reply["dtypes"] if batch else [reply["dtypes"]]
        return [load_arrays(path, names) for path, names in zip(outs, got, strict=True)]

    def _read_reply(self, proc: subprocess.Popen[str]) -> str:
        """One reply line, or ExecutionError after `timeout` seconds (the worker is killed:
        a collective whose peers never arrive blocks forever)."""
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], self.timeout)
        if not ready:
            self._proc = None
            proc.kill()
            proc.wait()
            raise ExecutionError(
                "run",
                f"no answer from XLA within {self.timeout:g} s; a "
                "collective whose peers never take part blocks forever",
            )
        return proc.stdout.readline()

    def start(self) -> Executor:
        """Start the worker now (it initialises jax while the caller does other work)."""
        self._worker()
        return self

    def _worker(self) -> subprocess.Popen[str]:
        if self._proc is not None and self._proc.poll() is None:
            return self._proc
        env = dict(os.environ)
        flags = list(CHECK_XLA_FLAGS)
        flags += [f for f in env.get("XLA_FLAGS", "").split() if "device_count" not in f]
        flags.append(f"--xla_force_host_platform_device_count={self.devices}")
        env["XLA_FLAGS"] = " ".join(flags)
        env["JAX_PLATFORMS"] = "cpu"
        src = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH")) if p)
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "shardwise.check.worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        return self._proc

    def close(self) -> None:
        """Stop the worker (it exits when its stdin closes)."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        assert proc.stdin is not None
        proc.stdin.close()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *_exc: Any) -> None:
        self.close()


_SHARED: Executor | None = None


def shared_executor() -> Executor:
    """One worker for the whole process (closed when the interpreter exits)."""
    global _SHARED
    if _SHARED is None:
        import atexit

        _SHARED = Executor()
        atexit.register(_SHARED.close)
    return _SHARED
