"""The halo-exchange path of `sdy-resolve-permutation-factors` for ``stablehlo.reverse``.

Shardy's `handleReverseOp` (jaxlib 0.10.2): a reverse whose reversed dims are sharded keeps its
sharding; instead the operand is resharded onto a copy of the mesh whose device order is
reversed along those dims' axes (``@<mesh>_reversed``, added at the top of the module), so that
each device reverses its own shard. A reversed dim that the shard count does not divide is
first padded at the high end and the padding moved to the low end by a halo exchange (a
``sdy.manual_computation`` over that dim's axes: each device sends its last ``padding``
elements to the next one with ``stablehlo.collective_permute``); the result is sliced back.

| reversed dims' sharding | rewrite |
| --- | --- |
| operand unsharded, maximal or inline mesh, no reversed dim sharded | none |
| divisible | reshard to the reversed mesh, reverse |
| non-divisible, padding <= one shard | pad, halo exchange, reshard, reverse, slice |
| non-divisible, padding > one shard | none here: the caller replicates the dims |
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import cast

from shardwise.axis import AxisRef
from shardwise.ir import (
    Block,
    Module,
    Op,
    RawAttr,
    Region,
    SymbolTable,
    TensorType,
    Value,
    string_attr,
)
from shardwise.mesh import Mesh, MeshAxis
from shardwise.rules.stablehlo_attrs import parse_i64_array
from shardwise.sdy.shardings import get_sharding
from shardwise.sharding import DimensionSharding, ManualAxes, TensorSharding, TensorShardingPerValue

__all__ = ["ReverseRewriter"]


def _coordinates(index: int, axes: tuple[MeshAxis, ...]) -> list[int]:
    """A linear device index as mesh coordinates (the last axis is minor)."""
    coords = [0] * len(axes)
    for j in range(len(axes) - 1, -1, -1):
        coords[j] = index % axes[j].size
        index //= axes[j].size
    return coords


def _linear(coords: list[int], axes: tuple[MeshAxis, ...]) -> int:
    index, multiplier = 0, 1
    for j in range(len(axes) - 1, -1, -1):
        index += coords[j] * multiplier
        multiplier *= axes[j].size
    return index


def _axis_position(axis: AxisRef, mesh: Mesh) -> tuple[int, int, int]:
    """(mesh axis index, size of the (sub-)axis, stride of its coordinate in that axis)."""
    index = next(i for i, a in enumerate(mesh.axes) if a.name == axis.name)
    size = axis.size(mesh)
    return index, size, mesh.axes[index].size // (axis.pre_size * size)


def reversed_mesh(mesh: Mesh, axes: list[AxisRef]) -> Mesh:
    """`getMeshWithReversedAxes`: the device order flipped along each of `axes`."""
    total = 1
    for a in mesh.axes:
        total *= a.size
    original = list(mesh.device_ids) or list(range(total))
    device_ids = []
    for i in range(total):
        coords = _coordinates(i, mesh.axes)
        new = list(coords)
        for axis in axes:
            index, size, stride = _axis_position(axis, mesh)
            sub = (coords[index] // stride) % size
            new[index] += (size - 1 - 2 * sub) * stride
        device_ids.append(original[_linear(new, mesh.axes)])
    if device_ids == list(range(total)):
        device_ids = []  # iota: the default order, written without ids (as the reference does)
    return Mesh(mesh.axes, tuple(device_ids))


def right_shift_pairs(manual_mesh: Mesh, axes: list[AxisRef]) -> list[tuple[int, int]]:
    """`getRightShiftSourceTargetPairs`: each device and the next one along `axes` (major to
    minor, as the dim is split); the last device along them sends nowhere."""
    pairs = []
    total = 1
    for a in manual_mesh.axes:
        total *= a.size
    for i in range(total):
        coords = _coordinates(i, manual_mesh.axes)
        nxt = list(coords)
        carried = True
        for axis in reversed(axes):
            index, size, stride = _axis_position(axis, manual_mesh)
            if (coords[index] // stride) % size + 1 < size:
                nxt[index] += stride
                carried = False
                break
            nxt[index] -= (size - 1) * stride
        if not carried:
            pairs.append((i, _linear(nxt, manual_mesh.axes)))
    return pairs


@dataclass
class _Info:
    """`ReverseOpInfo`: axes to reverse, the manual (non-divisible) axes, the padded shape."""

    axes_to_reverse: list[AxisRef] = field(default_factory=list)
    manual_axes: set[str] = field(default_factory=set)
    padded_shape: list[int] = field(default_factory=list)


def _reverse_info(
    dims: tuple[int, ...], sharding: TensorSharding, mesh: Mesh, type: TensorType
) -> _Info | None:
    """`getReverseOpInfo`; None if some padding would exceed one shard."""
    info = _Info(padded_shape=list(type.shape))
    for dim, dim_sharding in enumerate(sharding.dim_shardings):
        count = dim_sharding.sharded_size(mesh)
        if dim not in dims or count <= 1:
            continue
        info.axes_to_reverse += dim_sharding.axes
        size = type.shape[dim]
        if size % count:
            info.manual_axes.update(a.name for a in dim_sharding.axes)
            padded = -(-size // count) * count
            info.padded_shape[dim] = padded
            if padded - size > padded // count:
                return None
    return info


def _local_sharding(sharding: TensorSharding, manual: set[str]) -> TensorSharding:
    """`getLocalSharding`: the manual axes taken out of every dim."""
    dims = tuple(
        DimensionSharding(tuple(a for a in d.axes if a.name not in manual), d.is_closed, d.priority)
        for d in sharding.dim_shardings
    )
    return TensorSharding(
        sharding.mesh_or_ref, dims, sharding.replicated_axes, sharding.unreduced_axes
    )


def _i64s(values: list[int]) -> RawAttr:
    return RawAttr("array<i64" + (": " + ", ".join(map(str, values)) if values else "") + ">")


def _set_arg_loc_text(arg: Value, loc_text: str | None) -> None:
    """The new block argument is located at the reverse (``body.addArgument(type, loc)``)."""
    arg.loc_text = loc_text


class ReverseRewriter:
    """`handleReverseOp` with the pass's mesh cache (existing meshes first)."""

    def __init__(self, module: Module, symbols: SymbolTable) -> None:
        self.module = module
        self.symbols = symbols
        self.meshes: dict[Mesh, str] = {}
        for op in module.top_level_ops("sdy.mesh"):
            mesh = op.get_attr("mesh")
            if isinstance(mesh, Mesh):
                self.meshes[mesh] = module.symbol_name(op) or ""

    def rewrite(self, op: Op) -> bool:
        """Returns False where Shardy falls back to replicating the permutation factors."""
        operand = op.operands[0]
        sharding = get_sharding(operand)
        if (
            sharding is None
            or sharding.is_fully_replicated
            or not isinstance(operand.type, TensorType)
        ):
            return True
        name = sharding.mesh_or_ref
        mesh = self.module.meshes().get(name) if isinstance(name, str) else None
        if not isinstance(mesh, Mesh) or mesh.is_maximal:
            return True  # an inline mesh has no symbol: Shardy finds no mesh either
        dims = parse_i64_array(op.properties["dimensions"])
        info = _reverse_info(dims, sharding, mesh, operand.type)
        if info is None:
            return False
        if not info.axes_to_reverse:
            return True
        self._rewrite(op, cast(str, name), mesh, sharding, dims, info)
        return True

    def _new(
        self,
        like: Op,
        name: str,
        operands: list[Value],
        type: TensorType,
        sharding: TensorSharding | None = None,
        **props: object,
    ) -> Op:
        """A new op `name` at `like`'s location, its one result sharded `sharding` (a
        reshard's own ``sharding``, else ``sdy.sharding``)."""
        attributes: dict[str, object] = {}
        if name == "sdy.reshard":
            props["sharding"] = sharding
        elif sharding is not None:
            attributes["sdy.sharding"] = TensorShardingPerValue((sharding,))
        return Op(
            name,
            operands,
            [type],
            properties=dict(props),
            attributes=attributes,
            location=like.location,
            loc_text=like.loc_text,
        )

    def _rewrite(
        self,
        op: Op,
        name: str,
        mesh: Mesh,
        sharding: TensorSharding,
        dims: tuple[int, ...],
        info: _Info,
    ) -> None:
        block = cast(Block, op.parent)
        operand = op.operands[0]
        original = cast(TensorType, operand.type)
        value = operand
        if info.manual_axes:
            value = self._pad_and_shift(op, operand, original, sharding, mesh, dims, info)
        mesh_name = self._mesh_symbol(
            op, reversed_mesh(mesh, info.axes_to_reverse), name + "_reversed"
        )
        target = TensorSharding(
            mesh_name, sharding.dim_shardings, sharding.replicated_axes, sharding.unreduced_axes
        )
        reshard = self._new(
            op, "sdy.reshard", [value], cast(TensorType, value.type), sharding=target
        )
        block.insert_before(op, reshard)
        op.set_operand(0, reshard.results[0])
        op.attributes["sdy.sharding"] = TensorShardingPerValue((sharding,))
        if not info.manual_axes:
            return
        result = op.results[0]
        result.type = value.type
        rank = original.rank
        trimmed = self._new(
            op, "stablehlo.slice", [result], original, sharding,
            start_indices=_i64s([0] * rank), limit_indices=_i64s(list(original.shape)),
            strides=_i64s([1] * rank),
        )  # fmt: skip
        block.insert_after(op, trimmed)
        result.replace_all_uses_with(trimmed.results[0], except_op=trimmed)

    def _mesh_symbol(self, like: Op, mesh: Mesh, base: str) -> str:
        """`getOrCreateMesh`: an equal mesh's name, else a new ``sdy.mesh`` first in the module."""
        found = self.meshes.get(mesh)
        if found is not None:
            return found
        mesh_op = Op(
            "sdy.mesh",
            properties={"sym_name": string_attr(base), "mesh": mesh},
            location=like.location,
            loc_text=like.loc_text,
        )
        self.module.body.insert(0, mesh_op)
        name = self.symbols.insert(mesh_op)
        self.meshes[mesh] = name
        return name

    def _pad_and_shift(
        self,
        op: Op,
        operand: Value,
        original: TensorType,
        sharding: TensorSharding,
        mesh: Mesh,
        dims: tuple[int, ...],
        info: _Info,
    ) -> Value:
        """Pad the non-divisible reversed dims at the high end, then move the padding to the
        low end with a halo exchange (`shiftPaddingToLow`)."""
        block = cast(Block, op.parent)
        element = original.element_type
        scalar = TensorType((), element)
        zero_text = "0.000000e+00" if element.startswith(("f", "bf")) else "0"
        zero = self._new(
            op, "stablehlo.constant", [], scalar, value=RawAttr(f"dense<{zero_text}> : {scalar}")
        )
        block.insert_before(op, zero)
        high = [p - s for p, s in zip(info.padded_shape, original.shape, strict=True)]
        shifts = [(d, h) for d, h in enumerate(high) if d in dims and h > 0]
        padded_type = TensorType(tuple(info.padded_shape), element)
        zeros = [0] * original.rank
        pad = self._new(
            op, "stablehlo.pad", [operand, zero.results[0]], padded_type, sharding,
            edge_padding_low=_i64s(zeros), edge_padding_high=_i64s(high),
            interior_padding=_i64s(zeros),
        )  # fmt: skip
        block.insert_before(op, pad)
        manual_mesh = Mesh(tuple(a for a in mesh.axes if a.name in info.manual_axes))
        local_shape = []
        for dim, dim_sharding in enumerate(sharding.dim_shardings):
            factor = 1
            for axis in dim_sharding.axes:
                if axis.name in info.manual_axes:
                    factor *= axis.size(mesh)
            local_shape.append(info.padded_shape[dim] // factor)
        computation = self._new(op, "sdy.manual_computation", [pad.results[0]], padded_type)
        computation.properties = {
            "in_shardings": TensorShardingPerValue((sharding,)),
            "out_shardings": TensorShardingPerValue((sharding,)),
            "manual_axes": ManualAxes(tuple(a.name for a in manual_mesh.axes)),
        }
        body = Block()
        computation.add_region(Region([body]))
        local: Value = body.add_arg(TensorType(tuple(local_shape), element), location=op.location)
        _set_arg_loc_text(local, op.loc_text)
        for dim, amount in shifts:
            local = self._shift_right(op, body, local, dim, amount, sharding, manual_mesh, info)
        ret = Op("sdy.return", [local], [], location=op.location, loc_text=op.loc_text)
        body.append(ret)
        block.insert_before(op, computation)
        return computation.results[0]

    def _shift_right(
        self,
        op: Op,
        body: Block,
        value: Value,
        dim: int,
        trailing: int,
        sharding: TensorSharding,
        manual_mesh: Mesh,
        info: _Info,
    ) -> Value:
        """`shiftDataRight`: each device's last `trailing` elements along `dim` go to the next
        device, which puts them in front of its leading elements."""
        local_type = cast(TensorType, value.type)
        shape = list(local_type.shape)
        rank = len(shape)
        local = _local_sharding(sharding, info.manual_axes)
        size = shape[dim]
        assert trailing <= size, "Padding exceeds single shard size"
        leading = size - trailing
        ones = [1] * rank

        def slice_of(start: int, stop: int) -> Value:
            starts = [start if d == dim else 0 for d in range(rank)]
            limits = [stop if d == dim else s for d, s in enumerate(shape)]
            part = tuple(stop - start if d == dim else s for d, s in enumerate(shape))
            new = self._new(
                op, "stablehlo.slice", [value], TensorType(part, local_type.element_type), local,
                start_indices=_i64s(starts), limit_indices=_i64s(limits), strides=_i64s(ones),
            )  # fmt: skip
            return body.append(new).results[0]

        halo = slice_of(leading, size) if leading > 0 else value
        axes = [a for a in sharding.dim_shardings[dim].axes if a.name in info.manual_axes]
        pairs = right_shift_pairs(manual_mesh, axes)
        pairs_text = "[" + ", ".join(f"[{a}, {b}]" for a, b in pairs) + "]"
        received = self._new(
            op, "stablehlo.collective_permute", [halo], cast(TensorType, halo.type), local,
            source_target_pairs=RawAttr(f"dense<{pairs_text}> : tensor<{len(pairs)}x2xi64>"),
        )  # fmt: skip
        body.append(received)
        if leading == 0:
            return received.results[0]
        data = slice_of(0, leading)
        concat = self._new(
            op, "stablehlo.concatenate", [received.results[0], data], local_type, local,
            dimension=RawAttr(f"{dim} : i64"),
        )  # fmt: skip
        return body.append(concat).results[0]
