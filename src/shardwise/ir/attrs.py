"""Attribute containers and their text: `RawAttr`, `DictAttr`, `ArrayAttr`, strings, and the
one scanner that splits attribute or type lists on top-level commas."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class RawAttr:
    """An attribute we do not interpret, kept as its exact text."""

    text: str

    def __str__(self) -> str:
        return self.text


@dataclass(slots=True)
class DictAttr:
    """A dictionary attribute ``{a = 1, b}``; entries keep their order (MLIR sorts on print)."""

    entries: dict[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        parts = []
        for name, value in self.entries.items():
            key = name if is_bare_key(name) else '"' + name + '"'
            parts.append(key if value is UNIT else f"{key} = {value}")
        return "{" + ", ".join(parts) + "}"


@dataclass(slots=True)
class ArrayAttr:
    """An array attribute ``[a, b]``."""

    elements: list[Any] = field(default_factory=list)

    def __str__(self) -> str:
        return "[" + ", ".join(str(e) for e in self.elements) + "]"


UNIT = RawAttr("unit")

_BARE_KEY_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_$.]*$")


def is_bare_key(name: str) -> bool:
    """Whether a dictionary key prints bare (``a.b``) rather than quoted (``"a-b"``)."""
    return bool(_BARE_KEY_RE.match(name))


def copy_attr(value: Any) -> Any:
    """A copy of an attribute value that shares nothing mutable (dict/array attributes)."""
    if isinstance(value, DictAttr):
        return DictAttr({k: copy_attr(v) for k, v in value.entries.items()})
    if isinstance(value, ArrayAttr):
        return ArrayAttr([copy_attr(v) for v in value.elements])
    return value


def string_attr(text: str) -> RawAttr:
    """A StringAttr holding `text`: ``"text"``."""
    return RawAttr('"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"')


def string_attr_value(attr: Any) -> str:
    """The contents of a StringAttr's text (``"foo"`` -> ``foo``)."""
    text = str(attr)
    if text.startswith('"') and text.endswith('"'):
        return unescape_string(text[1:-1])
    return text


_ESCAPE_RE = re.compile(r'\\(["\\nt]|[0-9a-fA-F]{2})')
_ESCAPES = {'"': b'"', "\\": b"\\", "n": b"\n", "t": b"\t"}


def unescape_string(body: str) -> str:
    """The contents of an MLIR string literal without its quotes: ``\\"``, ``\\\\``, ``\\n``,
    ``\\t`` and the ``\\XX`` byte escapes MLIR prints (``"`` as ``\\22``, non-ASCII bytes)."""
    if "\\" not in body:
        return body
    out = bytearray()
    pos = 0
    for m in _ESCAPE_RE.finditer(body):
        out += body[pos : m.start()].encode()
        escape = m.group(1)
        out += _ESCAPES.get(escape) or bytes([int(escape, 16)])
        pos = m.end()
    out += body[pos:].encode()
    return out.decode("utf-8", errors="surrogateescape")


# One token of interest for bracket matching: a string literal, an arrow (not a bracket), `>=`
# (affine constraints; not a bracket), a bracket, a comma. The one bracket scanner of the
# package: attribute and type lists, function types, the generic-form parser. The string's
# body is written as runs of plain characters between escapes (the same strings as
# `"(?:[^"\\]|\\.)*"`): one loop step per run, not per character, which is 6-8x faster
# over the hex of a large `dense<"0x...">` constant (a Llama's rotary tables: 2 MB).
BRACKET_RE = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|->|>=|[<>(){}\[\],]')
_OPENERS = frozenset("<({[")


def matching_bracket_end(text: str, pos: int) -> int | None:
    """`text[pos]` is an opening bracket: the index just past its matching closer (None if
    it has none)."""
    depth = 0
    for m in BRACKET_RE.finditer(text, pos):
        tok = m.group()
        if tok in _OPENERS:
            depth += 1
        elif tok in ")}]>":
            depth -= 1
            if depth == 0:
                return m.end()
    return None


def scan_item(text: str, pos: int, end: int, depth: int = 0) -> int:
    """Index of the first top-level ``,`` or closer at/after `pos` (or `end`); `depth`: how
    many brackets are open at `pos` (the scan of a text resumed past its first tokens)."""
    for m in BRACKET_RE.finditer(text, pos, end):
        tok = m.group()
        if tok in _OPENERS:
            depth += 1
        elif tok in ")}]>":
            if depth == 0:
                return m.start()
            depth -= 1
        elif tok == "," and depth == 0:
            return m.start()
    return end


def split_top_level(text: str) -> list[str]:
    """Split on top-level commas (strings, brackets and ``->`` aware); empty items dropped."""
    parts: list[str] = []
    pos = 0
    end = len(text)
    while pos < end:
        stop = scan_item(text, pos, end)
        item = text[pos:stop].strip()
        if item:
            parts.append(item)
        pos = stop + 1
    return parts


def split_first_top_level(text: str) -> tuple[str, str | None]:
    """``"a, b, c"`` -> ``("a", "b, c")``; ``("a", None)`` when there is no top-level comma."""
    stop = scan_item(text, 0, len(text))
    if stop >= len(text) or text[stop] != ",":
        return text.strip(), None
    return text[:stop].strip(), text[stop + 1 :].strip()
