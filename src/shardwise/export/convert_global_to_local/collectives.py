"""The sdy collectives as StableHLO collectives over explicit replica groups.

| sdy op                   | per-device program (Shardy's pattern)                                |
| ------------------------ | -------------------------------------------------------------------- |
| `sdy.all_gather`         | one `all_gather` per gathered dim, last dim first (one dim, or       |
|                          | `per-dim-all-gather`); else reshape to 1xS, one `all_gather` on dim  |
|                          | 0 over every axis, reshape/transpose/reshape the pieces into place   |
| `sdy.all_slice`          | `dynamic_slice` at offsets read by `partition_id` from a table       |
| `sdy.all_reduce`         | `all_reduce` (sum)                                                   |
| `sdy.reduce_scatter`     | one dim: `reduce_scatter`; several: `all_reduce` + `dynamic_slice`,  |
|                          | or (`combine-multi-dimension-reduce-scatter`) one `reduce_scatter`   |
|                          | on a leading dim built by reshape/transpose                          |
| `sdy.all_to_all`         | one param: `all_to_all`; several: reshape/transpose to one leading   |
|                          | dim, one `all_to_all`, and back                                      |
| `sdy.collective_permute` | `collective_permute` with a pair for every device                    |

Every collective takes the next channel handle (type 1) in conversion order.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from shardwise.axis import AxisRef, sub_axis
from shardwise.errors import UnsupportedError, VerifyError
from shardwise.export.collective_attrs import (
    parse_all_to_all_params,
    parse_axis_ref_list,
    parse_list_of_axis_ref_lists,
)
from shardwise.export.convert_global_to_local.builder import (
    OpBuilder,
    channel_handle,
    dense_text,
    replica_groups_attr,
    shard_index,
)
from shardwise.export.convert_global_to_local.state import ConversionState
from shardwise.ir import DYNAMIC, UNIT, Op, RawAttr, TensorType, Value
from shardwise.mesh import Mesh
from shardwise.sharding import TensorSharding

__all__ = ["COLLECTIVE_PATTERNS"]

AxisList = tuple[AxisRef, ...]


def _groups(
    state: ConversionState, mesh_or_ref: object, mesh: Mesh, axes: Sequence[AxisRef]
) -> tuple[RawAttr, int]:
    """`getReplicaGroupsAndSize`: explicit groups, or with `enable-rgv3` the mesh and axes."""
    if not state.options.enable_rgv3:
        return replica_groups_attr(mesh, axes)
    if isinstance(mesh_or_ref, Mesh):
        raise UnsupportedError(
            "sdy-convert-global-to-local{enable-rgv3=true} on a sharding with an inline mesh: "
            "the reference prints #stablehlo.replica_group_mesh_axes<mesh = #sdy.mesh<...>>, "
            "which MLIR cannot parse back ('mesh must be a FlatSymbolRefAttr or MeshAttr'); "
            "declare the mesh with sdy.mesh and refer to it by name",
        )
    ref = f"@{mesh_or_ref}"
    refs = ", ".join(f"#sdy<axis_ref{axis}>" for axis in axes)
    text = f"#stablehlo.replica_group_mesh_axes<mesh = {ref}, axes = [{refs}]>"
    return RawAttr(text), _axes_size(axes, mesh)


def _out_ref(op: Op) -> object:
    return op.properties["out_sharding"].mesh_or_ref


def _out_mesh(state: ConversionState, op: Op) -> Mesh:
    return state.require_mesh(op.properties["out_sharding"], op)


def _tensor_type(value: Value) -> TensorType:
    assert isinstance(value.type, TensorType), value.type
    return value.type


def _axes_size(axes: Sequence[AxisRef], mesh: Mesh) -> int:
    size = 1
    for axis in axes:
        size *= axis.size(mesh)
    return size


def _collective(
    b: OpBuilder,
    state: ConversionState,
    name: str,
    value: Value,
    result: TensorType,
    properties: dict[str, object],
) -> Op:
    properties["channel_handle"] = channel_handle(state.channel())
    return b.create(name, [value], [result], properties)


# -- all_gather -------------------------------------------------------------------------------


def all_gather(state: ConversionState, op: Op) -> None:
    gathering = parse_list_of_axis_ref_lists(op.properties["gathering_axes"])
    dims = [d for d, axes in enumerate(gathering) if axes]
    if not dims:
        raise VerifyError(
            "'sdy.all_gather' gathers no axes (no-op all-gathers are removed by the "
            "sdy-collective canonicalization; the reference aborts)",
            op.location,
        )
    mesh = _out_mesh(state, op)
    b = OpBuilder(op)
    (value,) = state.operands(op)
    if state.options.per_dim_all_gather or len(dims) == 1:
        result = _all_gather_per_dim(b, state, value, gathering, mesh, _out_ref(op))
    else:
        result = _all_gather_combining_dims(b, state, value, gathering, mesh, _out_ref(op))
    state.replace(op, [result])


def _all_gather_per_dim(
    b: OpBuilder,
    state: ConversionState,
    value: Value,
    gathering: Sequence[AxisList],
    mesh: Mesh,
    ref: object,
) -> Value:
    for dim in reversed(range(len(gathering))):
        axes = gathering[dim]
        if not axes:
            continue
        groups, size = _groups(state, ref, mesh, axes)
        t = _tensor_type(value)
        shape = list(t.shape)
        if shape[dim] != DYNAMIC:
            shape[dim] *= size
        gather = _collective(
            b,
            state,
            "stablehlo.all_gather",
            value,
            TensorType(tuple(shape), t.element_type),
            {"all_gather_dim": RawAttr(f"{dim} : i64"), "replica_groups": groups},
        )
        gather.properties["use_global_device_ids"] = UNIT
        value = gather.results[0]
    return value


def _all_gather_combining_dims(
    b: OpBuilder,
    state: ConversionState,
    value: Value,
    gathering: Sequence[AxisList],
    mesh: Mesh,
    ref: object,
) -> Value:
    local = _tensor_type(value).shape
    dims = [d for d, axes in enumerate(gathering) if axes]
    factors = [_axes_size(gathering[d], mesh) for d in dims]
    all_axes = [a for d in dims for a in gathering[d]]
    current = b.reshape(value, (1, *local))
    groups, size = _groups(state, ref, mesh, all_axes)
    t = _tensor_type(current)
    gather = _collective(
        b,
        state,
        "stablehlo.all_gather",
        current,
        TensorType((size, *local), t.element_type),
        {"all_gather_dim": RawAttr("0 : i64"), "replica_groups": groups},
    )
    gather.properties["use_global_device_ids"] = UNIT
    current = b.reshape(gather.results[0], (*factors, *local))
    permutation: list[int] = []
    next_factor = 0
    for d in range(len(local)):
        if d in dims:
            permutation.append(next_factor)
            next_factor += 1
        permutation.append(d + len(dims))
    current = b.transpose(current, permutation)
    final = list(local)
    for d, factor in zip(dims, factors, strict=True):
        final[d] *= factor
    return b.reshape(current, final)


# -- all_slice, all_reduce --------------------------------------------------------------------


def all_slice(state: ConversionState, op: Op) -> None:
    mesh = _out_mesh(state, op)
    slicing = parse_list_of_axis_ref_lists(op.properties["slicing_axes"])
    local = state.local_tensor_type(op.results[0], op)
    (value,) = state.operands(op)
    state.replace(op, [OpBuilder(op).slice_for_axes(value, mesh, slicing, local)])


def all_reduce(state: ConversionState, op: Op) -> None:
    mesh = _out_mesh(state, op)
    axes = parse_axis_ref_list(op.properties["reduction_axes"])
    groups, _ = _groups(state, _out_ref(op), mesh, axes)
    local = state.local_tensor_type(op.results[0], op)
    (value,) = state.operands(op)
    b = OpBuilder(op)
    reduce = _collective(b, state, "stablehlo.all_reduce", value, local, {})
    reduce.properties["replica_groups"] = groups
    reduce.properties["use_global_device_ids"] = UNIT
    b.add_reduction_body(reduce, local.element_type)
    state.replace(op, reduce.results)


# -- reduce_scatter ---------------------------------------------------------------------------


def reduce_scatter(state: ConversionState, op: Op) -> None:
    in_sharding = state.sharding(op.operands[0])
    mesh = state.require_mesh(in_sharding, op)
    assert in_sharding is not None
    ref = in_sharding.mesh_or_ref
    axes_per_dim = parse_list_of_axis_ref_lists(op.properties["reduce_scatter_axes"])
    dims = [d for d, axes in enumerate(axes_per_dim) if axes]
    if not dims:
        raise VerifyError(
            "'sdy.reduce_scatter' scatters no axes (no-op reduce-scatters are removed by the "
            "sdy-collective canonicalization; the reference aborts)",
            op.location,
        )
    all_axes = [a for d in dims for a in axes_per_dim[d]]
    local = state.local_tensor_type(op.results[0], op)
    (value,) = state.operands(op)
    b = OpBuilder(op)
    if len(dims) == 1:
        axes = axes_per_dim[dims[0]]
        result = _reduce_scatter_op(b, state, value, local, dims[0], mesh, ref, axes)
    elif state.options.combine_multi_dimension_reduce_scatter:
        result = _reduce_scatter_combined(
            b, state, op, value, local, mesh, ref, axes_per_dim, all_axes
        )
    else:
        t = _tensor_type(value)
        reduce = _collective(b, state, "stablehlo.all_reduce", value, t, {})
        reduce.properties["replica_groups"] = _groups(state, ref, mesh, all_axes)[0]
        reduce.properties["use_global_device_ids"] = UNIT
        b.add_reduction_body(reduce, t.element_type)
        result = b.slice_for_axes(reduce.results[0], mesh, axes_per_dim, local)
    state.replace(op, [result])


def _reduce_scatter_op(
    b: OpBuilder,
    state: ConversionState,
    value: Value,
    result: TensorType,
    dim: int,
    mesh: Mesh,
    ref: object,
    axes: Sequence[AxisRef],
) -> Value:
    element_type = _tensor_type(value).element_type
    scatter = _collective(b, state, "stablehlo.reduce_scatter", value, result, {})
    scatter.properties["replica_groups"] = _groups(state, ref, mesh, axes)[0]
    scatter.properties["scatter_dimension"] = RawAttr(f"{dim} : i64")
    scatter.properties["use_global_device_ids"] = UNIT
    b.add_reduction_body(scatter, element_type)
    return scatter.results[0]


def _reduce_scatter_combined(
    b: OpBuilder,
    state: ConversionState,
    op: Op,
    value: Value,
    local: TensorType,
    mesh: Mesh,
    ref: object,
    axes_per_dim: Sequence[AxisList],
    all_axes: Sequence[AxisRef],
) -> Value:
    """`rewriteReduceScatterCombiningMultipleDims`: split each scattered dim into (factor,
    rest), move the factors to the front, merge them, one reduce_scatter on dim 0."""
    shape = _tensor_type(value).shape
    split: list[int] = []
    factor_dims: list[int] = []
    factors: list[int] = []
    for d, size in enumerate(shape):
        if not axes_per_dim[d]:
            # The reference reads past its factor list here (it appends the dim, then a
            # factor it does not have): a module the 0.10.2 build cannot convert reliably.
            raise VerifyError(
                f"'sdy.reduce_scatter' with combine-multi-dimension-reduce-scatter: dimension "
                f"{d} is not scattered; the reference build only handles reduce-scatters "
                "that scatter every dimension in this mode",
                op.location,
            )
        factor = _axes_size(axes_per_dim[d], mesh)
        factors.append(factor)
        factor_dims.append(len(split))
        split.append(factor)
        if size % factor:
            raise VerifyError(
                "'sdy.reduce_scatter' op dimension not divisible by scattering factor",
                op.location,
            )
        split.append(size // factor)
    current = b.reshape(value, split)
    permutation = factor_dims + [i for i in range(len(split)) if i not in factor_dims]
    current = b.transpose(current, permutation)
    total = 1
    for factor in factors:
        total *= factor
    current = b.reshape(current, (total, *local.shape))
    element_type = local.element_type
    scatter = _collective(
        b,
        state,
        "stablehlo.reduce_scatter",
        current,
        TensorType((1, *local.shape), element_type),
        {},
    )
    scatter.properties["replica_groups"] = _groups(state, ref, mesh, all_axes)[0]
    scatter.properties["scatter_dimension"] = RawAttr("0 : i64")
    scatter.properties["use_global_device_ids"] = UNIT
    b.add_reduction_body(scatter, element_type)
    return b.reshape(scatter.results[0], local.shape)


# -- all_to_all -------------------------------------------------------------------------------


def all_to_all(state: ConversionState, op: Op) -> None:
    mesh = _out_mesh(state, op)
    params = parse_all_to_all_params(op.properties["params"])
    (value,) = state.operands(op)
    b = OpBuilder(op)
    if len(params) == 1:
        result = _all_to_all_one(b, state, op, value, params[0], mesh)
    else:
        result = _all_to_all_many(b, state, op, value, params, mesh)
    state.replace(op, [result])


def _all_to_all_one(
    b: OpBuilder, state: ConversionState, op: Op, value: Value, param, mesh: Mesh
) -> Value:
    if not param.axes:
        raise VerifyError("'sdy.all_to_all' op failed to resolve axes", op.location)
    groups, size = _groups(state, _out_ref(op), mesh, param.axes)
    t = _tensor_type(value)
    shape = list(t.shape)
    src, tgt = param.src_dim, param.tgt_dim
    if DYNAMIC in (shape[src], shape[tgt]):
        raise VerifyError("'sdy.all_to_all' op dynamic shape not supported", op.location)
    if shape[tgt] % size:
        raise VerifyError(
            "'sdy.all_to_all' op dimension not divisible by num devices per group", op.location
        )
    shape[src] *= size
    shape[tgt] //= size
    a2a = _collective(
        b, state, "stablehlo.all_to_all", value, TensorType(tuple(shape), t.element_type), {}
    )
    a2a.properties["concat_dimension"] = RawAttr(f"{src} : i64")
    a2a.properties["replica_groups"] = groups
    a2a.properties["split_count"] = RawAttr(f"{size} : i64")
    a2a.properties["split_dimension"] = RawAttr(f"{tgt} : i64")
    return a2a.results[0]


def _all_to_all_many(
    b: OpBuilder, state: ConversionState, op: Op, value: Value, params, mesh: Mesh
) -> Value:
    """`rewriteAllToAllMultipleParams`: split target dims, factors to the front as one dim,
    one all_to_all on dim 0, then the factors back beside their source dims."""
    shape = _tensor_type(value).shape
    count = len(params)
    order = sorted(range(count), key=lambda i: params[i].tgt_dim)
    sizes = [_axes_size(params[i].axes, mesh) for i in order]
    all_axes = [a for i in order for a in params[i].axes]
    split: list[int] = []
    permutation: list[int] = []
    for d, size in enumerate(shape):
        found = [k for k, i in enumerate(order) if params[i].tgt_dim == d]
        if not found:
            split.append(size)
            continue
        factor = sizes[found[0]]
        permutation.append(len(split))
        split.append(factor)
        if size % factor:
            raise VerifyError(
                "'sdy.all_to_all' op dynamic shape or dimension not divisible by num devices "
                "per param",
                op.location,
            )
        split.append(size // factor)
    permutation += [i for i in range(len(split)) if i not in permutation]
    reshaped = b.reshape(value, split)
    transposed = b.transpose(reshaped, permutation)
    groups, group_size = _groups(state, _out_ref(op), mesh, all_axes)
    merged = b.reshape(transposed, (group_size, *_tensor_type(transposed).shape[count:]))
    a2a = _collective(b, state, "stablehlo.all_to_all", merged, _tensor_type(merged), {})
    a2a.properties["concat_dimension"] = RawAttr("0 : i64")
    a2a.properties["replica_groups"] = groups
    a2a.properties["split_count"] = RawAttr(f"{group_size} : i64")
    a2a.properties["split_dimension"] = RawAttr("0 : i64")
    unmerged = b.reshape(a2a.results[0], _tensor_type(transposed).shape)
    back = [d + count for d in range(len(shape))]
    for k in range(count):
        src = params[order[k]].src_dim
        back.insert(back.index(src + count), k)
    moved = b.transpose(unmerged, back)
    moved_shape = _tensor_type(moved).shape
    final: list[int] = []
    i = 0
    while i < len(moved_shape):
        if back[i] < count:
            final.append(moved_shape[i] * moved_shape[i + 1])
            i += 2
        else:
            final.append(moved_shape[i])
            i += 1
    return b.reshape(moved, final)


# -- collective_permute -----------------------------------------------------------------------


def collective_permute(state: ConversionState, op: Op) -> None:
    out_sharding: TensorSharding = op.properties["out_sharding"]
    in_sharding = state.sharding(op.operands[0])
    if in_sharding is None or in_sharding == out_sharding:
        raise VerifyError(
            "'sdy.collective_permute' does not change the sharding of its input (no-op "
            "collective permutes are removed by the sdy-collective canonicalization; the "
            "reference aborts)",
            op.location,
        )
    out_mesh = state.require_mesh(out_sharding, op)
    in_mesh = state.require_mesh(in_sharding, op)
    if in_mesh.total_size != out_mesh.total_size:
        raise VerifyError(
            "collective-permute between meshes of different sizes is not supported.",
            op.location,
        )
    every = [a for s in (in_sharding, out_sharding) for a in _each_axis_ref(s)]
    atomic = _ordered_axis_refs(every, out_mesh)
    devices = out_mesh.total_size
    out_axes = _sharding_axes(out_sharding, atomic)
    target = {shard_index(j, out_mesh, out_axes): j for j in range(devices)}
    in_axes = _sharding_axes(in_sharding, atomic)
    pairs: list[int] = []
    for i in range(devices):
        pairs += [i, target.get(shard_index(i, in_mesh, in_axes), 0)]
    targets = pairs[1::2]
    if len(set(targets)) != len(targets):
        raise VerifyError(
            "'sdy.collective_permute': the stablehlo.collective_permute it becomes has "
            "duplicate targets (the verifier rejects it: 'duplicate targets not allowed'); "
            f"from {in_sharding} to {out_sharding} the shard index maps two devices to one",
            op.location,
        )
    (value,) = state.operands(op)
    b = OpBuilder(op)
    permute = _collective(b, state, "stablehlo.collective_permute", value, _tensor_type(value), {})
    permute.properties["source_target_pairs"] = RawAttr(dense_text(pairs, [devices, 2]))
    state.replace(op, permute.results)


def _ordered_axis_refs(axes: Sequence[AxisRef], mesh: Mesh) -> list[AxisRef]:
    """`getOrderedAxisRefs`: every mesh axis in mesh order, cut at each sub-axis boundary."""
    bounds: dict[str, set[int]] = {}
    for axis in axes:
        if axis.sub_axis_info is not None:
            edges = bounds.setdefault(axis.name, {1, mesh.axis_size(axis.name)})
            edges.update((axis.pre_size, axis.sub_axis_info.next_pre_size))
    result = []
    for mesh_axis in mesh.axes:
        if mesh_axis.name not in bounds:
            result.append(AxisRef(mesh_axis.name))
            continue
        cuts = sorted(bounds[mesh_axis.name])
        for lo, hi in itertools.pairwise(cuts):
            result.append(sub_axis(mesh_axis.name, lo, hi // lo))
    return result


def _each_axis_ref(sharding: TensorSharding) -> list[AxisRef]:
    """`forEachAxisRef`: dim axes, then replicated, then unreduced axes."""
    axes = [a for d in sharding.dim_shardings for a in d.axes]
    return axes + list(sharding.replicated_axes) + list(sharding.unreduced_axes)


def _sharding_axes(sharding: TensorSharding, atomic: Sequence[AxisRef]) -> list[AxisRef]:
    """The atomic axes in the order the sharding's dims use them, then the unused ones."""
    axes: list[AxisRef] = []
    for dim in sharding.dim_shardings:
        for axis in dim.axes:
            for piece in atomic:
                if axis.name == piece.name and axis.contains(piece) and piece not in axes:
                    axes.append(piece)
    axes += [piece for piece in atomic if piece not in axes]
    return axes


COLLECTIVE_PATTERNS = {
    "sdy.all_gather": all_gather,
    "sdy.all_reduce": all_reduce,
    "sdy.all_slice": all_slice,
    "sdy.all_to_all": all_to_all,
    "sdy.collective_permute": collective_permute,
    "sdy.reduce_scatter": reduce_scatter,
}
