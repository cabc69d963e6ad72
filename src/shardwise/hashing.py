"""A cached `__hash__` for frozen dataclasses that serve as cache keys.

The generated hash of a frozen dataclass walks every field (tuples of tuples of axes) on every
lookup; shardings and rules are keys of the memoized propagation step and are hashed many
times each. A class opts in with a ``_hash: int = field(default=0, init=False, repr=False,
compare=False)`` field and ``__hash__ = cached_hash`` in its body (a body-level ``__hash__``
keeps `dataclass` from generating its own).
"""

from __future__ import annotations

import functools
from dataclasses import fields
from typing import Protocol

__all__ = ["InternTable", "cached_hash"]


class _HashCaching(Protocol):
    """A frozen dataclass that opted in: its hash is cached in `_hash` (0: not yet)."""

    _hash: int


def cached_hash(self: _HashCaching) -> int:
    """The hash of the compared fields, computed on first use (0 means not yet)."""
    value = self._hash
    if not value:
        value = hash(tuple([getattr(self, name) for name in _compared_fields(type(self))])) or 1
        object.__setattr__(self, "_hash", value)
    return value


@functools.cache
def _compared_fields(cls: type) -> tuple[str, ...]:
    """The names of `cls`'s compared fields (`fields` rebuilds its answer on every call)."""
    return tuple(f.name for f in fields(cls) if f.compare)


class InternTable:
    """One shared instance per distinct frozen value: ``table(value)`` returns the first value
    equal to `value` it was given (at most `max_size` remembered; then it starts afresh).

    Keys of the memoized propagation step are compared on every cache hit: equal values that
    are one object compare by identity instead of field by field.
    """

    __slots__ = ("_values", "_max_size")

    def __init__(self, max_size: int) -> None:
        self._values: dict = {}
        self._max_size = max_size

    def __call__(self, value):
        found = self._values.get(value)
        if found is not None:
            return found
        if len(self._values) >= self._max_size:
            self._values.clear()
        self._values[value] = value
        return value
