"""`symbol-dce` (upstream MLIR `SymbolDCE`): erase private symbols nothing live refers to.

A top-level symbol is live if it is not private (``sdy.mesh`` ops are public, so they always
stay) or if a live op, or an op nested in one, names it in an attribute (``callee``,
``called_computations``, a sharding's ``@mesh``, ...).

Cost: this pass runs four times per `sdy-propagation-pipeline` and reads every op of every
live func, so the search is one plain loop (no generator per op or per attribute) that skips
the properties of the common StableHLO ops, whose inherent attributes cannot name a symbol.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator

from shardwise.errors import PropagationError
from shardwise.ir import ArrayAttr, BatchErase, DictAttr, Module, Op, RawAttr, string_attr_value
from shardwise.passes import sdy_pass

__all__ = [
    "PLAIN_PROPERTY_OPS",
    "UNKNOWN_SYMBOL_TABLE",
    "check_symbol_uses_computable",
    "references_in_text",
    "symbol_dce",
]

# A string literal (skipped: '@' inside strings is not a reference) or an ``@symbol``.
_REF_RE = re.compile(r'"(?:[^"\\]|\\.)*"|@("(?:[^"\\]|\\.)*"|[\w$.\-]+)')
# StableHLO ops whose properties (their inherent attributes: the loader takes them from MLIR's
# generic form) are all plain: dimension lists, dense elements, enums, dimension numbers; none
# can name a symbol or hold a sharding. Their properties are not searched; their discardable
# attributes are. Most ops of a model are of these kinds or have no properties at all. So is
# ``sdy.constant`` (its one property is the ``value`` of the constant it was imported from).
PLAIN_PROPERTY_OPS = frozenset({"sdy.constant"}) | frozenset(
    "stablehlo." + name
    for name in (
        "broadcast_in_dim",
        "compare",
        "concatenate",
        "constant",
        "convolution",
        "dot_general",
        "dynamic_slice",
        "gather",
        "get_tuple_element",
        "iota",
        "pad",
        "reduce",
        "reduce_window",
        "reverse",
        "scatter",
        "select_and_scatter",
        "slice",
        "sort",
        "transpose",
    )
)


def _scan(root: Op, live: _Liveness) -> Iterator[None]:
    """Mark live every symbol `root` or an op nested in it refers to, pausing after each op
    that made a symbol live: `symbol_dce` then searches that symbol first, and stops the
    searches as soon as no private symbol is left to find (the rest could only confirm live
    ones). A func's callees are usually small and name the symbols the rest of a big caller
    would only name again.

    One loop over a list that grows as it goes (each op's nested ops are appended): no generator
    per op, and only the attributes that can name a symbol are read.
    """
    names: set[str] = set()  # the names found in one op
    ops = [root]
    for op in ops:
        if op.regions:
            for region in op.regions:
                for block in region.blocks:
                    ops += block.ops
        if op.properties and op.name not in PLAIN_PROPERTY_OPS:
            _add_references(op.properties, names)
        attrs = op.attributes
        if attrs:  # mostly just a typed ``sdy.sharding``: tested here, without a call per op
            for value in attrs.values():
                cls = type(value)
                if cls is RawAttr or cls is DictAttr or cls is ArrayAttr:
                    _add_references(attrs, names)
                    break
        if names:
            found = live.mark(names)
            names.clear()
            if found:
                yield


def _add_references(attrs: dict[str, object], names: set[str]) -> None:
    """Add the symbols named in `attrs` (a ``sym_name`` is a symbol's own name) to `names`.

    Typed sdy values name only meshes, which are public (always live): not searched, so no
    sharding is printed just to be searched.
    """
    for key, value in attrs.items():
        cls = type(value)
        if cls is RawAttr:
            if "@" in value.text and key != "sym_name":  # type: ignore[attr-defined]
                names.update(references_in_text(value.text))  # type: ignore[attr-defined]
        elif (cls is DictAttr or cls is ArrayAttr) and key != "sym_name":
            names.update(_references_in(value))


@functools.lru_cache(maxsize=4096)
def references_in_text(text: str) -> tuple[str, ...]:
    """The ``@symbol`` names in an attribute's text (strings skipped); one text serves many ops
    (a callee, a ``called_computations`` list)."""
    return tuple(
        string_attr_value(m.group(1)) for m in _REF_RE.finditer(text) if m.group(1) is not None
    )


def _references_in(value: object) -> Iterator[str]:
    """The symbols `value` names; dict and array attributes are read element by element."""
    cls = type(value)
    if cls is RawAttr:
        text = value.text  # type: ignore[attr-defined]
        if "@" in text:
            yield from references_in_text(text)
    elif cls is DictAttr:
        for item in value.entries.values():  # type: ignore[attr-defined]
            yield from _references_in(item)
    elif cls is ArrayAttr:
        for item in value.elements:  # type: ignore[attr-defined]
            yield from _references_in(item)


def _is_private(op: Op) -> bool:
    visibility = op.get_attr("sym_visibility")
    return visibility is not None and string_attr_value(visibility) == "private"


class _Liveness:
    """The live top-level symbols found so far, and the live ones still to search."""

    def __init__(self, module: Module) -> None:
        self.symbols: dict[str, Op] = {}
        for op in module.body.ops:
            name = module.symbol_name(op)
            if name is not None:
                self.symbols[name] = op
        self.live = {id(op) for op in module.body.ops if not _is_private(op)}
        self.worklist = [op for op in module.body.ops if id(op) in self.live]
        # Private symbols not found live yet: once there are none, the rest of the search is moot.
        self.pending = sum(1 for op in self.symbols.values() if id(op) not in self.live)

    def mark(self, names: set[str]) -> int:
        """Mark the symbols called `names` live; returns how many were not live before."""
        found = 0
        for name in names:
            target = self.symbols.get(name)
            if target is not None and id(target) not in self.live:
                self.live.add(id(target))
                self.worklist.append(target)
                found += 1
        self.pending -= found
        return found


@sdy_pass("symbol-dce")
def symbol_dce(module: Module) -> None:
    """Erase every private top-level symbol that no live op references (transitively)."""
    check_symbol_uses_computable(module)
    liveness = _Liveness(module)
    scans: list[Iterator[None]] = []  # a stack: the newest live symbols are searched first
    while liveness.pending:
        while liveness.worklist:
            scans.append(_scan(liveness.worklist.pop(), liveness))
        if not scans:
            break
        if next(scans[-1], _DONE) is _DONE:
            scans.pop()
    with BatchErase() as batch:  # one pass over the body (each `erase` would scan it)
        for op in list(module.body.ops):
            if id(op) not in liveness.live:
                batch.erase(op)


_DONE = object()


# -- ops of unregistered dialects that might be symbol tables -----------------------------------
#
# Ops of unregistered dialects that MLIR's symbol machinery refuses to look into.
#
# An op of an unregistered dialect with exactly one region might be a symbol table (MLIR knows
# nothing of it), so ``SymbolTable::getSymbolUses`` gives up on any op containing one, and
# `symbol-dce` fails: "operation contains potentially unknown symbol table, meaning that we
# can't reliable compute symbol uses", at the live top-level op it was computing the uses of.
# `symbol-dce` visits live top-level ops from the last one up, each private symbol a visited op
# names right after that op.


UNKNOWN_SYMBOL_TABLE = (
    "operation contains potentially unknown symbol table, meaning that we can't reliable "
    "compute symbol uses"
)


def _contains_unknown_symbol_table(op: Op, unregistered: frozenset[str]) -> bool:
    ops = [op]
    for nested in ops:
        if nested.name in unregistered and len(nested.regions) == 1:
            return True
        if nested is op or nested.name != "builtin.module":  # a nested symbol table: not entered
            for region in nested.regions:
                for block in region.blocks:
                    ops.extend(block.ops)
    return False


def _named_symbols(op: Op) -> list[str]:
    """The symbols `op` and its nested ops name, in walk order."""
    names: list[str] = []
    for nested in op.walk():
        for attrs in (nested.properties, nested.attributes):
            for key, value in attrs.items():
                if key != "sym_name" and isinstance(value, RawAttr) and "@" in value.text:
                    names.extend(references_in_text(value.text))
    return names


def check_symbol_uses_computable(module: Module) -> None:
    """Raise the reference's `symbol-dce` error if a live top-level op contains an op of an
    unregistered dialect with one region."""
    if not module.unregistered_ops:
        return
    symbols = {module.symbol_name(op): op for op in module.body.ops}
    live = {id(op) for op in module.body.ops if not _is_private(op)}
    worklist = [op for op in module.body.ops if id(op) in live]
    while worklist:
        op = worklist.pop()
        if _contains_unknown_symbol_table(op, module.unregistered_ops):
            raise PropagationError(UNKNOWN_SYMBOL_TABLE, op.location)
        for name in _named_symbols(op):
            target = symbols.get(name)
            if target is not None and id(target) not in live:
                live.add(id(target))
                worklist.append(target)
