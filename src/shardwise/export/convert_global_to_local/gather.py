"""`stablehlo.gather` of a sharded operand (Shardy's `StablehloGatherOpPattern`).

A sharded operand dim that the gather takes whole is gathered locally with a local slice size.
A sharded dim the gather slices to size 1 (a "trivial slice dim", not a batching dim) is
collapsed across devices: every device gathers from its own piece, with the start indices made
local (minus the piece's offset) and a mask that zeroes the rows whose index lies in another
device's piece; the `sdy.all_reduce` that must follow sums the pieces.

| step                     | ops                                                            |
| ------------------------ | -------------------------------------------------------------- |
| clamp (indexed dims)     | indices clamped to the global bounds                           |
| bounds                   | per indexed dim: 0..size-1, or this piece's offset..offset+n-1 |
| local indices, mask      | indices - min; min <= indices <= max                           |
| unindexed trivial dims   | the piece's offset == 0                                        |
| result                   | gather, mask reduced over the index vector dim, broadcast,     |
|                          | select(mask, gather, 0)                                        |
"""

from __future__ import annotations

import re

from shardwise.errors import ReferenceDefectError, VerifyError
from shardwise.export.collective_attrs import parse_axis_ref_list
from shardwise.export.convert_global_to_local.builder import (
    I64,
    OpBuilder,
    dense_text,
    i64_array,
)
from shardwise.export.convert_global_to_local.state import ConversionState
from shardwise.ir import Block, Op, RawAttr, Region, TensorType, Value
from shardwise.mesh import Mesh
from shardwise.sharding import TensorSharding

__all__ = ["sharded_gather", "tensor_type"]


def _field(text: str, name: str) -> list[int]:
    m = re.search(rf"\b{name} = \[([^\]]*)\]", text)
    if m is None:
        return []
    return [int(v) for v in m.group(1).split(",") if v.strip()]


def _scalar_field(text: str, name: str) -> int:
    m = re.search(rf"\b{name} = (-?\d+)", text)
    return int(m.group(1)) if m is not None else 0


def tensor_type(value: Value) -> TensorType:
    """`value`'s ranked tensor type (every value these patterns build from is one)."""
    assert isinstance(value.type, TensorType), value.type
    return value.type


def _size(axes, mesh: Mesh) -> int:
    size = 1
    for axis in axes:
        size *= axis.size(mesh)
    return size


def _scalar_text(value: int | bool, element_type: str) -> str:
    if element_type == "i1":
        return "true" if value else "false"
    if element_type.startswith(("f", "bf")):
        return "0.000000e+00" if value == 0 else f"{float(value):e}"
    return str(int(value))


def _constant(b: OpBuilder, value: int | bool, type: TensorType) -> Value:
    return b.constant(f"dense<{_scalar_text(value, type.element_type)}> : {type}", type)


def sharded_gather(state: ConversionState, op: Op, sharding: TensorSharding) -> None:
    mesh = state.require_mesh(sharding, op)
    global_operand = state.global_type(op.operands[0])
    assert isinstance(global_operand, TensorType)
    numbers = str(op.properties["dimension_numbers"])
    slice_sizes = [
        int(v) for v in re.findall(r"-?\d+", str(op.properties["slice_sizes"]).partition(":")[2])
    ]
    batching = _field(numbers, "operand_batching_dims")
    trivial: list[int] = []
    reduction = []
    for dim, d in enumerate(sharding.dim_shardings):
        if d.axes and _size(d.axes, mesh) > 1 and slice_sizes[dim] == 1 and dim not in batching:
            trivial.append(dim)
            reduction += list(d.axes)
    local_sizes = _local_slice_sizes(op, sharding, mesh, global_operand, slice_sizes, batching)
    operand, indices = state.operands(op)
    local = state.local_tensor_type(op.results[0], op)
    b = OpBuilder(op)
    index_map = _field(numbers, "start_index_map")
    index_type = tensor_type(indices).element_type
    narrow = any(d in index_map for d in trivial) and index_type != I64
    if narrow and state.options.beyond_reference:  # shardwise partition: use i64 indices
        i64_indices = TensorType(tensor_type(indices).shape, I64)
        indices = b.value("stablehlo.convert", [indices], i64_indices)
    elif narrow:
        raise ReferenceDefectError(
            f"'stablehlo.gather' with {index_type} start indices indexing a "
            f"sharded operand dimension sliced to size 1 (dims {trivial}): the reference "
            "build crashes on such a gather, or writes index bounds read from uninitialized "
            "memory (seen for every index type but i64); convert the indices to i64",
            op.location,
        )
    if trivial:
        indices, mask = _local_indices_and_mask(
            b, indices, mesh, sharding, global_operand, operand, numbers, trivial
        )
    gather = _gather(b, op, operand, indices, local, local_sizes)
    if not trivial:
        state.replace(op, [gather])
        return
    result = _masked(b, gather, mask, numbers, local)
    _check_all_reduce(op, reduction)
    state.replace(op, [result])


