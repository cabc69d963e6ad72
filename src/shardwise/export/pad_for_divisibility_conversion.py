"""The conversion state and padding helpers of `sdy-pad-for-divisibility`.

`Conversion` is what MLIR's dialect conversion keeps for the pass: the value mapping (old
result -> new value), the materialized casts, the ops to erase, and Shardy's `PaddingCache`
(values known to be padded with zeros or ones). New ops go before the op being rewritten, as
the conversion rewriter inserts them. The helpers are Shardy's `createPaddedValue`,
`ensurePadding` and the trimming slice of `AllGatherOpPattern`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import cast

from shardwise.errors import UnsupportedError
from shardwise.ir import DYNAMIC, Block, Op, RawAttr, TensorType, Type, Value
from shardwise.mesh import Mesh
from shardwise.sdy.shardings import get_sharding
from shardwise.sharding import TensorSharding, TensorShardingPerValue, resolve_mesh

__all__ = [
    "Conversion",
    "ONE",
    "ZERO",
    "constant",
    "ensure_padding",
    "i64s",
    "padded_type",
    "padded_value",
    "trim",
]

ZERO, ONE = "zero", "one"


def padded_type(type: Type, sharding: TensorSharding | None, meshes: Mapping[str, object]) -> Type:
    """`getPaddedType`: each sharded dim rounded up to a multiple of its shard count."""
    if not isinstance(type, TensorType) or sharding is None or sharding.is_fully_replicated:
        return type
    mesh = resolve_mesh(sharding, meshes)
    if mesh is None:
        return type
    shape = []
    for size, dim in zip(type.shape, sharding.dim_shardings, strict=True):
        count = dim.sharded_size(mesh)
        if size != DYNAMIC and count > 1 and size % count:
            size += count - size % count
        shape.append(size)
    return TensorType(tuple(shape), type.element_type) if tuple(shape) != type.shape else type


def i64s(values: Sequence[int]) -> RawAttr:
    return RawAttr("array<i64" + (": " + ", ".join(map(str, values)) if values else "") + ">")


def _tensor(value: Value) -> TensorType:
    return cast(TensorType, value.type)


class Conversion:
    """The dialect conversion's state for one func (see the module docstring)."""

    def __init__(self, meshes: Mapping[str, object]) -> None:
        self.meshes = meshes
        self.mapping: dict[Value, Value] = {}
        self.kinds: dict[Value, str] = {}
        self._casts: dict[tuple[int, str], Value] = {}
        self._replaced: list[Op] = []
        self.anchor: Op | None = None

    # -- legality and types ------------------------------------------------------------

    def padded(self, value: Value) -> Type:
        return padded_type(value.type, get_sharding(value), self.meshes)

    def is_legal_value(self, value: Value) -> bool:
        return self.padded(value) == value.type

    def is_legal_type(self, value: Value, sharding: object) -> bool:
        sharding = sharding if isinstance(sharding, TensorSharding) else None
        return padded_type(value.type, sharding, self.meshes) == value.type

    def mesh_of(self, sharding: TensorSharding) -> Mesh | None:
        mesh = sharding.mesh_or_ref
        found = mesh if isinstance(mesh, Mesh) else self.meshes.get(str(mesh))
        return found if isinstance(found, Mesh) else None

    # -- building ----------------------------------------------------------------------

    def insert(self, op: Op) -> Op:
        """Insert `op` before the op being rewritten."""
        assert self.anchor is not None and self.anchor.parent is not None
        self.anchor.parent.insert_before(self.anchor, op)
        return op

    def new_op(
        self,
        name: str,
        operands: list[Value],
        type: Type,
        like: Op,
        sharding: TensorSharding | None = None,
        **properties: object,
    ) -> Value:
        attributes = {}
        if sharding is not None:
            attributes["sdy.sharding"] = TensorShardingPerValue((sharding,))
        op = Op(
            name,
            operands,
            [type],
            properties=dict(properties),
            attributes=attributes,
            location=like.location,
            loc_text=like.loc_text,
        )
        return self.insert(op).results[0]

    def operand(self, value: Value) -> Value:
        """The adaptor's operand: the mapped value, cast to `value`'s own padded type."""
        repl = self.mapping.get(value, value)
        desired = self.padded(value)
        if repl.type == desired:
            return repl
        return self.cast(repl, desired, cast(Op, self.anchor))

    def cast(self, value: Value, type: Type, like: Op) -> Value:
        """An ``unrealized_conversion_cast`` right after `value`'s definition (one per type),
        located at `like`: the op being rewritten (an operand's cast) or the replaced op (a
        result's cast back)."""
        key = (id(value), str(type))
        found = self._casts.get(key)
        if found is not None:
            return found
        op = Op(
            "builtin.unrealized_conversion_cast",
            [value],
            [type],
            location=like.location,
            loc_text=like.loc_text,
        )
        definer = value.defining_op
        if definer is not None:
            assert definer.parent is not None
            definer.parent.insert_after(definer, op)
        else:
            cast(Block, value.owner).insert(0, op)
        self._casts[key] = op.results[0]
        return op.results[0]

    def replace(self, op: Op, values: Sequence[Value]) -> None:
        for old, new in zip(op.results, values, strict=True):
            self.mapping[old] = new
        self._replaced.append(op)

    def commit(self) -> None:
        """Give the remaining users the new values (cast back where the type changed), then
        erase the replaced ops."""
        replaced = {id(op) for op in self._replaced}
        for op in self._replaced:
            for old in op.results:
                new = self.mapping[old]
                for user, index in list(old.uses):
                    if id(user) in replaced:
                        continue
                    value = new if new.type == old.type else self.cast(new, old.type, op)
                    user.set_operand(index, value)
        for op in reversed(self._replaced):
            op.regions = []
            op.erase()


