"""Positions in the user's file found on first use, for inputs with explicit ``loc(...)``.

A text with debug info names its own locations, so where each op sits in the file (what an
error message shows) takes a second MLIR parse of the text with its locations blanked and a
walk over every op: ~40% of the load of such a text (gpt_128 with debug info: 0.42 s of 1.04 s).
An error needs one position; a run without errors needs none. So the loader hands the parser
`DeferredPositions`, whose entries are `DeferredLocation`s: each knows its op's (or block
argument's) index in MLIR's pre-order walk, and the first one read computes every position.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from shardwise.errors import Location

__all__ = ["DeferredPositions", "DeferredLocation"]

OPS, ARGS = 0, 1


class DeferredPositions:
    """`generic_parser.Positions` computed by `compute` when a location is first read."""

    def __init__(self, compute: Callable[[], Any], filename: str) -> None:
        self._compute: Callable[[], Any] | None = compute
        self._resolved: tuple[list[Location], list[Location]] | None = None
        self.filename = filename
        self.ops = _Entries(self, OPS)
        self.args = _Entries(self, ARGS)

    @property
    def looked_up(self) -> bool:
        return self._resolved is not None

    def location(self, kind: int, index: int) -> Location:
        if self._resolved is None:
            assert self._compute is not None
            positions = self._compute()
            self._resolved = (positions.ops, positions.args)
            self._compute = None  # drop what it holds (the input text)
        entries = self._resolved[kind]
        return entries[index] if index < len(entries) else Location(self.filename)


class _Entries:
    """The parser's view of one list of positions: unbounded, each entry deferred."""

    __slots__ = ("_owner", "_kind")

    def __init__(self, owner: DeferredPositions, kind: int) -> None:
        self._owner, self._kind = owner, kind

    def __len__(self) -> int:
        return sys.maxsize  # the count is known once computed; `location` checks the index

    def __getitem__(self, index: int) -> DeferredLocation:
        # One per op of the input: built through the slots, without `__init__`'s three
        # `object.__setattr__` (the class is frozen).
        location = _new(DeferredLocation)
        _set_owner(location, self._owner)
        _set_kind(location, self._kind)
        _set_index(location, index)
        return location


class DeferredLocation(Location):
    """A `Location` whose file, line and column are looked up when first read."""

    __slots__ = ("_owner", "_kind", "_index")
    _owner: DeferredPositions
    _kind: int
    _index: int

    def __init__(self, owner: DeferredPositions, kind: int, index: int) -> None:  # noqa: D107
        object.__setattr__(self, "_owner", owner)
        object.__setattr__(self, "_kind", kind)
        object.__setattr__(self, "_index", index)

    def resolved(self) -> Location:
        return self._owner.location(self._kind, self._index)

    @property  # type: ignore[override]
    def file(self) -> str:
        return self.resolved().file

    @property  # type: ignore[override]
    def line(self) -> int:
        return self.resolved().line

    @property  # type: ignore[override]
    def col(self) -> int:
        return self.resolved().col

    def __eq__(self, other: object) -> bool:
        if isinstance(other, DeferredLocation):
            other = other.resolved()
        return self.resolved() == other

    def __hash__(self) -> int:
        return hash(self.resolved())

    @property
    def looked_up(self) -> bool:
        return self._owner.looked_up

    def __repr__(self) -> str:
        if not self._owner.looked_up:  # a debug print must not parse the file again
            return f"DeferredLocation({self._owner.filename!r}, entry {self._kind}.{self._index})"
        return repr(self.resolved())

    def __reduce__(self) -> tuple[Any, ...]:  # copies and pickles hold the plain position
        resolved = self.resolved()
        return (Location, (resolved.file, resolved.line, resolved.col))


_new = object.__new__
# The slots' descriptors: they set a slot of a frozen class without `__setattr__`.
_set_owner = DeferredLocation.__dict__["_owner"].__set__
_set_kind = DeferredLocation.__dict__["_kind"].__set__
_set_index = DeferredLocation.__dict__["_index"].__set__
