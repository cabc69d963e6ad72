"""A progress bar on stderr for long runs (report, fuzz, check, plan), drawn with rich.

Shown only when the stream is a terminal (or when forced: ``--progress``); piped output never
sees it, and rich is imported only when a bar is drawn (the core never imports it). Any long
loop can use it: ``bar = Progress("plan")``, then ``bar.update(done, total)`` (optionally
with a new ``label``) and ``bar.close()`` at the end, or ``with Progress("plan") as bar:``.
"""

from __future__ import annotations

import sys
import time
from typing import Any, Protocol, TextIO

__all__ = ["Progress", "ProgressSink"]


class ProgressSink(Protocol):
    """What a long computation reports its progress to (a `Progress`, or a test's recorder)."""

    def update(self, done: int, total: int, label: str | None = None) -> None: ...


# At most this many redraws a second (a step can be much shorter than a frame).
_FRAMES_PER_SECOND = 10


class Progress:
    """``label ━━━━━━╺━━━━━ 50/100 0:00:03`` redrawn in place, on stderr by default."""

    def __init__(
        self,
        label: str,
        force: bool = False,
        stream: TextIO | None = None,
        width: int = 30,
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        isatty = getattr(self.stream, "isatty", None)
        self.enabled = force or bool(isatty is not None and isatty())
        self.label, self.width = label, width
        self._force = force
        self._bar: Any = None  # rich.progress.Progress, once drawn
        self._task: Any = None
        self._last = 0.0

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def update(self, done: int, total: int, label: str | None = None) -> None:
        """`done` of `total` steps finished; `label` replaces the label if given."""
        if not self.enabled:
            return
        if label is not None:
            self.label = label
        now = time.monotonic()
        if self._bar is not None and done < total and now - self._last < 1 / _FRAMES_PER_SECOND:
            return
        self._last = now
        if self._bar is None:
            self._start(total)
        self._bar.update(self._task, completed=done, total=max(total, 1), description=self.label)
        self._bar.refresh()

    def _start(self, total: int) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
        from rich.progress import Progress as RichProgress

        console = Console(file=self.stream, force_terminal=True if self._force else None)
        self._bar = RichProgress(
            TextColumn("{task.description}"),
            BarColumn(bar_width=self.width),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            auto_refresh=False,  # redrawn by `update`, no thread
            transient=False,
        )
        self._bar.start()
        self._task = self._bar.add_task(self.label, total=max(total, 1))

    def close(self) -> None:
        """Draw the last state and leave the line (the next output starts below it)."""
        if self._bar is None:
            return
        self._bar.refresh()
        self._bar.stop()
        self._bar = None
