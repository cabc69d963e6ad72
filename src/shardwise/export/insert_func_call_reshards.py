"""`sdy-insert-func-call-reshards`: a reshard after each call whose result sharding differs
from its callee's (Shardy's `export/insert_func_call_reshards.cc`).
"""

from __future__ import annotations

from shardwise.ir import (
    SHARDING_ATTR,
    Module,
    Op,
    SymbolTable,
    insert_after_value,
    ops_in_post_order,
)
from shardwise.passes import sdy_pass
from shardwise.sdy.funcs import (
    CALL,
    callee_of,
    func_result_shardings,
)
from shardwise.sdy.sharding_walker import get_per_value, set_per_value
from shardwise.sdy.shardings import (
    get_sharding,
)
from shardwise.sharding import TensorSharding

__all__ = [
    "insert_func_call_reshards",
]


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