# -- padding helpers ----------------------------------------------------------------------


def constant(conv: Conversion, element_type: str, kind: str, like: Op) -> Value:
    """`createConstant`: a scalar zero or one of `element_type`."""
    if element_type == "i1":
        text = "false" if kind == ZERO else "true"
    elif element_type.startswith(("i", "ui", "si")):
        text = "0" if kind == ZERO else "1"
    elif element_type.startswith(("f", "bf")):
        text = "0.000000e+00" if kind == ZERO else "1.000000e+00"
    else:
        raise UnsupportedError(
            f"sdy-pad-for-divisibility: padding a tensor of {element_type} is not supported",
            like.location,
        )
    scalar = TensorType((), element_type)
    value = RawAttr(f"dense<{text}> : {scalar}")
    return conv.new_op("stablehlo.constant", [], scalar, like, value=value)


def located(value: Value, conv: Conversion) -> Op:
    """An op located where `value` is (`Value::getLoc`): its definer, or for a block argument
    a stand-in carrying the argument's location."""
    if value.defining_op is not None:
        return value.defining_op
    return Op("", location=value.location, loc_text=value.loc_text)


def padded_value(conv: Conversion, type: TensorType, value: Value, kind: str) -> Value:
    """`createPaddedValue`: ``stablehlo.pad`` at the high end with `kind`, with `value`'s
    sharding; the result is known to be padded with `kind`."""
    like = located(value, conv)
    original = _tensor(value)
    padding = constant(conv, type.element_type, kind, like)
    high = [p - o for p, o in zip(type.shape, original.shape, strict=True)]
    zeros = [0] * original.rank
    padded = conv.new_op(
        "stablehlo.pad",
        [value, padding],
        type,
        like,
        get_sharding(value),
        edge_padding_low=i64s(zeros),
        edge_padding_high=i64s(high),
        interior_padding=i64s(zeros),
    )
    conv.kinds[padded] = kind
    return padded


def ensure_padding(
    conv: Conversion, value: Value, original: TensorType, kind: str, dims: Sequence[int] | None
) -> Value:
    """`ensurePadding`: `value` with its padded region on `dims` (all if None) set to `kind`,
    by ``select`` over an iota mask, unless it is known to be padded with `kind` already."""
    padded = _tensor(value)
    if padded == original or conv.kinds.get(value) == kind:
        return value
    like = cast(Op, conv.anchor)
    iota_type = TensorType(padded.shape, "i32")
    mask: Value | None = None
    for dim, size in enumerate(original.shape):
        if size == padded.shape[dim] or (dims is not None and dim not in dims):
            continue
        iota = conv.new_op(
            "stablehlo.iota", [], iota_type, like, iota_dimension=RawAttr(f"{dim} : i64")
        )
        limit = conv.new_op(
            "stablehlo.constant", [], TensorType((), "i32"), like,
            value=RawAttr(f"dense<{size}> : tensor<i32>"),
        )  # fmt: skip
        limits = conv.new_op(
            "stablehlo.broadcast_in_dim", [limit], iota_type, like, broadcast_dimensions=i64s([])
        )
        below = conv.new_op(
            "stablehlo.compare", [iota, limits], TensorType(padded.shape, "i1"), like,
            comparison_direction=RawAttr("#stablehlo<comparison_direction LT>"),
        )  # fmt: skip
        mask = (
            below if mask is None else conv.new_op("stablehlo.and", [mask, below], below.type, like)
        )
    if mask is None:
        return value
    scalar = constant(conv, padded.element_type, kind, like)
    fill = conv.new_op(
        "stablehlo.broadcast_in_dim", [scalar], padded, like, broadcast_dimensions=i64s([])
    )
    selected = conv.new_op("stablehlo.select", [mask, value, fill], padded, like)
    if dims is None:
        conv.kinds[selected] = kind
    return selected


def trim(
    conv: Conversion,
    value: Value,
    original: Type,
    dims: Sequence[int],
    sharding: TensorSharding | None,
    kind: str | None,
) -> Value:
    """`trimOutputForDims`: slice `value` back on the `dims` where it outgrows `original`, to
    `original`'s padded sizes (the result may itself not divide: ``16`` on 3 shards is cut to
    ``18``, which the slice then keeps whole)."""
    if not isinstance(original, TensorType) or not isinstance(value.type, TensorType):
        return value
    target = padded_type(original, sharding, conv.meshes)
    assert isinstance(target, TensorType)
    shapes = list(zip(original.shape, target.shape, value.type.shape, strict=True))
    cut = [d in dims and n > o for d, (o, _, n) in enumerate(shapes)]
    if not any(cut):
        return value
    limits = [p if c else n for c, (_, p, n) in zip(cut, shapes, strict=True)]
    rank = len(limits)
    trimmed = conv.new_op(
        "stablehlo.slice",
        [value],
        TensorType(tuple(limits), original.element_type),
        located(value, conv),
        sharding,
        start_indices=i64s([0] * rank),
        limit_indices=i64s(limits),
        strides=i64s([1] * rank),
    )
    if kind is not None:
        conv.kinds[trimmed] = kind
    return trimmed
