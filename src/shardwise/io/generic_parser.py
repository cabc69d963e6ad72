"""The generic-form parser: MLIR's generic printout -> `shardwise.ir` (pure Python, no jax).

It reads the text the MLIR bindings print with
``get_asm(print_generic_op_form=True, enable_debug_info=True)``. That text is always MLIR's own
printout (already verified), so the parser trusts its shape and only needs to be fast: an op
written on one line (nearly all of them) is read by a few regex matches on that line; any other
op by precompiled regexes that jump from bracket to bracket, never char by char.
"""

from __future__ import annotations

import gc
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from shardwise import ir
from shardwise.errors import (
    UNKNOWN_LOCATION,
    InternalError,
    Location,
    ParseError,
    UnsupportedError,
)
from shardwise.io.generic_text import (
    LOC_ALIASES,
    RESOURCES,
    WS_RE,
    LocTable,
    SdyParser,
    loc_position,
    offset_location,
    parse_dict_at,
    read_loc_table,
    skip_balanced,
    split_top_level,
    split_types,
    substitute_aliases,
)

if TYPE_CHECKING:
    from shardwise.io.deferred_positions import DeferredPositions

__all__ = ["Positions", "parse_generic"]

# The head of an op: results, name, operands, successors; then whitespace.
_OP_START_RE = re.compile(
    r'(?:(%[\w$.\-]+(?::\d+)?(?:, %[\w$.\-]+(?::\d+)?)*) = )?"([^"\\]+)"\(([^()]*)\)'
    r"(?:\[([^\]]*)\])?[ \t]*"
)
_BLOCK_LABEL_RE = re.compile(r"(\^[\w$.\-]+)")
_VALUE_NAME_RE = re.compile(r"%[\w$.\-]+")
# Properties with no nested dictionary and no string: ``<{dimensions = array<i64: 2>}>``.
_SIMPLE_PROPS_RE = re.compile(r'<\{[^{}"]*\}>')
_SIMPLE_TYPE_RE = re.compile(r"[!\w.$\-]+")
# Fast paths for the common shapes (no nested brackets); anything else takes the general path.
_FAST_TYPE = r'[!\w.$\-]+(?:<[^<>(){}\[\]"]*>)?'
_FAST_TYPE_RE = re.compile(_FAST_TYPE)
# The common tail of an op: a function type without nested parentheses and a simple location.
_OP_END_RE = re.compile(
    r':[ \t]*\([^()"]*\)[ \t]*->[ \t]*(?:\(([^()"]*)\)|(' + _FAST_TYPE + r")(?![<\w]))"
    r'(?:[ \t]+(loc\((?:#[\w$.\-]+|"-":\d+:\d+|unknown)\)))?'
)
# The tail of an op written on one line (nearly every op of a model): the function type with
# no parenthesized or quoted type and a location of a common shape, up to the end of the line.
# Matched from the line's last " : (": only the real tail can match to the end of the line, as
# the types and locations it accepts hold no quote or parenthesis besides its own.
_LINE_TAIL_RE = re.compile(
    r' : \([^()"\n]*\) -> (?:\(([^()"\n]*)\)|(' + _FAST_TYPE + r"))"
    r'(?: (loc\((?:"-":(\d+):(\d+)|#[\w$.\-]+|unknown|"[^"\\\n]*"(?::\d+:\d+)?)\)))?[ \t]*'
)
# A block argument of a common shape, as `_LINE_TAIL_RE` (the general path reads any other).
_FAST_ARG_RE = re.compile(
    r"(%[\w$.\-]+): (" + _FAST_TYPE + r")"
    r'(?: (loc\((?:"-":(\d+):(\d+)|#[\w$.\-]+|unknown|"[^"\\\n]*"(?::\d+:\d+|\(#[\w$.\-]+\))?)\)))?'
    r"(?=[,)])"
)
_RESOURCES_RE = re.compile(r"^\{-#.*?^#-\}[ \t]*\n?", re.M | re.S)

_NO_ATTRS: tuple[dict[str, Any], dict[str, Any]] = ({}, {})
_bare_op = ir.bare_op


