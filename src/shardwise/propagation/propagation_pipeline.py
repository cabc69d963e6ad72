"""`sdy-propagation-pipeline`: import, propagate (user priority), export.

Shardy's prop/propagation_pipeline.cc, steps in its order:

1. the import pipeline (`shardwise.imports.import_pipeline`);
2. dedup mode: ``sdy-add-func-data-flow-edges``; default mode: ``sdy-flatten-call-graph``,
   ``symbol-dce``, ``sdy-import-func-calls``, ``symbol-dce``,
   ``sdy-apply-sharding-constraints``, ``sdy-sharding-group-import``;
3. ``sdy-pre-order-funcs``;
4. ``sdy-user-priority-propagate`` with the pipeline's options and keep-sharding-rules on;
5. the export steps (named computations back to funcs, func results, unflatten, symbol-dce,
   func-call reshards, the export pipeline):
   `shardwise.export.export_pipeline.post_propagation_pipeline`, with the export options the
   registered pipeline derives from its propagation options (meshes not inlined).
"""

from __future__ import annotations

from shardwise.imports.add_func_data_flow_edges import add_func_data_flow_edges
from shardwise.imports.apply_sharding_constraints import (
    CONSTRAINT_TARGETS,
    apply_sharding_constraints,
)
from shardwise.imports.flatten_call_graph import flatten_call_graph
from shardwise.imports.import_func_calls import import_flattened_calls, import_func_calls
from shardwise.imports.import_pipeline import import_pipeline
from shardwise.imports.pre_order_funcs import pre_order_funcs
from shardwise.imports.sharding_group_import import sharding_group_import
from shardwise.imports.symbol_dce import symbol_dce
from shardwise.ir import Module, ops_in_post_order
from shardwise.passes import sdy_pass
from shardwise.propagation.options import PropagationOptions
from shardwise.propagation.user_priority_propagation import user_priority_propagate
from shardwise.sdy.call_graph import is_in_module
from shardwise.sdy.manual_computation import op_in_manual_computation
from shardwise.sdy.sharding_groups import SHARDING_GROUP
from shardwise.verify import verify_module

__all__ = [
    "export_after_propagation",
    "import_and_propagate",
    "prepare_for_propagation",
    "propagation_pipeline",
]


def import_and_propagate(
    module: Module, options: PropagationOptions | None = None, observer=None, imported=False
) -> None:
    """Steps 1-4: everything up to and including ``sdy-user-priority-propagate``.

    `observer` sees every propagation step (see `PropagationDriver`); it changes nothing.
    `imported`: step 1 has run on `module` already.
    """
    options = options or PropagationOptions()
    if not imported:
        import_pipeline(module, dedup_functions_fully=options.dedup_functions_fully)
    prepare_for_propagation(module, options)
    # The pipeline keeps the rules it stored: the export steps read them.
    user_priority_propagate(
        module, options.with_options(keep_sharding_rules=True), observer=observer
    )
    # Dedup mode keeps calls: a func data-flow edge in a manual computation's body (a call's
    # result there) takes the callee's sharding, which may name one of the body's manual axes.
    # Shardy's verifier then rejects the edge after this pass, so we verify here too.
    if options.dedup_functions_fully and op_in_manual_computation(
        module, "sdy.func_data_flow_edge"
    ):
        verify_module(module)


def prepare_for_propagation(module: Module, options: PropagationOptions) -> None:
    """Steps 2 and 3: the call graph (or func data-flow edges), constraints, sharding groups,
    funcs in pre-order."""
    if options.dedup_functions_fully:
        add_func_data_flow_edges(module)
    else:
        # The three passes in one go, when it can (with the rules propagation will store on
        # the ops of a body called more than once, which its clones then carry).
        if not import_flattened_calls(module, options.conservative_propagation):
            flatten_call_graph(module)
            symbol_dce(module)
            import_func_calls(module)
        # One walk for the next steps (which add, move or erase no group, constraint or
        # manual computation, but for symbol-dce's erasures): constraint targets include
        # manual computations.
        found = ops_in_post_order(module.op, CONSTRAINT_TARGETS | SHARDING_GROUP)
        # Shardy verifies after every pass. A call inlined into a manual computation's body
        # puts the callee's manual computations and shardings under the caller's manual axes,
        # where naming one of those axes is invalid ("... already bound by a parent
        # sdy.manual_computation op"); only then can this step make a valid module invalid.
        if any(op.name == "sdy.manual_computation" for op in found) and op_in_manual_computation(
            module, "sdy.named_computation"
        ):  # an imported call
            verify_module(module)
        symbol_dce(module)
        found = [op for op in found if is_in_module(module, op)]
        apply_sharding_constraints(
            module,
            debug_sharding_origins=options.debug_sharding_origins,
            debug_propagation_edge_sharding=options.debug_propagation_edge_sharding,
            targets=[op for op in found if op.name in CONSTRAINT_TARGETS],
        )
        sharding_group_import(module, [op for op in found if op.name in SHARDING_GROUP])
    # Default mode: `import_func_calls` turned every call into a named computation.
    pre_order_funcs(module, without_calls=not options.dedup_functions_fully)


@sdy_pass("sdy-propagation-pipeline", options=PropagationOptions)
def propagation_pipeline(
    module: Module, options: PropagationOptions | None = None, observer=None, imported=False
) -> None:
    """The whole ``sdy-propagation-pipeline`` on `module`, in place (`imported`: but for
    the import pipeline, which has run on `module` already)."""
    options = options or PropagationOptions()
    import_and_propagate(module, options, observer, imported)
    export_after_propagation(module, options)


def export_after_propagation(module: Module, options: PropagationOptions) -> None:
    """Step 5: the export steps, with the export options the registered pipeline derives
    from its propagation options. (Export sits above propagation, hence the late import.)"""
    from shardwise.export.export_pipeline import ExportOptions, post_propagation_pipeline

    export_options = ExportOptions(
        keep_sharding_rules=options.keep_sharding_rules,
        dump_sharding_origins=options.debug_sharding_origins,
        dump_propagation_edges=options.debug_propagation_edge_sharding,
        avoid_reshards_on_calls=options.dedup_functions_fully,
    )
    post_propagation_pipeline(module, options.dedup_functions_fully, export_options)
