"""Ops of unregistered dialects that MLIR's symbol machinery refuses to look into.

An op of an unregistered dialect with exactly one region might be a symbol table (MLIR knows
nothing of it), so ``SymbolTable::getSymbolUses`` gives up on any op containing one, and
`symbol-dce` fails: "operation contains potentially unknown symbol table, meaning that we
can't reliable compute symbol uses", at the live top-level op it was computing the uses of.
`symbol-dce` visits live top-level ops from the last one up, each private symbol a visited op
names right after that op.
"""

from __future__ import annotations

from shardwise.errors import PropagationError
from shardwise.imports.symbol_dce import references_in_text
from shardwise.ir import Module, Op, RawAttr, string_attr_value

__all__ = ["UNKNOWN_SYMBOL_TABLE", "check_symbol_uses_computable"]

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


def _is_private(op: Op) -> bool:
    visibility = op.get_attr("sym_visibility")
    return visibility is not None and string_attr_value(visibility) == "private"


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
