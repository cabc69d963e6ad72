"""``sdy-insert-explicit-reshards`` (Shardy ``exp/insert_explicit_reshards.cc``).

After propagation every op's operand and result shardings must agree with its sharding rule
before the partitioner can lower them: a factor sharded the same way on every tensor that has
it, need-replication factors unsharded, no axis on two factors. This pass walks each func (MLIR
post-order; nested ops first, terminators skipped, new ops never visited) and per op:

| op                         | what happens                                                  |
| -------------------------- | ------------------------------------------------------------- |
| data-flow op (while, ...)  | each edge source brought to the edge owner's sharding         |
| ``func.call``              | each operand brought to the callee's argument sharding        |
| ``sdy.reshard``            | one adding unreduced axes becomes r2u/s2u collectives         |
| anything with a rule       | operands all-reduced over unreduced axes the result drops;    |
|                            | full version: common axes per factor, reshards before (operands) |
|                            | and after (results) the op, all-reduce over reduction axes    |
|                            | default: only the dot special case and unreduced results      |

"Bringing to a sharding" all-reduces unreduced axes the target drops, inserts the unreduced
collectives for axes it adds, and (full version only) reshards if still not equivalent. The
func's return is handled last like a data-flow source with the func result shardings.
The full version is on for every op when the option is set, and always for ``func.call``,
``mhlo.ragged_dot`` and a ``concatenate`` whose operand shardings differ from its result's.

Reference: Shardy as built into jaxlib 0.10.2 (its sources between 2026-05-30 and 2026-06-24:
it has `sdy-explicit-gather-scatter-batching` but not `sdy-verify-unreduced-axes`). Later
Shardy also fences single-device (maximal) results and rejects maximal func shardings here;
that version does neither: ops touching a maximal mesh are simply left alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from shardwise.axis import AxisRef, axis_set_diff, sort_and_merge_axes
from shardwise.errors import InputError, InternalError
from shardwise.export.collective_attrs import axis_ref_list_attr
from shardwise.export.explicit_reshards.explicit_reshards_util import compatible_factor_sharding
from shardwise.export.explicit_reshards.process_op import (
    OpContext,
    ReshardPlan,
    apply_reshard_plan,
    dot_result_sharding,
    plan_op,
    process_dot,
    reshard_dot_result,
    tensor_sizes,
)
from shardwise.export.explicit_reshards.unreduced import (
    Builder,
    MeshTable,
    convert_reshard_to_unreduced_collectives,
    insert_all_reduce_if_unreduced_to_replicated,
    insert_unreduced_collectives,
    new_op,
)
from shardwise.export.sharding_scan import scan_shardings
from shardwise.ir import Module, Op, SymbolTable, Value
from shardwise.ir.walk import walk_post_order_visiting
from shardwise.passes import sdy_pass
from shardwise.propagation.projection import Axes, ShardingProjection
from shardwise.rules.registry import get_or_create_sharding_rule
from shardwise.rules.rule import OpShardingRule
from shardwise.sdy import data_flow
from shardwise.sdy.funcs import callee_of, func_arg_shardings
from shardwise.sdy.shardings import (
    get_func_result_sharding,
    get_sharding,
)
from shardwise.sharding import TensorSharding

__all__ = ["insert_explicit_reshards", "equivalent", "sharding_bypassing_barriers"]

_DOT_OPS = frozenset({"stablehlo.dot", "stablehlo.dot_general"})
_SOMETIMES_FULL = frozenset({"mhlo.ragged_dot", "func.call", "stablehlo.concatenate"})
# What `_FuncPass.visit` acts on in the default version when no sharding has unreduced axes.
_RESHAPE = "stablehlo.reshape"
_ACTED_ON_IF_LEAN = data_flow.DATA_FLOW_OPS | _DOT_OPS | _SOMETIMES_FULL | {"sdy.reshard"}


@sdy_pass("sdy-insert-explicit-reshards", nests_in_func=True)
def insert_explicit_reshards(
    module: Module,
    enable_full_version: bool = False,
    has_unreduced_axes: bool | None = None,
    replicated_on_any_mesh: bool = False,
) -> None:
    """Run the pass on every ``func.func`` of `module`, in place.

    `replicated_on_any_mesh` (`shardwise partition`'s default mode, not the reference's): a
    fully replicated operand or result on another mesh does not stop the op from getting
    the reshards of its other shardings' mesh (`MeshTable.common_mesh_name`).

    `has_unreduced_axes`: whether any sharding in `module` has unreduced axes, if the caller
    knows (else the pass scans the module). Without any, every step about unreduced axes is a
    no-op (the pass only copies unreduced axes from shardings already there), so it is skipped.
    """
    if has_unreduced_axes is None:
        has_unreduced_axes = scan_shardings(module).unreduced_axes
    # The pass adds and removes no symbol: one symbol table serves every call.
    shared = _Shared(
        MeshTable(module.meshes(), replicated_on_any_mesh),
        SymbolTable(module),
        {},
        has_unreduced_axes,
    )
    for func in module.funcs:
        if not func.regions or not func.regions[0].blocks:
            continue  # a declaration: nothing to do (Shardy 0.10.2 aborts on it)
        _FuncPass(module, shared, func, enable_full_version).run()


def equivalent(a: TensorSharding | None, b: TensorSharding | None) -> bool:
    """Shardy's free `isEquivalent`: a missing sharding is equivalent to a replicated one."""
    if a is None:
        return b is None or b.is_fully_replicated
    return a.is_equivalent(b)


