"""`stablehlo.scatter` with sharded inputs or updates (Shardy's `StablehloScatterOpPattern`).

Updates sharded on a batch dim the inputs do not share (reduction axes): only the leader of
each reduction group (shard index 0 on those axes) keeps its inputs, the others start from the
reduction's identity, so the `sdy.all_reduce` after the scatter counts the inputs once. Inputs
sharded on an indexed dim: the indices are made local (minus this device's offset); an index
outside the piece is out of bounds locally, which a scatter skips.

Beyond the reference (``ConversionOptions.beyond_reference``), no local index is left out of
bounds: StableHLO leaves an out-of-bounds scatter implementation-defined, and XLA's CPU
backend does not skip such a window when the scatter's operand is a `dynamic_slice` (this
device's piece of a replicated value: fuzz --check 2030-127-4, every piece took another
element). Each local input gets, along each indexed dim, a spare window at the high end; an
index component outside ``[0, local size - window size]`` points into it, and the results are
sliced back (`_spare_window`).
"""

from __future__ import annotations

from shardwise.errors import VerifyError
from shardwise.export.convert_global_to_local.builder import I64, OpBuilder, i64_array, shard_index
from shardwise.export.convert_global_to_local.gather import (
    _bounds_tensor,
    _constant,
    _field,
    _scalar_field,
    tensor_type,
)
from shardwise.export.convert_global_to_local.ops import generic
from shardwise.export.convert_global_to_local.state import ConversionState
from shardwise.ir import Op, RawAttr, TensorType, Value
from shardwise.mesh import Mesh
from shardwise.sharding import TensorSharding

__all__ = ["scatter"]

_IDENTITIES = {
    "stablehlo.add": 0,
    "stablehlo.or": 0,
    "stablehlo.and": 1,
    "stablehlo.multiply": 1,
}
# The identities of max/min (the lowest/highest finite value) as MLIR prints them.
_EXTREMES = {
    "f32": ("-3.40282347E+38", "3.40282347E+38"),
    "f64": ("-1.7976931348623157E+308", "1.7976931348623157E+308"),
    "i8": ("-128", "127"),
    "i16": ("-32768", "32767"),
    "i32": ("-2147483648", "2147483647"),
    "i64": ("-9223372036854775808", "9223372036854775807"),
}


def _replicated(sharding: TensorSharding | None) -> bool:
    return sharding is None or sharding.is_fully_replicated


def scatter(state: ConversionState, op: Op) -> None:
    count = len(op.operands) // 2  # inputs..., indices, updates...
    inputs, updates = op.operands[:count], op.operands[count + 1 :]
    in_sharding, up_sharding = state.sharding(inputs[0]), state.sharding(updates[0])
    if _replicated(in_sharding) and _replicated(up_sharding):
        generic(state, op)
        return
    mesh = state.mesh(in_sharding if in_sharding is not None else up_sharding)
    if mesh is None:
        raise VerifyError("'stablehlo.scatter' failed to resolve mesh.", op.location)
    numbers = str(op.properties["scatter_dimension_numbers"])
    reduction = _reduction_axes(state, op, numbers, up_sharding, in_sharding)
    if not reduction and _replicated(in_sharding):
        generic(state, op)
        return
    operands = state.operands(op)
    local_inputs = operands[:count]
    b = OpBuilder(op)
    if reduction:
        local_inputs = _leader_inputs(b, op, local_inputs, mesh, reduction)
    indexed = _indexed_dims(state, op, numbers, in_sharding, mesh)
    if not indexed and not reduction:
        generic(state, op)
        return
    indices = operands[count]
    updates = operands[count + 1 :]
    if _replicated(in_sharding):
        _local_scatter(state, b, op, local_inputs, indices, updates)
        return
    assert in_sharding is not None
    indices = _local_indices(b, op, indices, mesh, in_sharding, local_inputs[0], numbers, indexed)
    if not state.options.beyond_reference:
        _local_scatter(state, b, op, local_inputs, indices, updates)
        return
    _spare_window(state, b, op, local_inputs, indices, updates, numbers)


