"""`sdy-resolve-permutation-factors` (``transforms/export/resolve_permutation_factors.cc``).

A dim mapped to a *permutation* factor (the sliced/padded/reversed/concatenated/windowed dim
of ``slice``, ``pad``, ``reverse``, ``concatenate``, ``dynamic_slice``, ``reduce_window``,
convolution windows, ...) cannot stay sharded without moving data between devices. The pass
visits every StableHLO op with such a factor (post-order walk of the module) and either

* (``enable-halo-exchange=true``, ``stablehlo.reverse``) implements the sharded reverse with a
  halo exchange (`resolve_permutation_factors_reverse`), or
* replicates the factor: its axes are removed from every tensor that has it, with
  ``sdy.reshard`` ops before the op (operands) and after it (results), as
  `sdy-insert-explicit-reshards` inserts them. A ``stablehlo.slice`` dim that is
  communication-free (unsharded, or from 0 with stride 1 and the same shard count of
  elements) is left alone.

The jaxlib 0.10.2 build has only the ``enable-halo-exchange`` option (default true).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from shardwise.errors import VerifyError
from shardwise.export.explicit_reshards.process_op import OpContext, insert_explicit_reshards
from shardwise.export.explicit_reshards.unreduced import Builder, MeshTable
from shardwise.export.export_utils import is_communication_free_slice_dim
from shardwise.export.resolve_permutation_factors_reverse import ReverseRewriter
from shardwise.ir import Module, Op, SymbolTable
from shardwise.mesh import Mesh
from shardwise.passes import sdy_pass
from shardwise.propagation.projection import ShardingProjection, UpdateTensorShardings
from shardwise.rules.registry import get_or_create_sharding_rule
from shardwise.rules.rule import OpShardingRule
from shardwise.sdy.shardings import get_sharding
from shardwise.sharding import TensorSharding

__all__ = ["resolve_permutation_factors", "unshard_factors"]


@sdy_pass("sdy-resolve-permutation-factors")
def resolve_permutation_factors(module: Module, enable_halo_exchange: bool = True) -> None:
    """Resolve the sharded permutation factors of every StableHLO op of `module`."""
    meshes = MeshTable(module.meshes())
    reverse = ReverseRewriter(module, SymbolTable(module)) if enable_halo_exchange else None
    for op in list(module.op.walk_post_order()):
        if op is module.op or op.is_terminator or not op.name.startswith("stablehlo."):
            continue
        rule = get_or_create_sharding_rule(op, False, set_on_op=False)
        if rule is None or rule.is_custom_rule or not rule.permutation_factors:
            continue
        if reverse is not None and op.name == "stablehlo.reverse" and reverse.rewrite(op):
            continue
        _replicate_permutation_factors(op, rule, meshes)


def _replicate_permutation_factors(op: Op, rule: OpShardingRule, meshes: MeshTable) -> None:
    keep = _communication_free_slice_dim if op.name == "stablehlo.slice" else None
    unshard_factors(op, rule, meshes, rule.permutation_factors, keep)


def _communication_free_slice_dim(
    op: Op,
    factor: int,
    in_shardings: list[TensorSharding | None],
    out_shardings: list[TensorSharding | None],
    mesh: Mesh,
) -> bool:
    if in_shardings[0] != out_shardings[0]:
        raise VerifyError(
            "'stablehlo.slice' op: operand and result shardings differ (Shardy's "
            "check `inShardings[0] == outShardings[0]` fails); run "
            "sdy-insert-explicit-reshards first",
            op.location,
        )
    return is_communication_free_slice_dim(op, factor, in_shardings[0], mesh)


def unshard_factors(
    op: Op,
    rule: OpShardingRule,
    meshes: MeshTable,
    factors: Sequence[int],
    keep: Callable[..., bool] | None = None,
) -> None:
    """Reshards that leave `factors` unsharded on every tensor of `op` (results resharded
    back after it), as `sdy-insert-explicit-reshards` inserts them; a factor for which
    `keep(op, factor, in_shardings, out_shardings, mesh)` holds stays as it is."""
    in_shardings = [get_sharding(v) for v in op.operands]
    out_shardings = [get_sharding(v) for v in op.results]
    mesh_name = meshes.common_mesh_name(in_shardings, out_shardings)
    if mesh_name is None:
        return
    mesh = meshes.of_name(mesh_name)
    projection = ShardingProjection.build(
        in_shardings, out_shardings, rule, mesh, closed_if_missing=True
    )
    update = UpdateTensorShardings.none(len(op.operands), len(op.results))
    for factor in factors:
        if keep is not None and keep(op, factor, in_shardings, out_shardings, mesh):
            continue
        update |= projection.update_sharding(factor, (), ())
    if any(update.operands) or any(update.results):
        ctx = OpContext(op, rule, mesh_name, mesh, in_shardings, out_shardings, Builder(), meshes)
        insert_explicit_reshards(ctx, projection, update, in_shardings)
