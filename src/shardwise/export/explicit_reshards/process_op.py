"""Per-op rewrites of `sdy-insert-explicit-reshards` (Shardy ``insert_explicit_reshards.cc``).

`process_op` (full version): common axes per factor, then a reshard before the op for every
operand and after it for every result whose factor shardings changed; reshapes whose
shardings do not fit their factors (overflow axes) take their own path. `process_dot`
(default version): the one rewrite of ``dot``/``dot_general`` that reshards the result
instead of an operand.

`OpContext` carries what these need about the op being processed.
"""

from __future__ import annotations

from dataclasses import dataclass

from shardwise.axis import AxisRef
from shardwise.export.explicit_reshards.explicit_reshards_util import (
    distribute_axes_across_factors,
    find_common_axes,
)
from shardwise.export.explicit_reshards.unreduced import Builder, MeshTable, new_op
from shardwise.ir import Op, TensorType, Value
from shardwise.mesh import Mesh
from shardwise.propagation.projection import (
    Axes,
    FactorSharding,
    ShardingProjection,
    TensorFactorShardings,
    UpdateTensorShardings,
)
from shardwise.rules.rule import FactorType, OpShardingRule, TensorMapping
from shardwise.sdy.shardings import get_sharding, set_sharding
from shardwise.sharding import TensorSharding

__all__ = [
    "OpContext",
    "ReshardPlan",
    "apply_reshard_plan",
    "plan_op",
    "process_op",
    "process_dot",
    "dot_result_sharding",
    "reshard_dot_result",
    "tensor_sizes",
]


@dataclass(frozen=True, slots=True)
class OpContext:
    """The op being processed: its rule, the chosen mesh, the shardings read before any
    rewrite, and the pass's builder and mesh table."""

    op: Op
    rule: OpShardingRule
    mesh_name: str
    mesh: Mesh
    in_shardings: list[TensorSharding | None]
    out_shardings: list[TensorSharding | None]
    builder: Builder
    meshes: MeshTable

    def get_or_create_sharding(self, value: Value) -> TensorSharding:
        """`getOrCreateSharding(value, meshName, closedIfMissing=true)`."""
        sharding = get_sharding(value)
        if sharding is not None:
            return sharding
        return TensorSharding.fully_closed(self.mesh_name, value.type.rank)

    def new_sharding(self, tensor: int, projection: ShardingProjection) -> TensorSharding:
        """The inverse projection of tensor `tensor` (operands first) on the op's mesh."""
        mapping = self.rule.tensor_mappings[tensor]
        return projection.tensor(tensor).create_tensor_sharding(
            mapping, self.rule.factor_sizes, self.mesh_name, self.mesh
        )


def tensor_sizes(op: Op) -> list[int]:
    """Element counts of the operands then results; 0 for anything not statically shaped."""
    sizes = []
    for value in [*op.operands, *op.results]:
        t = value.type
        sizes.append(t.num_elements if isinstance(t, TensorType) and t.is_static else 0)
    return sizes


def _equivalent(a: TensorSharding | None, b: TensorSharding | None) -> bool:
    if a is None:
        return b is None or b.is_fully_replicated
    return a.is_equivalent(b)


def process_op(ctx: OpContext, projection: ShardingProjection) -> list[Axes]:
    """Make the op's shardings compatible with its rule; returns the axes per factor."""
    common, plan = plan_op(ctx, projection)
    apply_reshard_plan(ctx, plan)
    return common


def plan_op(ctx: OpContext, projection: ShardingProjection) -> tuple[list[Axes], ReshardPlan]:
    """`process_op` without touching the IR: the axes per factor and the reshards to insert.
    The outcome depends only on the op's rule, shardings, mesh and tensor sizes, so ops that
    share those (every layer of a model) can share it."""
    update = projection.tensors_contain_overflow_axes()
    if update.any() and ctx.op.name == "stablehlo.reshape":
        return _plan_reshape_with_overflow_axes(ctx, projection)
    common = find_common_axes(projection, ctx.rule, tensor_sizes(ctx.op), ctx.mesh)
    for factor, axes in enumerate(common):
        update |= projection.update_sharding(factor, axes, ())
    return common, plan_explicit_reshards(ctx, projection, update, ctx.in_shardings)


