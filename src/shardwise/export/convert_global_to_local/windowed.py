"""Patterns for StableHLO ops with windows, padding and feature groups.

| op                                      | per-device program                                 |
| --------------------------------------- | -------------------------------------------------- |
| `stablehlo.pad`                         | offsets equal on every device: a local pad; else a |
|                                         | pad wide enough for every device, then a           |
|                                         | `dynamic_slice` at this device's offsets           |
| `stablehlo.convolution`                 | a local convolution with feature/batch group       |
|                                         | counts divided by their dims' sharding             |
| `stablehlo.reduce_window`,              | local (a sharded dim must be pass-through: window  |
| `stablehlo.select_and_scatter`          | 1, stride 1, no padding)                           |
| `stablehlo.gather`                      | local; sharded operands in `gather`                |
| `stablehlo.scatter`                     | local; sharded inputs or updates in `scatter`      |
"""

from __future__ import annotations

import re

from shardwise.axis import AxisRef, sort_and_merge_axes
from shardwise.errors import UnsupportedError, VerifyError
from shardwise.export.collective_attrs import parse_axis_ref_list
from shardwise.export.convert_global_to_local.builder import (
    I64,
    OpBuilder,
    dense_text,
    i64_array,
    shard_index,
)
from shardwise.export.convert_global_to_local.gather import sharded_gather
from shardwise.export.convert_global_to_local.ops import generic
from shardwise.export.convert_global_to_local.scatter import scatter
from shardwise.export.convert_global_to_local.state import ConversionState
from shardwise.ir import Op, RawAttr, TensorType
from shardwise.mesh import Mesh
from shardwise.sharding import TensorSharding

__all__ = ["WINDOWED_PATTERNS"]

_INT_RE = re.compile(r"-?\d+")


def _ints(attr: object) -> list[int]:
    """The integers of an ``array<i64: ...>`` or ``dense<...>`` attribute, in order."""
    text = str(attr)
    if text.startswith("array<"):
        text = text.partition(":")[2]
    else:
        text = text[: text.rindex(":")] if ":" in text else text
    return [int(v) for v in _INT_RE.findall(text)]


def _replicated(sharding: TensorSharding | None) -> bool:
    return sharding is None or sharding.is_fully_replicated


def _axes(sharding: TensorSharding | None, dim: int) -> tuple[AxisRef, ...]:
    if sharding is None or dim >= len(sharding.dim_shardings):
        return ()
    return sharding.dim_shardings[dim].axes


def _size(axes, mesh: Mesh) -> int:
    size = 1
    for axis in axes:
        size *= axis.size(mesh)
    return size


# -- pad --------------------------------------------------------------------------------------


def pad(state: ConversionState, op: Op) -> None:
    in_sharding = state.sharding(op.operands[0])
    out_sharding = state.sharding(op.results[0])
    if _replicated(in_sharding):
        if not _replicated(out_sharding):
            raise VerifyError(
                "'stablehlo.pad' of a replicated operand with a sharded result (the reference "
                "aborts: the pad should be followed by a reshard instead)",
                op.location,
            )
        generic(state, op)
        return
    assert in_sharding is not None
    if out_sharding is None:
        raise UnsupportedError(
            "'stablehlo.pad' of a sharded operand with an unsharded result (the reference "
            "crashes on it)",
            op.location,
        )
    mesh = state.require_mesh(in_sharding, op)
    offsets = _pad_offsets(state, op, in_sharding, out_sharding, mesh)
    interior = _ints(op.properties["interior_padding"])
    local = state.local_tensor_type(op.results[0], op)
    value, padding_value = state.operands(op)
    local_in = value.type
    assert isinstance(local_in, TensorType)
    b = OpBuilder(op)
    expanded = [(s - 1) * (p + 1) + 1 for s, p in zip(local_in.shape, interior, strict=True)]
    if all(len(set(row)) == 1 for row in offsets):
        low = [row[0] for row in offsets]
        high = [r - (e + lo) for r, e, lo in zip(local.shape, expanded, low, strict=True)]
        new = b.value(
            "stablehlo.pad", [value, padding_value], local, **_pad_props(low, high, interior)
        )
        state.replace(op, [new])
        return
    low = [max(0, max(row)) for row in offsets]
    high = [
        max(0, r - min(row) - e) for r, row, e in zip(local.shape, offsets, expanded, strict=True)
    ]
    safe_shape = [lo + e + hi for lo, e, hi in zip(low, expanded, high, strict=True)]
    safe = b.value(
        "stablehlo.pad",
        [value, padding_value],
        TensorType(tuple(safe_shape), local.element_type),
        **_pad_props(low, high, interior),
    )
    scalar = TensorType((), I64)
    partition = b.value("stablehlo.partition_id", [], TensorType((), "ui32"))
    partition = b.value("stablehlo.convert", [partition], scalar)
    starts = []
    for lo, row in zip(low, offsets, strict=True):
        table = [lo - o for o in row]
        if len(set(row)) == 1:
            starts.append(b.i64_scalar(table[0]))
            continue
        values = b.constant(dense_text(table, [len(table)]), TensorType((len(table),), I64))
        starts.append(b.reshape(b.dynamic_slice(values, [partition], [1]), []))
    state.replace(op, [b.dynamic_slice(safe, starts, local.shape)])