def _local_slice_sizes(op, sharding, mesh, global_operand, slice_sizes, batching) -> list[int]:
    """`computeLocalSliceSizes`: a whole sharded dim is taken whole on each device."""
    sizes = list(slice_sizes)
    for dim, size in enumerate(sizes):
        axes = sharding.dim_shardings[dim].axes
        if size == 1 or dim in batching or not axes:
            continue
        pieces = _size(axes, mesh)
        if size != global_operand.shape[dim] or size % pieces:
            raise VerifyError(
                f"'stablehlo.gather': sharded operand dimension {dim} is sliced to {size} of "
                f"{global_operand.shape[dim]} (the reference aborts: a sharded dimension must "
                "be sliced whole or to size 1)",
                op.location,
            )
        sizes[dim] = size // pieces
    return sizes


def _gather(b, op, operand, indices, local, sizes) -> Value:
    properties = {
        "dimension_numbers": op.properties["dimension_numbers"],
        "indices_are_sorted": op.properties.get("indices_are_sorted", RawAttr("false")),
        "slice_sizes": i64_array(sizes),
    }
    for key, value in op.properties.items():
        properties.setdefault(key, value)
    new = b.create("stablehlo.gather", [operand, indices], [local], properties)
    new.attributes = dict(op.attributes)
    return new.results[0]


def _local_indices_and_mask(b, indices, mesh, sharding, global_operand, operand, numbers, trivial):
    """`computeLocalIndicesAndMask` for a gather (indices clamped first)."""
    ivd = _scalar_field(numbers, "index_vector_dim")
    index_map = _field(numbers, "start_index_map")
    t = tensor_type(indices)
    element = t.element_type
    scalar = TensorType((), element)
    local_operand = tensor_type(operand)
    adjusted, mask = indices, None
    if any(d in index_map for d in trivial):
        base = _clamp(b, indices, global_operand, index_map, ivd)
        mins, maxs = [], []
        for dim in index_map:
            if dim not in trivial:
                mins.append(_constant(b, 0, scalar))
                maxs.append(_constant(b, global_operand.shape[dim] - 1, scalar))
                continue
            shard = local_operand.shape[dim]
            offset = b.dimension_offset(mesh, sharding.dim_shardings[dim].axes, shard)
            offset = b.value("stablehlo.convert", [offset], scalar)
            mins.append(offset)
            last = _constant(b, shard - 1, scalar)
            maxs.append(b.value("stablehlo.add", [offset, last], scalar))
        low = _bounds_tensor(b, mins, t, ivd)
        high = _bounds_tensor(b, maxs, t, ivd)
        adjusted = b.value("stablehlo.subtract", [base, low], t)
        pred = TensorType(t.shape, "i1")
        ge = _compare(b, base, low, "GE", pred)
        le = _compare(b, base, high, "LE", pred)
        mask = b.value("stablehlo.and", [ge, le], pred)
    partition_mask = None
    for dim in trivial:
        if dim in index_map:
            continue
        offset = b.dimension_offset(
            mesh, sharding.dim_shardings[dim].axes, local_operand.shape[dim]
        )
        zero = _constant(b, 0, TensorType((), I64))
        eq = _compare(b, offset, zero, "EQ", TensorType((), "i1"))
        partition_mask = (
            eq
            if partition_mask is None
            else b.value("stablehlo.and", [partition_mask, eq], TensorType((), "i1"))
        )
    if partition_mask is not None:
        if mask is not None:
            spread = b.value(
                "stablehlo.broadcast_in_dim",
                [partition_mask],
                mask.type,
                broadcast_dimensions=i64_array([]),
            )
            mask = b.value("stablehlo.and", [mask, spread], mask.type)
        else:
            mask = partition_mask
    return adjusted, mask


