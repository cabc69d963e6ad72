"""A persistent reference worker: one child process running Shardy on many modules.

Starting a Python process that imports jaxlib costs about a second; a campaign of thousands of
modules therefore talks to one long-lived child over pipes (one JSON object per line). When the
reference crashes on a module the child dies; `ReferenceWorker` reports that module as crashed
and starts a fresh child for the next one.

Request: ``{"text": ..., "passes": [...]}``. Reply: ``{"parsed": bool, "error": str,
"outputs": [{"ok": bool, "text": str}, ...]}`` — one output per pass, each run on a fresh parse.
"""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
from dataclasses import dataclass

__all__ = ["ReferenceOutcome", "ReferenceWorker", "main"]


@dataclass(frozen=True, slots=True)
class ReferenceOutcome:
    """What the reference did with one module: rejected it, crashed, or ran each pass."""

    parsed: bool
    crashed: bool
    error: str
    outputs: tuple[tuple[bool, str], ...]  # (pass succeeded, printed module or error)


class ReferenceWorker:
    """Client side of the worker child; restart-on-crash, per-module timeout."""

    def __init__(self, timeout: float = 60.0) -> None:
        self.timeout = timeout
        self.proc: subprocess.Popen | None = None

    def _start(self) -> subprocess.Popen:
        env = dict(os.environ)
        return subprocess.Popen(
            [sys.executable, "-m", "shardwise.fuzz.worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            bufsize=1,
            env=env,
        )

    def run(self, text: str, passes: list[str]) -> ReferenceOutcome:
        if self.proc is None or self.proc.poll() is not None:
            self.proc = self._start()
        proc = self.proc
        try:
            proc.stdin.write(json.dumps({"text": text, "passes": passes}) + "\n")
            proc.stdin.flush()
        except (BrokenPipeError, OSError):
            return self._crashed("reference worker died before the request")
        line = self._read_line(proc)
        if not line:
            return self._crashed("reference crashed (worker exited)")
        data = json.loads(line)
        outputs = tuple((o["ok"], o["text"]) for o in data["outputs"])
        return ReferenceOutcome(data["parsed"], False, data["error"], outputs)

    def _read_line(self, proc: subprocess.Popen) -> str:
        sel = selectors.DefaultSelector()
        sel.register(proc.stdout, selectors.EVENT_READ)
        ready = sel.select(self.timeout)
        sel.close()
        if not ready:
            return ""
        return proc.stdout.readline()

    def _crashed(self, message: str) -> ReferenceOutcome:
        self.close()
        return ReferenceOutcome(True, True, message, ())

    def close(self) -> None:
        if self.proc is None:
            return
        proc, self.proc = self.proc, None
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                stream.close()

    def __enter__(self) -> ReferenceWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _serve_one(request: dict) -> dict:
    from shardwise.io.reference import ReferenceError, run_pass

    try:
        run_pass(request["text"], None)
    except ReferenceError as e:
        return {"parsed": False, "error": "\n".join(e.diagnostics) or str(e), "outputs": []}
    outputs = []
    for name in request["passes"]:
        try:
            outputs.append({"ok": True, "text": run_pass(request["text"], name)})
        except ReferenceError as e:
            outputs.append({"ok": False, "text": "\n".join(e.diagnostics) or str(e)})
    return {"parsed": True, "error": "", "outputs": outputs}


def main() -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        reply = _serve_one(json.loads(line))
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
