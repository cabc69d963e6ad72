"""A progress bar on stderr, shown only when stderr is a terminal (or when forced)."""

from __future__ import annotations

import sys
import time

__all__ = ["Progress"]


class Progress:
    """``label [#####.....] 50/100`` redrawn in place at most 10 times a second."""

    def __init__(self, label: str, force: bool = False, stream=None, width: int = 30) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = force or self.stream.isatty()
        self.label, self.width = label, width
        self._last = 0.0
        self._drawn = False

    def update(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if done < total and now - self._last < 0.1:
            return
        self._last = now
        filled = self.width * done // max(total, 1)
        bar = "#" * filled + "." * (self.width - filled)
        self.stream.write(f"\r{self.label} [{bar}] {done}/{total}")
        self.stream.flush()
        self._drawn = True

    def close(self) -> None:
        if self._drawn:
            self.stream.write("\n")
            self.stream.flush()
            self._drawn = False
