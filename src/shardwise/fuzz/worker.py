"""A persistent reference worker: one child process running Shardy on many modules.

Starting a Python process that imports jaxlib costs about a second; a campaign of thousands of
modules therefore talks to one long-lived child over pipes (one JSON object per line). When the
reference crashes on a module the child dies; `ReferenceWorker` reports that module as crashed
and starts a fresh child for the next one.

Request: ``{"text": ..., "passes": [...]}``. Reply: ``{"parsed": bool, "error": str,
"outputs": [{"ok": bool, "text": str, "crashed"?: bool}, ...]}`` — one output per pass. The
child loads jaxlib once and forks for every parse and pass, so a reference crash (segfault)
kills only that fork; the pass is reported as crashed and the worker lives on.
"""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
from dataclasses import dataclass

__all__ = ["ReferenceOutcome", "ReferenceWorker", "located", "main", "split_passes"]


def located(text: str) -> bool:
    """Whether a generated module has explicit locations (then both sides print them)."""
    return " loc(" in text


def split_passes(spec: str) -> list[str]:
    """``"a{x=1,y=2},b"`` -> ``["a{x=1,y=2}", "b"]``: a comma outside braces chains passes."""
    parts, depth, cur = [], 0, ""
    for ch in spec:
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    parts.append(cur.strip())
    return [p for p in parts if p]


@dataclass(frozen=True, slots=True)
class ReferenceOutcome:
    """What the reference did with one module: rejected it, crashed, or ran each pass."""

    parsed: bool
    crashed: bool
    error: str
    outputs: tuple[tuple[bool, str], ...]  # (pass succeeded, printed module or error)
    pass_crashed: tuple[bool, ...] = ()  # per pass: the reference crashed on it


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
        assert proc.stdin is not None, "`_start` pipes the worker's stdin"
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
        crashed = tuple(o.get("crashed", False) for o in data["outputs"])
        return ReferenceOutcome(data["parsed"], False, data["error"], outputs, crashed)

    def _read_line(self, proc: subprocess.Popen) -> str:
        stdout = proc.stdout
        assert stdout is not None, "`_start` pipes the worker's stdout"
        sel = selectors.DefaultSelector()
        sel.register(stdout, selectors.EVENT_READ)
        ready = sel.select(self.timeout)
        sel.close()
        if not ready:
            return ""
        return stdout.readline()

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


def _stream_in_child(text: str, passes: list[str], parse_first: bool) -> list[dict]:
    """Parse check (optional) and `passes` in one forked child, one JSON line per step.

    Returns the steps that finished; fewer than asked means the child died on the next one.
    """
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: never returns
        os.close(read_fd)
        try:
            with os.fdopen(write_fd, "w") as out:
                steps = ([_parse] if parse_first else []) + [_run] * len(passes)
                args = ([(text,)] if parse_first else []) + [(text, p) for p in passes]
                for fn, fn_args in zip(steps, args, strict=True):
                    step = fn(*fn_args)
                    out.write(json.dumps(step) + "\n")
                    out.flush()
                    if step.get("parsed") is False:
                        break
        finally:
            os._exit(0)
    os.close(write_fd)
    with os.fdopen(read_fd) as inp:
        lines = inp.read().splitlines()
    os.waitpid(pid, 0)
    return [json.loads(line) for line in lines if line.strip()]


def _parse(text: str) -> dict:
    from shardwise.io.reference import ReferenceError, run_pass

    try:
        run_pass(text, None, allow_unregistered_dialect=True, threads=False)
    except ReferenceError as e:
        return {"parsed": False, "error": "\n".join(e.diagnostics) or str(e)}
    return {"parsed": True, "error": ""}


def _run(text: str, name: str) -> dict:
    from shardwise.io.reference import ReferenceError, run_pass

    try:
        passes = split_passes(name)
        # One thread: Shardy on jax's thread pool hangs on some modules (see `_context`).
        out = run_pass(
            text, passes, debug_info=located(text), allow_unregistered_dialect=True, threads=False
        )
        return {"ok": True, "text": out}
    except ReferenceError as e:
        return {"ok": False, "text": "\n".join(e.diagnostics) or str(e)}


def _serve_one(request: dict) -> dict:
    """Parse check, then the passes, in forked children: a crash costs a fork, not a restart."""
    text, passes = request["text"], list(request["passes"])
    steps = _stream_in_child(text, passes, parse_first=True)
    if not steps:
        return {"parsed": False, "error": "reference crashed while parsing", "outputs": []}
    if not steps[0]["parsed"]:
        return {**steps[0], "outputs": []}
    outputs: list[dict] = steps[1:]
    if len(outputs) < len(passes):
        outputs.append({"ok": False, "text": "reference crashed", "crashed": True})
    while len(outputs) < len(passes):
        done = _stream_in_child(text, passes[len(outputs) :], parse_first=False)
        outputs += done
        if len(outputs) < len(passes):
            outputs.append({"ok": False, "text": "reference crashed", "crashed": True})
    return {"parsed": True, "error": "", "outputs": outputs}


def main() -> None:
    import gc

    _parse("module {}")  # load jaxlib and register the dialects once, before forking
    gc.freeze()  # keep the parent's objects out of the children's copy-on-write faults

    for line in sys.stdin:
        if not line.strip():
            continue
        reply = _serve_one(json.loads(line))
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