def _reduction_axes(state, op, numbers, up_sharding, in_sharding):
    """`getScatterReductionAxes`: axes of update batch dims that do not shard the inputs."""
    if _replicated(up_sharding):
        return []
    window = _field(numbers, "update_window_dims")
    rank = state.global_type(op.operands[len(op.operands) // 2 + 1]).rank
    operand_axes = (
        [] if _replicated(in_sharding) else [a for d in in_sharding.dim_shardings for a in d.axes]
    )
    axes = []
    for dim in range(rank):
        if dim in window:
            continue
        for axis in up_sharding.dim_shardings[dim].axes:
            if axis not in operand_axes:
                axes.append(axis)
    return axes


def _identity(op: Op, element_type: str) -> str | None:
    """`getScatterReductionIdentity` as the text of a scalar dense attribute, or None."""
    name = _common_reduction(op)
    if name is None:
        return None
    if name in ("stablehlo.maximum", "stablehlo.minimum"):
        extremes = _EXTREMES.get(element_type)
        if extremes is None:
            return None
        return extremes[0 if name == "stablehlo.maximum" else 1]
    value = _IDENTITIES[name]
    if element_type == "i1":
        return "true" if value else "false"
    if element_type.startswith(("f", "bf")):
        return "0.000000e+00" if value == 0 else "1.000000e+00"
    return str(value)


def _common_reduction(op: Op) -> str | None:
    """`getCommonSupportedReductionOp`: one binary op of the block's argument pairs."""
    if not op.regions or not op.regions[0].blocks:
        return None
    block = op.regions[0].entry
    count = len(op.operands) // 2
    if len(block.args) != 2 * count or not block.ops or block.ops[-1].name != "stablehlo.return":
        return None
    ret = block.ops[-1]
    if len(ret.operands) != count:
        return None
    found = None
    for index, value in enumerate(ret.operands):
        cur = value.defining_op
        if cur is None or len(cur.operands) != 2 or not isinstance(value.type, TensorType):
            return None
        logical = value.type.element_type == "i1" and cur.name in ("stablehlo.and", "stablehlo.or")
        arithmetic = (
            "stablehlo.add",
            "stablehlo.multiply",
            "stablehlo.maximum",
            "stablehlo.minimum",
        )
        if not logical and cur.name not in arithmetic:
            return None
        if found is None:
            found = cur.name
        elif found != cur.name:
            return None
        expected = {block.args[index], block.args[index + count]}
        if set(cur.operands) != expected or cur.operands[0] is cur.operands[1]:
            return None
    return found


def _leader_inputs(b: OpBuilder, op: Op, inputs: list[Value], mesh: Mesh, reduction) -> list[Value]:
    first = tensor_type(inputs[0])
    identity = _identity(op, first.element_type)
    if identity is None:
        raise VerifyError(
            "'stablehlo.scatter' failed to get scatter reduction identity.", op.location
        )
    scalar = TensorType((), first.element_type)
    identity_value = b.constant(f"dense<{identity}> : {scalar}", scalar)
    devices = mesh.total_size
    leaders = ["true" if shard_index(d, mesh, reduction) == 0 else "false" for d in range(devices)]
    partition = b.value("stablehlo.partition_id", [], TensorType((), "ui32"))
    partition = b.value("stablehlo.convert", [partition], TensorType((), I64))
    table_type = TensorType((devices,), "i1")
    text = (
        f"dense<{leaders[0]}>" if len(set(leaders)) == 1 else "dense<[" + ", ".join(leaders) + "]>"
    )
    table = b.constant(f"{text} : {table_type}", table_type)
    leader = b.dynamic_slice(table, [partition], [1])
    leader = b.value(
        "stablehlo.broadcast_in_dim",
        [leader],
        TensorType(first.shape, "i1"),
        broadcast_dimensions=i64_array([0]),
    )
    spread = b.value(
        "stablehlo.broadcast_in_dim", [identity_value], first, broadcast_dimensions=i64_array([])
    )
    return [b.value("stablehlo.select", [leader, value, spread], value.type) for value in inputs]


def _indexed_dims(state, op, numbers, in_sharding, mesh) -> list[int]:
    if _replicated(in_sharding):
        return []
    to_operand = _field(numbers, "scatter_dims_to_operand_dims")
    inserted = _field(numbers, "inserted_window_dims")
    indexed = []
    for dim, d in enumerate(in_sharding.dim_shardings):
        if not d.axes:
            continue
        if dim in to_operand:
            indexed.append(dim)
        elif dim in inserted:
            raise VerifyError(
                f"'stablehlo.scatter' op sharding operand dimension {dim} that is not indexed "
                "but in inserted window dimension is not supported.",
                op.location,
            )
    return indexed


def _local_indices(b, op, indices, mesh, sharding, local_input, numbers, indexed) -> Value:
    """`computeLocalIndicesAndMask` without the mask: indices minus this piece's offset."""
    to_operand = _field(numbers, "scatter_dims_to_operand_dims")
    if not any(d in to_operand for d in indexed):
        return indices
    t = tensor_type(indices)
    ivd = _scalar_field(numbers, "index_vector_dim")
    scalar = TensorType((), t.element_type)
    mins = []
    for dim in to_operand:
        if dim not in indexed:
            mins.append(_constant(b, 0, scalar))
            continue
        offset = b.dimension_offset(
            mesh, sharding.dim_shardings[dim].axes, tensor_type(local_input).shape[dim]
        )
        mins.append(b.value("stablehlo.convert", [offset], scalar))
    low = _bounds_tensor(b, mins, t, ivd)
    return b.value("stablehlo.subtract", [indices, low], t)


def _spare_window(state, b, op, inputs, indices, updates, numbers) -> None:
    """The local scatter with every index in bounds (see the module docstring)."""
    local = tensor_type(inputs[0])
    to_operand = _field(numbers, "scatter_dims_to_operand_dims")
    dropped = set(_field(numbers, "inserted_window_dims"))
    dropped |= set(_field(numbers, "input_batching_dims"))
    window_dims = iter(_field(numbers, "update_window_dims"))
    update = tensor_type(updates[0])
    windows = [1 if d in dropped else update.shape[next(window_dims)] for d in range(local.rank)]
    t = tensor_type(indices)
    ivd = _scalar_field(numbers, "index_vector_dim")
    scalar = TensorType((), t.element_type)

    def per_component(values: list[int]) -> Value:
        return _bounds_tensor(b, [_constant(b, v, scalar) for v in values], t, ivd)

    low = per_component([0] * len(to_operand))
    high = per_component([local.shape[d] - windows[d] for d in to_operand])
    spare = per_component([local.shape[d] for d in to_operand])
    pred = TensorType(t.shape, "i1")
    above = b.value("stablehlo.compare", [low, indices], pred, comparison_direction=_LE)
    below = b.value("stablehlo.compare", [indices, high], pred, comparison_direction=_LE)
    inside = b.value("stablehlo.and", [above, below], pred)
    indices = b.value("stablehlo.select", [inside, indices, spare], t)
    grown = [windows[d] if d in to_operand else 0 for d in range(local.rank)]
    padded = [_pad_high(b, value, grown) for value in inputs]
    new = _scatter(b, op, padded, indices, updates, [v.type for v in padded])
    trimmed = [
        b.value(
            "stablehlo.slice",
            [value],
            TensorType(local.shape, tensor_type(value).element_type),
            start_indices=i64_array([0] * local.rank),
            limit_indices=i64_array(local.shape),
            strides=i64_array([1] * local.rank),
        )
        for value in new.results
    ]
    state.replace(op, trimmed)


_LE = RawAttr("#stablehlo<comparison_direction LE>")


def _pad_high(b: OpBuilder, value: Value, amounts: list[int]) -> Value:
    t = tensor_type(value)
    zero = _constant(b, 0, TensorType((), t.element_type))
    shape = tuple(s + a for s, a in zip(t.shape, amounts, strict=True))
    return b.value(
        "stablehlo.pad",
        [value, zero],
        TensorType(shape, t.element_type),
        edge_padding_low=i64_array([0] * t.rank),
        edge_padding_high=i64_array(amounts),
        interior_padding=i64_array([0] * t.rank),
    )


def _local_scatter(state, b, op, inputs, indices, updates) -> None:
    types = [state.local_type(r, op) for r in op.results]
    state.replace(op, _scatter(b, op, inputs, indices, updates, types).results)


def _scatter(b, op, inputs, indices, updates, types) -> Op:
    """A scatter like `op` on local values, with `types` for its results (the region moved)."""
    properties = {
        "indices_are_sorted": op.properties.get("indices_are_sorted", RawAttr("false")),
        "scatter_dimension_numbers": op.properties["scatter_dimension_numbers"],
        "unique_indices": op.properties.get("unique_indices", RawAttr("false")),
    }
    for key, value in op.properties.items():
        properties.setdefault(key, value)
    new = b.create("stablehlo.scatter", [*inputs, indices, *updates], types, properties)
    new.attributes = dict(op.attributes)
    new.add_region(op.regions.pop())
    return new
