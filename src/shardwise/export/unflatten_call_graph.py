"""`sdy-unflatten-call-graph`: the clones of a func that ended with the same shardings merged
back into one func (Shardy's `export/unflatten_call_graph.cc`).
"""

from __future__ import annotations

from shardwise.ir import (
    Module,
    Op,
    SymbolTable,
    ops_in_post_order,
    string_attr_value,
    symbol_ref,
)
from shardwise.passes import sdy_pass
from shardwise.sdy.funcs import (
    FUNC_MANUAL_AXES_ATTR,
    ORIGINAL_FUNC_NAME_ATTR,
    callee_of,
    func_arg_shardings,
    func_result_shardings,
)

__all__ = [
    "unflatten_call_graph",
]


_CALLS_AND_FUNCS = frozenset({"func.call", "func.func"})


def _original_name(module: Module, func: Op) -> str:
    attr = func.attributes.get(ORIGINAL_FUNC_NAME_ATTR)
    if attr is not None:
        return string_attr_value(attr)
    return module.symbol_name(func) or ""


class _Keys:
    """`getComputationKey` of each callee (original name, manual axes, arg and result
    shardings), computed once per func and flag: many calls share a callee."""

    def __init__(self, module: Module) -> None:
        self.module = module
        self.keys: dict[tuple[int, bool], tuple] = {}

    def __call__(self, func: Op, ignore_shardings: bool) -> tuple:
        key = self.keys.get((id(func), ignore_shardings))
        if key is None:
            key = self.keys[(id(func), ignore_shardings)] = self._compute(func, ignore_shardings)
        return key

    def _compute(self, func: Op, ignore_shardings: bool) -> tuple:
        manual = func.attributes.get(FUNC_MANUAL_AXES_ATTR)
        name = _original_name(self.module, func)
        if ignore_shardings:
            return (name, str(manual), None, None)
        args = func_arg_shardings(self.module, func)
        results = func_result_shardings(self.module, func)
        return (
            name,
            str(manual),
            None if args is None else tuple(args),
            None if results is None else tuple(results),
        )


def _func_cache(callees: list[Op], key: _Keys, fully: bool) -> dict[tuple, Op]:
    cache: dict[tuple, Op] = {}
    for func in callees:
        cache.setdefault(key(func, fully), func)
    if not fully:
        return cache
    # Dedup fully: per original name, the variant with the most call sites wins (ties: first).
    counts: dict[tuple, int] = {}
    for func in callees:
        group = key(func, True)
        own = key(func, False)
        counts[own] = counts.get(own, 0) + 1
        cached_key = key(cache[group], False)
        if counts[own] > counts.get(cached_key, 0):
            cache[group] = func
    return cache


@sdy_pass("sdy-unflatten-call-graph")
def unflatten_call_graph(module: Module, dedup_functions_fully: bool = False) -> list[Op]:
    """Calls to clones of one original func with equal shardings share one callee.

    Returns the module's calls in post-order (the pass moves no op)."""
    calls: list[Op] = []
    funcs: list[Op] = []
    for op in ops_in_post_order(module.op, _CALLS_AND_FUNCS):  # one walk: no op moves
        if op.name == "func.call":
            calls.append(op)
        else:
            funcs.append(op)
    symbols = SymbolTable(module)
    callees = [callee_of(module, call, symbols) for call in calls]
    key = _Keys(module)
    cache = _func_cache(callees, key, dedup_functions_fully)
    for call, callee in zip(calls, callees, strict=True):
        func = cache[key(callee, dedup_functions_fully)]
        call.properties["callee"] = symbol_ref(module.symbol_name(func) or "")
    for func in funcs:
        func.attributes.pop(ORIGINAL_FUNC_NAME_ATTR, None)
        func.attributes.pop(FUNC_MANUAL_AXES_ATTR, None)
    return calls
