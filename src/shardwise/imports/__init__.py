"""The import passes of Shardy, over our IR (Shardy's transforms/import/ and `symbol-dce`).

`PASSES` maps each pass name to a function ``fn(module, **options)`` (options in snake_case,
e.g. ``add_data_flow_edges_on_named_computations=False``); `run_import_pass` also takes
Shardy's textual spelling ``"sdy-import-func-calls{add-data-flow-edges-on-named-computations=false}"``.
"""

from __future__ import annotations

from collections.abc import Callable

from shardwise.errors import ShardwiseError
from shardwise.imports.calls import (
    add_func_data_flow_edges,
    flatten_call_graph,
    import_func_calls,
    pre_order_funcs,
    propagate_sharding_from_func_to_call,
)
from shardwise.imports.constants import constant_or_scalar_splitter
from shardwise.imports.constraints import apply_sharding_constraints
from shardwise.imports.data_flow_edges import add_data_flow_edges
from shardwise.imports.manual_axes import manual_axes_cleanup
from shardwise.imports.meshes import lift_inlined_meshes, remove_size_one_axes
from shardwise.imports.pipeline import import_pipeline
from shardwise.imports.sharding_groups import sharding_group_import
from shardwise.imports.symbol_dce import symbol_dce
from shardwise.ir import Module

__all__ = [
    "PASSES",
    "run_import_pass",
    "import_pipeline",
    "symbol_dce",
    "lift_inlined_meshes",
    "remove_size_one_axes",
    "propagate_sharding_from_func_to_call",
    "constant_or_scalar_splitter",
    "manual_axes_cleanup",
    "add_data_flow_edges",
    "flatten_call_graph",
    "import_func_calls",
    "apply_sharding_constraints",
    "sharding_group_import",
    "pre_order_funcs",
    "add_func_data_flow_edges",
]

PASSES: dict[str, Callable[..., None]] = {
    "symbol-dce": symbol_dce,
    "sdy-lift-inlined-meshes": lift_inlined_meshes,
    "sdy-remove-size-one-axes": remove_size_one_axes,
    "sdy-propagate-sharding-from-func-to-call": propagate_sharding_from_func_to_call,
    "sdy-constant-or-scalar-splitter": constant_or_scalar_splitter,
    "sdy-manual-axes-cleanup": manual_axes_cleanup,
    "sdy-add-data-flow-edges": add_data_flow_edges,
    "sdy-flatten-call-graph": flatten_call_graph,
    "sdy-import-func-calls": import_func_calls,
    "sdy-apply-sharding-constraints": apply_sharding_constraints,
    "sdy-sharding-group-import": sharding_group_import,
    "sdy-pre-order-funcs": pre_order_funcs,
    "sdy-add-func-data-flow-edges": add_func_data_flow_edges,
    "sdy-import-pipeline": import_pipeline,
}


def _parse_options(text: str) -> dict[str, bool | str]:
    options: dict[str, bool | str] = {}
    for item in text.split():
        key, _, value = item.partition("=")
        options[key.replace("-", "_")] = {"true": True, "false": False}.get(value, value)
    return options


def run_import_pass(module: Module, spec: str) -> None:
    """Run one pass given as ``name`` or ``name{opt=value ...}`` (Shardy's spelling)."""
    name, _, rest = spec.partition("{")
    fn = PASSES.get(name.strip())
    if fn is None:
        raise ShardwiseError(f"unknown import pass '{name}'; known: {', '.join(PASSES)}")
    try:
        fn(module, **_parse_options(rest.rstrip("}")))
    except TypeError as e:
        raise ShardwiseError(f"bad options for '{name}': {e}") from None