def _compare(b, lhs, rhs, direction: str, result: TensorType) -> Value:
    return b.value(
        "stablehlo.compare",
        [lhs, rhs],
        result,
        comparison_direction=RawAttr(f"#stablehlo<comparison_direction {direction}>"),
    )


def _clamp(b, indices, global_operand, index_map, ivd) -> Value:
    """`clampGatherIndices`: indices within [0, global size - 1] of their dims."""
    t = tensor_type(indices)

    def like(values: list[int]) -> Value:
        if ivd < t.rank and len(values) > 1:
            vector = TensorType((len(values),), t.element_type)
            const = b.constant(dense_text(values, [len(values)], t.element_type), vector)
            return b.value(
                "stablehlo.broadcast_in_dim", [const], t, broadcast_dimensions=i64_array([ivd])
            )
        return _constant(b, values[0], t)

    low = like([0])
    high = like([global_operand.shape[d] - 1 for d in index_map])
    return b.value("stablehlo.clamp", [low, indices, high], t)


def _bounds_tensor(b, bounds: list[Value], t: TensorType, ivd: int) -> Value:
    if ivd >= t.rank or t.shape[ivd] == 1:
        return b.value(
            "stablehlo.broadcast_in_dim", [bounds[0]], t, broadcast_dimensions=i64_array([])
        )
    one = TensorType((1,), t.element_type)
    pieces = [b.value("stablehlo.reshape", [v], one) for v in bounds]
    joined = b.value(
        "stablehlo.concatenate",
        pieces,
        TensorType((len(bounds),), t.element_type),
        dimension=RawAttr("0 : i64"),
    )
    return b.value("stablehlo.broadcast_in_dim", [joined], t, broadcast_dimensions=i64_array([ivd]))


def _masked(b, gather: Value, mask: Value, numbers: str, local: TensorType) -> Value:
    ivd = _scalar_field(numbers, "index_vector_dim")
    mask_type = tensor_type(mask)
    if mask_type.rank > 0 and ivd < mask_type.rank:
        shape = [s for i, s in enumerate(mask_type.shape) if i != ivd]
        init = _constant(b, True, TensorType((), "i1"))
        reduce = b.create(
            "stablehlo.reduce",
            [mask, init],
            [TensorType(tuple(shape), "i1")],
            {"dimensions": i64_array([ivd])},
        )
        _and_body(b, reduce)
        mask = reduce.results[0]
        mask_type = tensor_type(mask)
    offset_dims = _field(numbers, "offset_dims")
    if mask_type.rank == 0:
        dims: list[int] = []
    else:
        dims = [i for i in range(local.rank) if i not in offset_dims]
    spread = b.value(
        "stablehlo.broadcast_in_dim",
        [mask],
        TensorType(local.shape, "i1"),
        broadcast_dimensions=i64_array(dims),
    )
    zero = _constant(b, 0, local)
    return b.value("stablehlo.select", [spread, gather, zero], local)


def _and_body(b: OpBuilder, op: Op) -> None:
    scalar = TensorType((), "i1")
    block = Block()
    loc, loc_text = b.anchor.location, b.anchor.loc_text
    # The region's arguments are where the op is (as MLIR builds them in the reference).
    for _ in range(2):
        block.add_arg(scalar, location=loc, loc_text=loc_text)
    conj = Op("stablehlo.and", list(block.args), [scalar], location=loc, loc_text=loc_text)
    block.append(conj)
    block.append(Op("stablehlo.return", [conj.results[0]], location=loc, loc_text=loc_text))
    op.add_region(Region([block]))


def _check_all_reduce(op: Op, axes) -> None:
    users = op.results[0].users
    if len(op.results[0].uses) != 1 or users[0].name != "sdy.all_reduce":
        raise VerifyError(
            "Expected the gather to have one user and the user is an sdy.all_reduce (the "
            "reference aborts)",
            op.location,
        )
    if tuple(parse_axis_ref_list(users[0].properties["reduction_axes"])) != tuple(axes):
        raise VerifyError(
            "The axes of the sdy.all_reduce should match the sharded collapsed operand "
            "dimensions of the gather (the reference aborts)",
            op.location,
        )