def _pad_props(low: list[int], high: list[int], interior: list[int]) -> dict[str, object]:
    return {
        "edge_padding_high": i64_array(high),
        "edge_padding_low": i64_array(low),
        "interior_padding": i64_array(interior),
    }


def _pad_offsets(
    state: ConversionState,
    op: Op,
    in_sharding: TensorSharding,
    out_sharding: TensorSharding,
    mesh: Mesh,
) -> list[list[int]]:
    """Per dim and device: where the device's input data starts in its output piece."""
    global_in = state.global_type(op.operands[0])
    global_out = op.results[0].type
    assert isinstance(global_in, TensorType) and isinstance(global_out, TensorType)
    low = _ints(op.properties["edge_padding_low"])
    interior = _ints(op.properties["interior_padding"])
    offsets = []
    for dim in range(global_in.rank):
        in_axes, out_axes = _axes(in_sharding, dim), _axes(out_sharding, dim)
        if in_axes != out_axes:
            raise VerifyError(
                f"'stablehlo.pad': dimension {dim} has mismatched sharding axes (the reference "
                "aborts: 'This requires a reshard collective which should have been handled "
                "by previous passes')",
                op.location,
            )
        pieces = _size(in_axes, mesh) if in_axes else 1
        size_in = global_in.shape[dim] // pieces
        size_out = global_out.shape[dim] // pieces
        row = []
        for device in range(mesh.total_size):
            k_in = shard_index(device, mesh, in_axes)
            k_out = shard_index(device, mesh, out_axes)
            row.append(k_in * size_in * (interior[dim] + 1) + low[dim] - k_out * size_out)
        offsets.append(row)
    return offsets


# -- convolution ------------------------------------------------------------------------------

_CONV_RE = re.compile(r"\[([^\]]*)\]x\[([^\]]*)\]->\[([^\]]*)\]")


def convolution(state: ConversionState, op: Op) -> None:
    lhs_sharding = state.sharding(op.operands[0])
    rhs_sharding = state.sharding(op.operands[1])
    out_sharding = state.sharding(op.results[0])
    if all(_replicated(s) for s in (lhs_sharding, rhs_sharding, out_sharding)):
        generic(state, op)
        return
    mesh = None
    for sharding in (lhs_sharding, rhs_sharding, out_sharding):
        mesh = state.mesh(sharding)
        if mesh is not None:
            break
    if mesh is None:
        raise VerifyError("'stablehlo.convolution' op failed to resolve mesh", op.location)
    m = _CONV_RE.search(str(op.properties["dimension_numbers"]))
    if m is None:
        raise UnsupportedError("'stablehlo.convolution': unreadable dimension numbers", op.location)
    lhs_labels = [x.strip() for x in m.group(1).split(",")]
    kernel = [x.strip() for x in m.group(2).split(",")]
    spatial = sorted((int(x), i) for i, x in enumerate(kernel) if x.isdigit())
    reduction_dims = [kernel.index("i")] + [i for _, i in spatial]
    reduction: list[AxisRef] = []
    for dim in reduction_dims:
        for axis in _axes(rhs_sharding, dim):
            if axis not in reduction:
                reduction.append(axis)
    if reduction:
        _check_all_reduce(op, sort_and_merge_axes(reduction, mesh, mesh.axis_key))
    feature = _local_group_count(
        op, "feature_group_count", _axes(rhs_sharding, kernel.index("o")), mesh
    )
    batch = _local_group_count(
        op, "batch_group_count", _axes(lhs_sharding, lhs_labels.index("b")), mesh
    )
    properties = dict(op.properties)
    properties["feature_group_count"] = RawAttr(f"{feature} : i64")
    properties["batch_group_count"] = RawAttr(f"{batch} : i64")
    local = state.local_tensor_type(op.results[0], op)
    new = OpBuilder(op).create("stablehlo.convolution", state.operands(op), [local], properties)
    state.replace(op, new.results)


