"""The pretty-form printer: `shardwise.ir` -> the text MLIR prints in its custom assembly form.

Pure Python (no jax): prints exactly what ``Operation.get_asm(print_generic_op_form=False,
enable_debug_info=...)`` of the MLIR bindings prints for the same module, for the ops it
knows (per-op formats in `pretty_ops`; with debug info, the locations and their ``#loc``
alias table as `pretty_locations` prints them). Anything else - an op without a format here, an
attribute text it has not verified, a construct MLIR would print with an alias - raises
`Unsupported` for the whole module, and the caller takes the MLIR path instead: giving up is
always correct, a wrong text never is.

The MLIR path verifies the module as it parses it; this one checks what a pass of ours can
get wrong - every sharding against its value's type and mesh (`shardwise.verify`, once per
distinct sharding and types) - and leaves the ops whose MLIR verifiers check more (the sdy
collectives, ``sdy.data_flow_edge``) to the MLIR path. Where a check fails it gives up, and the
MLIR path reports the error as before. Other invalid IR (a wrong result type) is printed.

Value names follow MLIR's AsmPrinter (`SSANameState`): each region is numbered as a whole
(its block arguments, then its ops' results) before any region nested in it; a nested region
starts from the counters its parent region ended with, and sibling regions from the same
ones. Entry-block arguments are ``%argN``; results ``%N`` (``%N:k`` for k results, used as
``%N#i``); an op may suggest a name (``%c``, ``%cst``, ``%iterArg``), which gets a
``_<counter>`` suffix when already used in the enclosing regions.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from shardwise import ir
from shardwise.errors import VerifyError
from shardwise.io.generic_text import LOC_ALIASES, RESOURCES
from shardwise.io.pretty_locations import LocationAliases
from shardwise.sharding import TensorSharding, TensorShardingPerValue
from shardwise.verify import verify_sharding_per_value, verify_tensor_sharding

__all__ = ["Unsupported", "print_pretty", "OpPrinter", "Printer"]


class Unsupported(Exception):  # noqa: N818 - a signal, not an error a user sees
    """The module holds something this printer does not print exactly as MLIR: fall back."""


# A printer of one op's custom form: what follows ``%results = `` (the op name included).
OpPrinter = Callable[["Printer", ir.Op, str, str], str]

# Attribute and type texts made of these characters only are printed as they are (MLIR escapes
# every other byte in strings; a raw newline or non-ASCII character means a text we made).
_PLAIN_TEXT_RE = re.compile(r"[ -~]*")
# What MLIR prints differently in the pretty form (aliases ``#map``/``#set``/``#distinct``,
# resource blobs) or that a generic-form text would spell otherwise (escaped quotes).
_UNSAFE_PARTS = ("affine_map", "affine_set", "distinct[", "dense_resource", '\\"', "#loc", "loc(")
# Elements of a dense attribute over which MLIR prints it in hex (less one: a bound on commas).
_HEX_ELEMENTS = 99
_DENSE_LIST_RE = re.compile(r"dense<(\[[^<>]*\])>")
_DENSE_ELEMENT_RE = re.compile(r"[^\[\],\s]+")
# A ``dense<"0x...">`` text longer than this is checked without its hex digits.
_LONG_HEX = 4096
_HEX_DIGITS = b"0123456789ABCDEF"


def _upper_hex(text: str) -> bool:
    """Whether `text` is only the digits MLIR prints in hex (``0-9``, ``A-F``)."""
    return text.isascii() and not text.encode().translate(None, _HEX_DIGITS)


_BARE_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_$.]*")
_SYMBOL_STRING_RE = re.compile(r'"([A-Za-z_][A-Za-z0-9_$.]*)"')


class _Scope:
    """The names used in one region and the regions around it (MLIR's scoped name table)."""

    __slots__ = ("names", "parent")

    def __init__(self, parent: _Scope | None) -> None:
        self.names: set[str] = set()
        self.parent = parent

    def __contains__(self, name: str) -> bool:
        scope: _Scope | None = self
        while scope is not None:
            if name in scope.names:
                return True
            scope = scope.parent
        return False


class _Counters:
    """`SSANameState`'s counters at the end of numbering one region."""

    __slots__ = ("value", "argument", "conflict", "scope")

    def __init__(self, value: int, argument: int, conflict: int, scope: _Scope) -> None:
        self.value = value
        self.argument = argument
        self.conflict = conflict
        self.scope = scope


class Printer:
    """One printout of a module. Caches live as long as the printout."""

    def __init__(self, ops: dict[str, OpPrinter], hints: dict[str, Callable[[ir.Op], list[str]]]):
        self.ops = ops
        self.hints = hints
        # Names as referenced (``%3``, ``%0#1``, ``%arg2``, ``%c_0``), by value identity.
        self.names: dict[ir.Value, str] = {}
        # Name of an op's result list as printed before `` = `` (``%0:2``), by op identity.
        self.defs: dict[int, str] = {}
        # Region numbering: counters at the end of each numbered region, by region identity.
        self.region_end: dict[int, _Counters] = {}
        self.types: dict[int, str] = {}
        self.attrs: dict[Any, str] = {}
        self.attr_ids: dict[int, str] = {}
        self.keys: dict[str, str] = {}
        # Op names as printed, by default dialect (``func.return`` is ``return`` in a func).
        self.short_names: dict[str, dict[str, str]] = {}
        self.checked: dict[str, str] = {}
        # Sharding checks: the module's meshes, the shardings (and types) found valid, and the
        # axes made manual by the enclosing manual computations.
        self.meshes: dict[str, Any] = {}
        self.valid: set[tuple[Any, ...]] = set()
        self.manual_axes: dict[str, Any] = {}
        # Block-argument names a parent op gives its regions (``iterArg``), by op name.
        self.arg_hints: dict[str, str] = {"stablehlo.while": "iterArg"}
        # With debug info: the locations printed (markers in the text until `finish`).
        self.locs: LocationAliases | None = None

    def arg_loc(self, arg: ir.Value) -> str:
        """A block argument's `` loc(...)`` with debug info, else nothing."""
        locs = self.locs
        if locs is None:
            return ""
        return locs.inline(locs.node(arg.loc_text, arg.location))

    # -- texts ------------------------------------------------------------------------------

    def check(self, text: str) -> str:
        """`text` if it prints the same in the pretty form, else give up."""
        known = self.checked.get(text)
        if known is not None:
            return known
        if text.startswith('dense<"0x') and len(text) > _LONG_HEX:
            close = text.find('"', 9)
            if close > 9 and _upper_hex(text[9:close]):
                # Hex digits alone hold none of the marks below, nor make one with their
                # neighbours: the text passes exactly when it does without them (a regex and
                # seven searches over a Llama's 262 KB rotary table: ~1.5 ms).
                self.check(text[:9] + text[close:])
                self.checked[text] = text
                return text
        if not _PLAIN_TEXT_RE.fullmatch(text) or any(p in text for p in _UNSAFE_PARTS):
            raise Unsupported(f"attribute or type text {text[:80]!r}")
        if "dense<" in text and text.count(",") >= _HEX_ELEMENTS:
            # MLIR prints a dense attribute of over 100 elements as a hex string: a long list
            # (which our own passes may build) would not come back as written.
            raise Unsupported("a large dense attribute")
        if "{}p" in text:
            # An empty closed dimension with a priority: MLIR's verifier rejects the module
            # (a pass can leave one, and only the MLIR path reports it).
            raise Unsupported("an empty closed dimension sharding with a priority")
        for elements in _DENSE_LIST_RE.findall(text):
            if len(set(_DENSE_ELEMENT_RE.findall(elements))) <= 1:
                # All elements equal: MLIR prints the splat form (``dense<3>``).
                raise Unsupported("a dense list of equal elements")
        self.checked[text] = text
        return text

    def type_text(self, type: ir.Type) -> str:
        text = self.types.get(id(type))
        if text is None:
            text = self.types[id(type)] = self.check(str(type))
        return text

    def types_text(self, values: list[ir.Value]) -> str:
        type_text = self.type_text
        return ", ".join([type_text(v.type) for v in values])

    def functional_type(self, op: ir.Op) -> str:
        """MLIR's ``printFunctionalType``: ``(a, b) -> c`` or ``(a) -> (b, c)``."""
        return "(" + self.types_text(op.operands) + ") -> " + self.result_types(op.results)

    def result_types(self, results: list[ir.Value]) -> str:
        if len(results) == 1:
            text = self.type_text(results[0].type)
            if text.startswith("("):  # a function type is parenthesized
                raise Unsupported("function-typed result")
            return text
        return "(" + self.types_text(results) + ")"

    def attr_text(self, value: Any) -> str:
        """The text MLIR prints for an attribute value (dictionaries sorted)."""
        cls = type(value)
        if cls is ir.RawAttr:
            return self.check(value.text)
        if cls is ir.DictAttr:
            return "{" + self.entries_text(value.entries, ()) + "}"
        if cls is ir.ArrayAttr:
            return "[" + ", ".join([self.attr_text(e) for e in value.elements]) + "]"
        # Frozen values (shardings): by identity first (a pass shares one value among many
        # ops), then by value.
        text = self.attr_ids.get(id(value))
        if text is not None:
            return text
        try:
            text = self.attrs.get(value)
        except TypeError:  # not hashable: not a frozen value
            return self.check(str(value))
        if text is None:
            text = self.attrs[value] = self.check(str(value))
        self.attr_ids[id(value)] = text
        return text

    def entry_text(self, name: str, value: Any) -> str:
        key = self.keys.get(name)
        if key is None:
            if _BARE_NAME_RE.fullmatch(name):
                key = name
            elif name and _PLAIN_TEXT_RE.fullmatch(name) and '"' not in name and "\\" not in name:
                key = '"' + name + '"'  # printable: MLIR quotes it without escapes
            else:
                raise Unsupported(f"attribute name {name!r}")
            self.keys[name] = key
        if type(value) is ir.RawAttr:
            text = value.text
            if text == "unit":
                return key
            return key + " = " + (self.checked.get(text) or self.check(text))
        return key + " = " + self.attr_text(value)

    def entries_text(self, entries: dict[str, Any], elided: tuple[str, ...]) -> str:
        entry_text = self.entry_text
        if len(entries) == 1 and not elided:
            for name, value in entries.items():
                return entry_text(name, value)
        return ", ".join([entry_text(k, entries[k]) for k in sorted(entries) if k not in elided])

    def attr_dict(self, op: ir.Op, elided: tuple[str, ...] = ()) -> str:
        """`printOptionalAttrDict` of the op's inherent (not `elided`) + discardable attributes."""
        props = op.properties
        attrs = op.attributes
        if not props or (len(props) <= len(elided) and all(k in elided for k in props)):
            if not attrs:
                return ""
            if len(attrs) == 1:  # most often one sharding, whose text is known by identity
                for name, value in attrs.items():
                    text = self.attr_ids.get(id(value))
                    key = self.keys.get(name)
                    if text is None or key is None:
                        return " {" + self.entry_text(name, value) + "}"
                    return " {" + key + " = " + text + "}"
            return " {" + self.entries_text(attrs, ()) + "}"
        if not attrs:
            merged = props
        else:
            merged = {**props, **attrs}
            if len(merged) != len(props) + len(attrs):
                raise Unsupported("an attribute both inherent and discardable")
        text = self.entries_text(merged, elided)
        return " {" + text + "}" if text else ""

    def prop_text(self, op: ir.Op, name: str) -> str:
        """The text of a required inherent attribute."""
        value = op.properties.get(name)
        if value is None:
            raise Unsupported(f"{op.name} without {name}")
        return self.attr_text(value)

    def check_sharding(self, value: Any, types: list[ir.Type], per_value: bool) -> None:
        """Give up unless `value` is a valid sharding (per value) for values of `types`.

        MLIR would verify it on the way; a pass may have left an invalid one (an axis twice).
        """
        # By text: passes give many ops equal but distinct sharding values.
        key = (self.attr_text(value), tuple(self.manual_axes), *[self.type_text(t) for t in types])
        if key in self.valid:
            return
        manual = self.manual_axes or None
        try:
            if per_value and type(value) is TensorShardingPerValue:
                verify_sharding_per_value(value, types, self.meshes, manual_axes=manual)
            elif not per_value and type(value) is TensorSharding and len(types) == 1:
                verify_tensor_sharding(value, types[0], self.meshes, manual_axes=manual)
            else:
                raise Unsupported("a sharding attribute that is not a parsed sharding")
        except VerifyError as e:
            raise Unsupported(f"an invalid sharding: {e.message}") from None
        self.valid.add(key)

    def symbol(self, attr: Any) -> str:
        """A symbol name (StringAttr text ``"main"``) as ``@main``; quoted names give up."""
        m = _SYMBOL_STRING_RE.fullmatch(str(attr))
        if m is None:
            raise Unsupported(f"symbol name {attr}")
        return "@" + m.group(1)

    def operands(self, op: ir.Op) -> str:
        names = self.names
        return ", ".join([names[v] for v in op.operands])

    # -- value names ------------------------------------------------------------------------

    def number_region(self, region: ir.Region, start: _Counters) -> None:
        """Name every block argument and op result of `region` (not of nested regions)."""
        if len(region.blocks) != 1:
            raise Unsupported("a region without exactly one block")
        block = region.blocks[0]
        scope = _Scope(start.scope)
        state = _Counters(start.value, start.argument, start.conflict, scope)
        names = self.names
        self.name_args(region, state)
        hints = self.hints
        defs = self.defs
        for op in block.ops:
            results = op.results
            if not results:
                continue
            suggest = hints.get(op.name)
            if suggest is not None:
                hinted = suggest(op)
                if len(hinted) != len(results):
                    raise Unsupported(f"result names of {op.name}")
                refs = ["%" + self.unique(h, state) for h in hinted]
                for r, ref in zip(results, refs, strict=True):
                    names[r] = ref
                defs[id(op)] = ", ".join(refs)
                continue
            base = "%" + str(state.value)
            state.value += 1
            if len(results) == 1:
                names[results[0]] = base
                defs[id(op)] = base
            else:
                for i, r in enumerate(results):
                    names[r] = base + "#" + str(i)
                defs[id(op)] = base + ":" + str(len(results))
        self.region_end[id(region)] = state

    def name_args(self, region: ir.Region, state: _Counters) -> None:
        """Name the block arguments of `region`'s one block (`number_region`'s first step)."""
        names = self.names
        parent = region.parent
        hint = self.arg_hints.get(parent.name) if parent is not None else None
        for arg in region.blocks[0].args:
            if hint is not None:
                names[arg] = "%" + self.unique(hint, state)
            else:
                name = "arg" + str(state.argument)
                state.argument += 1
                state.scope.names.add(name)
                names[arg] = "%" + name

    def unique(self, name: str, state: _Counters) -> str:
        """MLIR's `uniqueValueName`: `name`, else ``name_<conflict counter>``."""
        scope = state.scope
        if name in scope:
            while True:
                probe = name + "_" + str(state.conflict)
                state.conflict += 1
                if probe not in scope:
                    name = probe
                    break
        scope.names.add(name)
        return name

    # -- ops and regions --------------------------------------------------------------------

    def region(self, region: ir.Region, indent: str, dialect: str, entry_args: bool = False) -> str:
        """`printRegion`: ``{`` newline, the ops one level deeper, `indent` ``}``.

        Numbers the region first (from the counters its parent region ended with).
        """
        parent = region.parent
        assert parent is not None
        start: _Counters | None
        if parent.parent is None:  # the top op
            start = _Counters(0, 0, 0, _Scope(None))
        else:
            start = self.region_end.get(id(parent.parent.parent))
            if start is None:
                raise Unsupported("a region outside a numbered region")
        self.number_region(region, start)
        block = region.blocks[0]
        out = ["{\n"]
        if entry_args and block.args:
            out.append(indent + "^bb0(" + self.region_args(block) + "):\n")
        inner = indent + "  "
        short = self.short_names.get(dialect)
        if short is None:
            short = self.short_names[dialect] = {}
        printers = self.ops
        defs = self.defs
        append = out.append
        attr_ids = self.attr_ids
        types = self.types
        valid = self.valid
        locs = self.locs
        for op in block.ops:
            op_name = op.name
            name = short.get(op_name)
            if name is None:
                name = short[op_name] = _short_name(op_name, dialect)
            printer = printers.get(op_name)
            if printer is None or op.successors:
                raise Unsupported(f"op {op_name}")
            if locs is not None:
                append(self.located_op(op, inner, printer(self, op, inner, name)))
            elif op.results:
                append(inner + defs[id(op)] + " = " + printer(self, op, inner, name) + "\n")
            else:
                append(inner + printer(self, op, inner, name) + "\n")
            sharding = op.attributes.get("sdy.sharding")
            if sharding is not None:
                # Printed: the texts of the sharding and of a single result type are known.
                results = op.results
                if len(results) == 1 and not self.manual_axes:
                    key = (attr_ids.get(id(sharding)), (), types.get(id(results[0].type)))
                    if key in valid:
                        continue
                self.check_sharding(sharding, [r.type for r in results], per_value=True)
        out.append(indent + "}")
        return "".join(out)

    def region_args(self, block: ir.Block) -> str:
        names = self.names
        type_text = self.type_text
        if self.locs is not None:
            arg_loc = self.arg_loc
            return ", ".join([names[a] + ": " + type_text(a.type) + arg_loc(a) for a in block.args])
        return ", ".join([names[a] + ": " + type_text(a.type) for a in block.args])

    def located_op(self, op: ir.Op, indent: str, body: str) -> str:
        """An op's line with debug info: visited where it starts, its alias at the end.

        `body` is printed first (it visits the locations inside the op), the marker of the op's
        own visit goes before it: MLIR visits an op's location before anything in the op.
        """
        locs = self.locs
        assert locs is not None
        node = locs.node(op.loc_text, op.location)
        if not op.regions:
            if op.results:
                return indent + self.defs[id(op)] + " = " + body + " loc(" + locs.op(node) + ")\n"
            return indent + body + " loc(" + locs.op(node) + ")\n"
        head = indent + locs.visit_op(node)
        if op.results:
            head += self.defs[id(op)] + " = "
        return head + body + " loc(" + locs.ref(node) + ")\n"

    def op_line(self, op: ir.Op, indent: str, dialect: str) -> str:
        """One op (not in a region: the top op) as a line."""
        printer = self.ops.get(op.name)
        if printer is None or op.successors:
            raise Unsupported(f"op {op.name}")
        body = printer(self, op, indent, _short_name(op.name, dialect))
        if self.locs is not None:
            return self.located_op(op, indent, body)
        if op.results:
            return indent + self.defs[id(op)] + " = " + body + "\n"
        return indent + body + "\n"

    def generic(self, op: ir.Op, indent: str) -> str:
        """The generic form, for an op without a custom one (value names as everywhere)."""
        text = '"' + op.name + '"(' + self.operands(op) + ")"
        if op.properties:
            text += " <{" + self.entries_text(op.properties, ()) + "}>"
        if op.regions:
            text += (
                " ("
                + ", ".join([self.region(r, indent, "", entry_args=True) for r in op.regions])
                + ")"
            )
        if op.attributes:
            text += " {" + self.entries_text(op.attributes, ()) + "}"
        return text + " : " + self.functional_type(op)


def _short_name(name: str, dialect: str) -> str:
    """`OpState::printOpName`: the op name without the region's default dialect."""
    if dialect and name.startswith(dialect + ".") and name.count(".") == 1:
        return name[len(dialect) + 1 :]
    return name


def print_pretty(
    module: ir.Module,
    ops: dict[str, OpPrinter],
    hints: dict[str, Callable[[ir.Op], list[str]]],
    debug_info: bool = False,
) -> str:
    """The module as MLIR prints it in pretty form (with its locations if `debug_info`);
    `Unsupported` if unsure."""
    if RESOURCES.get(module) is not None:
        raise Unsupported("dialect resources")
    printer = Printer(ops, hints)
    printer.meshes = module.meshes()
    if debug_info:
        printer.locs = LocationAliases(Unsupported)
        table = LOC_ALIASES.get(module)
        if table is not None:
            printer.locs.seed(table.raw, table.resolved, table.shapes)
    top = module.op
    if top.results or top.operands or len(top.regions) != 1:
        raise Unsupported("module signature")
    text = printer.op_line(top, "", "builtin")
    return text if printer.locs is None else printer.locs.finish(text)
