"""Shardy's export pipeline and the post-propagation tail of its propagation pipeline.

`export_pipeline` follows ``exp/export_pipeline.cc`` as shipped in the reference (jaxlib
0.10.2): that version has neither ``sdy-verify-unreduced-axes`` nor the ``inline-meshes``
step that later Shardy added (see shardy-notes 5.7); `ExportOptions.verify_unreduced_axes`
and `ExportOptions.inline_meshes` opt in to them. Module dumps (``sdy-save-module``) are not reproduced.

"""

from __future__ import annotations

from dataclasses import dataclass

from shardwise.export.canonicalization_patterns import canonicalize_with_labels
from shardwise.export.canonicalize import COLLECTIVE_LABEL, RESHARD_LABEL
from shardwise.export.close_shardings import close_shardings
from shardwise.export.constant_or_scalar_merger import constant_or_scalar_merger
from shardwise.export.drop_sharding_rules import drop_sharding_rules
from shardwise.export.explicit_reshards.insert_explicit_reshards import insert_explicit_reshards
from shardwise.export.export_named_computations import export_named_computations_merged
from shardwise.export.insert_func_call_reshards import insert_func_call_reshards
from shardwise.export.propagate_to_func_results import propagate_to_func_results
from shardwise.export.remove_sub_axes_in_input_output_shardings import (
    remove_sub_axes_in_input_output_shardings,
)
from shardwise.export.sharding_constraint_to_reshard import (
    SHARDING_CONSTRAINT,
    constraints_to_reshards,
)
from shardwise.export.sharding_scan import scan_shardings
from shardwise.export.sink_data_flow_edges import EDGES_AND_DATA_FLOW_OPS, sink_collected_edges
from shardwise.export.sink_func_data_flow_edges import sink_func_data_flow_edges
from shardwise.export.unflatten_call_graph import unflatten_call_graph
from shardwise.export.update_non_divisible_input_output_shardings import (
    update_non_divisible_input_output_shardings,
)
from shardwise.imports.symbol_dce import symbol_dce
from shardwise.ir import Module, Op, ops_in_pre_order
from shardwise.passes import run_on_funcs, sdy_pass
from shardwise.sdy.call_graph import is_in_module
from shardwise.sdy.manual_computation import op_in_manual_computation
from shardwise.sdy.sharding_groups import SHARDING_GROUP
from shardwise.verify import verify_module

__all__ = ["ExportOptions", "export_pipeline", "post_propagation_pipeline"]


@dataclass(frozen=True, slots=True)
class ExportOptions:
    """``sdy-export-pipeline`` options, Shardy's names in snake_case and its defaults."""

    avoid_export_for_partitioning: bool = False
    enable_insert_explicit_collectives: bool = False
    remove_all_gather_reduce_scatter_for_cmv1: bool = False
    keep_sharding_rules: bool = False
    dump_sharding_origins: bool = False
    dump_propagation_edges: bool = False
    avoid_reshards_on_calls: bool = False  # declared by Shardy, read nowhere
    update_non_divisible_input_output_shardings: bool = True
    inline_meshes: bool = False  # not in the reference's pipeline (later Shardy only)
    verify_unreduced_axes: bool = False  # likewise: later Shardy runs it before reshards


# The passes that run only under an option (reshard-to-collectives, its clean-up for cmv1, the
# unreduced-axes check, the debug-info removal, inline-meshes) are imported where they run: a
# default run does not pay for loading them (reshard-to-collectives alone is ~2 ms).


def _reshard_to_collectives(module: Module) -> None:
    """The pass, then the check Shardy's verifier makes after it that later passes could hide."""
    from shardwise.export.reshard_to_collectives import reshard_to_collectives
    from shardwise.export.reshard_to_collectives.verify_after import (
        verify_collective_permute_meshes,
    )

    reshard_to_collectives(module)
    verify_collective_permute_meshes(module)


def _shardy_partitioner(
    module: Module, options: ExportOptions, unreduced_axes: bool, manual_computation: bool
) -> None:
    """`runShardyPartitioner`: explicit reshards, then collectives and their cleanup.

    `unreduced_axes`: whether any sharding in the module has unreduced axes (a `ShardingScan`
    made right before; the unreduced-axes check changes nothing). `manual_computation`:
    whether the module may hold an ``sdy.manual_computation`` (no export pass creates one)."""
    full = options.enable_insert_explicit_collectives
    if options.verify_unreduced_axes:
        from shardwise.export.verify_unreduced_axes import verify_unreduced_axes

        run_on_funcs(module, verify_unreduced_axes)
    insert_explicit_reshards(module, full, has_unreduced_axes=unreduced_axes)
    # Shardy verifies after every pass. A reshard inserted in a manual computation's body can
    # name an axis the body made manual ("... already bound by a parent
    # sdy.manual_computation op", e.g. from a callee's sharding in dedup mode): only then can
    # this pass make a valid module invalid.
    if manual_computation and op_in_manual_computation(module, "sdy.reshard"):
        verify_module(module)
    if full:
        canonicalize_with_labels(module, frozenset({RESHARD_LABEL}))
        _reshard_to_collectives(module)
    canonicalize_with_labels(module, frozenset({COLLECTIVE_LABEL}))
    if full and options.remove_all_gather_reduce_scatter_for_cmv1:
        from shardwise.export.remove_all_gather_reduce_scatter_for_cmv1 import (
            remove_all_gather_reduce_scatter_for_cmv1,
        )

        run_on_funcs(module, remove_all_gather_reduce_scatter_for_cmv1)


