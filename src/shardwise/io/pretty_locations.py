"""Locations in MLIR's pretty form with debug info: ``loc(#locN)`` and the ``#loc`` alias table.

Pure Python (no jax): what ``Operation.get_asm(enable_debug_info=True)`` prints, following
MLIR's AsmPrinter (``AliasInitializer`` and ``printLocationInternal`` in
``mlir/lib/IR/AsmPrinter.cpp``):

* Every location printed gets an alias named ``loc`` (the builtin dialect's alias for any
  location). A location is *visited* where the printer meets it: an op's location before
  anything of the op (deferrable: the parser resolves it after the module), a block
  argument's where the argument is printed (not deferrable). A first visit visits the
  location's parts (a name's child unless unknown, a call site's callee then caller, a fused
  location's locations) with the same deferrability; a later non-deferrable visit makes the
  location and all its parts non-deferrable.
* An alias's depth is 1 plus the deepest of its parts' (1 for a leaf). Aliases are numbered
  ``#loc``, ``#loc1``, ... in order of depth, then of first visit.
* The text: non-deferrable aliases (``#locN = loc(...)``, each part printed as its alias) before
  the module, deferrable ones after it. An op ends with ``loc(#locN)``; a block argument
  prints its location inline (``loc("x"(#loc3))``: the top level inline, its parts as aliases).

The printer does not know the numbers while it prints, since they depend on everything
visited after: it writes markers (`visit_op`, `visit_arg`, `ref`) and `finish` replaces them.
Location texts come from MLIR's own printout (`Op.loc_text`), so they are already canonical;
a text this module cannot read, or one MLIR would print differently (a fused location that
is not in `FusedLoc::get`'s canonical form), raises `Unsupported`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from shardwise.errors import Location
from shardwise.io.generic_text import LOC_SHAPE_RE

__all__ = ["LocationAliases"]

# Markers in the printout (never in a text the pretty printer accepts: it checks that every
# text is printable ASCII): visit as an op's location, visit as an argument's, print the alias,
# visit as an op's location and print its alias (an op with nothing located inside it). Each is
# ``\x01``, its kind, the node's number, `_END`: a split on a pattern that starts with a fixed
# character jumps from one to the next (a character class first: 7x slower on llama_debug).
_VISIT_OP, _VISIT_ARG, _REF, _OP = "\x01\x02", "\x01\x04", "\x01\x05", "\x01\x06"
_END = "\x03"
_MARKER_RE = re.compile("\x01([\x02\x04\x05\x06][0-9]+)\x03")
_MARKER_CHAR_RE = re.compile("[\x01-\x06]")  # any character of a marker
# Tokens of a location's text: a string, a position after a file name, a keyword, punctuation.
# (A string's body as runs between escapes: one regex step per run, not per character.)
_TOKEN_RE = re.compile(
    r'"[^"\\]*(?:\\.[^"\\]*)*"|:[0-9]+:[0-9]+(?: to (?:[0-9]+)?:[0-9]+)?|callsite\(|fused|unknown'
    r"| at |, |[()\[\]<>]"
)
_PLAIN_FILE_RE = re.compile(r"[ !#-\[\]-~]*")
# In an alias's definition (`LocationAliases.seed`): a reference to another alias, or a token.
_SEED_TOKEN_RE = re.compile(r"#loc[\w$.\-]*|" + _TOKEN_RE.pattern)

# Node kinds.
_UNKNOWN, _FILE, _NAME, _CALLSITE, _FUSED = range(5)


class _Unreadable(Exception):  # noqa: N818 - internal signal, becomes `Unsupported`
    pass


class LocationAliases:
    """The locations of one printout: parsed, interned, visited, numbered."""

    def __init__(self, unsupported: Callable[[str], Exception]) -> None:
        self.unsupported = unsupported
        # Interned locations: (kind, text, children) -> id; and by id.
        self.keys: dict[tuple[int, str, tuple[int, ...]], int] = {}
        self.kinds: list[int] = []
        self.texts: list[str] = []
        self.children: list[tuple[int, ...]] = []
        # ``loc(...)`` texts already read -> id.
        self.by_text: dict[str, int] = {}
        # While `seed` runs: the groups of the definitions the load matched (`LocTable.shapes`).
        self._shapes: dict[str, tuple[str | None, ...]] = {}

    # -- reading -------------------------------------------------------------------------------

    def node(self, loc_text: str | None, location: Location | None) -> int:
        """The id of an op's or argument's location (its ``loc(...)`` text, else its position)."""
        if loc_text is None:
            if location is None or location.line <= 0:
                raise self.unsupported("an op or argument without a location")
            file = location.file
            if not _PLAIN_FILE_RE.fullmatch(file):
                raise self.unsupported(f"file name {file!r}")
            loc_text = f'loc("{file}":{location.line}:{location.col})'
        found = self.by_text.get(loc_text)
        if found is not None:
            return found
        if not loc_text.startswith("loc(") or not loc_text.endswith(")"):
            raise self.unsupported(f"location {loc_text[:80]!r}")
        if _MARKER_CHAR_RE.search(loc_text):  # a C loop (a generator was 60% of a write)
            raise self.unsupported("a location with control characters")
        tokens = _TOKEN_RE.findall(loc_text, 4, len(loc_text) - 1)
        if sum(map(len, tokens)) != len(loc_text) - 5:
            raise self.unsupported(f"location {loc_text[:80]!r}")
        try:
            found, end = self._parse(tokens, 0)
        except (_Unreadable, IndexError):
            raise self.unsupported(f"location {loc_text[:80]!r}") from None
        if end != len(tokens):
            raise self.unsupported(f"location {loc_text[:80]!r}")
        self.by_text[loc_text] = found
        return found

    def seed(
        self,
        raw: dict[str, str],
        resolved: dict[str, str],
        shapes: dict[str, tuple[str | None, ...]] | None = None,
    ) -> None:
        """Read the input's alias table (``#locN`` -> its ``loc(...)`` as printed in `raw`, with
        its references replaced in `resolved`) one definition at a time, so that a location
        that is an alias's resolved text is found by `node` without reading it whole: a call
        stack 30 levels deep is read once per level, not once per op that has it. An alias
        that cannot be read is left out: `node` reads its text, and refuses it, as before.
        `shapes`: the `LOC_SHAPE_RE` groups of definitions the load has matched already."""
        ids: dict[str, int | None] = {}
        self._shapes = shapes or {}
        for name, text in resolved.items():
            found = self._seed_alias(name, raw, ids)
            if found is not None:
                self.by_text[text] = found

    def _seed_alias(self, name: str, raw: dict[str, str], ids: dict[str, int | None]) -> int | None:
        """The id of alias `name` (its references read first), None if `node` would refuse it."""
        if name in ids:
            return ids[name]
        ids[name] = None  # a cycle, or a reference inside this alias to itself: unreadable
        text = raw.get(name)
        if text is None or _MARKER_CHAR_RE.search(text):
            return None
        groups = self._shapes.get(name)
        if groups is None:
            shape = LOC_SHAPE_RE.fullmatch(text)
            groups = shape.groups() if shape is not None else None
        if groups is not None:  # most aliases: read in one match, not token by token
            found = self._seed_shape(groups, raw, ids)
            ids[name] = found
            return found
        tokens = _SEED_TOKEN_RE.findall(text, 4, len(text) - 1)
        if sum(map(len, tokens)) != len(text) - 5:
            return None
        for k, token in enumerate(tokens):
            if token[0] == "#":
                part = self._seed_alias(token, raw, ids)
                if part is None:
                    return None
                tokens[k] = "#" + str(part)  # `_parse` takes it as that location
        try:
            found, end = self._parse(tokens, 0)
        except (_Unreadable, IndexError):
            return None
        if end != len(tokens):
            return None
        ids[name] = found
        return found

    def _seed_shape(
        self, groups: tuple[str | None, ...], raw: dict[str, str], ids: dict[str, int | None]
    ) -> int | None:
        """`_seed_alias` of a definition `LOC_SHAPE_RE` matches (its `groups`): a name, a name
        over a location, a file position or a call site (as `_parse` reads their tokens)."""
        string, child, position, callee, caller = groups
        if callee is not None and caller is not None:
            callee_id = self._seed_alias(callee, raw, ids)
            caller_id = self._seed_alias(caller, raw, ids)
            if callee_id is None or caller_id is None:
                return None
            return self._intern(_CALLSITE, "", (callee_id, caller_id))
        if string is None:  # not a match of `LOC_SHAPE_RE`: a string or a call site
            return None
        if position is not None:
            return self._intern(_FILE, string + position, ())
        if child is None:
            return self._intern(_NAME, string, ())
        child_id = self._seed_alias(child, raw, ids)
        if child_id is None or self.kinds[child_id] == _UNKNOWN:
            return None  # MLIR prints a name with an unknown child without it
        return self._intern(_NAME, string, (child_id,))

    def _intern(self, kind: int, text: str, children: tuple[int, ...]) -> int:
        key = (kind, text, children)
        found = self.keys.get(key)
        if found is None:
            found = self.keys[key] = len(self.kinds)
            self.kinds.append(kind)
            self.texts.append(text)
            self.children.append(children)
        return found

    def _parse(self, tokens: list[str], i: int) -> tuple[int, int]:
        """The location starting at token `i`, and the index past it."""
        token = tokens[i]
        if token == "unknown":
            return self._intern(_UNKNOWN, "", ()), i + 1
        if token == "callsite(":
            callee, i = self._parse(tokens, i + 1)
            if tokens[i] != " at ":
                raise _Unreadable
            caller, i = self._parse(tokens, i + 1)
            if tokens[i] != ")":
                raise _Unreadable
            return self._intern(_CALLSITE, "", (callee, caller)), i + 1
        if token == "fused":
            return self._parse_fused(tokens, i + 1)
        if token[0] != '"':
            if token[0] == "#":  # an alias already read (`seed`)
                return int(token[1:]), i + 1
            raise _Unreadable
        nxt = tokens[i + 1] if i + 1 < len(tokens) else ""
        if nxt[:1] == ":":
            return self._intern(_FILE, token + nxt, ()), i + 2
        if nxt == "(":
            child, j = self._parse(tokens, i + 2)
            if tokens[j] != ")" or self.kinds[child] == _UNKNOWN:
                raise _Unreadable  # MLIR prints a name with an unknown child without it
            return self._intern(_NAME, token, (child,)), j + 1
        return self._intern(_NAME, token, ()), i + 1

    def _parse_fused(self, tokens: list[str], i: int) -> tuple[int, int]:
        """``fused<"meta">[a, b]`` (after ``fused``), in `FusedLoc::get`'s canonical form only."""
        metadata = ""
        if tokens[i] == "<":
            metadata = tokens[i + 1]
            if metadata[:1] != '"' or tokens[i + 2] != ">":
                raise _Unreadable  # other metadata may be printed as an alias of its own
            i += 3
        if tokens[i] != "[":
            raise _Unreadable
        i += 1
        parts: list[int] = []
        if tokens[i] != "]":
            while True:
                part, i = self._parse(tokens, i)
                parts.append(part)
                if tokens[i] == "]":
                    break
                if tokens[i] != ", ":
                    raise _Unreadable
                i += 1
        kinds = self.kinds
        if (
            len(set(parts)) != len(parts)
            or any(kinds[p] == _UNKNOWN for p in parts)
            or any(kinds[p] == _FUSED and self.texts[p] == metadata for p in parts)
            or (len(parts) < 2 and not metadata)
        ):
            raise _Unreadable  # `FusedLoc::get` would have made another location of it
        return self._intern(_FUSED, metadata, tuple(parts)), i + 1

    # -- printing ------------------------------------------------------------------------------

    def visit_op(self, node: int) -> str:
        """The marker at the start of an op whose location is `node`."""
        return _VISIT_OP + str(node) + _END

    def ref(self, node: int) -> str:
        """The marker of `node`'s alias (``#locN`` once numbered)."""
        return _REF + str(node) + _END

    def op(self, node: int) -> str:
        """`visit_op` and `ref` at once, for an op without regions (nothing visited inside)."""
        return _OP + str(node) + _END

    def inline(self, node: int) -> str:
        """A block argument's `` loc(...)``: visited there, its top level printed inline."""
        return " " + _VISIT_ARG + str(node) + _END + "loc(" + self.body(node, self.ref) + ")"

    def body(self, node: int, ref: Callable[[int], str]) -> str:
        """`printLocationInternal` of `node` at the top level, its parts printed by `ref`."""
        kind = self.kinds[node]
        children = self.children[node]
        if kind == _UNKNOWN:
            return "unknown"
        if kind == _FILE:
            return self.texts[node]
        if kind == _NAME:
            if not children:
                return self.texts[node]
            return self.texts[node] + "(" + ref(children[0]) + ")"
        if kind == _CALLSITE:
            return "callsite(" + ref(children[0]) + " at " + ref(children[1]) + ")"
        metadata = self.texts[node]
        head = "fused<" + metadata + ">[" if metadata else "fused["
        return head + ", ".join([ref(c) for c in children]) + "]"

    def finish(self, text: str) -> str:
        """The printout with its markers replaced and the alias table around it."""
        order: dict[int, int] = {}  # first visit, by node
        depth: dict[int, int] = {}
        deferrable: dict[int, bool] = {}
        children = self.children

        def visit(node: int, can_defer: bool) -> int:
            known = depth.get(node)
            if known is not None:
                if not can_defer:
                    settle(node)
                return known
            order[node] = len(order)
            deferrable[node] = can_defer
            deepest = 0
            for child in children[node]:
                d = visit(child, can_defer)
                if d > deepest:
                    deepest = d
            depth[node] = deepest + 1
            return deepest + 1

        def settle(node: int) -> None:
            if deferrable[node]:
                deferrable[node] = False
                for child in children[node]:
                    settle(child)

        # Text, marker, text, marker, ..., text.
        pieces = _MARKER_RE.split(text)
        markers = pieces[1::2]
        for marker in markers:
            if marker[0] != _REF[1]:
                visit(int(marker[1:]), marker[0] != _VISIT_ARG[1])
        # By depth, then first visit: `order` holds the nodes in the order they were first visited
        # and the sort is stable.
        ranked = sorted(order, key=depth.__getitem__)
        names = {n: "#loc" + (str(i) if i else "") for i, n in enumerate(ranked)}
        name_of = names.__getitem__
        early: list[str] = []
        late: list[str] = []
        for n in ranked:
            line = names[n] + " = loc(" + self.body(n, name_of) + ")\n"
            (late if deferrable[n] else early).append(line)
        printed = {
            m: "" if m[0] == _VISIT_OP[1] or m[0] == _VISIT_ARG[1] else names[int(m[1:])]
            for m in set(markers)
        }
        pieces[1::2] = [printed[m] for m in markers]
        return "".join(early) + "".join(pieces) + "".join(late)
