"""Shared pieces of the generic-form parser and printer: bracket scanning, locations,
attribute dictionaries, and the texts kept beside the IR (block-argument locations, dialect
resources). Pure Python, no jax import; the public entry points are in `shardwise.io.generic`.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Callable
from typing import Any, NamedTuple

from shardwise import ir
from shardwise.errors import Location, ParseError
from shardwise.ir.attrs import matching_bracket_end, scan_item, split_top_level

WS_RE = re.compile(r"(?:\s+|//[^\n]*)*")
# An attribute value with at most one level of <...> or [...] and no (), {} (most of them):
# matched in one step; anything else is scanned bracket by bracket.
_FAST_VALUE_RE = re.compile(
    r'(?:[^,{}<>\[\]()"]|"(?:[^"\\]|\\.)*"|<[^<>{}\[\]()"]*>|\[[^\[\]{}<>()"]*\])+'
)
# The same with up to three levels of brackets of any kind (sdy shardings, dot dimension
# numbers, precision lists): a bracket here is exactly a `BRACKET_RE` bracket (``->`` and
# ``>=`` are not closers), so wherever it matches it agrees with the bracket scan.
_STR = r'"(?:[^"\\]|\\.)*"'
_IN0 = r'[^{}<>\[\]()"\-]|-(?!>)|' + _STR


def _nested(inner: str) -> str:
    return rf"(?:<(?:{inner})*>(?!=)|\[(?:{inner})*\]|\{{(?:{inner})*\}}|\((?:{inner})*\))"


_IN1 = _IN0 + "|" + _nested(_IN0)
_IN2 = _IN0 + "|" + _nested(_IN1)
_NESTED_VALUE = r'(?:[^,{}<>\[\]()"\-]|-(?!>)|' + _STR + "|" + _nested(_IN2) + ")+"
# Compiled once this many values have needed it (`_value_end`): compiling it costs ~4.4 ms, a
# match saves ~1.5-2 us over the bracket scan (a sharding, a dict of lists), so a command on a
# model of a few hundred nested values (gpt_16: ~360) would pay more than it gains.
_NESTED_AFTER = 2500
_nested_value_re: re.Pattern[str] | None = None
_nested_values = 0
_DICT_SEP_RE = re.compile(r"\s*([,}])")
_KEY_RE = re.compile(r'\s*([A-Za-z_][\w$.\-]*|"(?:[^"\\]|\\.)*")\s*(=)?\s*')
_ALIAS_LINE_RE = re.compile(r"^(#loc[\w$.\-]*) = (loc\(.*\))[ \t]*$", re.M)
# A string (skipped) or an alias reference. The string's body as runs between escapes (the
# strings of `_STR`): one regex step per run, not per character of JAX's long op names.
_ALIAS_REF_RE = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|(#loc[\w$.\-]*)')

# An alias definition of the usual shapes, its parts as groups: a string (a name, or a file before
# its position), the name's location (an alias), the file's position, a call site's two aliases.
_ALIAS = r"#loc[\w$.\-]*"
LOC_SHAPE_RE = re.compile(
    r'loc\((?:("[^"\\]*(?:\\.[^"\\]*)*")(?:\((' + _ALIAS + r")\)"
    r"|(:[0-9]+:[0-9]+(?: to (?:[0-9]+)?:[0-9]+)?))?"
    r"|callsite\((" + _ALIAS + ") at (" + _ALIAS + r")\))\)"
)

# The module's ``{-# dialect_resources ... #-}`` block, kept beside the IR (`ir.Module` has no
# field for it). Keyed weakly: it dies with the IR.
RESOURCES: weakref.WeakKeyDictionary[ir.Module, str] = weakref.WeakKeyDictionary()


class LocTable(NamedTuple):
    """The input's ``#loc`` alias table: each alias's ``loc(...)`` as printed (`raw`) and with its
    references replaced (`resolved`); `shapes`: the `LOC_SHAPE_RE` groups of the definitions
    of the usual shapes, read once for both the load and the pretty printer."""

    raw: dict[str, str]
    resolved: dict[str, str]
    shapes: dict[str, tuple[str | None, ...]]


# The input's alias table (`read_loc_table`), kept beside the IR: the pretty printer reads each
# alias once instead of every op's resolved text whole.
LOC_ALIASES: weakref.WeakKeyDictionary[ir.Module, LocTable] = weakref.WeakKeyDictionary()

SdyParser = Callable[[str], Any]


def dialect_resources(module: ir.Module) -> str | None:
    """The module's ``{-# dialect_resources ... #-}`` text, if any (printed back unchanged)."""
    return RESOURCES.get(module)


# -- low-level scanning ------------------------------------------------------------------------


def skip_balanced(text: str, pos: int) -> int:
    """`text[pos]` is an opening bracket; return the index just past its matching closer."""
    end = matching_bracket_end(text, pos)
    if end is None:
        raise ParseError(f"unbalanced '{text[pos]}'", offset_location(text, pos))
    return end