@dataclass(slots=True)
class _Collected:
    """What the export passes after the constant merger look for, found in one walk."""

    edges: list[Op]  # data-flow edges and data-flow ops in funcs, in pre-order
    groups: list[Op]  # every ``sdy.sharding_group``
    constraints: list[Op]  # the ``sdy.sharding_constraint`` ops in funcs, in pre-order
    manual_computation: bool  # whether there is any ``sdy.manual_computation``
    # The calls and manual computations, in pre-order (no pass up to the non-divisible update
    # inserts or erases one).
    calls_and_manual_computations: list[Op]


_MANUAL_COMPUTATION = "sdy.manual_computation"
_CALLS_AND_MANUAL_COMPUTATIONS = frozenset({"func.call", _MANUAL_COMPUTATION})
_COLLECTED = (
    EDGES_AND_DATA_FLOW_OPS | SHARDING_GROUP | SHARDING_CONSTRAINT | _CALLS_AND_MANUAL_COMPUTATIONS
)


def _collect(module: Module) -> _Collected:
    """The ops that the func passes (on each ``func.func`` in order) and the module passes
    would each find by a walk of their own."""
    found = _Collected([], [], [], False, [])
    for top in module.body.ops:
        in_func = top.name == "func.func"
        for op in ops_in_pre_order(top, _COLLECTED):
            name = op.name
            if name in _CALLS_AND_MANUAL_COMPUTATIONS:
                found.calls_and_manual_computations.append(op)
                if name == "func.call":
                    continue
                found.manual_computation = True
            if name in SHARDING_GROUP:
                found.groups.append(op)
            elif not in_func:
                continue
            elif name in SHARDING_CONSTRAINT:
                found.constraints.append(op)
            elif name in EDGES_AND_DATA_FLOW_OPS:
                found.edges.append(op)
    return found


@sdy_pass("sdy-export-pipeline", options=ExportOptions)
def export_pipeline(module: Module, options: ExportOptions | None = None) -> None:
    """``sdy-export-pipeline``: every export pass in Shardy's order, in place."""
    options = options or ExportOptions()
    run_on_funcs(module, constant_or_scalar_merger)
    found = _collect(module)
    # ``sdy-sink-data-flow-edges``, ``sdy-remove-sharding-groups`` and
    # ``sdy-sharding-constraint-to-reshard`` on the ops of one walk: none of them adds or
    # erases an op another of them acts on.
    sink_collected_edges(found.edges, options.dump_sharding_origins, options.dump_propagation_edges)
    if not options.avoid_export_for_partitioning:
        for group in found.groups:
            group.erase()
        constraints_to_reshards(found.constraints)
    if options.update_non_divisible_input_output_shardings:
        update_non_divisible_input_output_shardings(module, found.calls_and_manual_computations)
        remove_sub_axes_in_input_output_shardings(module)
    # One walk for closing and the scan after it (neither inserts or erases an op).
    ops = module.op.walk_list()
    close_shardings(module, ops)
    # Shardy verifies after every pass; closing ``{?}p0`` leaves ``{}p0``, which it rejects
    # here and which later passes may rewrite away before we would verify on write. That is
    # the one thing closing can make invalid in a verified module, so the full (costly)
    # verifier runs only then.
    scan = scan_shardings(module, ops)
    if scan.empty_closed_with_priority:
        verify_module(module)
    if not options.avoid_export_for_partitioning:
        _shardy_partitioner(module, options, scan.unreduced_axes, found.manual_computation)
    if options.dump_propagation_edges or options.dump_sharding_origins:
        from shardwise.export.remove_propagation_debug_info import remove_propagation_debug_info

        remove_propagation_debug_info(module)
    if not options.keep_sharding_rules:
        run_on_funcs(module, drop_sharding_rules)
    if options.inline_meshes and not options.avoid_export_for_partitioning:
        from shardwise.export.inline_meshes import inline_meshes

        inline_meshes(module)


def post_propagation_pipeline(
    module: Module, dedup_functions_fully: bool = False, options: ExportOptions | None = None
) -> None:
    """The propagation pipeline after user-priority propagation (``propagation_pipeline.cc``).

    Call-graph clean-up (named computations or func data-flow edges, func result shardings,
    unflattening, symbol DCE, reshards at call sites) and then the export pipeline.
    """
    if dedup_functions_fully:
        propagate_to_func_results(module)
        run_on_funcs(module, sink_func_data_flow_edges)
    else:
        export_named_computations_merged(module)
        propagate_to_func_results(module)
    found = unflatten_call_graph(module)
    symbol_dce(module)
    # The calls the unflattening found, but those in funcs symbol-dce erased: a fresh walk's.
    calls = [call for call in found if is_in_module(module, call)]
    insert_func_call_reshards(module, calls)
    export_pipeline(module, options)
