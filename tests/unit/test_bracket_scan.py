"""`scan_item` and `matching_bracket_end` (`shardwise.ir.attrs`) against a plain scanner.

The scanner below is the definition, one character at a time: a string literal runs from `"`
to the next `"` not escaped by a backslash (a backslash escapes any character but a newline;
a `"` that starts no complete literal is an ordinary character); `->` and `>=` are not
brackets; the other brackets nest; a comma or a closer at depth 0 ends an item.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shardwise.ir.attrs import matching_bracket_end, scan_item

_OPEN, _CLOSE = "<({[", ")}]>"


def _string_end(text: str, i: int, end: int) -> int | None:
    """Index past the literal starting at `text[i] == '"'`, None if none closes before `end`."""
    j = i + 1
    while j < end:
        c = text[j]
        if c == '"':
            return j + 1
        if c == "\\":
            if j + 1 >= end or text[j + 1] == "\n":
                return None
            j += 2
        else:
            j += 1
    return None


def _tokens(text: str, pos: int, end: int):
    i = pos
    while i < end:
        c = text[i]
        if c == '"':
            stop = _string_end(text, i, end)
            if stop is not None:
                i = stop
                continue
        elif text.startswith(("->", ">="), i) and i + 2 <= end:
            i += 2
            continue
        elif c in _OPEN or c in _CLOSE or c == ",":
            yield i, c
        i += 1


def _scan_item(text: str, pos: int, end: int) -> int:
    depth = 0
    for i, c in _tokens(text, pos, end):
        if c in _OPEN:
            depth += 1
        elif c in _CLOSE:
            if depth == 0:
                return i
            depth -= 1
        elif depth == 0:
            return i
    return end


def _matching_end(text: str, pos: int) -> int | None:
    depth = 0
    for i, c in _tokens(text, pos, len(text)):
        if c in _OPEN:
            depth += 1
        elif c in _CLOSE:
            depth -= 1
            if depth == 0:
                return i + 1
    return None


_TEXT = st.text(alphabet='"\\a0,<>()[]{}-=\n x', max_size=40)


# (text, where the first item ends): hand-checked.
_CASES = {
    "escaped_quote": ('"\\",x", y', 6),
    "escaped_backslash": ('"a\\\\", y', 5),
    "backslash_newline_is_no_escape": ('"\\\n", y', 4),
    "unclosed_quote_is_a_character": ('a"b, c', 3),
    "arrow_and_ge": ("(a) -> b >= c, d", 13),
    "nested": ('<",", [1, 2]>, x', 13),
    "closer": ("a)b", 1),
}


@pytest.mark.parametrize(("text", "stop"), _CASES.values(), ids=_CASES.keys())
def test_scan_item_cases(text: str, stop: int) -> None:
    assert _scan_item(text, 0, len(text)) == stop  # the definition, checked by hand
    assert scan_item(text, 0, len(text)) == stop


@given(_TEXT, st.data())
def test_scan_item_is_the_plain_scan(text: str, data: st.DataObject) -> None:
    end = data.draw(st.integers(0, len(text)))
    pos = data.draw(st.integers(0, end))
    assert scan_item(text, pos, end) == _scan_item(text, pos, end)


@given(st.sampled_from(_OPEN), _TEXT)
def test_matching_bracket_end_is_the_plain_scan(opener: str, rest: str) -> None:
    text = opener + rest
    assert matching_bracket_end(text, 0) == _matching_end(text, 0)


def test_a_long_hex_constant_is_one_token() -> None:
    hex_text = '"0x' + "0A" * 100_000 + '"'
    text = f"{{value = dense<{hex_text}> : tensor<100000xi8>, next = 1}}"
    assert scan_item(text, 1, len(text)) == text.index(", next")
    assert matching_bracket_end(text, 0) == len(text)
