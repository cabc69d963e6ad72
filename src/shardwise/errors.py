"""Source locations and the error classes every layer raises.

A `ShardwiseError` carries the message, where it happened (`Location`) and optional notes.
The CLI prints it as ``file:line:col: error: message`` followed by the source line and a
caret; no traceback ever reaches a user.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "Location",
    "ShardwiseError",
    "ParseError",
    "VerifyError",
    "RuleError",
    "PropagationError",
    "UnsupportedError",
    "InputError",
]


@dataclass(frozen=True, slots=True)
class Location:
    """A position in an input file; line and column are 1-based (0 = unknown)."""

    file: str = "-"
    line: int = 0
    col: int = 0

    def __str__(self) -> str:
        if self.line <= 0:
            return self.file
        return f"{self.file}:{self.line}:{self.col}"

    def with_file(self, file: str) -> Location:
        return Location(file, self.line, self.col)

    @property
    def looked_up(self) -> bool:
        """Whether reading the position costs nothing (a deferred one may parse the file)."""
        return True


UNKNOWN_LOCATION = Location()


class ShardwiseError(Exception):
    """An error in the user's input (or, for `InternalError`, in shardwise itself)."""

    kind = "error"

    def __init__(
        self,
        message: str,
        location: Location | None = None,
        notes: tuple[str, ...] | list[str] = (),
    ) -> None:
        super().__init__(message)
        self.message = message
        self.location = location or UNKNOWN_LOCATION
        self.notes = tuple(notes)

    def __str__(self) -> str:
        return f"{self.location}: {self.kind}: {self.message}"

    def at(self, location: Location) -> ShardwiseError:
        """Return this error placed at `location` if it has none yet."""
        if self.location.line <= 0:
            self.location = location
        return self

    def format(self, source: str | None = None) -> str:
        """The full diagnostic: header, the offending source line with a caret, notes."""
        lines = [str(self)]
        if source is not None and self.location.line > 0:
            src_lines = source.splitlines()
            if self.location.line <= len(src_lines):
                text = src_lines[self.location.line - 1]
                lines.append(text)
                lines.append(" " * max(self.location.col - 1, 0) + "^")
        lines.extend(f"note: {n}" for n in self.notes)
        return "\n".join(lines)


class ParseError(ShardwiseError):
    """Malformed text: MLIR syntax or one of the `#sdy...` / `#stablehlo...` attributes."""


class VerifyError(ShardwiseError):
    """Well-formed text that breaks one of Shardy's verifier rules."""


class RuleError(ShardwiseError):
    """An op's sharding rule cannot be built (bad attributes, rank mismatch, ...)."""


class PropagationError(ShardwiseError):
    """Propagation cannot run on this module (e.g. dynamic shapes)."""


class UnsupportedError(ShardwiseError):
    """Valid input that shardwise does not handle (yet)."""


class ReferenceDefectError(UnsupportedError):
    """Valid input that the reference mishandles (it crashes, or writes a wrong program):
    refused here, with how to avoid the construct. The fuzzer counts these apart from
    divergences."""


class InputError(ShardwiseError):
    """A file that cannot be read or written (missing, a directory, not UTF-8, ...)."""


class InternalError(ShardwiseError):
    """A bug in shardwise: reported with the op and a hint to file an issue."""

    kind = "internal error"
