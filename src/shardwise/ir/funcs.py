"""``func.func`` argument and result attributes and result types.

In generic form a func's argument/result attributes are the properties ``arg_attrs`` and
``res_attrs``: an `ArrayAttr` of `DictAttr`, one per argument/result (absent when all empty)."""

from __future__ import annotations

import functools
from typing import Any, Literal, overload

from shardwise.ir.attrs import ArrayAttr, DictAttr, split_top_level
from shardwise.ir.core import Op
from shardwise.ir.types import Type, parse_type


def _attr_dicts(func: Op, key: str, count: int, create: bool) -> list[DictAttr] | None:
    array = func.properties.get(key)
    if array is None:
        if not create:
            return None
        array = ArrayAttr([DictAttr() for _ in range(count)])
        func.properties[key] = array
    return array.elements


# With ``create=True`` the attribute dicts are made when absent, so there is always one.
@overload
def func_arg_attrs(
    func: Op, index: int, create: Literal[False] = False
) -> dict[str, Any] | None: ...
@overload
def func_arg_attrs(func: Op, index: int, create: Literal[True]) -> dict[str, Any]: ...


def func_arg_attrs(func: Op, index: int, create: bool = False) -> dict[str, Any] | None:
    """The attribute dict of argument `index` of a ``func.func`` (None if it has none)."""
    dicts = _attr_dicts(func, "arg_attrs", len(func.regions[0].entry.args), create)
    return None if dicts is None else dicts[index].entries


@overload
def func_result_attrs(
    func: Op, index: int, create: Literal[False] = False
) -> dict[str, Any] | None: ...
@overload
def func_result_attrs(func: Op, index: int, create: Literal[True]) -> dict[str, Any]: ...


def func_result_attrs(func: Op, index: int, create: bool = False) -> dict[str, Any] | None:
    """The attribute dict of result `index` of a ``func.func`` (None if it has none)."""
    dicts = _attr_dicts(func, "res_attrs", len(func_result_types(func)), create)
    return None if dicts is None else dicts[index].entries


def func_result_types(func: Op) -> list[Type]:
    """The result types from the ``function_type`` property: ``(a, b) -> (c, d)``."""
    return list(_result_types_of(str(func.properties["function_type"])))


@functools.lru_cache(maxsize=1024)
def _result_types_of(text: str) -> tuple[Type, ...]:
    """Scanned once per function type text: passes ask for a func's results per result."""
    depth = 0
    arrow = -1
    for i, c in enumerate(text):
        if c in "<([{":
            depth += 1
        elif c in ">)]}":
            if not (c == ">" and i > 0 and text[i - 1] == "-"):
                depth -= 1
        elif c == "-" and depth == 0 and text.startswith("->", i):
            arrow = i
            break
    results = text[arrow + 2 :].strip()
    if results.startswith("(") and results.endswith(")"):
        results = results[1:-1]
    return tuple(parse_type(t) for t in split_top_level(results))
