"""Going further than Shardy: make local what the 0.10.2 global-to-local rejects.

`shardwise partition` runs this on the global program after
``sdy-insert-explicit-reshards`` and before ``sdy-reshard-to-collectives``
(`replicate_where_the_reference_stops`), so the ``sdy.reshard`` ops it inserts become
collectives like any other. It is XLA's SPMD fallback: a dim the op cannot compute
shard by shard is made replicated before the op (an all-gather along it), the op runs on
the whole dim on every device, and the result is cut back to its sharding after it (an
all-slice: this device's piece, communication-free).

| op                                           | what is replicated                          |
| -------------------------------------------- | ------------------------------------------- |
| `slice` partial along a sharded dim          | the sliced dims (their permutation factors) |
| `concatenate` along a sharded dim            | the concatenated dim                        |
| `pad` along a sharded dim (a user's pad)     | the padded dims                             |
| `reduce_window`, `select_and_scatter` with a | the windowed dims                           |
| window or stride over a sharded dim          |                                             |
| `chlo` elementwise ops (no sharding rule,    | nothing: operands are resharded to the      |
| so no reshard was inserted)                  | result's sharding                           |
| `dynamic_update_slice` updating part of a    | that dim (the reference updates each shard  |
| sharded dim                                  | at the global index: a wrong program)       |
| `custom_call` with a custom rule (LAPACK)    | every factor but those all its tensors have |
|                                              | (the batch dims)                            |
| `reduce` whose body is more than one op (an  | the reduced dims (and the all-reduce after  |
| argmax) over a sharded dim                   | it goes)                                    |
| `chlo.top_k`                                 | the last dim (the one it sorts): operand    |
|                                              | and results lose its axes, other dims are   |
|                                              | the result's                                |
| `case` on an index with unreduced axes       | nothing: the index is all-reduced over them |
| `broadcast_in_dim` expanding a sharded size-1 | that operand dim                            |
| dim                                          |                                             |
| an `sdy.all_reduce` of one over the same     | nothing: the second goes (explicit reshards |
| axes                                         | insert two for an unreduced value)          |
| `sdy.reshard` to unreduced axes of a value   | nothing: a replicated-to-unreduced over     |
| with no sharding                             | them (one device per group keeps the value) |
| `sdy.reshard` from a value replicated on     | nothing: the all-slices from replicated on  |
| another mesh                                 | the target's mesh                           |
| `sdy.reshard` between sub-axes of one axis   | the source's dims from the first such axis  |
| that cannot coexist (`"z":(1)3` and          | on: a reshard to that first, then one to    |
| `"z":(2)3` of `z=6`)                         | the target                                  |

A slice dim that is communication-free (from 0, stride 1, as many elements per shard) is
left as it is, as the global-to-local converts it. Only ops the reference would reject are
touched, so a module the reference partitions is left byte for byte as it was.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

from shardwise.errors import ShardwiseError
from shardwise.export.collective_attrs import axis_ref_list_attr
from shardwise.export.explicit_reshards.unreduced import (
    Builder,
    MeshTable,
    insert_all_reduce_if_unreduced_to_replicated,
    new_op,
)
from shardwise.export.resolve_permutation_factors import (
    _replicate_permutation_factors,
    unshard_factors,
)
from shardwise.ir import (
    SHARDING_ATTR,
    Module,
    Op,
    TensorType,
    Value,
    func_arg_attrs,
    func_result_attrs,
    symbol_ref_name,
)
from shardwise.rules.registry import get_or_create_sharding_rule
from shardwise.rules.rule import OpShardingRule
from shardwise.rules.stablehlo_attrs import parse_i64_array
from shardwise.sdy.shardings import get_sharding, set_sharding
from shardwise.sharding import DimensionSharding, TensorSharding

__all__ = [
    "replicate_where_the_reference_stops",
    "reject_wrong_conversions",
    "reducer",
    "COMBINABLE",
    "PERMUTATION_OPS",
]

# Ops whose sharded permutation factors the global-to-local rejects (or, for a pad, converts
# into a wrong program): those factors are replicated around the op.
PERMUTATION_OPS = frozenset(
    {
        "stablehlo.slice",
        "stablehlo.concatenate",
        "stablehlo.pad",
        "stablehlo.reduce_window",
        "stablehlo.select_and_scatter",
        "stablehlo.reverse",
        "stablehlo.convolution",
    }
)


def replicate_where_the_reference_stops(module: Module) -> None:
    """Insert the reshards that make every op above local (see the module's table)."""
    meshes = MeshTable(module.meshes())
    funcs = {module.symbol_name(f): f for f in module.funcs}
    for op in list(module.op.walk_post_order()):
        if op.name in PERMUTATION_OPS:
            _replicate_permuted(op, meshes)
        elif op.name == "stablehlo.custom_call":
            _replicate_unshared_factors(op, meshes)
        elif op.name == "stablehlo.reduce" and reducer(op) not in COMBINABLE:
            _gather_reduced_dims(op)
        elif op.name == "stablehlo.dynamic_update_slice":
            _replicate_partially_updated_dims(op, meshes)
        elif op.name == "chlo.top_k":
            _reshard_top_k(op)
        elif op.name.startswith("chlo.") and is_elementwise(op):
            _reshard_operands_to(op, get_sharding(op.results[0]))
        elif op.name == "sdy.reshard":
            if not _unreduce_resharded_value(op) and not _reshard_from_another_mesh(op, meshes):
                _reshard_through_replicated(op)
        elif op.name == "func.return":
            _unreduce_returned_values(op)
        elif op.name == "func.call":
            _unreduce_call_arguments(op, funcs)
        elif op.name == "stablehlo.case":
            _reduce_branch_index(op, meshes)
        elif op.name == "stablehlo.broadcast_in_dim":
            _replicate_expanded_dims(op, meshes)
        elif op.name == "sdy.all_reduce":
            _drop_repeated_sum(op)
        if op.parent is not None and op.name.startswith("stablehlo.") and op.name not in _FLOW:
            _unreduce_whole_results(op)


# Ops whose results come out of their regions: a branch or a loop body may return a value that
# is partial over axes the op's operands do not have.
_FLOW = frozenset({"stablehlo.case", "stablehlo.if", "stablehlo.while"})


def _replicate_permuted(op: Op, meshes: MeshTable) -> None:
    """The dims a permutation op (a pad, a reverse, ...) moves elements along: replicated."""
    if all(_replicated(v) for v in (*op.operands, *op.results)):
        return
    rule = get_or_create_sharding_rule(op, False, set_on_op=False)
    if rule is None or rule.is_custom_rule:
        return
    if op.name == "stablehlo.pad":
        _replicate_factors(op, rule, _padded_factors(op, rule), meshes)
    elif rule.permutation_factors:
        _replicate_permutation_factors(op, rule, meshes)


def _unreduce_whole_results(op: Op) -> None:
    """An op whose result has unreduced axes that none of its operands has (in a dim or
    unreduced): every device computes the whole value, so the result is made replicated on
    them and an ``sdy.replicated_to_unreduced`` after it makes it partial.

    Explicit reshards leave such a result as it is (a ``dynamic_update_slice`` of
    replicated operands annotated unreduced), and the all-reduce after it summed N whole
    values (fuzz --check 2050-225-16). Axes, not axis names: an operand sharded on
    ``"z":(1)2`` has no part of the result's ``unreduced={"z":(2)2}`` (2053-163-4,
    2053-52-11: the operands' reshards to the result's dims had the axis's other part). Ops
    with a reducer region too (2054-151-5: a sum of a replicated value annotated unreduced),
    not control flow (`_FLOW`)."""
    used = [
        a
        for v in op.operands
        if (sharding := get_sharding(v)) is not None
        for a in (*sharding.dim_axes(), *sharding.unreduced_axes)
    ]
    for result in op.results:
        sharding = get_sharding(result)
        if sharding is None or not sharding.unreduced_axes:
            continue
        if any(u.overlaps(a) for u in sharding.unreduced_axes for a in used):
            continue
        set_sharding(result, replace(sharding, unreduced_axes=()))
        properties = {"axes": axis_ref_list_attr(sharding.unreduced_axes), "out_sharding": sharding}
        partial = new_op("sdy.replicated_to_unreduced", result, properties)
        _insert_after(op, partial)
        result.replace_all_uses_with(partial.results[0], except_op=partial)


def _drop_repeated_sum(op: Op) -> None:
    """An ``sdy.all_reduce`` of the result of another over the same axes, to the same
    sharding: erased (its operand is whole already).

    jaxlib 0.10.2's explicit reshards insert two for an unreduced value resharded to one
    without those axes (``sdy.reshard %u <@mesh, [{}]>``), and the second summed the sum
    again: N times the value (`export/wrong_conversions.py` rejects it in `--like-shardy`)."""
    if op.parent is None:  # erased with the reduce before it (`_gather_reduced_dims`)
        return
    source = op.operands[0].defining_op
    if source is None or source.name != "sdy.all_reduce":
        return
    if source.properties["reduction_axes"] != op.properties["reduction_axes"]:
        return
    if source.properties["out_sharding"] != op.properties["out_sharding"]:
        return
    op.results[0].replace_all_uses_with(op.operands[0])
    op.erase()


def _replicate_expanded_dims(op: Op, meshes: MeshTable) -> None:
    """A ``broadcast_in_dim`` whose operand is sharded along a size-1 dim the broadcast
    expands: that dim is replicated before it.

    Sharded on n devices, the size-1 dim is padded to n and no longer expands: it maps one
    to one, and the devices got padding (fuzz --check 2043-476-10)."""
    operand, result = op.operands[0], op.results[0]
    sharding = get_sharding(operand)
    if sharding is None or not isinstance(operand.type, TensorType):
        return
    assert isinstance(result.type, TensorType), "broadcast_in_dim gives a tensor"
    dims = parse_i64_array(op.properties["broadcast_dimensions"])
    shape, out = operand.type.shape, result.type.shape
    mesh = meshes.of(sharding)
    expanded = {
        d
        for d, r in enumerate(dims)
        if shape[d] == 1
        and out[r] != 1
        and math.prod(a.size(mesh) for a in sharding.dim_shardings[d].axes) > 1
    }
    if not expanded:
        return
    target = replace(
        sharding,
        dim_shardings=tuple(
            replace(dim, axes=()) if d in expanded else dim
            for d, dim in enumerate(sharding.dim_shardings)
        ),
    )
    _reshard_operand(op, 0, target)


def _reduce_branch_index(op: Op, meshes: MeshTable) -> None:
    """A ``case`` index with unreduced axes (each device holds a partial sum): all-reduced
    over them before the op, so every device takes the branch the global index names.

    Explicit reshards leave it (the index is no factor of the op's rule), and each device
    branched on its own partial index (fuzz --check 2043-472-8, 2043-483-5; the reference's
    program is the same)."""
    sharding = get_sharding(op.operands[0])
    if sharding is None or not sharding.unreduced_axes:
        return
    builder = Builder()
    builder.before(op)
    insert_all_reduce_if_unreduced_to_replicated((op, 0), sharding, None, meshes, builder)


def _unreduce_returned_values(op: Op) -> None:
    """A func result sharded with unreduced axes that its returned value has no sharding for
    (a replicated argument returned as it is): an ``sdy.replicated_to_unreduced`` before the
    return, so that one device of each group along those axes holds it and the others zeros.

    Explicit reshards insert that op only for a value with a sharding; without one, every
    device returned the whole value and their sum over the axes was a multiple of it (fuzz
    --check 2041-136-23; the reference's program is the same)."""
    func = op.parent_op
    if func is None or func.name != "func.func":
        return
    _unreduce_operands(op, [func_result_attrs(func, i) for i in range(len(op.operands))])


def _unreduce_call_arguments(op: Op, funcs: dict[str | None, Op]) -> None:
    """The same at a call: an argument of the callee sharded with unreduced axes, passed a
    value with no sharding (fuzz --check 2055-494-26: every device passed the whole value,
    and the callee's partial value was summed twice)."""
    attr = op.properties.get("callee") or op.attributes.get("callee")
    callee = funcs.get(symbol_ref_name(attr)) if attr is not None else None
    if callee is None:
        return
    _unreduce_operands(op, [func_arg_attrs(callee, i) for i in range(len(op.operands))])


def _unreduce_operands(op: Op, attrs: Sequence[dict[str, object] | None]) -> None:
    """Each operand of `op` with no sharding whose `attrs` (the func's result or the
    callee's argument attributes) want unreduced axes: made partial before `op`."""
    for index, (value, attr) in enumerate(zip(op.operands, attrs, strict=True)):
        wanted = (attr or {}).get(SHARDING_ATTR)
        if not isinstance(wanted, TensorSharding) or not wanted.unreduced_axes:
            continue
        if get_sharding(value) is not None:
            continue
        op.set_operand(index, _partial_before(op, value, wanted))


def _partial_before(anchor: Op, value: Value, target: TensorSharding) -> Value:
    """`value` (replicated) made `target`, inserted before `anchor`: a reshard to its dims,
    then an ``sdy.replicated_to_unreduced`` over its unreduced axes."""
    whole = replace(target, unreduced_axes=())
    if not whole.is_fully_replicated:
        reshard = new_op("sdy.reshard", value, {"sharding": whole})
        _insert_before(anchor, reshard)
        value = reshard.results[0]
    properties = {"axes": axis_ref_list_attr(target.unreduced_axes), "out_sharding": target}
    partial = new_op("sdy.replicated_to_unreduced", value, properties)
    _insert_before(anchor, partial)
    return partial.results[0]


def _unreduce_resharded_value(op: Op) -> bool:
    """A reshard to a sharding with unreduced axes of a value with no sharding (a replicated
    argument): a reshard to its dims, then an ``sdy.replicated_to_unreduced`` over those
    axes, so that one device of each group along them holds the value and the others zeros.

    Explicit reshards make that op of such a reshard only where the value has a sharding;
    without one, reshard-to-collectives drops the reshard and every device kept the whole
    value, so that the sum over the axes was a multiple of it (fuzz --check 2048-23-9; the
    reference's program is the same)."""
    target = op.properties.get("sharding")
    if not isinstance(target, TensorSharding) or not target.unreduced_axes:
        return False
    if get_sharding(op.operands[0]) is not None:
        return False
    op.results[0].replace_all_uses_with(_partial_before(op, op.operands[0], target))
    op.erase()
    return True


def _reshard_from_another_mesh(op: Op, meshes: MeshTable) -> bool:
    """A reshard from a value fully replicated on another mesh (of as many devices): the
    value is whole on every device whatever its mesh, so the reshard is the all-slices of
    one from replicated on the target's mesh, inserted here. Explicit reshards insert such
    reshards where a replicated operand on another mesh no longer stops them
    (`MeshTable.replicated_on_any_mesh`); reshard-to-collectives, like the reference's,
    leaves a reshard between meshes as it is, which the global-to-local cannot convert."""
    from shardwise.export.reshard_to_collectives.inserter import insert_collectives

    value = op.operands[0]
    source, target = get_sharding(value), op.properties.get("sharding")
    if source is None or not isinstance(target, TensorSharding):
        return False
    if not source.is_fully_replicated or source.unreduced_axes:
        return False
    source_mesh, target_mesh = meshes.of(source), meshes.of(target)
    if source_mesh.equals(target_mesh, ignore_device_ids=True):
        return False
    if source_mesh.total_size != target_mesh.total_size or target.is_fully_replicated:
        return False
    replicated = TensorSharding.fully_closed(target.mesh_or_ref, target.rank)
    result = insert_collectives(replicated, target, target_mesh, value, op)
    op.results[0].replace_all_uses_with(result)
    op.erase()
    return True


def _reshard_through_replicated(op: Op) -> None:
    """A reshard between sub-axes that cannot coexist in one decomposition of their axis
    (``"z":(1)3``, the major 3 of ``z=6``, and ``"z":(2)3``, the minor 3) first gathers the
    source's dims from the first such axis on, then goes to its target.

    Reshard-to-collectives would slice by the target's sub-axis before gathering the
    source's, through a sharding with both (fuzz --check 2030-258-2): its tiles are no
    partition of the tensor, the all-gather after it mixes pieces of different tiles, and
    the reference's verifier rejects it (overlapping sub-axes)."""
    source, target = get_sharding(op.operands[0]), op.properties.get("sharding")
    if source is None or not isinstance(target, TensorSharding) or source.unreduced_axes:
        return
    targets = list(target.dim_axes())
    dims, changed = [], False
    for dim in source.dim_shardings:
        clash = [i for i, a in enumerate(dim.axes) if not all(a.can_coexist(t) for t in targets)]
        if clash:
            dim, changed = replace(dim, axes=dim.axes[: clash[0]]), True
        dims.append(dim)
    if not changed:
        return
    gathered = new_op("sdy.reshard", op.operands[0], {"sharding": source.replace_dims(tuple(dims))})
    _insert_before(op, gathered)
    op.set_operand(0, gathered.results[0])


def _padded_factors(op: Op, rule: OpShardingRule) -> list[int]:
    """The factors of every dim a ``stablehlo.pad`` pads: its permutation factors, and the
    dims whose size it keeps (``low = [-1]``, ``high = [1]``: a shift), which its rule lets
    pass through as Shardy's does (fuzz --check 2030-397-5: each device shifted its own
    shard)."""
    amounts = zip(*(parse_i64_array(op.properties[k]) for k in _PAD_AMOUNTS), strict=True)
    shifted = [
        f for dim, pad in enumerate(amounts) if any(pad) for f in rule.operand_mappings[0][dim]
    ]
    return sorted(set(rule.permutation_factors) | set(shifted))


_PAD_AMOUNTS = ("edge_padding_low", "edge_padding_high", "interior_padding")


def _replicate_unshared_factors(op: Op, meshes: MeshTable) -> None:
    """A custom call with a custom rule (a LAPACK call, ...): only the factors every tensor
    has (its batch dims) may stay sharded; the others are replicated around the call.

    Its rule names a factor per dim of each tensor and shares only the batch dims, so
    `sdy-insert-explicit-reshards` leaves the operands as they are: a sharded matrix dim
    would give the call a piece of each matrix (and an aliased operand another shape).
    """
    rule = get_or_create_sharding_rule(op, False, set_on_op=False)
    if rule is None or not rule.is_custom_rule:
        return
    factors = range(rule.num_factors)
    _replicate_factors(
        op, rule, [f for f in factors if not rule.is_factor_in_all_non_scalar_tensors(f)], meshes
    )


def _replicate_partially_updated_dims(op: Op, meshes: MeshTable) -> None:
    """A ``dynamic_update_slice`` whose update covers part of a sharded dim: that dim is
    replicated around it.

    Its rule lets the operand's dim pass through (each device would update its own shard),
    but the 0.10.2 global-to-local then updates each shard at the global start index: a
    wrong program (`tests/check/test_partition_beyond_ops.py` runs the reference's).
    """
    rule = get_or_create_sharding_rule(op, False, set_on_op=False)
    if rule is None or rule.is_custom_rule:
        return
    operand, update = op.operands[0].type, op.operands[1].type
    assert isinstance(operand, TensorType) and isinstance(update, TensorType)
    partial = [d for d in range(operand.rank) if operand.shape[d] != update.shape[d]]
    factors = [f for d in partial for f in rule.operand_mappings[0][d]]
    _replicate_factors(op, rule, factors, meshes)


def _replicate_factors(
    op: Op, rule: OpShardingRule, factors: Sequence[int], meshes: MeshTable
) -> None:
    """Reshards that leave `factors` unsharded on every tensor of `op` (results resharded back
    after it), as `sdy-insert-explicit-reshards` inserts them."""
    if not factors or all(_replicated(v) for v in (*op.operands, *op.results)):
        return
    unshard_factors(op, rule, meshes, factors)


# Reduce ops whose partial results per device an all-reduce can combine (extended.py).
COMBINABLE = frozenset(
    {
        "stablehlo.add",
        "stablehlo.maximum",
        "stablehlo.minimum",
        "stablehlo.multiply",
        "stablehlo.and",
        "stablehlo.or",
    }
)


def _gather_reduced_dims(op: Op) -> None:
    """A reduce whose body is more than one combinable op (an argmax), over a sharded dim:
    the reduced dims are gathered before it and the ``sdy.all_reduce`` after it goes.

    Each device's partial result (a max and its index) cannot be combined by an all-reduce;
    on the whole dim, every device computes the whole result.
    """
    users = [u for r in op.results for u in r.users if u.name == "sdy.all_reduce"]
    if not users:
        return
    dims = set(parse_i64_array(op.properties["dimensions"]))
    count = len(op.operands) // 2
    for index in range(count):
        source = get_sharding(op.operands[index])
        if source is None:
            continue
        target = source.replace_dims(
            tuple(
                DimensionSharding((), True) if d in dims else dim
                for d, dim in enumerate(source.dim_shardings)
            )
        )
        if target != source:
            _reshard_operand(op, index, target)
    for all_reduce in users:
        (value,) = all_reduce.operands
        out = get_sharding(all_reduce.results[0])
        if out is not None:
            set_sharding(value, out)
        all_reduce.results[0].replace_all_uses_with(value)
        all_reduce.erase()


def _reshard_operand(op: Op, index: int, target: TensorSharding) -> None:
    reshard = new_op("sdy.reshard", op.operands[index], {"sharding": target})
    _insert_before(op, reshard)
    op.set_operand(index, reshard.results[0])


def _replicated(value: Value) -> bool:
    sharding = get_sharding(value)
    return sharding is None or sharding.is_fully_replicated


def is_elementwise(op: Op) -> bool:
    """All operands and results are tensors of one shape (a chlo op without broadcasting)."""
    types = [v.type for v in (*op.operands, *op.results)]
    if not types or not all(isinstance(t, TensorType) for t in types):
        return False
    shapes = {t.shape for t in types if isinstance(t, TensorType)}
    return len(shapes) == 1


def _reshard_top_k(op: Op) -> None:
    """Operand and results sharded like result 0, the last (sorted) dim replicated."""
    wanted = get_sharding(op.results[0])
    if wanted is None:
        _reshard_operands_to(op, None)
        return
    local = _without_last_dim(wanted)
    for result in op.results:
        old = get_sharding(result)
        if old is not None and old != local:
            _reshard_result(op, result, local, old)
    _reshard_operands_to(op, local)


def _without_last_dim(sharding: TensorSharding) -> TensorSharding:
    dims = list(sharding.dim_shardings)
    if dims:
        dims[-1] = DimensionSharding((), True)
    return sharding.replace_dims(tuple(dims))


def _reshard_operands_to(op: Op, target: TensorSharding | None) -> None:
    """An ``sdy.reshard`` to `target` before each operand sharded otherwise."""
    for index, operand in enumerate(op.operands):
        source = get_sharding(operand)
        wanted = target if target is not None else _replicated_like(source)
        if wanted is None or source == wanted:
            continue
        if source is None and wanted.is_fully_replicated:
            continue
        if isinstance(operand.type, TensorType) and operand.type.rank != wanted.rank:
            raise ShardwiseError(
                f"'{op.name}': operand {index} has rank {operand.type.rank} but the result's "
                f"sharding {wanted} has rank {wanted.rank}: no reshard makes it local",
                op.location,
            )
        reshard = new_op("sdy.reshard", operand, {"sharding": wanted})
        _insert_before(op, reshard)
        op.set_operand(index, reshard.results[0])


def _replicated_like(sharding: TensorSharding | None) -> TensorSharding | None:
    if sharding is None or sharding.is_fully_replicated:
        return None
    return TensorSharding.fully_closed(sharding.mesh_or_ref, sharding.rank)


def _reshard_result(op: Op, result: Value, local: TensorSharding, old: TensorSharding) -> None:
    """`result` gets sharding `local`; its users read an ``sdy.reshard`` back to `old`."""
    uses = list(result.uses)
    set_sharding(result, local)
    reshard = new_op("sdy.reshard", result, {"sharding": old})
    _insert_after(op, reshard)
    for user, index in uses:
        user.set_operand(index, reshard.results[0])


def _insert_before(anchor: Op, op: Op) -> None:
    block = anchor.parent
    assert block is not None
    block.insert_before(anchor, op)


def _insert_after(anchor: Op, op: Op) -> None:
    block = anchor.parent
    assert block is not None
    following: Sequence[Op] = block.ops
    i = following.index(anchor)
    if i + 1 < len(following):
        block.insert_before(following[i + 1], op)
    else:
        block.append(op)


# -- what the reference converts into a wrong program -------------------------------------------

_WRONG = {
    "stablehlo.reverse": "each device would reverse its own shard, and the shards would not "
    "swap places",
    "stablehlo.convolution": "each device would convolve its own shard of a windowed dim, "
    "without the elements of its neighbours' shards",
    "stablehlo.dynamic_update_slice": "each device would update its own shard at the global "
    "start index",
}


def reducer(op: Op | None) -> str | None:
    """The binary op a one-result ``stablehlo.reduce`` folds with (``stablehlo.maximum``),
    None when `op` is not one or its body is more than that op."""
    if op is None or op.name != "stablehlo.reduce" or len(op.results) != 1:
        return None
    body = op.regions[0].entry.ops
    if (
        len(body) != 2
        or len(body[0].operands) != 2
        or body[1].operands[0] is not body[0].results[0]
    ):
        return None
    return body[0].name


def reject_wrong_conversions(module: Module) -> None:
    """Raise at the first op the 0.10.2 global-to-local would convert into a wrong program.

    A ``reverse`` or ``convolution`` with a sharded permutation factor (a reversed dim, a
    windowed spatial dim), a ``dynamic_update_slice`` updating part of a sharded dim: the
    reference converts each shard by itself (`shardwise check` runs its programs:
    `tests/check/test_partition_beyond_ops.py`). `replicate_where_the_reference_stops`
    replicates those dims first, so after it this finds nothing.
    """
    for op in module.walk():
        if op.name == "sdy.all_reduce":
            _reject_non_sum_all_reduce(op)
        why = _WRONG.get(op.name)
        if why is None or all(_replicated(v) for v in (*op.operands, *op.results)):
            continue
        rule = get_or_create_sharding_rule(op, False, set_on_op=False)
        if rule is None or rule.is_custom_rule:
            continue
        factors = set(_wrong_factors(op, rule))
        for tensor, (value, mapping) in enumerate(_tensors(op, rule)):
            sharding = get_sharding(value)
            if sharding is None:
                continue
            for dim, dim_factors in enumerate(mapping):
                axes = sharding.dim_shardings[dim].axes
                if axes and factors.intersection(dim_factors):
                    raise ShardwiseError(
                        f"'{op.name}': dimension {dim} of tensor {tensor} is sharded on "
                        f"{', '.join(str(a) for a in axes)}: {why} (jaxlib 0.10.2's "
                        "sdy-convert-global-to-local converts it so, into a wrong program); "
                        "replicate that dimension before the op, or partition without "
                        "--like-shardy",
                        op.location,
                    )


def _wrong_factors(op: Op, rule: OpShardingRule) -> list[int]:
    if op.name != "stablehlo.dynamic_update_slice":
        return list(rule.permutation_factors)
    operand, update = op.operands[0].type, op.operands[1].type
    assert isinstance(operand, TensorType) and isinstance(update, TensorType)
    partial = [d for d in range(operand.rank) if operand.shape[d] != update.shape[d]]
    return [f for d in partial for f in rule.operand_mappings[0][d]]


def _tensors(op: Op, rule: OpShardingRule):
    values = (*op.operands, *op.results)
    return zip(values, (*rule.operand_mappings, *rule.result_mappings), strict=False)


def _reject_non_sum_all_reduce(op: Op) -> None:
    source = op.operands[0].defining_op
    if source is None or source.name != "stablehlo.reduce":
        return
    kind = reducer(source)
    if kind != "stablehlo.add":
        raise ShardwiseError(
            f"'sdy.all_reduce' after a stablehlo.reduce over a sharded dim whose op is "
            f"{kind or 'a body of several ops'}: jaxlib 0.10.2's sdy-convert-global-to-local "
            "combines the devices' partial results with an add (a wrong program); replicate "
            "the reduced dim before the reduce, or partition without --like-shardy",
            op.location,
        )
