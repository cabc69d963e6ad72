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


def split_top_level(text: str) -> list[str]:
    """Split on commas that are not nested in brackets or strings (``->`` is not a bracket)."""
    parts: list[str] = []
    rest: str | None = text.strip()
    while rest:
        head, rest = split_first_top_level(rest)
        parts.append(head)
    return parts


def split_first_top_level(text: str) -> tuple[str, str | None]:
    depth = 0
    in_str = False
    i = 0
    while i < len(text):
        c = text[i]
        if in_str:
            if c == "\\":
                i += 1
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
        elif c in "<([{":
            depth += 1
        elif c in ")]}" or (c == ">" and not (i > 0 and text[i - 1] == "-")):
            depth -= 1
        elif c == "," and depth == 0:
            return text[:i].strip(), text[i + 1 :].strip()
        i += 1
    return text.strip(), None