def split_types(text: str) -> list[str]:
    """Split a comma-separated type list; fast when no type holds a comma itself."""
    if "," not in text:
        return [text.strip()] if text.strip() else []
    parts = text.split(", ")
    if all(p.count("<") == p.count(">") for p in parts) and "->" not in text:
        return parts
    return split_top_level(text)


def offset_location(text: str, pos: int, filename: str = "-") -> Location:
    line = text.count("\n", 0, pos) + 1
    col = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return Location(filename, line, col)


# -- locations ---------------------------------------------------------------------------------


def _alias_tables(text: str) -> tuple[str, dict[str, str]] | None:
    """The text without the alias lines MLIR prints before and after the module, and those
    aliases; None if an alias line is anywhere else (then every line is searched)."""
    start = 0
    while text.startswith("#loc", start):
        nl = text.find("\n", start)
        start = len(text) if nl < 0 else nl + 1
    end = len(text)
    while end > start:
        line_start = text.rfind("\n", start, end - 1) + 1
        if line_start < start or not text.startswith("#loc", line_start):
            break
        end = line_start
    if text.find("\n#loc", start, end) >= 0:
        return None
    lines = text[:start] + text[end:]
    pairs = _ALIAS_LINE_RE.findall(lines)
    if len(pairs) != lines.count("\n") + (not lines.endswith("\n")):
        return None  # a line that is not an alias definition
    return text[start:end], dict(pairs)


def resolve_loc_aliases(text: str) -> tuple[str, dict[str, str]]:
    """Strip the ``#locN = loc(...)`` lines; return the rest and the fully resolved aliases."""
    body, table = read_loc_table(text)
    return body, table.resolved


def read_loc_table(text: str) -> tuple[str, LocTable]:
    """The text without its ``#locN = loc(...)`` lines, and the table they make."""
    if "#loc" not in text:  # printed in local scope: no aliases
        return text, LocTable({}, {}, {})
    tables = _alias_tables(text)
    if tables is not None:
        body, raw = tables
    else:
        raw = {m.group(1): m.group(2) for m in _ALIAS_LINE_RE.finditer(text)}
        body = _ALIAS_LINE_RE.sub("", text) if raw else text
    shapes: dict[str, tuple[str | None, ...]] = {}
    return body, LocTable(raw, _resolve_aliases(raw, shapes), shapes)


def _resolve_aliases(
    raw: dict[str, str], shapes: dict[str, tuple[str | None, ...]]
) -> dict[str, str]:
    """Each alias's ``loc(...)`` with its references replaced by what they stand for; the
    groups of each definition `LOC_SHAPE_RE` matches into `shapes`."""
    resolved: dict[str, str] = {}
    resolving: set[str] = set()  # the aliases whose resolution is under way: a cycle stops

    def resolve(name: str) -> str:
        found = resolved.get(name)
        if found is not None:
            return found
        value = raw.get(name)
        if value is None or name in resolving:
            return name
        if "#loc" not in value:
            resolved[name] = value
            return value
        resolving.add(name)
        shape = LOC_SHAPE_RE.fullmatch(value)
        string = child = callee = caller = None
        if shape is not None:
            groups = shapes[name] = shape.groups()
            string, child, _, callee, caller = groups
        if string is not None and child in raw:  # most aliases: a name over one location
            out = string + "(" + resolve(child)[4:-1] + ")"
        elif callee in raw and caller in raw:  # a call site
            out = "callsite(" + resolve(callee)[4:-1] + " at " + resolve(caller)[4:-1] + ")"
        else:  # any other: a reference used as a location operand is the inner text of its loc
            out = _ALIAS_REF_RE.sub(
                lambda m: resolve(m.group(1))[4:-1] if m.group(1) else m.group(), value[4:-1]
            )
        resolving.discard(name)
        found = resolved[name] = "loc(" + out + ")"
        return found

    for name in raw:
        resolve(name)
    return resolved


def substitute_aliases(loc_text: str, aliases: dict[str, str]) -> str:
    """Replace alias references inside an inline ``loc(...)`` by their resolved text."""

    def sub(m: re.Match[str]) -> str:
        name = m.group(1)
        if name is None or name not in aliases:
            return m.group()
        return aliases[name][4:-1]

    return _ALIAS_REF_RE.sub(sub, loc_text)


def loc_position(loc_text: str | None, filename: str) -> Location:
    """``loc("-":3:8)`` -> Location(filename, 3, 8); anything else -> unknown.

    The bindings name the buffer they parse "-": such a location is a position in that text.
    """
    if loc_text is None or not loc_text.startswith('loc("-":') or not loc_text.endswith(")"):
        return Location(filename)
    line, _, col = loc_text[8:-1].partition(":")
    if not (line.isdecimal() and col.isdecimal()):
        return Location(filename)
    return Location(filename, int(line), int(col))


# -- attributes --------------------------------------------------------------------------------


