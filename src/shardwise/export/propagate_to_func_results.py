"""`sdy-propagate-to-func-results`: each func result takes the sharding of the value it
returns (Shardy's `export/propagate_to_func_results.cc`).
"""

from __future__ import annotations

from shardwise.export.update_non_divisible_input_output_shardings import export_main_func
from shardwise.ir import (
    SHARDING_ATTR,
    Module,
    func_result_attrs,
)
from shardwise.passes import sdy_pass
from shardwise.sdy.shardings import (
    get_sharding,
    set_func_result_sharding,
)

__all__ = [
    "propagate_to_func_results",
]


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
