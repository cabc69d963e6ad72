"""Symbols: references (``@foo``, ``@"a-b"``) and `SymbolTable` (lookup, uniquing insert, erase)."""

from __future__ import annotations

from typing import Any

from shardwise.ir.attrs import RawAttr, is_bare_key, string_attr, unescape_string
from shardwise.ir.core import BatchErase, Module, Op


def symbol_ref_name(attr: Any) -> str:
    """``@foo`` / ``@"a-b"`` (a FlatSymbolRefAttr's text) -> ``foo`` / ``a-b``."""
    text = attr.text if type(attr) is RawAttr else str(attr)
    # Looked up by text: a call-heavy model reads each call's callee name in a dozen passes.
    name = _names_by_text.get(text)
    if name is None:
        if len(_names_by_text) >= _MAX_NAMES:
            _names_by_text.clear()
        name = _names_by_text[text] = _unquoted_name(text)
    return name


_names_by_text: dict[str, str] = {}
_MAX_NAMES = 1 << 12


def _unquoted_name(text: str) -> str:
    text = text.strip()
    if text.startswith("@"):
        text = text[1:]
    if text.startswith('"') and text.endswith('"'):
        text = unescape_string(text[1:-1])
    return text


def _quote_symbol(name: str) -> str:
    if is_bare_key(name):
        return name
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def symbol_ref(name: str) -> RawAttr:
    """The FlatSymbolRefAttr naming `name`: ``@foo`` or ``@"a-b"``."""
    return RawAttr("@" + _quote_symbol(name))


# What `SymbolTable.reserve` enters for a name it takes.
_RESERVED = Op("shardwise.reserved_symbol")


class SymbolTable:
    """`mlir::SymbolTable` over a module body: lookup, insert with name uniquing, erase.

    Name clashes on insert are resolved as MLIR does: ``name_<k>`` with one counter per
    table, incremented on every attempt.
    """

    def __init__(self, module: Module) -> None:
        self.module = module
        self.counter = 0
        self.symbols: dict[str, Op] = {}
        for op in module.body.ops:
            name = module.symbol_name(op)
            if name is not None:
                self.symbols.setdefault(name, op)

    def lookup(self, name: str) -> Op | None:
        return self.symbols.get(name)

    def insert(self, op: Op, after: Op | None = None) -> str:
        """Insert a detached `op` (at the end, or after `after`); returns its final name."""
        body = self.module.body
        if op.parent is None:
            if after is not None:
                body.insert_after(after, op)
            else:
                body.append(op)
        name = self.module.symbol_name(op) or ""
        if self.symbols.get(name, op) is op:
            self.symbols[name] = op
            return name
        while True:
            candidate = f"{name}_{self.counter}"
            self.counter += 1
            if candidate not in self.symbols:
                break
        holder = op.attributes if "sym_name" in op.attributes else op.properties
        holder["sym_name"] = string_attr(candidate)
        self.symbols[candidate] = op
        return candidate

    def reserve(self, name: str) -> str:
        """The name `insert` would give a symbol named `name`, taken with no op behind it
        (for a symbol that would be erased before anything looks it up)."""
        candidate = name
        while candidate in self.symbols:
            candidate = f"{name}_{self.counter}"
            self.counter += 1
        self.symbols[candidate] = _RESERVED
        return candidate

    def erase(self, op: Op, batch: BatchErase | None = None) -> None:
        """Erase `op` (with `batch`: out of the module body when the batch closes)."""
        name = self.module.symbol_name(op)
        if name is not None and self.symbols.get(name) is op:
            del self.symbols[name]
        if batch is None:
            op.erase()
        else:
            batch.erase(op)
