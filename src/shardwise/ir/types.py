"""Tensor and opaque types: ``tensor<8x?xf32>`` parsed into frozen values."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from shardwise.hashing import cached_hash
from shardwise.ir.attrs import split_first_top_level

DYNAMIC = -1


@dataclass(frozen=True, slots=True)
class TensorType:
    """A ranked tensor type; `DYNAMIC` (-1) marks a ``?`` dimension."""

    shape: tuple[int, ...]
    element_type: str
    encoding: str | None = None
    # Hashed once: types are keys of the rule cache and of memoized steps' rules, per op.
    _hash: int = field(default=0, init=False, repr=False, compare=False)

    __hash__ = cached_hash

    def __str__(self) -> str:
        dims = "".join(("?" if d == DYNAMIC else str(d)) + "x" for d in self.shape)
        enc = f", {self.encoding}" if self.encoding is not None else ""
        return f"tensor<{dims}{self.element_type}{enc}>"

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def is_static(self) -> bool:
        return DYNAMIC not in self.shape

    @property
    def num_elements(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n


@dataclass(frozen=True, slots=True)
class OpaqueType:
    """Any other type (token, tuple, unranked tensor, ...), kept as its text."""

    text: str

    def __str__(self) -> str:
        return self.text

    @property
    def rank(self) -> int:
        return 0


Type = TensorType | OpaqueType

_DIMS_RE = re.compile(r"((?:(?:\d+|\?)x)*)")


_TYPE_CACHE: dict[str, Type] = {}


def parse_type(text: str) -> Type:
    """Parse a type's text; ranked tensors become `TensorType`, the rest `OpaqueType`."""
    cached = _TYPE_CACHE.get(text)
    if cached is not None:
        return cached
    result: Type = OpaqueType(text)
    if text.startswith("tensor<") and text.endswith(">") and not text.startswith("tensor<*"):
        inner = text[len("tensor<") : -1]
        m = _DIMS_RE.match(inner)
        assert m is not None
        dims_text = m.group(1)
        rest, encoding = split_first_top_level(inner[m.end() :])
        shape = tuple(DYNAMIC if d == "?" else int(d) for d in dims_text.split("x")[:-1])
        result = TensorType(shape, rest, encoding)
    _TYPE_CACHE[text] = result
    return result