def sharding_bypassing_barriers(value: Value) -> TensorSharding | None:
    while value.defining_op is not None and value.defining_op.name == "sdy.propagation_barrier":
        value = value.defining_op.operands[0]
    return get_sharding(value)


@dataclass(frozen=True, slots=True)
class _Shared:
    """What the pass keeps across funcs: meshes and symbols by name, and the outcome of
    `dot_result_sharding` per (rule, operand and result shardings, mesh name, tensor sizes)."""

    meshes: MeshTable
    symbols: SymbolTable
    dot_results: dict[tuple, TensorSharding | None]
    unreduced_axes: bool  # whether any sharding of the module has unreduced axes
    # `plan_op`'s outcome per op key (`_FuncPass.full_op`): the full version's common axes
    # and reshards.
    full_plans: dict[tuple, tuple[list[Axes], ReshardPlan]] = field(default_factory=dict)


class _FuncPass:
    def __init__(self, module: Module, shared: _Shared, func: Op, full: bool) -> None:
        self.module = module
        self.meshes = shared.meshes
        self.symbols = shared.symbols
        self.dot_results = shared.dot_results
        self.full_plans = shared.full_plans
        self.unreduced_axes = shared.unreduced_axes
        self.func = func
        self.full = full
        self.builder = Builder()

    def run(self) -> None:
        # With no unreduced axes anywhere, `visit` acts only on a few op kinds in the default
        # version: the others are not even visited.
        lean = not self.full and not self.unreduced_axes
        walk_post_order_visiting(self.func, self.visit, _ACTED_ON_IF_LEAN if lean else None)
        terminator = self.func.regions[0].entry.terminator
        assert terminator is not None
        self.builder.before(terminator)
        for i in range(len(terminator.operands)):
            target = get_func_result_sharding(self.func, i)
            self.to_target((terminator, i), target, after_operand=False, full=self.full)

    # -- per op ----------------------------------------------------------------------------------

    def visit(self, op: Op) -> None:
        if op is self.func or op.is_terminator:
            return
        name = op.name
        full = self.full or (name in _SOMETIMES_FULL and self.on_full_version(op))
        if name in data_flow.DATA_FLOW_OPS:
            self.data_flow_op(op, full)
        elif name == "func.call":
            self.call_op(op, full)
        elif name != "sdy.reshard" or not convert_reshard_to_unreduced_collectives(
            op, self.meshes, self.builder
        ):
            if self.unreduced_axes:
                self.all_reduce_operands_if_unreduced(op)
            elif not full and name not in _DOT_OPS:
                return  # with no unreduced axes anywhere, `rule_op` acts only on these
            rule = get_or_create_sharding_rule(op, False, set_on_op=False)
            if rule is not None and not rule.is_custom_rule:
                self.rule_op(op, rule, full)

    def rule_op(self, op: Op, rule: OpShardingRule, full: bool) -> None:
        """An op with a (non-custom) rule: the full version's reshards, the dot special case,
        the all-reduce of reduction factors."""
        is_dot = op.name in _DOT_OPS
        if not (full or is_dot or self.reduces_unreduced(rule, op)):
            return  # nothing below would act: skip reading the shardings and the projection
        in_shardings = [sharding_bypassing_barriers(v) for v in op.operands]
        out_shardings = [sharding_bypassing_barriers(v) for v in op.results]
        mesh_name = self.common_mesh_name(in_shardings, out_shardings)
        if mesh_name is None:
            return
        mesh = self.meshes.of_name(mesh_name)
        ctx = OpContext(
            op, rule, mesh_name, mesh, in_shardings, out_shardings, self.builder, self.meshes
        )
        if is_dot and not full and not self.reduces_unreduced(rule, op):
            self.dot_op(ctx)
            return
        if full:
            self.full_op(ctx)
            return
        projection = ShardingProjection.build(
            in_shardings, out_shardings, rule, mesh, closed_if_missing=True
        )
        if is_dot:
            process_dot(ctx, projection)
        self.all_reduce_reduction_factors(ctx, projection, [], full)

    def full_op(self, ctx: OpContext) -> None:
        """`process_op`, then the all-reduce of reduction factors; ops with the same rule,
        shardings, mesh and sizes (every layer of a model) share one plan."""
        op = ctx.op
        key = (
            ctx.rule,
            op.name,
            tuple(ctx.in_shardings),
            tuple(ctx.out_shardings),
            # What the plan also reads: the results' own shardings, and for a reshape with
            # overflow axes the operands' (both may differ from the ones bypassing barriers).
            tuple(get_sharding(r) for r in op.results),
            tuple(get_sharding(v) for v in op.operands) if op.name == _RESHAPE else (),
            ctx.mesh_name,
            tuple(tensor_sizes(op)),
        )
        found = self.full_plans.get(key)
        if found is None:
            projection = ShardingProjection.build(
                ctx.in_shardings, ctx.out_shardings, ctx.rule, ctx.mesh, closed_if_missing=True
            )
            found = self.full_plans[key] = plan_op(ctx, projection)
        common, plan = found
        apply_reshard_plan(ctx, plan)
        self.all_reduce_reduction_factors(ctx, None, common, True)

    def reduces_unreduced(self, rule: OpShardingRule, op: Op) -> bool:
        """Whether `all_reduce_reduction_factors` (default version) can act on `op`: it needs
        reduction factors and unreduced axes on the first result (a result sharding that
        `process_dot` sets keeps the old one's unreduced axes)."""
        if not (self.unreduced_axes and rule.reduction_factors and op.results):
            return False
        first = sharding_bypassing_barriers(op.results[0])
        return first is not None and bool(first.unreduced_axes)

    def dot_op(self, ctx: OpContext) -> None:
        """`process_dot` where no all-reduce of reduction factors follows; dots with the same
        rule, shardings, mesh and sizes (every layer of a model) share one outcome."""
        key = (
            ctx.rule,
            tuple(ctx.in_shardings),
            tuple(ctx.out_shardings),
            ctx.mesh_name,
            tuple(tensor_sizes(ctx.op)),
        )
        if key in self.dot_results:
            sharding = self.dot_results[key]
        else:
            projection = ShardingProjection.build(
                ctx.in_shardings, ctx.out_shardings, ctx.rule, ctx.mesh, closed_if_missing=True
            )
            sharding = self.dot_results[key] = dot_result_sharding(ctx, projection)
        if sharding is not None:
            reshard_dot_result(ctx, sharding)

    def on_full_version(self, op: Op) -> bool:
        if self.full or op.name in ("mhlo.ragged_dot", "func.call"):
            return True
        if op.name != "stablehlo.concatenate":
            return False
        result = get_sharding(op.results[0])
        return any(get_sharding(v) != result for v in op.operands)

    # -- bringing a value to a target sharding ---------------------------------------------------

    def to_target(
        self,
        use: tuple[Op, int],
        target: TensorSharding | None,
        after_operand: bool,
        full: bool,
    ) -> None:
        operand = use[0].operands[use[1]]
        sharding = get_sharding(operand)
        if after_operand:
            self.builder.after_value(operand)
        if sharding is not None:
            sharding = insert_all_reduce_if_unreduced_to_replicated(
                use, sharding, target, self.meshes, self.builder
            )
        new = insert_unreduced_collectives(use, target, self.meshes, self.builder)
        if new is not None:
            sharding = new
        if not full or equivalent(sharding, target):
            return
        if target is None:
            assert sharding is not None
            target = TensorSharding.fully_closed(sharding.mesh_or_ref, sharding.rank)
        reshard = new_op("sdy.reshard", use[0].operands[use[1]], {"sharding": target})
        self.builder.insert(reshard)
        use[0].set_operand(use[1], reshard.results[0])

    def data_flow_op(self, op: Op, full: bool) -> None:
        owners = list(op.results)
        if op.name in ("sdy.manual_computation", "sdy.named_computation"):
            owners += list(op.regions[0].entry.args)
        for owner in owners:
            sharding = data_flow.get_edge_owner_sharding(op, owner)
            if sharding is not None:
                sharding = data_flow.transform_target_sharding(
                    op, owner, sharding, data_flow.BEFORE_EDGE_PROPAGATION
                )
            for use in data_flow.edge_sources(op, owner):
                self.to_target(use, sharding, after_operand=True, full=full)

    def call_op(self, call: Op, full: bool) -> None:
        callee = callee_of(self.module, call, self.symbols)
        if not callee.regions or not callee.regions[0].blocks:
            # Shardy 0.10.2 aborts on a call to a declaration: its args carry no shardings.
            raise InputError(
                f"cannot insert reshards for the call to @{self.module.symbol_name(callee)}: "
                "the function is a declaration without a body",
                call.location,
            )
        targets: Sequence[TensorSharding] | None = func_arg_shardings(self.module, callee)
        if targets is None:
            mesh_ref = None
            for v in call.operands:
                s = get_sharding(v)
                if s is not None and not self.meshes.of(s).is_maximal:
                    mesh_ref = s.mesh_or_ref
                    break
            if mesh_ref is None:
                return
            targets = [TensorSharding.fully_closed(mesh_ref, v.type.rank) for v in call.operands]
        for i, target in enumerate(targets):
            self.to_target((call, i), target, after_operand=True, full=full)

    # -- unreduced operands and reduction factors ------------------------------------------------

    def all_reduce_operands_if_unreduced(self, op: Op) -> None:
        """Operands' unreduced axes that the (first) result does not keep are all-reduced."""
        if not op.results:
            for v in op.operands:
                s = get_sharding(v)
                if s is not None and s.unreduced_axes:
                    raise InternalError(
                        "Some operands have unreduced axes but the operation has no results.",
                        op.location,
                    )
            return
        first = get_sharding(op.results[0])
        first_unreduced = first.unreduced_axes if first is not None else ()
        for result in op.results[1:]:
            s = get_sharding(result)
            if (s.unreduced_axes if s is not None else ()) != first_unreduced:
                raise InternalError(
                    "Unreduced axes mismatch between results for multi-result op.", op.location
                )
        self.builder.before(op)
        for i, v in enumerate(op.operands):
            s = get_sharding(v)
            if s is not None and s.unreduced_axes:  # else the call below returns at once
                insert_all_reduce_if_unreduced_to_replicated(
                    (op, i), s, first, self.meshes, self.builder
                )

    def all_reduce_reduction_factors(
        self,
        ctx: OpContext,
        projection: ShardingProjection | None,
        common: list[Axes],
        full: bool,
    ) -> None:
        """All-reduce every result over the reduction factors' axes it does not keep unreduced
        (the full version reads `common`, the default one `projection`)."""
        op, rule = ctx.op, ctx.rule
        if not op.results:
            return
        first = get_sharding(op.results[0])
        unreduced = first.unreduced_axes if first is not None else ()
        axes: list[AxisRef] = []
        if full:
            for f in rule.reduction_factors:
                axes.extend(common[f])
        elif unreduced:
            assert projection is not None
            for f in rule.reduction_factors:
                factor_axes = compatible_factor_sharding(projection, f)
                if factor_axes is None:
                    raise InternalError(
                        f"For the operation {op.name}, the result has unreduced axes while the "
                        "operand has incompatible sharding along reduction factors.",
                        op.location,
                    )
                axes.extend(factor_axes)
        if not axes:
            return
        axes = axis_set_diff(axes, unreduced, ctx.mesh)
        if not axes:
            return
        axes = sort_and_merge_axes(axes, ctx.mesh, key=ctx.mesh.axis_key)
        self.builder.after(op)
        for result in op.results:
            sharding = ctx.get_or_create_sharding(result)
            all_reduce = new_op(
                "sdy.all_reduce",
                result,
                {"reduction_axes": axis_ref_list_attr(tuple(axes)), "out_sharding": sharding},
            )
            self.builder.insert(all_reduce)
            result.replace_all_uses_with(all_reduce.results[0], except_op=all_reduce)

    # -- meshes ----------------------------------------------------------------------------------

    def common_mesh_name(
        self, ins: list[TensorSharding | None], outs: list[TensorSharding | None]
    ) -> str | None:
        return self.meshes.common_mesh_name(ins, outs)
