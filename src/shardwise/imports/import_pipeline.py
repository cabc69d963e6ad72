"""`sdy-import-pipeline`: the import passes in Shardy's order (import/import_pipeline.cc)."""

from __future__ import annotations

from shardwise.imports.add_data_flow_edges import add_data_flow_edges_to_ops
from shardwise.imports.apply_sharding_constraints import apply_sharding_constraints
from shardwise.imports.constant_or_scalar_splitter import constant_or_scalar_splitter
from shardwise.imports.lift_inlined_meshes import lift_inlined_meshes
from shardwise.imports.manual_axes_cleanup import clean_up_manual_computations
from shardwise.imports.propagate_sharding_from_func_to_call import (
    propagate_sharding_from_func_to_call,
)
from shardwise.imports.remove_size_one_axes import remove_size_one_axes
from shardwise.imports.sharding_group_import import sharding_group_import
from shardwise.imports.symbol_dce import symbol_dce
from shardwise.ir import Module
from shardwise.passes import sdy_pass
from shardwise.sdy import data_flow
from shardwise.sdy.call_graph import ops_in_post_order

__all__ = ["import_pipeline"]


@sdy_pass("sdy-import-pipeline")
def import_pipeline(module: Module, dedup_functions_fully: bool = False) -> None:
    """Clean-up passes, then data-flow edges; constraints and groups here only when deduping.

    Not done: ``sdy-explicit-gather-scatter-batching`` (off by default, and not exposed by
    the registered pipeline) and the "before_propagation" module dump.
    """
    symbol_dce(module)
    lift_inlined_meshes(module)
    remove_size_one_axes(module)
    propagate_sharding_from_func_to_call(module)
    constant_or_scalar_splitter(module)
    symbol_dce(module)
    # The manual-axes clean-up changes only manual computations, which are data-flow ops, and
    # adds or removes no op: one walk finds the ops of both passes.
    flow_ops = ops_in_post_order(module.op, data_flow.DATA_FLOW_OPS)
    clean_up_manual_computations(module, flow_ops)
    add_data_flow_edges_to_ops(flow_ops)
    if dedup_functions_fully:
        apply_sharding_constraints(module)
        # Groups are imported after the constraints so that conflicts between members with
        # pre-propagation shardings coming from constraints are seen.
        sharding_group_import(module)
