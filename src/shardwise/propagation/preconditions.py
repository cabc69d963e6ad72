"""What `sdy-propagation-pipeline` would reject in a module that verifies.

MLIR's verifier accepts modules that propagation then refuses: dynamic shapes and tuples
(`check_static_shapes`, Shardy's ``allValidShapes``), sharding groups across manual
computations or of different shapes, a manual computation with manual axes but no shardings
around a non-empty body, an op of an unregistered dialect that might be a symbol table, no
``main`` among several functions. `propagation_precondition_error` runs the steps that check
those (the import pipeline and the preparation for propagation) on a copy of the module and
returns the first error, worded and placed as the pipeline would; ``shardwise verify`` reports
it. This is the one place where ``verify`` says more than Shardy's verifier.
"""

from __future__ import annotations

from shardwise.errors import InternalError, ShardwiseError
from shardwise.imports.import_pipeline import import_pipeline
from shardwise.ir import Module, clone_op
from shardwise.propagation.basic_propagation import check_static_shapes
from shardwise.propagation.driver import main_func_for_propagation
from shardwise.propagation.options import PropagationOptions
from shardwise.propagation.propagation_pipeline import prepare_for_propagation
from shardwise.propagation.sharding_group_map import ShardingGroupMap

__all__ = ["propagation_precondition_error"]


def _copy(module: Module) -> Module:
    copy = Module(clone_op(module.op), module.source, module.filename)
    copy.allow_unregistered_dialect = module.allow_unregistered_dialect
    copy.unregistered_ops = module.unregistered_ops
    return copy


def propagation_precondition_error(
    module: Module, options: PropagationOptions | None = None
) -> ShardwiseError | None:
    """The error `sdy-propagation-pipeline` would stop with before propagating, or None.

    `module` is left unchanged. A bug of ours (`InternalError`) is raised, not returned.
    """
    options = options or PropagationOptions()
    copy = _copy(module)
    try:
        import_pipeline(copy, dedup_functions_fully=options.dedup_functions_fully)
        prepare_for_propagation(copy, options)
        check_static_shapes(copy)
        ShardingGroupMap(copy)
        main_func_for_propagation(copy)
    except InternalError:
        raise
    except ShardwiseError as e:
        return e
    finally:
        copy.release()
    return None
