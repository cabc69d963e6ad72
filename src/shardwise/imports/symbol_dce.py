"""`symbol-dce` (upstream MLIR `SymbolDCE`): erase private symbols nothing live refers to.

A top-level symbol is live if it is not private (``sdy.mesh`` ops are public, so they always
stay) or if a live op, or an op nested in one, names it in an attribute (``callee``,
``called_computations``, a sharding's ``@mesh``, ...).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator

from shardwise.ir import ArrayAttr, DictAttr, Module, Op, RawAttr, string_attr_value

__all__ = ["symbol_dce"]

# A string literal (skipped: '@' inside strings is not a reference) or an ``@symbol``.
_REF_RE = re.compile(r'"(?:[^"\\]|\\.)*"|@("(?:[^"\\]|\\.)*"|[\w$.\-]+)')


def _referenced_names(op: Op) -> Iterator[str]:
    """Every symbol name `op` or an op nested in it refers to (with repeats), in walk order.

    The types are tested inline (most values of most ops are typed sdy values, which name
    only meshes): this loop runs over every attribute of every live op.
    """
    for nested in op.walk():
        for attrs in (nested.properties, nested.attributes):
            for key, value in attrs.items():
                cls = type(value)
                if cls is RawAttr:
                    if "@" in value.text and key != "sym_name":
                        yield from _references_in_text(value.text)
                elif (cls is DictAttr or cls is ArrayAttr) and key != "sym_name":
                    yield from _references_in(value)


@functools.lru_cache(maxsize=4096)
def _references_in_text(text: str) -> tuple[str, ...]:
    """The ``@symbol`` names in an attribute's text (strings skipped); one text serves many ops
    (a callee, a ``called_computations`` list)."""
    return tuple(
        string_attr_value(m.group(1)) for m in _REF_RE.finditer(text) if m.group(1) is not None
    )


def _references_in(value: object) -> Iterator[str]:
    """The symbols `value` names; dict and array attributes are read element by element.

    Typed sdy values only name meshes, which are public (always live): skipped, also inside
    dictionaries (a func's ``arg_attrs``), so no sharding is printed just to be searched.
    """
    cls = type(value)
    if cls is RawAttr:
        text = value.text  # type: ignore[attr-defined]
        if "@" in text:
            yield from _references_in_text(text)
    elif cls is DictAttr:
        for item in value.entries.values():  # type: ignore[attr-defined]
            yield from _references_in(item)
    elif cls is ArrayAttr:
        for item in value.elements:  # type: ignore[attr-defined]
            yield from _references_in(item)


def _is_private(op: Op) -> bool:
    visibility = op.get_attr("sym_visibility")
    return visibility is not None and string_attr_value(visibility) == "private"


def symbol_dce(module: Module) -> None:
    """Erase every private top-level symbol that no live op references (transitively)."""
    symbols = {}
    for op in module.body.ops:
        name = module.symbol_name(op)
        if name is not None:
            symbols[name] = op
    live = {id(op) for op in module.body.ops if not _is_private(op)}
    worklist = [op for op in module.body.ops if id(op) in live]
    # Private symbols not found live yet: once there are none, the rest of the walk is moot.
    pending = sum(1 for op in symbols.values() if id(op) not in live)
    while worklist and pending:
        for name in _referenced_names(worklist.pop()):
            target = symbols.get(name)
            if target is not None and id(target) not in live:
                live.add(id(target))
                worklist.append(target)
                pending -= 1
                if not pending:
                    break
    for op in list(module.body.ops):
        if id(op) not in live:
            op.erase()