def _other_device_order(ctx: OpContext, sharding: TensorSharding | None) -> bool:
    """`shouldReshardToCommonMesh`: sharded on a mesh whose device order is not the op's."""
    if sharding is None or sharding.is_fully_replicated:
        return False
    return ctx.meshes.of(sharding).device_ids != ctx.mesh.device_ids


@dataclass(frozen=True, slots=True)
class ReshardPlan:
    """The reshards `insert_explicit_reshards` makes around one op."""

    operands: tuple[tuple[int, TensorSharding], ...]  # (operand, its new sharding)
    results: tuple[tuple[int, TensorSharding, TensorSharding], ...]  # (result, new, old)


def insert_explicit_reshards(
    ctx: OpContext,
    projection: ShardingProjection,
    update: UpdateTensorShardings,
    in_shardings: list[TensorSharding | None],
) -> None:
    """Reshard changed operands before the op; changed results take their new sharding and a
    reshard after the op restores the old one for the users."""
    apply_reshard_plan(ctx, plan_explicit_reshards(ctx, projection, update, in_shardings))


def plan_explicit_reshards(
    ctx: OpContext,
    projection: ShardingProjection,
    update: UpdateTensorShardings,
    in_shardings: list[TensorSharding | None],
) -> ReshardPlan:
    """What `insert_explicit_reshards` inserts, read before anything changes."""
    op = ctx.op
    operands = tuple(
        (i, ctx.new_sharding(i, projection))
        for i, sharding in enumerate(in_shardings)
        if update.operands[i] or _other_device_order(ctx, sharding)
    )
    results = tuple(
        (
            j,
            ctx.new_sharding(len(op.operands) + j, projection),
            ctx.get_or_create_sharding(op.results[j]),
        )
        for j, sharding in enumerate(ctx.out_shardings)
        if update.results[j] or _other_device_order(ctx, sharding)
    )
    return ReshardPlan(operands, results)


def apply_reshard_plan(ctx: OpContext, plan: ReshardPlan) -> None:
    """Insert the reshards of `plan` around `ctx.op`."""
    op = ctx.op
    ctx.builder.before(op)
    for i, target in plan.operands:
        reshard = ctx.builder.insert(new_op("sdy.reshard", op.operands[i], {"sharding": target}))
        op.set_operand(i, reshard.results[0])
    ctx.builder.after(op)
    for j, new, old in plan.results:
        result = op.results[j]
        reshard = ctx.builder.insert(new_op("sdy.reshard", result, {"sharding": old}))
        result.replace_all_uses_with(reshard.results[0], except_op=reshard)
        set_sharding(result, new)


# -- reshape with overflow axes ------------------------------------------------------------------


def _redistribute(
    tensor: TensorFactorShardings,
    mapping: TensorMapping,
    factor_sizes: tuple[int, ...],
    mesh: Mesh,
    all_axes: list[AxisRef],
) -> None:
    """Spread `all_axes` over the tensor's factors (all dims, major to minor) afresh."""
    factors = [f for dim in mapping for f in dim if tensor.has_factor(f)]
    flat = [
        FactorSharding(
            (),
            tensor.factor_index_to_sharding[f].is_closed,
            tensor.factor_index_to_sharding[f].is_minor_most,
        )
        for f in factors
    ]
    distribute_axes_across_factors(flat, [factor_sizes[f] for f in factors], all_axes, mesh)
    for f, sharding in zip(factors, flat, strict=True):
        target = tensor.factor_index_to_sharding[f]
        target.axis_refs = sharding.axis_refs
        target.overflow_axes = sharding.overflow_axes


