"""Call-graph passes at the end of propagation.

`sdy-propagate-to-func-results` (``export/propagate_to_func_results.cc``),
`sdy-insert-func-call-reshards` (``export/insert_func_call_reshards.cc``) and
`sdy-unflatten-call-graph` (``export/unflatten_call_graph.cc``).
"""

from __future__ import annotations

from shardwise.export.passes.divisibility import export_main_func
from shardwise.ir import (
    SHARDING_ATTR,
    Module,
    Op,
    SymbolTable,
    func_result_attrs,
    insert_after_value,
    ops_in_post_order,
    string_attr_value,
    symbol_ref,
)
from shardwise.passes import sdy_pass
from shardwise.sdy.funcs import (
    CALL,
    FUNC_MANUAL_AXES_ATTR,
    ORIGINAL_FUNC_NAME_ATTR,
    callee_of,
    func_arg_shardings,
    func_result_shardings,
)
from shardwise.sdy.sharding_walker import get_per_value, set_per_value
from shardwise.sdy.shardings import (
    get_sharding,
    set_func_result_sharding,
)
from shardwise.sharding import TensorSharding

__all__ = ["propagate_to_func_results", "insert_func_call_reshards", "unflatten_call_graph"]

_CALLS_AND_FUNCS = frozenset({"func.call", "func.func"})


@sdy_pass("sdy-propagate-to-func-results")
def propagate_to_func_results(module: Module) -> None:
    """Every func but the main one gets its returned values' shardings as result shardings."""
    main = export_main_func(module)
    for func in module.funcs:
        if func is main:
            continue
        terminator = func.regions[0].entry.terminator
        if terminator is None or terminator.name != "func.return":
            continue
        for i, operand in enumerate(terminator.operands):
            sharding = get_sharding(operand)
            if sharding is not None:
                set_func_result_sharding(func, i, sharding)
                continue
            attrs = func_result_attrs(func, i)
            if attrs is not None:
                attrs.pop(SHARDING_ATTR, None)


def _reshard_call_results(call: Op, func_shardings: list[TensorSharding]) -> None:
    for result, func_sharding in zip(call.results, func_shardings, strict=True):
        call_sharding = get_sharding(result)
        if func_sharding.is_equivalent(call_sharding):
            continue
        target = call_sharding
        if target is None:
            target = TensorSharding.fully_closed(func_sharding.mesh_or_ref, func_sharding.rank)
        reshard = Op(
            "sdy.reshard",
            [result],
            [result.type],
            properties={"sharding": target},
            location=call.location,
            loc_text=call.loc_text,
        )
        insert_after_value(reshard, result)
        result.replace_all_uses_with(reshard.results[0], except_op=reshard)
    set_per_value(call, SHARDING_ATTR, func_shardings)


@sdy_pass("sdy-insert-func-call-reshards")
def insert_func_call_reshards(module: Module, calls: list[Op] | None = None) -> None:
    """Call results take the callee's result shardings; a reshard restores the old one.

    `calls`: the module's ``func.call`` ops in post-order, if the caller has them.
    """
    symbols = SymbolTable(module)
    if calls is None:
        calls = ops_in_post_order(module.op, CALL)
    for call in calls:
        func_shardings = func_result_shardings(module, callee_of(module, call, symbols))
        if func_shardings is None:
            call_shardings = get_per_value(call, SHARDING_ATTR)
            if not call_shardings:
                continue
            func_shardings = [
                TensorSharding.fully_closed(s.mesh_or_ref, s.rank) for s in call_shardings
            ]
        _reshard_call_results(call, func_shardings)


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