def _check_all_reduce(op: Op, axes: list[AxisRef]) -> None:
    users = op.results[0].users
    if len(op.results[0].uses) != 1 or users[0].name != "sdy.all_reduce":
        raise VerifyError(
            "Expected sharded contracting convolution to have one user and the user is an "
            "sdy.all_reduce (the reference aborts)",
            op.location,
        )
    if tuple(parse_axis_ref_list(users[0].properties["reduction_axes"])) != tuple(axes):
        raise VerifyError(
            "The axes of the sdy.all_reduce should match the sharded reduction dimensions of "
            "the convolution (the reference aborts)",
            op.location,
        )


def _local_group_count(op: Op, name: str, axes, mesh: Mesh) -> int:
    """`getLocalGroupCount`: the count divided by its dim's sharding (at most the count)."""
    attr = op.properties.get(name)
    count = int(str(attr).split(":")[0]) if attr is not None else 1
    if count <= 1 or not axes:
        return count
    divisor = min(count, _size(axes, mesh))
    if count % divisor:
        raise VerifyError(
            f"'stablehlo.convolution': {name} {count} is not divisible by the size "
            f"{divisor} of the axes sharding its dimension (the reference aborts)",
            op.location,
        )
    return count // divisor


# -- reduce_window, select_and_scatter --------------------------------------------------------


def windowed(state: ConversionState, op: Op) -> None:
    sharding = state.sharding(op.operands[0])
    if not _replicated(sharding):
        assert sharding is not None
        mesh = state.require_mesh(sharding, op)
        padding = op.properties.get("padding")
        pads = _ints(padding) if padding is not None else []
        if len(pads) == 1:  # a splat: dense<0> : tensor<Rx2xi64>
            pads = pads * (2 * len(sharding.dim_shardings))
        windows = (
            _ints(op.properties["window_dimensions"])
            if "window_dimensions" in op.properties
            else []
        )
        strides = (
            _ints(op.properties["window_strides"]) if "window_strides" in op.properties else []
        )
        for dim, d in enumerate(sharding.dim_shardings):
            if not d.axes or _size(d.axes, mesh) <= 1:
                continue
            passthrough = not pads or (pads[2 * dim] == 0 and pads[2 * dim + 1] == 0)
            passthrough = passthrough and (not strides or strides[dim] == 1)
            passthrough = passthrough and (not windows or windows[dim] == 1)
            if not passthrough:
                raise UnsupportedError(
                    f"In op {op.name} dimension {dim} is sharded but is not a pass-through "
                    "dimension (window 1, stride 1, no padding); the reference aborts",
                    op.location,
                )
    generic(state, op)


# -- gather, scatter --------------------------------------------------------------------------


def gather(state: ConversionState, op: Op) -> None:
    sharding = state.sharding(op.operands[0])
    if _replicated(sharding):
        generic(state, op)
        return
    assert sharding is not None
    sharded_gather(state, op, sharding)


WINDOWED_PATTERNS = {
    "stablehlo.convolution": convolution,
    "stablehlo.gather": gather,
    "stablehlo.pad": pad,
    "stablehlo.reduce_window": windowed,
    "stablehlo.scatter": scatter,
    "stablehlo.select_and_scatter": windowed,
}
