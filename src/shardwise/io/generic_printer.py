"""The generic-form printer: `shardwise.ir` -> generic text MLIR parses (pure Python, no jax).

Value names are fresh (``%v0``, ``%v1``, ...): MLIR renames every value when it prints.
"""

from __future__ import annotations

from typing import Any

from shardwise import ir
from shardwise.errors import Location
from shardwise.io.generic_text import RESOURCES

__all__ = ["OP_MARKER", "print_generic"]

OP_MARKER = "shardwise-op-"


class _Printer:
    """One printout. Every cache below lives as long as the printout, while the module (which
    holds every value, type and attribute printed) does not change: no id is reused."""

    def __init__(self, with_locs: bool, markers: list[ir.Op] | None) -> None:
        self.with_locs = with_locs
        self.markers = markers
        # Type texts by identity: hashing a TensorType hashes its shape.
        self.types: dict[int, str] = {}
        # Texts of frozen attribute values (shardings, rules), by value: a sharding seen on many
        # ops is printed once.
        self.attrs: dict[Any, str] = {}
        # Dict keys, quoted or bare.
        self.keys: dict[str, str] = {}
        # Values compare and hash by identity.
        self.names: dict[ir.Value, str] = {}
        self.out: list[str] = []
        # Alias definitions (``!sw_t0 = tensor<8xf32>``, ``#sw_a0 = #sdy.sharding<...>``) for
        # the text of every type and of every long attribute: MLIR then parses each distinct
        # text once (a model repeats a few dozen of them thousands of times) and reads less.
        # Its printout does not depend on how the input spelled a type or an attribute. But an
        # op or argument printed without a location gets its position in this text, which the
        # definitions shift: a printout with locations in which one of them has none is printed
        # again without aliases (`unlocated`).
        self.use_aliases = markers is None
        self.unlocated = False
        self.aliases: dict[str, str] = {}
        self.alias_defs: list[str] = []

    def name_of(self, value: ir.Value) -> str:
        name = self.names.get(value)
        if name is None:
            name = self.names[value] = f"%v{len(self.names)}"
        return name

    def type_text(self, type: ir.Type) -> str:
        text = self.types.get(id(type))
        if text is None:
            text = str(type)
            if self.use_aliases:
                text = self.alias_of(text, "!sw_t")
            self.types[id(type)] = text
        return text

    def alias_of(self, text: str, prefix: str) -> str:
        """The alias standing for `text` (defined on first use)."""
        alias = self.aliases.get(text)
        if alias is None:
            alias = self.aliases[text] = f"{prefix}{len(self.alias_defs)}"
            self.alias_defs.append(f"{alias} = {text}\n")
        return alias

    def raw_text(self, text: str) -> str:
        """A `RawAttr`'s text, or its alias if it is long enough to be worth one."""
        if not self.use_aliases or len(text) < _MIN_ALIASED or not _aliasable(text):
            return text
        return self.alias_of(text, "#sw_a")

    def attr_text(self, value: Any) -> str:
        """`str(value)`, the same text as `ir.DictAttr.__str__` gives, memoized."""
        cls = type(value)
        if cls is ir.RawAttr:
            return self.raw_text(value.text)
        if cls is ir.DictAttr:
            return self.dict_text(value.entries)
        if cls is ir.ArrayAttr:
            return "[" + ", ".join([self.attr_text(e) for e in value.elements]) + "]"
        try:
            text = self.attrs.get(value)
        except TypeError:  # not hashable: not a frozen value
            return self.raw_text(str(value))
        if text is None:
            text = self.attrs[value] = self.raw_text(str(value))
        return text

    def dict_text(self, entries: dict[str, Any]) -> str:
        keys = self.keys
        parts = []
        for name, value in entries.items():
            key = keys.get(name)
            if key is None:
                key = keys[name] = name if ir.is_bare_key(name) else '"' + name + '"'
            if value is ir.UNIT:
                parts.append(key)
            elif type(value) is ir.RawAttr and len(value.text) < _MIN_ALIASED:
                parts.append(key + " = " + value.text)
            else:
                parts.append(key + " = " + self.attr_text(value))
        return "{" + ", ".join(parts) + "}"

    def loc(self, loc_text: str | None, location: Location | None) -> str:
        if not self.with_locs:
            return ""
        if loc_text is not None:
            if self.use_aliases and len(loc_text) > _MIN_ALIASED:
                # JAX's call-site locations are long and shared by many ops: MLIR parses
                # each once (``#sw_l3 = loc(...)``; its printout names its own aliases).
                return " loc(" + self.alias_of(loc_text, "#sw_l") + ")"
            return " " + loc_text
        if location is not None and location.line > 0:
            return f' loc("{_escape(location.file)}":{location.line}:{location.col})'
        self.unlocated = True
        return ""

    def print_op(self, op: ir.Op, indent: str) -> None:
        """One op, as one string but for its regions (printed in between)."""
        names = self.names
        name_of = self.name_of
        type_text = self.type_text
        operands = op.operands
        results = op.results
        head = indent
        if results:
            head += ", ".join([names.get(r) or name_of(r) for r in results]) + " = "
        head += '"' + op.name + '"(' + ", ".join([names.get(v) or name_of(v) for v in operands])
        head += ")"
        if op.successors:
            head += "[" + ", ".join(op.successors) + "]"
        if op.properties:
            head += " <" + self.dict_text(op.properties) + ">"
        if op.regions:
            self.out.append(head + " (")
            for i, region in enumerate(op.regions):
                if i:
                    self.out.append(", ")
                self.print_region(region, indent)
            head = ")"
        if op.attributes:
            head += " " + self.dict_text(op.attributes)
        operand_types = ", ".join([type_text(v.type) for v in operands])
        result_types = ", ".join([type_text(v.type) for v in results])
        head += " : (" + operand_types + ") -> (" + result_types + ")"
        if self.markers is not None:
            head += f' loc("{OP_MARKER}{len(self.markers)}")'
            self.markers.append(op)
        elif self.with_locs:
            head += self.loc(op.loc_text, op.location)
        self.out.append(head + "\n")

    def print_region(self, region: ir.Region, indent: str) -> None:
        out = self.out
        out.append("{\n")
        inner = indent + "  "
        for i, block in enumerate(region.blocks):
            label = block.label or f"^bb{i}"
            args = ", ".join(
                f"{self.name_of(a)}: {self.type_text(a.type)}{self.loc(a.loc_text, a.location)}"
                for a in block.args
            )
            out.append(f"{indent}{label}({args}):\n" if args else f"{indent}{label}:\n")
            for op in block.ops:
                self.print_op(op, inner)
        out.append(indent + "}")


# Attribute texts at least this long get an alias; shorter ones cost MLIR little to parse.
_MIN_ALIASED = 24


def _aliasable(text: str) -> bool:
    """Whether an alias may stand for the attribute text: not for a distinct attribute (each
    occurrence is its own) nor a resource reference (kept exactly where it was)."""
    return "distinct[" not in text and "dense_resource<" not in text


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def print_generic(
    module: ir.Module, with_locs: bool = True, markers: list[ir.Op] | None = None
) -> str:
    """Our IR -> generic-form text MLIR can parse (value names are fresh; MLIR renames).

    With `markers` (an empty list), op number i gets ``loc("shardwise-op-<i>")`` instead of its
    location and is appended to `markers`: a diagnostic then names the op exactly.
    """
    printer = _Printer(with_locs, markers)
    printer.print_op(module.op, "")
    if printer.unlocated and printer.alias_defs:
        printer = _Printer(with_locs, markers)
        printer.use_aliases = False
        printer.print_op(module.op, "")
    resources = RESOURCES.get(module)
    if resources is not None:
        printer.out.append("\n" + resources + "\n")
    return "".join(printer.alias_defs) + "".join(printer.out)