class _Parser:
    """Recursive descent over generic-form text; one instance per parse."""

    def __init__(
        self,
        text: str,
        filename: str,
        aliases: dict[str, str],
        sdy_parser: SdyParser | None,
        positions: Positions | DeferredPositions | None,
    ) -> None:
        self.text = text
        self.filename = filename
        self.aliases = aliases
        self.user_sdy_parser = sdy_parser
        self.sdy_parser = self.parse_sdy if sdy_parser is not None else None
        self.attr_errors: list[ParseError] = []
        self.keep_loc_text = positions is not None
        self.op_positions = positions.ops if positions is not None else None
        self.arg_positions = positions.args if positions is not None else None
        # How many of each there are (read once: `DeferredPositions` counts in Python).
        self.op_count = len(positions.ops) if positions is not None else 0
        self.arg_count = len(positions.args) if positions is not None else 0
        self.pos = 0
        self.scopes: list[dict[str, ir.Value]] = []
        self.pending: list[dict[str, list[ir.Value]]] = []
        self.ops: list[ir.Op] = []
        self.props_cache: dict[str, tuple[tuple[str, Any], ...]] = {}
        self.mid_cache: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
        self.args: list[ir.Value] = []
        # Block-argument locations with alias references, resolved (a reducer's arguments
        # share a few: moe_128 has 1,024 such arguments with 4 distinct texts).
        self.inline_locs: dict[str, str] = {}

    def parse_sdy(self, text: str) -> Any:
        """The `#sdy` parser; a rejection is kept and raised once the op's location is known."""
        assert self.user_sdy_parser is not None
        try:
            return self.user_sdy_parser(text)
        except ParseError as e:
            self.attr_errors.append(e)
            return None

    # -- helpers ----------------------------------------------------------------------------

    def error(self, message: str) -> ParseError:
        return ParseError(message, offset_location(self.text, self.pos, self.filename))

    def skip_ws(self) -> None:
        self.pos = WS_RE.match(self.text, self.pos).end()  # type: ignore[union-attr]

    def peek(self, s: str) -> bool:
        return self.text.startswith(s, self.pos)

    def expect(self, s: str) -> None:
        self.skip_ws()
        if not self.text.startswith(s, self.pos):
            raise self.error(f"expected '{s}'")
        self.pos += len(s)

    def balanced(self) -> str:
        start = self.pos
        self.pos = skip_balanced(self.text, start)
        return self.text[start : self.pos]

    def loc_suffix(self) -> str | None:
        self.skip_ws()
        if not self.peek("loc("):
            return None
        text = self.text[self.pos : skip_balanced(self.text, self.pos + 3)]
        self.pos += len(text)
        return self.resolve_inline(text)

    def resolve_inline(self, text: str) -> str:
        """A ``loc(...)`` text with its alias references replaced by what they stand for."""
        if "#loc" not in text:
            return text
        if text.startswith("loc(#") and text[4:-1] in self.aliases:
            return self.aliases[text[4:-1]]
        resolved = self.inline_locs.get(text)
        if resolved is None:
            resolved = self.inline_locs[text] = substitute_aliases(text, self.aliases)
        return resolved

    # -- values -----------------------------------------------------------------------------

    def define(self, name: str, value: ir.Value) -> None:
        value.name = name
        self.scopes[-1][name] = value
        self.resolve_pending(name, value)

    def resolve_pending(self, name: str, value: ir.Value) -> None:
        """Point the uses made of `name` before its definition at `value`."""
        waiting = self.pending[-1].pop(name, None)
        for placeholder in waiting or ():
            placeholder.replace_all_uses_with(value)

    def lookup(self, name: str) -> ir.Value:
        for scope in reversed(self.scopes):
            value = scope.get(name)
            if value is not None:
                return value
        # A use before its definition (another block of a CFG region): patch it later.
        placeholder = ir.Value(ir.OpaqueType("<forward>"), ir.Block(), 0, name)
        self.pending[-1].setdefault(name, []).append(placeholder)
        return placeholder

    # -- structure --------------------------------------------------------------------------

    def parse_module(self) -> ir.Op:
        self.scopes.append({})
        self.pending.append({})
        self.skip_ws()
        op = self.parse_op()
        self.skip_ws()
        if self.pos != len(self.text):
            raise self.error("expected end of input after the top-level module")
        if self.pending[-1]:
            raise self.error(f"use of undefined value {next(iter(self.pending[-1]))}")
        return op

    def parse_op(self) -> ir.Op:
        return self.parse_line_op() or self.parse_general_op()

    def parse_general_op(self) -> ir.Op:
        """Any op in generic form (`parse_line_op` reads most of them faster)."""
        text = self.text
        m = _OP_START_RE.match(text, self.pos)
        if m is None:
            raise self.error("expected an operation in generic form")
        results_text, name, operands_text, successors_text = m.groups()
        pos = m.end()
        op = ir.Op(name)
        ops = self.ops
        if self.op_positions is not None and len(ops) < self.op_count:
            op.location = self.op_positions[len(ops)]
        ops.append(op)
        operands = []
        if operands_text:
            scope = self.scopes[-1]  # most operands are defined in the same region
            operands = [scope.get(n) or self.lookup(n) for n in operands_text.split(", ")]
        if successors_text is not None:
            op.successors = [s.strip() for s in successors_text.split(",")]
        errors: list[ParseError] = []
        self.attr_errors = errors
        if text.startswith("<{", pos):
            op.properties, pos = self.parse_properties(pos)
            if text.startswith(">", pos):
                pos += 1
            else:
                self.pos = pos
                self.expect(">")
                pos = self.pos
            pos = WS_RE.match(text, pos).end()  # type: ignore[union-attr]
        if text.startswith("({", pos):
            self.pos = pos
            self.parse_regions(op)
            pos = WS_RE.match(text, self.pos).end()  # type: ignore[union-attr]
            self.attr_errors = errors  # nested ops had their own lists
        if text.startswith("{", pos):
            op.attributes, pos = parse_dict_at(text, pos, self.sdy_parser)
            pos = WS_RE.match(text, pos).end()  # type: ignore[union-attr]
        self.pos = pos
        result_types, loc_text = self.parse_op_end()
        # MLIR creates an op after parsing its regions: the uses inside the regions come first
        # in each value's use list, then the op's own operands (use order drives propagation).
        op_operands = op.operands
        for value in operands:
            value.uses.append((op, len(op_operands)))
            op_operands.append(value)
        if self.op_positions is None:
            op.location = loc_position(loc_text, self.filename)
        else:
            op.loc_text = loc_text
        self.add_results(op, results_text, result_types)
        if errors:
            raise UnsupportedError(
                f"cannot read an attribute of '{op.name}': {errors[0].message}",
                op.location,
            )
        return op

    def parse_line_op(self) -> ir.Op | None:
        """An op written on one line with no region or successor, or None to take the general
        path (any other shape, or an attribute text that fails to parse: the general path
        reports it at the right spot)."""
        text = self.text
        pos = self.pos
        eol = text.find("\n", pos)
        if eol < 0:
            eol = len(text)
        tail_pos = text.rfind(" : (", pos, eol)
        if tail_pos < 0:
            return None
        tail = _LINE_TAIL_RE.fullmatch(text, tail_pos, eol)
        head = _OP_START_RE.match(text, pos, tail_pos + 1) if tail is not None else None
        if tail is None or head is None:
            return None
        results_text, name, operands_text, successors = head.groups()
        if successors is not None:
            return None
        results, single, loc_text, line, col = tail.groups()
        end = head.end()
        mid = text[end:tail_pos] if end < tail_pos else None
        # `mid_attrs`'s cache looked up inline: most texts repeat.
        attrs = _NO_ATTRS if mid is None else self.mid_cache.get(mid) or self.mid_attrs(mid)
        if attrs is None:
            return None
        ops = self.ops
        if loc_text is not None and loc_text[4] == "#":
            loc_text = self.aliases.get(loc_text[4:-1], loc_text)
        kept = None
        if self.op_positions is not None:
            count = len(ops)
            location = self.op_positions[count] if count < self.op_count else UNKNOWN_LOCATION
            kept = loc_text
        elif line is not None:
            location = Location(self.filename, int(line), int(col))
        else:
            location = loc_position(loc_text, self.filename)
        props, attributes = attrs
        op = _bare_op(
            name,
            props.copy() if props else {},
            attributes.copy() if attributes else {},
            location,
            kept,
        )
        ops.append(op)
        scope = self.scopes[-1]
        if operands_text:  # most operands are defined in the same region
            op_operands = op.operands
            for n in operands_text.split(", "):
                value = scope.get(n) or self.lookup(n)
                value.uses.append((op, len(op_operands)))
                op_operands.append(value)
        self.pos = eol
        if single is None:
            self.add_results(op, results_text, [ir.parse_type(t) for t in split_types(results)])
        elif results_text is None or ":" in results_text:
            self.add_results(op, results_text, [ir.parse_type(single)])
        else:  # the usual op: one result, named like %0
            value = ir.Value(ir.parse_type(single), op, 0, results_text)
            op.results = [value]
            scope[results_text] = value
            if self.pending[-1]:
                self.resolve_pending(results_text, value)
        return op

    def mid_attrs(self, mid: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
        """``<{props}> {attrs}`` (either part optional) -> the two dicts, shared per distinct
        text (copy before use); None if the text is not exactly that or fails to parse."""
        cached = self.mid_cache.get(mid)
        if cached is not None:
            return cached
        if not mid.startswith(("{", "<{")):
            return None
        errors = self.attr_errors = []
        props: dict[str, Any] = {}
        attrs: dict[str, Any] = {}
        pos = 0
        try:
            if mid.startswith("<{"):
                props, pos = parse_dict_at(mid, 1, self.sdy_parser)
                if not mid.startswith(">", pos):
                    return None
                pos += 1
                if pos < len(mid):
                    if not mid.startswith(" {", pos):
                        return None
                    pos += 1
            if pos < len(mid):
                attrs, pos = parse_dict_at(mid, pos, self.sdy_parser)
        except ParseError:
            return None
        if pos != len(mid) or errors:
            return None
        values = [*props.values(), *attrs.values()]
        if any(type(v) in (ir.DictAttr, ir.ArrayAttr) for v in values):
            return props, attrs  # mutable values: parsed afresh for each op
        result = self.mid_cache[mid] = (props, attrs)
        return result

    def parse_properties(self, pos: int) -> tuple[dict[str, Any], int]:
        """The ``<{...}>`` at `pos`: its dict and the index past its ``}``.

        A dict without nested braces or strings (``{broadcast_dimensions = array<i64: 0>}``)
        is parsed once per distinct text: GPT stacks repeat a few dozen of them thousands of
        times. Each op gets a fresh dict of shared frozen values; a dict holding a (mutable)
        dict or array attribute, or one the sdy parser rejected, is not cached.
        """
        text = self.text
        m = _SIMPLE_PROPS_RE.match(text, pos)
        if m is None:
            return parse_dict_at(text, pos + 1, self.sdy_parser)
        key = m.group()
        items = self.props_cache.get(key)
        if items is None:
            errors = len(self.attr_errors)
            entries, _ = parse_dict_at(text, pos + 1, self.sdy_parser)
            mutable = any(type(v) in (ir.DictAttr, ir.ArrayAttr) for v in entries.values())
            if mutable or len(self.attr_errors) != errors:
                return entries, m.end() - 1
            items = self.props_cache[key] = tuple(entries.items())
        return dict(items), m.end() - 1

    def parse_op_end(self) -> tuple[list[ir.Type], str | None]:
        """``: (a, b) -> (c, d) loc(...)``: the result types and the resolved location."""
        m = _OP_END_RE.match(self.text, self.pos)
        if m is None:
            self.expect(":")
            self.skip_ws()
            types = self.parse_function_type()
            return types, self.loc_suffix()
        self.pos = m.end()
        results, single, loc_text = m.groups()
        if single is not None:
            types = [ir.parse_type(single)]
        else:
            types = [ir.parse_type(t) for t in split_types(results)]
        if loc_text is None:
            return types, self.loc_suffix()
        if loc_text[4] == "#":
            return types, self.aliases.get(loc_text[4:-1], loc_text)
        return types, loc_text

    def add_results(self, op: ir.Op, names_text: str | None, types: list[ir.Type]) -> None:
        """Create `op`'s results and name them: ``%0``, or ``%1:2`` for ``%1#0`` and ``%1#1``."""
        op.results = results = [ir.Value(t, op, i) for i, t in enumerate(types)]
        if names_text is None:
            return
        if len(results) == 1 and ":" not in names_text:
            self.define(names_text, results[0])
            return
        items = names_text.split(", ")
        index = 0
        for item in items:
            name, _, count_text = item.partition(":")
            count = int(count_text) if count_text else 1
            if count == 1 and len(items) == 1 and len(results) == 1:
                self.define(name, results[0])
                return
            for k in range(count):
                self.define(f"{name}#{k}", results[index])
                index += 1
            if count >= 1:
                self.scopes[-1].setdefault(name, results[index - count])

    def parse_function_type(self) -> list[ir.Type]:
        """``(a, b) -> (c, d)`` or ``(a) -> c``: return the result types."""
        if not self.peek("("):
            raise self.error("expected a function type")
        self.balanced()
        self.expect("->")
        self.skip_ws()
        if self.peek("("):
            inner = self.balanced()[1:-1]
            return [ir.parse_type(t) for t in split_top_level(inner)]
        return [ir.parse_type(self.parse_single_type())]

    def parse_single_type(self) -> str:
        start = self.pos
        m = _FAST_TYPE_RE.match(self.text, self.pos)
        if m is not None and not self.text.startswith("<", m.end()):
            self.pos = m.end()
            return m.group()
        m = _SIMPLE_TYPE_RE.match(self.text, self.pos)
        if m is None:
            raise self.error("expected a type")
        self.pos = m.end()
        if self.peek("<"):
            self.balanced()
        return self.text[start : self.pos]

    def parse_regions(self, op: ir.Op) -> None:
        self.expect("(")
        while True:
            self.skip_ws()
            op.add_region(self.parse_region())
            self.skip_ws()
            if self.peek(","):
                self.pos += 1
                continue
            self.expect(")")
            return

    def parse_region(self) -> ir.Region:
        self.expect("{")
        region = ir.Region()
        self.scopes.append({})
        self.pending.append({})
        self.skip_ws()
        if not self.peek("}") and not self.peek("^"):
            region.add_block(ir.Block())
        text = self.text
        blocks = region.blocks
        line_op, general_op, skip_ws = self.parse_line_op, self.parse_general_op, WS_RE.match
        while (char := text[self.pos : self.pos + 1]) != "}":
            if char == "^":
                region.add_block(self.parse_block_header())
            else:
                # `parse_op` and `Block.append` inline: one op of the input each.
                op = line_op() or general_op()
                block = blocks[-1]
                op.parent = block
                block.ops.append(op)
            self.pos = skip_ws(text, self.pos).end()  # type: ignore[union-attr]
        self.pos += 1
        self.scopes.pop()
        leftover = self.pending.pop()
        for name, values in leftover.items():
            self.pending[-1].setdefault(name, []).extend(values)
        return region

    def parse_block_header(self) -> ir.Block:
        m = _BLOCK_LABEL_RE.match(self.text, self.pos)
        assert m is not None
        self.pos = m.end()
        block = ir.Block(label=m.group(1))
        if self.peek("("):
            self.pos += 1
            self.skip_ws()
            while not self.peek(")"):
                self.parse_block_arg(block)
                self.skip_ws()
                if self.peek(","):
                    self.pos += 1
                    self.skip_ws()
            self.pos += 1
        self.expect(":")
        return block

    def parse_block_arg(self, block: ir.Block) -> None:
        text = self.text
        m = _FAST_ARG_RE.match(text, self.pos)
        if m is not None:
            self.pos = m.end()
            name, type_text, loc_text, line, col = m.groups()
            if loc_text is not None and "#" in loc_text:
                loc_text = self.resolve_inline(loc_text)
            self.add_block_arg(block, name, type_text, loc_text, line, col)
            return
        m = _VALUE_NAME_RE.match(text, self.pos)
        if m is None:
            raise self.error("expected a block argument")
        self.pos = m.end()
        self.expect(":")
        self.skip_ws()
        type_text = self.parse_single_type()
        self.add_block_arg(block, m.group(), type_text, self.loc_suffix(), None, None)

    def add_block_arg(
        self,
        block: ir.Block,
        name: str,
        type_text: str,
        loc_text: str | None,
        line: str | None,
        col: str | None,
    ) -> None:
        """Define argument `name` of `block`; `line`, `col`: of a ``loc("-":L:C)`` if known."""
        if self.arg_positions is None:
            if line is not None:
                location = Location(self.filename, int(line), int(col or 0))
            else:
                location = loc_position(loc_text, self.filename)
        elif len(self.args) < self.arg_count:
            location = self.arg_positions[len(self.args)]
        else:
            location = Location(self.filename)
        kept = loc_text if self.keep_loc_text else None
        value = block.add_arg(ir.parse_type(type_text), location=location, loc_text=kept)
        self.define(name, value)
        self.args.append(value)


@dataclass(frozen=True, slots=True)
class Positions:
    """Where each op and block argument sits in the user's file, in walk order.

    Walk order = MLIR's pre-order: an op, then for each of its regions' blocks the block's
    arguments and then its ops (recursively). Given to `parse_generic` when the user's file
    has explicit ``loc(...)`` annotations, so the printout's locations are not positions.
    """

    ops: list[Location]
    args: list[Location]


def parse_generic(
    text: str,
    filename: str = "-",
    sdy_parser: SdyParser | None = None,
    positions: Positions | DeferredPositions | None = None,
    local_scope: bool = False,
) -> ir.Module:
    """Parse MLIR's generic-form printout (with debug info) into our IR.

    Without `positions` the printout's ``loc("-":L:C)`` are positions in the user's file and
    become `Op.location`; with them, each op keeps its resolved ``loc(...)`` text in
    `Op.loc_text` (printed back by `print_generic`) and takes its position from `positions`.
    `local_scope`: printed in local scope (no alias table, no ``{-#`` block): neither is looked
    for; nor is the block in a text that does not end with it (MLIR prints it last).
    """
    resources = None
    ends_with_block = not local_scope and text[-64:].rstrip().endswith("#-}")
    m = _RESOURCES_RE.search(text) if ends_with_block else None
    if m is not None:
        resources = m.group().rstrip("\n")
        text = text[: m.start()] + text[m.end() :]
    body, table = (text, LocTable({}, {}, {})) if local_scope else read_loc_table(text)
    parser = _Parser(body, filename, table.resolved, sdy_parser, positions)
    # The parse allocates one object graph that stays alive: cyclic GC passes over it would
    # only cost time (about a third of the parse on 20k-op modules). Nor should the first
    # collections after it pass over the whole young graph, and then again as it ages: it goes
    # straight to the oldest generation (freeze + unfreeze), which only full collections visit.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        op = parser.parse_module()
    finally:
        gc.freeze()
        gc.unfreeze()
        if gc_was_enabled:
            gc.enable()
        # The parser refers to itself (its bound `parse_sdy`): without this it would be
        # cyclic garbage holding every op, and the module could not be freed without a GC
        # pass (`Module.release`).
        parser.sdy_parser = None
    if op.name != "builtin.module":
        raise UnsupportedError(f"expected a 'builtin.module' at the top, got '{op.name}'")
    if isinstance(positions, Positions) and (
        len(parser.ops) != len(positions.ops) or len(parser.args) != len(positions.args)
    ):
        raise InternalError("op/argument count differs between the two parses of the input")
    module = ir.Module(op, filename=filename)
    if resources is not None:
        RESOURCES[module] = resources
    if table.raw:
        LOC_ALIASES[module] = table
    return module
