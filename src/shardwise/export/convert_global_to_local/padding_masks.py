"""Going further than Shardy with non-divisible dims: a reduce over a padded dim is masked.

``sdy-pad-for-divisibility`` pads a dim its sharding does not divide at the high end (with
zeros), and masks padded contracting dims of a dot; a ``stablehlo.reduce`` over a padded
dim would fold the padding in (an ``exp`` of the zeros adds ones to a sum, a zero can be the
max of negatives). `shardwise partition` records each reduce's operand types before padding
(`record_reductions`) and afterwards replaces, in each operand padded along a reduced dim,
the padding by the reduce's init value (`mask_padded_reductions`): StableHLO folds the init
value in an unspecified number of times, so it must be the reducer's identity, and padding
with it changes nothing.

    %iota = stablehlo.iota dim = d          (sharded like the operand)
    %keep = stablehlo.compare LT, %iota, <the dim's size before padding>
    %init = stablehlo.broadcast_in_dim %init_value
    %masked = stablehlo.select %keep, %operand, %init
"""

from __future__ import annotations

from typing import TypeVar

from shardwise.errors import ShardwiseError
from shardwise.ir import Module, Op, RawAttr, TensorType, Type, Value
from shardwise.rules.stablehlo_attrs import parse_i64_array
from shardwise.sdy.shardings import get_sharding, set_sharding
from shardwise.sharding import TensorSharding

__all__ = ["ops_after_padding", "record_reductions", "mask_padded_reductions"]

Recorded = list[list[Type]]
T = TypeVar("T")
_REDUCE = "stablehlo.reduce"


def ops_after_padding(module: Module, name: str, recorded: list[T]) -> list[tuple[Op, T]]:
    """Each `name` op after padding with what was recorded of it before, in program order
    (padding rewrites ops but keeps their order and count; a changed count is an error)."""
    ops = [op for op in module.walk() if op.name == name]
    if len(ops) != len(recorded):
        raise ShardwiseError(
            f"sdy-pad-for-divisibility changed the number of {name} ops "
            f"({len(recorded)} -> {len(ops)}): cannot tell which of them meet padding"
        )
    return list(zip(ops, recorded, strict=True))


def record_reductions(module: Module) -> Recorded:
    """The operand types of each ``stablehlo.reduce``, in program order, before padding."""
    return [[v.type for v in op.operands] for op in module.walk() if op.name == _REDUCE]


def mask_padded_reductions(module: Module, recorded: Recorded) -> None:
    """After padding (which rewrites ops but keeps their order and count): mask each
    operand padded along a dim its reduce reduces."""
    for op, before in ops_after_padding(module, _REDUCE, recorded):
        dims = parse_i64_array(op.properties["dimensions"])
        count = len(op.operands) // 2
        for index in range(count):
            operand, original = op.operands[index], before[index]
            if not isinstance(operand.type, TensorType) or not isinstance(original, TensorType):
                continue
            padded = [d for d in dims if operand.type.shape[d] != original.shape[d]]
            if padded:
                masked = _masked(op, operand, op.operands[count + index], padded, original)
                op.set_operand(index, masked)


def _masked(op: Op, operand: Value, init: Value, dims: list[int], original: TensorType) -> Value:
    t = operand.type
    assert isinstance(t, TensorType)
    sharding = get_sharding(operand)
    pred = TensorType(t.shape, "i1")
    keep: Value | None = None
    for dim in dims:
        index_type = TensorType(t.shape, "i32")
        iota = _create(
            op, "stablehlo.iota", [], index_type, sharding, iota_dimension=RawAttr(f"{dim} : i64")
        )
        size_scalar = _create(
            op,
            "stablehlo.constant",
            [],
            TensorType((), "i32"),
            None,
            value=RawAttr(f"dense<{original.shape[dim]}> : tensor<i32>"),
        )
        size = _broadcast(op, size_scalar, index_type, sharding)
        below = _create(
            op,
            "stablehlo.compare",
            [iota, size],
            pred,
            sharding,
            comparison_direction=RawAttr("#stablehlo<comparison_direction LT>"),
        )
        keep = (
            below if keep is None else _create(op, "stablehlo.and", [keep, below], pred, sharding)
        )
    assert keep is not None
    filler = _broadcast(op, init, t, sharding)
    return _create(op, "stablehlo.select", [keep, operand, filler], t, sharding)


def _broadcast(op: Op, scalar: Value, type: TensorType, sharding: TensorSharding | None) -> Value:
    return _create(
        op,
        "stablehlo.broadcast_in_dim",
        [scalar],
        type,
        sharding,
        broadcast_dimensions=RawAttr("array<i64>"),
    )


def _create(
    anchor: Op,
    name: str,
    operands: list[Value],
    result: Type,
    sharding: TensorSharding | None,
    **properties: object,
) -> Value:
    new = Op(
        name,
        operands,
        [result],
        dict(properties),
        location=anchor.location,
        loc_text=anchor.loc_text,
    )
    block = anchor.parent
    assert block is not None
    block.insert_before(anchor, new)
    if sharding is not None:
        set_sharding(new.results[0], sharding)
    return new.results[0]