def convert_attr(text: str, sdy_parser: SdyParser | None, key: str = "") -> Any:
    """One attribute value's text -> a typed `#sdy` value, nested dict/array, or `RawAttr`."""
    if text.startswith("#sdy") and sdy_parser is not None:
        value = sdy_parser(text)
        if value is not None:
            return value
    if key in ("arg_attrs", "res_attrs") and text.startswith("["):
        listed = _dict_list_at(text, 0, sdy_parser)
        if listed is not None and listed[1] == len(text):
            return listed[0]
        dicts = [parse_attr_dict(t, sdy_parser) for t in split_top_level(text[1:-1])]
        return ir.ArrayAttr([ir.DictAttr(d) for d in dicts])
    return ir.RawAttr(text)


_LIST_SEP_RE = re.compile(r"\s*([,\]])\s*")


def _dict_list_at(
    text: str, pos: int, sdy_parser: SdyParser | None
) -> tuple[ir.ArrayAttr, int] | None:
    """The ``[{...}, {...}]`` whose ``[`` is at `pos`, read dict after dict, each scanned once
    (a func's arg attributes: one per argument), and the index past its ``]``; None if an
    item is not a dictionary."""
    dicts: list[ir.DictAttr] = []
    pos = WS_RE.match(text, pos + 1).end()  # type: ignore[union-attr]
    if text.startswith("]", pos):
        return ir.ArrayAttr(dicts), pos + 1
    while text.startswith("{", pos):
        d, pos = parse_dict_at(text, pos, sdy_parser)
        dicts.append(ir.DictAttr(d))
        m = _LIST_SEP_RE.match(text, pos)
        if m is None:
            return None
        if m.group(1) == "]":
            return ir.ArrayAttr(dicts), pos + m.group().index("]") + 1
        pos = m.end()
    return None


def _value_end(text: str, start: int) -> int:
    """Where the attribute value at `start` ends (a top-level ``,`` or ``}``): the nested
    pattern's match when it has one, else the bracket scan (which agrees with it wherever it
    matches); the bracket scan alone until `_NESTED_AFTER` values have come here."""
    global _nested_value_re, _nested_values
    if text.startswith('dense<"', start):
        stop = _dense_string_end(text, start)
        if stop is not None:
            return stop
    nested = _nested_value_re
    if nested is None:
        _nested_values += 1
        if _nested_values < _NESTED_AFTER:
            return scan_item(text, start, len(text))
        nested = _nested_value_re = re.compile(_NESTED_VALUE)
    m = nested.match(text, start)
    if m is not None and text[m.end()] in ",}":
        return m.end()
    return scan_item(text, start, len(text))


def _dense_string_end(text: str, start: int) -> int | None:
    """`_value_end` of ``dense<"...">...`` at `start`, the string skipped by `str.find`: with
    no backslash in it, its first closing quote ends it. The regex scans (bracket or nested)
    step through a string's body character by character, ~1 ms for each of a Llama's eight
    131 KB rotary tables, each printed as one hex string. None if the string has an escape
    (or no end): the general scan reads it."""
    body = start + 7  # past ``dense<"``
    close = text.find('"', body)
    if close < 0 or text.find("\\", body, close) >= 0:
        return None
    return scan_item(text, close + 1, len(text), depth=1)  # inside ``dense<``


def parse_attr_dict(text: str, sdy_parser: SdyParser | None) -> dict[str, Any]:
    """``{a = 1 : i32, b, "c d" = #sdy...}`` -> ordered dict of converted values."""
    return parse_dict_at(text, 0, sdy_parser)[0]


def parse_dict_at(text: str, pos: int, sdy_parser: SdyParser | None) -> tuple[dict[str, Any], int]:
    """Parse the dictionary whose ``{`` is at `pos`; return it and the index past its ``}``."""
    out: dict[str, Any] = {}
    pos += 1
    while True:
        m = _KEY_RE.match(text, pos)
        if m is not None and m.group(1):
            key = m.group(1)
            if key[0] == '"':
                key = key[1:-1]
            if m.group(2) is None:
                out[key] = ir.UNIT
                pos = m.end()
            else:
                start = m.end()
                listed = None
                if key in ("arg_attrs", "res_attrs") and text.startswith("[", start):
                    # Read in place: the bracket scan below would go over it once more.
                    listed = _dict_list_at(text, start, sdy_parser)
                if listed is not None:
                    out[key], pos = listed
                else:
                    fast = _FAST_VALUE_RE.match(text, start)
                    if fast is not None and text[fast.end()] in ",}":
                        stop = fast.end()
                    else:
                        stop = _value_end(text, start)
                    out[key] = convert_attr(text[start:stop].rstrip(), sdy_parser, key)
                    pos = stop
        m = _DICT_SEP_RE.match(text, pos)
        if m is None:
            raise ParseError("expected ',' or '}' in a dictionary", offset_location(text, pos))
        pos = m.end()
        if m.group(1) == "}":
            return out, pos