def _plan_reshape_with_overflow_axes(
    ctx: OpContext, projection: ShardingProjection
) -> tuple[list[Axes], ReshardPlan]:
    """Both sides take the more sharded side's axes, spread over their own factors; each factor
    then keeps the greatest common prefix of the two."""
    op, rule, mesh = ctx.op, ctx.rule, ctx.mesh
    operand, result = projection.operands[0], projection.results[0]
    best = operand if operand.sharding_size(mesh) >= result.sharding_size(mesh) else result
    all_axes: list[AxisRef] = []
    for factor in range(rule.num_factors):
        sharding = best.get(factor)
        if sharding is not None:
            all_axes.extend(sharding.axis_refs)
            all_axes.extend(sharding.overflow_axes)
    _redistribute(operand, rule.operand_mappings[0], rule.factor_sizes, mesh, all_axes)
    _redistribute(result, rule.result_mappings[0], rule.factor_sizes, mesh, all_axes)
    legal = ShardingProjection.build(
        [ctx.new_sharding(0, projection)], [ctx.new_sharding(1, projection)], rule, mesh
    )
    common = legal.greatest_common_prefix_axes(rule.num_factors)
    for factor in range(rule.num_factors):
        projection.update_sharding(factor, common[factor], ())
    in_shardings = [get_sharding(v) for v in op.operands]
    update = projection.no_updates()
    update.operands[0] = not _equivalent(in_shardings[0], ctx.new_sharding(0, projection))
    update.results[0] = not _equivalent(ctx.new_sharding(1, projection), ctx.out_shardings[0])
    return common, plan_explicit_reshards(ctx, projection, update, in_shardings)


# -- dot / dot_general in the default version ----------------------------------------------------


def _dot_conflict(ctx: OpContext, projection: ShardingProjection) -> tuple[int, Axes, list] | None:
    """The single result factor conflicting with LHS/RHS, its operand axes and the contracting
    axes; None when the rewrite does not apply."""
    rule = ctx.rule
    lhs, rhs = projection.operands[0], projection.operands[1]
    result = projection.results[0]
    lhs_size, rhs_size, result_size = tensor_sizes(ctx.op)[:3]
    conflict: tuple[int, Axes] | None = None
    reduction_axes: list[AxisRef] = []
    seen: list[AxisRef] = []
    for factor in range(rule.num_factors):
        lhs_f, rhs_f = lhs.get(factor), rhs.get(factor)
        if lhs_f is not None and rhs_f is not None:
            axes, max_size = lhs_f.axis_refs, max(lhs_size, rhs_size)
            if lhs_f.axis_refs != rhs_f.axis_refs:
                return None
            if rule.factor_type(factor) == FactorType.REDUCTION:
                reduction_axes.extend(axes)
                continue
        else:
            single = lhs_f if lhs_f is not None else rhs_f
            assert single is not None
            axes = single.axis_refs
            max_size = lhs_size if lhs_f is not None else rhs_size
            for axis in axes:
                if any(s.overlaps(axis) for s in seen):
                    return None
                seen.append(axis)
        result_f = result.get(factor)
        if result_f is not None and result_f.axis_refs == axes:
            continue
        if not axes or conflict is not None or result_size > max_size:
            return None
        conflict = (factor, axes)
    if conflict is None:
        return None
    return conflict[0], conflict[1], reduction_axes


def process_dot(ctx: OpContext, projection: ShardingProjection) -> None:
    """When LHS and RHS agree and the result conflicts on exactly one factor whose result
    axes are the contracting axes, shard the result like the operands and reshard it after."""
    sharding = dot_result_sharding(ctx, projection)
    if sharding is not None:
        reshard_dot_result(ctx, sharding)


def dot_result_sharding(ctx: OpContext, projection: ShardingProjection) -> TensorSharding | None:
    """The sharding `process_dot` gives the dot's result, None if it leaves the dot alone.

    A function of the rule, the shardings, the mesh and the tensor sizes only (no other
    state of the op), so the caller may reuse it for a dot with the same ones.
    """
    found = _dot_conflict(ctx, projection)
    if found is None:
        return None
    factor, operand_axes, reduction_axes = found
    result = projection.results[0].get(factor)
    if result is None or not result.axis_refs or list(result.axis_refs) != reduction_axes:
        return None
    result.axis_refs = operand_axes
    return ctx.new_sharding(len(ctx.op.operands), projection)


def reshard_dot_result(ctx: OpContext, sharding: TensorSharding) -> None:
    """The dot's result takes `sharding`; a reshard after it restores the old one for users."""
    op = ctx.op
    set_sharding(op.results[0], sharding)
    ctx.builder.after(op)
    old = ctx.out_shardings[0]
    reshard = ctx.builder.insert(new_op("sdy.reshard", op.results[0], {"sharding": old}))
    op.results[0].replace_all_uses_with(reshard.results[0], except_op=reshard)
