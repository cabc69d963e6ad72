"""Building the StableHLO ops of the per-device program, in MLIR's generic form.

`OpBuilder` inserts every new op before one anchor op (the op being converted), the way a
conversion pattern's rewriter does, and returns the new op's first result. Attribute texts
are written in MLIR's canonical spelling (a dense attribute whose elements are all equal is a
splat), so a printout without MLIR's help still reads as MLIR's.

`shard_index` and `dimension_offset` are Shardy's `getShardIndex` / `getDimensionOffset` of
the jaxlib 0.10.2 build: the offset of this device's piece along one dimension is read from
a table indexed by ``stablehlo.partition_id``.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextvars import ContextVar

from shardwise.axis import AxisRef
from shardwise.errors import UnsupportedError, VerifyError
from shardwise.ir import DYNAMIC, Block, Op, RawAttr, Region, TensorType, Type, Value
from shardwise.mesh import Mesh
from shardwise.xla.replica_groups import replica_groups

__all__ = [
    "OpBuilder",
    "dense_text",
    "i64_array",
    "shard_index",
    "replica_groups_attr",
]

I64 = "i64"
CHANNEL_TYPE = 1  # kChannelHandleType: device to device


def i64_array(values: Sequence[int]) -> RawAttr:
    """``array<i64: 0, 2>`` (``array<i64>`` when empty)."""
    if not values:
        return RawAttr("array<i64>")
    return RawAttr("array<i64: " + ", ".join(str(v) for v in values) + ">")


def dense_text(values: Sequence[int], shape: Sequence[int], element_type: str = I64) -> str:
    """A dense integer attribute of `shape` holding `values` (row major), splat if uniform.

    >>> dense_text([0, 4, 1, 5], [2, 2])
    'dense<[[0, 4], [1, 5]]> : tensor<2x2xi64>'
    >>> dense_text([3, 3], [2])
    'dense<3> : tensor<2xi64>'
    """
    type_text = str(TensorType(tuple(shape), element_type))
    if values and all(v == values[0] for v in values):
        return f"dense<{values[0]}> : {type_text}"

    def nest(flat: Sequence[int], dims: Sequence[int]) -> str:
        if not dims:
            return str(flat[0])
        step = len(flat) // dims[0] if dims[0] else 0
        parts = [nest(flat[i * step : (i + 1) * step], dims[1:]) for i in range(dims[0])]
        return "[" + ", ".join(parts) + "]"

    return f"dense<{nest(list(values), list(shape))}> : {type_text}"


def replica_groups_attr(mesh: Mesh, axes: Sequence[AxisRef]) -> tuple[RawAttr, int]:
    """Shardy's `getReplicaGroups` as a dense ``[num_groups, group_size]`` attribute, and the
    group size."""
    groups = replica_groups(mesh, list(axes))
    flat = [d for group in groups.groups for d in group]
    shape = [groups.num_groups, groups.group_size]
    return RawAttr(dense_text(flat, shape)), groups.group_size


def channel_handle(handle: int) -> RawAttr:
    return RawAttr(f"#stablehlo.channel_handle<handle = {handle}, type = {CHANNEL_TYPE}>")


def shard_index(device: int, mesh: Mesh, axes: Sequence[AxisRef]) -> int:
    """`getShardIndex` (jaxlib 0.10.2): the index of `device`'s piece along a dim sharded by
    `axes`.

    The coordinate of a (sub-)axis is ``logical_id / (stride * pre_size) % size``, where
    `stride` is the product of the sizes of the mesh axes after the axis. This is the
    reference's formula as built, including for sub-axes.
    """
    logical = mesh.device_ids.index(device) if mesh.device_ids else device
    index = 0
    for axis in axes:
        size = axis.size(mesh)
        stride = 1
        found = False
        for mesh_axis in mesh.axes:
            if found:
                stride *= mesh_axis.size
            if mesh_axis.name == axis.name:
                found = True
        # `shardwise partition` (extended.py): a sub-axis's coordinate counts the minor
        # parts of its axis after it, not the major ones before it (`pre_size`).
        within = mesh.axis_size(axis.name) // (axis.pre_size * size) if SUB_AXES.get() else 0
        coordinate = (logical // (stride * (within or axis.pre_size))) % size
        index = index * size + coordinate
    return index


# True while `shardwise partition` converts (`extended.sub_axis_offsets`).
SUB_AXES: ContextVar[bool] = ContextVar("shardwise_sub_axis_offsets", default=False)


class OpBuilder:
    """Creates ops before `anchor`, with its location (a conversion pattern's rewriter)."""

    def __init__(self, anchor: Op) -> None:
        self.anchor = anchor

    def create(
        self,
        name: str,
        operands: Sequence[Value],
        result_types: Sequence[Type],
        properties: dict[str, object] | None = None,
        regions: Sequence[Region] = (),
    ) -> Op:
        op = Op(
            name,
            list(operands),
            list(result_types),
            dict(properties or {}),
            location=self.anchor.location,
            loc_text=self.anchor.loc_text,
            regions=list(regions),
        )
        block = self.anchor.parent
        assert block is not None
        block.insert_before(self.anchor, op)
        return op

    def value(self, name: str, operands: Sequence[Value], result: Type, **props: object) -> Value:
        return self.create(name, operands, [result], props).results[0]

    # -- shape ops --------------------------------------------------------------------------

    def reshape(self, value: Value, shape: Sequence[int]) -> Value:
        if DYNAMIC in _shape(value) or DYNAMIC in shape:
            raise UnsupportedError(
                f"'{self.anchor.name}' on a dynamically shaped tensor ({value.type}): its "
                "per-device form reshapes the tensor, which needs static dimensions",
                self.anchor.location,
            )
        return self.value("stablehlo.reshape", [value], _like(value, shape))

    def transpose(self, value: Value, permutation: Sequence[int]) -> Value:
        shape = [_shape(value)[p] for p in permutation]
        return self.value(
            "stablehlo.transpose",
            [value],
            _like(value, shape),
            permutation=i64_array(permutation),
        )

    def constant(self, text: str, type: TensorType) -> Value:
        return self.value("stablehlo.constant", [], type, value=RawAttr(text))

    def i64_scalar(self, value: int) -> Value:
        return self.constant(f"dense<{value}> : tensor<i64>", TensorType((), I64))

    def dynamic_slice(self, value: Value, starts: Sequence[Value], sizes: Sequence[int]) -> Value:
        return self.value(
            "stablehlo.dynamic_slice",
            [value, *starts],
            _like(value, sizes),
            slice_sizes=i64_array(sizes),
        )

    # -- per-device offsets -----------------------------------------------------------------

    def dimension_offset(self, mesh: Mesh, axes: Sequence[AxisRef], shard_size: int) -> Value:
        """`getDimensionOffset`: a scalar i64 holding this device's offset along one dim."""
        scalar = TensorType((), I64)
        partition = self.value("stablehlo.partition_id", [], TensorType((), "ui32"))
        partition = self.value("stablehlo.convert", [partition], scalar)
        devices = mesh.total_size
        table = [shard_index(d, mesh, axes) * shard_size for d in range(devices)]
        table_value = self.constant(dense_text(table, [devices]), TensorType((devices,), I64))
        entry = self.dynamic_slice(table_value, [partition], [1])
        return self.reshape(entry, [])

    def slice_for_axes(
        self,
        value: Value,
        mesh: Mesh,
        axes_per_dim: Sequence[Sequence[AxisRef]],
        local: TensorType,
    ) -> Value:
        """`emitDynamicSliceForAxes`: this device's piece of `value`, of type `local`."""
        if not local.is_static:
            raise VerifyError(
                f"'{self.anchor.name}': its per-device piece {local} has a dynamic dimension, "
                "which a dynamic_slice cannot take (the reference fails: 'has negative size "
                "index to dynamic slice')",
                self.anchor.location,
            )
        starts = []
        for dim, axes in enumerate(axes_per_dim[: local.rank]):
            if not axes:
                starts.append(self.i64_scalar(0))
            else:
                starts.append(self.dimension_offset(mesh, axes, local.shape[dim]))
        return self.dynamic_slice(value, starts, local.shape)

    # -- collectives ------------------------------------------------------------------------

    def add_reduction_body(self, op: Op, element_type: str) -> None:
        """`buildReduceBody<AddOp>`: ``^bb0(%a, %b): return %a + %b`` over scalars."""
        scalar = TensorType((), element_type)
        block = Block()
        loc, loc_text = self.anchor.location, self.anchor.loc_text
        # The region's arguments are where the op is (as MLIR builds them in the reference).
        for _ in range(2):
            block.add_arg(scalar, location=loc, loc_text=loc_text)
        add = Op("stablehlo.add", list(block.args), [scalar], location=loc, loc_text=loc_text)
        block.append(add)
        ret = Op("stablehlo.return", [add.results[0]], location=loc, loc_text=loc_text)
        block.append(ret)
        op.add_region(Region([block]))


def _shape(value: Value) -> tuple[int, ...]:
    assert isinstance(value.type, TensorType), value.type
    return value.type.shape


def _like(value: Value, shape: Sequence[int]) -> TensorType:
    assert isinstance(value.type, TensorType), value.type
    return TensorType(tuple(shape), value.type.element_type)
