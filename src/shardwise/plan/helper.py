"""A helper process on the machine's second core, forked from the planner once it has loaded
the input: it holds the loaded module without loading it again (the fork shares it), and runs
jobs the planner sends it, one at a time and in order, while the planner goes on.

The planner evaluates its candidates in its own process on a machine of two cores
(`evaluate.make_executor`), so the second core idled; the work on the whole module that does
not wait for the search's next step runs here instead (`evaluate.Evaluator.expect`,
`search.plan_module`). A fork is safe only in a process of one thread: `HelperProcess.possible`
says whether this is one."""

from __future__ import annotations

import multiprocessing
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["HelperDied", "HelperProcess"]


class HelperDied(RuntimeError):
    """The helper process ended without replying (killed from outside, out of memory)."""


class HelperProcess:
    """A forked child running ``fn(state, *args)`` for each `submit`, in order; `result(i)`
    waits for the i-th. `state` (the planner's text, ...) reaches the child through the fork,
    not through the pipe: a job and its arguments stay small, so that sending one never waits
    for a child busy with the previous one (nor the child's reply for the planner's send).
    `close` kills the child: a job still running is dropped."""

    def __init__(self, state: Any) -> None:
        context = multiprocessing.get_context("fork")
        self._conn, child = context.Pipe()
        self._process = context.Process(target=_serve, args=(child, state), daemon=True)
        self._process.start()
        child.close()
        self._sent = 0  # jobs sent
        self._read = 0  # replies received (replies come in the order of the jobs)
        self._received: dict[int, tuple[bool, Any]] = {}

    @staticmethod
    def possible() -> bool:
        """Whether this process may fork a helper: fork available, one Python thread (a fork
        copies no other thread, and a lock another thread held stays held in the child), and
        no JAX runtime (its threads warn at a fork; the CLI never imports JAX). The native
        thread numpy's BLAS starts is fork-safe (it is rebuilt in the child)."""
        return (
            "fork" in multiprocessing.get_all_start_methods()
            and threading.active_count() == 1
            and "jax" not in sys.modules
        )

    def submit(self, fn: Callable[..., Any], *args: Any) -> int:
        """Send a job (a top-level function and small picklable arguments); its index. The
        replies already there are read first: a reply larger than the pipe's buffer (a
        printout) keeps the child waiting until it is read."""
        try:
            while self._conn.poll():
                self._receive()
            self._conn.send((fn, args))
        except OSError as error:
            raise HelperDied(f"the planner's helper process ended: {error!r}") from error
        self._sent += 1
        return self._sent - 1

    def done(self, index: int) -> bool:
        """Whether job `index` has finished (without waiting); `HelperDied` if the child
        ended."""
        while index not in self._received and self._conn.poll():
            self._receive()
        return index in self._received

    def result(self, index: int) -> Any:
        """Job `index`'s value (waiting for it), or its exception raised here; `HelperDied`
        if the child ended first."""
        while index not in self._received:
            self._receive()
        ok, value = self._received[index]
        if not ok:
            raise value
        return value

    def close(self) -> None:
        self._process.kill()
        self._process.join()
        self._conn.close()

    def _receive(self) -> None:
        try:
            self._received[self._read] = self._conn.recv()
        except (EOFError, OSError) as error:
            raise HelperDied(f"the planner's helper process ended: {error!r}") from error
        self._read += 1


def _serve(conn: Any, state: Any) -> None:
    """The child: run each job received, send back (True, value) or (False, exception).
    Ctrl-C is the planner's to handle (it kills the child): no traceback from here."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        try:
            fn, args = conn.recv()
        except EOFError:
            return
        try:
            reply = (True, fn(state, *args))
        except Exception as error:  # noqa: BLE001  (raised in the planner, by `result`)
            reply = (False, error)
        conn.send(reply)
