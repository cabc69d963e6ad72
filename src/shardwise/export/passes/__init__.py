"""Shardy's export passes (and the post-propagation steps of its propagation pipeline).

`PASSES` maps each Shardy pass name to a function ``fn(module, **options)`` that rewrites
our IR in place. Func-anchored passes (nested under ``func.func`` in Shardy) run on every
``func.func`` of the module, in order, as the pass manager does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from shardwise.export.passes import (
    calls,
    cleanup,
    collective_patterns,
    constant_merger,
    divisibility,
    named_computations,
    remove_ag_rs_for_cmv1,
    sink,
    unlabelled_patterns,
    verify_unreduced,
)
from shardwise.ir import Module

__all__ = ["PASSES", "FUNC_PASSES", "run_export_pass"]

PassFn = Callable[..., None]


def _per_func(fn: Callable[..., None]) -> PassFn:
    def run(module: Module, **options: Any) -> None:
        for func in module.funcs:
            fn(func, **options)

    run.__doc__ = fn.__doc__
    run.__name__ = fn.__name__
    return run


_FUNC_PASS_IMPLS: dict[str, Callable[..., None]] = {
    "sdy-constant-or-scalar-merger": constant_merger.constant_or_scalar_merger,
    "sdy-sink-data-flow-edges": sink.sink_data_flow_edges,
    "sdy-sink-func-data-flow-edges": sink.sink_func_data_flow_edges,
    "sdy-sharding-constraint-to-reshard": cleanup.sharding_constraint_to_reshard,
    "sdy-drop-sharding-rules": cleanup.drop_sharding_rules,
    "sdy-verify-unreduced-axes": verify_unreduced.verify_unreduced_axes,
    "sdy-remove-all-gather-reduce-scatter-for-cmv1": (
        remove_ag_rs_for_cmv1.remove_all_gather_reduce_scatter_for_cmv1
    ),
}
FUNC_PASSES = frozenset(_FUNC_PASS_IMPLS)


def canonicalize(module: Module, enable_patterns: str = "") -> None:
    """MLIR's ``canonicalize{enable-patterns=...}`` for Shardy's labelled patterns."""
    labels = frozenset(p for p in enable_patterns.split(",") if p)
    if not labels:  # MLIR: no enable-patterns list enables every pattern
        unlabelled_patterns.canonicalize_all(module)
        return
    collective_patterns.canonicalize_with_labels(module, labels)


PASSES: dict[str, PassFn] = {
    **{name: _per_func(fn) for name, fn in _FUNC_PASS_IMPLS.items()},
    "sdy-remove-sharding-groups": cleanup.remove_sharding_groups,
    "sdy-update-non-divisible-input-output-shardings": (
        divisibility.update_non_divisible_input_output_shardings
    ),
    "sdy-remove-sub-axes-in-input-output-shardings": (
        divisibility.remove_sub_axes_in_input_output_shardings
    ),
    "sdy-close-shardings": cleanup.close_shardings,
    "sdy-remove-propagation-debug-info": cleanup.remove_propagation_debug_info,
    "sdy-inline-meshes": cleanup.inline_meshes,
    "sdy-export-named-computations": named_computations.export_named_computations,
    "sdy-propagate-to-func-results": calls.propagate_to_func_results,
    "sdy-unflatten-call-graph": calls.unflatten_call_graph,
    "sdy-insert-func-call-reshards": calls.insert_func_call_reshards,
    "canonicalize": canonicalize,
}


def run_export_pass(module: Module, name: str, **options: Any) -> None:
    """Run the pass called `name` (Shardy's spelling) on `module` in place."""
    PASSES[name](module, **options)
