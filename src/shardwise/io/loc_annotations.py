"""The user's own ``loc(...)`` annotations in an input's text (JAX's debug info), found and blanked
out in pure Python: whether a text has any, and the text with each replaced by spaces, lines and
columns of everything else unchanged (the positions of its ops in the file come from a parse of
that copy). `shardwise.io.mlir` re-exports both.
"""

from __future__ import annotations

import re

from shardwise.errors import ParseError
from shardwise.io.generic_text import skip_balanced

__all__ = ["blank_locations", "has_loc_annotation"]

# A string, a line comment, a ``#locN = `` alias definition, or a ``loc(`` that starts a
# location (not part of a longer name such as ``@my_loc(`` or ``%loc``).
_LOC_SCAN_RE = re.compile(
    r'"(?:[^"\\]|\\.)*"|//[^\n]*|(?:^(#loc[\w$.\-]*[ \t]*=[ \t]*))?(loc\()',
    re.M,
)
# The usual shapes, matched at once; any other location is scanned bracket by bracket.
_SIMPLE_LOC_RE = re.compile(r'loc\((?:#[\w$.\-]+|unknown|"[^"\\]*"(?::\d+:\d+)?)\)')
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$.@%#^!-")


def blank_locations(text: str) -> tuple[str, bool]:
    """Replace every ``loc(...)`` (outside strings/comments) and ``#loc = ...`` by spaces.

    Lines and columns of everything else are unchanged. Returns the text and whether it had
    any location at all.
    """
    if "loc(" not in text:
        return text, False
    pieces: list[str] = []
    last = 0
    for m in _LOC_SCAN_RE.finditer(text):
        start = m.start()
        if start < last or m.group(2) is None:
            continue  # inside a location already blanked, or a string / comment
        if m.group(1) is None and start > 0 and text[start - 1] in _NAME_CHARS:
            continue  # part of a longer name: @my_loc(...)
        simple = _SIMPLE_LOC_RE.match(text, m.end() - 4)
        if simple is not None:
            end = simple.end()
        else:
            try:
                end = skip_balanced(text, m.end() - 1)
            except ParseError:
                end = len(text)
        pieces.append(text[last:start])
        blank = text[start:end]
        pieces.append(re.sub(r"[^\n]", " ", blank) if "\n" in blank else " " * len(blank))
        last = end
    if not pieces:
        return text, False
    pieces.append(text[last:])
    return "".join(pieces), True


def has_loc_annotation(text: str) -> bool:
    """Whether `text` has a ``loc(...)`` (outside strings and comments): `blank_locations`'s
    second answer, found at the first one."""
    if "loc(" not in text:
        return False
    for m in _LOC_SCAN_RE.finditer(text):
        if m.group(2) is None:
            continue  # a string or a comment
        start = m.start()
        if m.group(1) is None and start > 0 and text[start - 1] in _NAME_CHARS:
            continue  # part of a longer name: @my_loc(...)
        return True
    return False
