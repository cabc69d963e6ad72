"""``func.func`` argument and result attributes and result types.

In generic form a func's argument/result attributes are the properties ``arg_attrs`` and
``res_attrs``: an `ArrayAttr` of `DictAttr`, one per argument/result (absent when all empty)."""

from __future__ import annotations

import functools
from typing import Any, Literal, overload

from shardwise.ir.attrs import ArrayAttr, DictAttr, matching_bracket_end, split_top_level
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
    # The result count is needed only to create the dicts: no list of the types per call
    # (propagation reads a train step's ~1k results one by one, in every run).
    count = len(func_result_types(func)) if create else 0
    dicts = _attr_dicts(func, "res_attrs", count, create)
    return None if dicts is None else dicts[index].entries


def func_result_types(func: Op) -> list[Type]:
    """The result types from the ``function_type`` property: ``(a, b) -> (c, d)``."""
    return list(_function_type(str(func.properties["function_type"]))[1])


def func_input_types(func: Op) -> list[Type]:
    """The argument types from the ``function_type`` property (the body may have moved)."""
    return list(_function_type(str(func.properties["function_type"]))[0])


@functools.lru_cache(maxsize=1024)
def _function_type(text: str) -> tuple[tuple[Type, ...], tuple[Type, ...]]:
    """``(a, b) -> (c, d)`` -> its input and result types; scanned once per function type text
    (passes ask for a func's results per result)."""
    text = text.strip()
    end = matching_bracket_end(text, 0)
    assert text.startswith("(") and end is not None, f"not a function type: {text}"
    results = text[end:].strip()
    assert results.startswith("->"), f"not a function type: {text}"
    results = results[2:].strip()
    if results.startswith("(") and results.endswith(")"):
        results = results[1:-1]
    inputs = tuple(parse_type(t) for t in split_top_level(text[1 : end - 1]))
    return inputs, tuple(parse_type(t) for t in split_top_level(results))
