"""The patterns of `sdy-pad-for-divisibility`: how one illegal op is rewritten.

Result types of the generic pattern, as StableHLO infers them from the padded operands (the
result is the larger, per dim, of that and the result's own padded type):

| ops | inferred result shape |
| --- | --- |
| elementwise (``add``, ``compare``, ...), ``select``/``clamp`` | the (middle) operand's |
| ``transpose``, ``concatenate``, ``reduce``, ``sort``, ``reverse``, ``pad``, ``dynamic_update_slice`` | from the operands |
| ``optimization_barrier``, ``while``, ``all_reduce``, ``scatter`` | the (first half of the) operands' |
| ``gather`` (from the indices and slice sizes), ``dynamic_slice`` (the slice sizes) | from the attributes |
| ``case``, ``if`` | the branches' returns, not converted yet: the old type |
| ``convert``, ``reshape``, ``broadcast_in_dim``, ``iota``, ``dot_general``, ``custom_call`` | none: the padded type |

Shardy leaves an op whose shapes no longer agree after padding to the verifier; here it raises
`VerifyError`. A StableHLO op outside these tables that needs padding raises `UnsupportedError`.
"""

from __future__ import annotations

from typing import cast

from shardwise.errors import UnsupportedError, VerifyError
from shardwise.export.collective_attrs import parse_list_of_axis_ref_lists
from shardwise.export.export_utils import is_communication_free_slice_dim
from shardwise.export.pad_for_divisibility_conversion import (
    ZERO,
    Conversion,
    ensure_padding,
    i64s,
    padded_type,
    padded_value,
    trim,
)
from shardwise.ir import Op, TensorType, Type, Value, copy_attr
from shardwise.rules.stablehlo_attrs import (
    parse_dot_dimension_numbers,
    parse_gather_dimension_numbers,
    parse_i64_array,
    parse_int,
)
from shardwise.sdy.shardings import get_sharding
from shardwise.sharding import TensorSharding

__all__ = ["rewrite"]

_ELEMENTWISE = frozenset(
    "stablehlo." + n
    for n in (
        "abs add and atan2 cbrt ceil cosine count_leading_zeros divide exponential "
        "exponential_minus_one floor is_finite log log_plus_one logistic maximum minimum "
        "multiply negate not or popcnt power remainder round_nearest_afz round_nearest_even "
        "rsqrt shift_left shift_right_arithmetic shift_right_logical sign sine sqrt subtract "
        "tan tanh xor compare select clamp reduce_precision"
    ).split()
)
_SHAPE_OPERAND = {"stablehlo.select": 1, "stablehlo.clamp": 1}  # else operand 0
_INFERRED = frozenset(
    "stablehlo." + n for n in "transpose concatenate reduce sort reverse slice pad".split()
)
# Ops without regions whose inferred result type is checked by the verifier at the end of the
# pass: a padded result that its operands (or attributes) no longer give is an error.
_CHECKED_INFERENCE = frozenset(
    "stablehlo." + n
    for n in (
        "optimization_barrier all_reduce scatter gather dynamic_slice transpose concatenate reverse"
    ).split()
)
_NOT_INFERRED = frozenset(
    "stablehlo." + n
    for n in (
        "convert bitcast_convert reshape broadcast_in_dim iota dot_general return custom_call"
    ).split()
)


def rewrite(op: Op, conv: Conversion) -> None:
    """Apply the pattern of the illegal `op` (its operands remapped first, as an adaptor)."""
    conv.anchor = op
    operands = [conv.operand(v) for v in op.operands]
    if op.name == "stablehlo.slice":
        _slice(op, operands, conv)
    elif op.name == "stablehlo.dot_general":
        _dot_general(op, operands, conv)
    elif op.name == "sdy.all_slice":
        _all_slice(op, operands, conv)
    elif op.name == "sdy.all_gather":
        _all_gather(op, operands, conv)
    else:
        _generic(op, operands, conv)


# -- the generic pattern ------------------------------------------------------------------


def _shape(value: Value) -> tuple[int, ...]:
    return cast(TensorType, value.type).shape


def _inferred_shapes(op: Op, operands: list[Value]) -> list[tuple[int, ...]] | None:
    """The result shapes StableHLO infers from `operands`, or None if the op infers none."""
    name = op.name
    if name in _ELEMENTWISE:
        shapes = {_shape(v) for v in operands if _shape(v) or name not in _SHAPE_OPERAND}
        if len(shapes) > 1:
            return None  # incompatible operands: inference fails
        return [_shape(operands[_SHAPE_OPERAND.get(name, 0)])]
    if name in ("stablehlo.sort", "stablehlo.reverse"):
        return [_shape(v) for v in operands]
    if name == "stablehlo.dynamic_update_slice":
        return [_shape(operands[0])]
    if name == "stablehlo.transpose":
        perm = parse_i64_array(op.properties["permutation"])
        return [tuple(_shape(operands[0])[p] for p in perm)]
    if name == "stablehlo.concatenate":
        dim = parse_int(op.properties["dimension"])
        shape = list(_shape(operands[0]))
        shape[dim] = sum(_shape(v)[dim] for v in operands)
        return [tuple(shape)]
    if name == "stablehlo.reduce":
        dims = parse_i64_array(op.properties["dimensions"])
        half = len(operands) // 2
        return [tuple(s for d, s in enumerate(_shape(v)) if d not in dims) for v in operands[:half]]
    if name == "stablehlo.slice":
        return [_shape(r) for r in op.results]
    if name == "stablehlo.pad":
        return [_pad_shape(op, _shape(operands[0]))]
    if name in ("stablehlo.optimization_barrier", "stablehlo.while", "stablehlo.all_reduce"):
        return [_shape(v) for v in operands]
    if name == "stablehlo.scatter":
        return [_shape(v) for v in operands[: len(operands) // 2]]
    if name == "stablehlo.gather":
        return [_gather_shape(op, _shape(operands[1]))]
    if name == "stablehlo.dynamic_slice":
        return [tuple(parse_i64_array(op.properties["slice_sizes"]))]
    if name in ("stablehlo.case", "stablehlo.if"):
        # Inferred from the branches' returns, which the conversion (pre-order) has not
        # rewritten yet: the old types.
        return [_shape(r) for r in op.results]
    if name in _NOT_INFERRED:
        return None
    raise UnsupportedError(
        f"sdy-pad-for-divisibility: '{name}' has a non-divisible sharding and is not supported "
        "here (supported: elementwise ops, transpose, concatenate, reduce, sort, reverse, "
        "slice, pad, dynamic_slice, dynamic_update_slice, gather, scatter, case, if, while, "
        "optimization_barrier, all_reduce, convert, reshape, broadcast_in_dim, iota, "
        "dot_general, custom_call, sdy.all_slice, sdy.all_gather)",
        op.location,
    )


def _gather_shape(op: Op, indices: tuple[int, ...]) -> tuple[int, ...]:
    """`stablehlo.gather`'s result shape: the batch dims are the indices' dims but the index
    vector dim, the offset dims the slice sizes but the collapsed and batching dims."""
    dims = parse_gather_dimension_numbers(op.properties["dimension_numbers"])
    sizes = parse_i64_array(op.properties["slice_sizes"])
    dropped = set(dims.collapsed_slice_dims) | set(dims.operand_batching_dims)
    offsets = iter(size for d, size in enumerate(sizes) if d not in dropped)
    batch = iter(size for d, size in enumerate(indices) if d != dims.index_vector_dim)
    rank = len(dims.offset_dims) + len(indices) - (dims.index_vector_dim < len(indices))
    return tuple(next(offsets) if d in dims.offset_dims else next(batch) for d in range(rank))


def _generic(op: Op, operands: list[Value], conv: Conversion) -> None:
    """`padGenericOp`: the op over the new operands, results padded (see the table)."""
    inferred = _inferred_shapes(op, operands)
    types: list[Type] = []
    for index, result in enumerate(op.results):
        padded = conv.padded(result)
        if inferred is None or not isinstance(padded, TensorType):
            types.append(padded)
            continue
        shape = tuple(max(a, b) for a, b in zip(inferred[index], padded.shape, strict=True))
        types.append(TensorType(shape, padded.element_type))
    new = Op(
        op.name,
        operands,
        types,
        properties={k: copy_attr(v) for k, v in op.properties.items()},
        attributes={k: copy_attr(v) for k, v in op.attributes.items()},
        location=op.location,
        loc_text=op.loc_text,
        result_names=[r.name for r in op.results],
    )
    regions, op.regions = op.regions, []
    for region in regions:
        new.add_region(region)
    conv.insert(new)
    _check_shapes(new)
    _check_legal(new, conv)
    conv.replace(op, new.results)


def _check_shapes(op: Op) -> None:
    """What StableHLO's verifier would reject after padding (shapes that no longer agree)."""
    name = op.name
    ins = [_shape(v) for v in op.operands if isinstance(v.type, TensorType)]
    outs = [_shape(v) for v in op.results if isinstance(v.type, TensorType)]
    bad = False
    if name in _ELEMENTWISE or name in ("stablehlo.convert", "stablehlo.bitcast_convert"):
        bad = any(s != outs[0] for s in ins if s or name not in _SHAPE_OPERAND)
    elif name == "stablehlo.reshape":
        bad = _count(ins[0]) != _count(outs[0])
    elif name == "stablehlo.broadcast_in_dim":
        dims = parse_i64_array(op.properties["broadcast_dimensions"])
        bad = any(s not in (1, outs[0][d]) for s, d in zip(ins[0], dims, strict=True))
    elif name == "stablehlo.dot_general":
        bad = _dot_shape(op) != outs[0]
    elif name == "stablehlo.pad":
        bad = _pad_shape(op, ins[0]) != outs[0]
    elif name == "stablehlo.dynamic_update_slice":
        bad = ins[0] != outs[0]
        for d, (update, size) in enumerate(zip(ins[1], ins[0], strict=True)):
            if update > size:  # a padded update larger than the (unpadded) operand
                raise VerifyError(
                    f"expects size at dimension {d} of update to be in range [0, {size}]. "
                    f"Got: {update}.",
                    op.location,
                )
    elif name in _CHECKED_INFERENCE:
        inferred = _inferred_shapes(op, list(op.operands))
        assert inferred is not None
        if inferred != outs:
            element = cast(TensorType, op.results[0].type).element_type
            types = ", ".join(str(TensorType(s, element)) for s in inferred)
            raise VerifyError(
                f"'{name}' op inferred type(s) '{types}' are incompatible with return type(s) "
                f"of operation '{', '.join(str(r.type) for r in op.results)}'",
                op.location,
            )
    if bad:
        raise VerifyError(
            f"'{name}' op: shapes disagree after padding for divisibility: operands "
            f"{', '.join(str(v.type) for v in op.operands)} -> {', '.join(map(str, outs))} "
            "(the padded operands do not give the padded result; shard it divisibly)",
            op.location,
        )


def _check_legal(op: Op, conv: Conversion) -> None:
    """New ops are legalized too: one that is still not divisible would be rewritten again
    and again; Shardy gives up (`failed to legalize`)."""
    if not op.name.startswith("stablehlo."):
        return
    values = [*op.results, *op.operands]
    if all(conv.is_legal_value(v) for v in values):
        return
    raise VerifyError(
        f"failed to legalize operation '{op.name}' that was explicitly marked illegal (its "
        f"padded result {', '.join(str(r.type) for r in op.results)} is still not divisible "
        "by its sharding)",
        op.location,
    )


def _pad_shape(op: Op, shape: tuple[int, ...]) -> tuple[int, ...]:
    low = parse_i64_array(op.properties["edge_padding_low"])
    high = parse_i64_array(op.properties["edge_padding_high"])
    interior = parse_i64_array(op.properties["interior_padding"])
    return tuple(
        s + lo + hi + max(0, s - 1) * i
        for s, lo, hi, i in zip(shape, low, high, interior, strict=True)
    )


def _count(shape: tuple[int, ...]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def _dot_shape(op: Op) -> tuple[int, ...]:
    nums = parse_dot_dimension_numbers(op.properties["dot_dimension_numbers"])
    lhs, rhs = _shape(op.operands[0]), _shape(op.operands[1])
    batch = [lhs[d] for d in nums.lhs_batching_dimensions]
    lhs_free = [
        s
        for d, s in enumerate(lhs)
        if d not in nums.lhs_batching_dimensions and d not in nums.lhs_contracting_dimensions
    ]
    rhs_free = [
        s
        for d, s in enumerate(rhs)
        if d not in nums.rhs_batching_dimensions and d not in nums.rhs_contracting_dimensions
    ]
    return tuple(batch + lhs_free + rhs_free)


# -- stablehlo ops with their own pattern -------------------------------------------------


def _slice(op: Op, operands: list[Value], conv: Conversion) -> None:
    """`StablehloSliceOpPattern`: widen the limits to the padded result."""
    result = op.results[0]
    sharding = get_sharding(result)
    padded = conv.padded(result)
    if padded == result.type:
        _generic(op, operands, conv)
        return
    assert isinstance(padded, TensorType) and sharding is not None
    starts = parse_i64_array(op.properties["start_indices"])
    limits = parse_i64_array(op.properties["limit_indices"])
    new_limits = [s + p for s, p in zip(starts, padded.shape, strict=True)]
    operand_sharding = get_sharding(operands[0])
    for dim, (new, old) in enumerate(zip(new_limits, limits, strict=True)):
        if new != old and not _communication_free_slice(op, dim, operand_sharding, conv):
            raise VerifyError(
                f"'stablehlo.slice' op: dim {dim} of a non-divisible slice cannot be padded "
                "without communication (Shardy's check `isCommunicationFreeSliceDim` fails); "
                "run sdy-resolve-permutation-factors first",
                op.location,
            )
    strides = parse_i64_array(op.properties["strides"])
    inferred = tuple(
        -(-(limit - start) // stride)
        for start, limit, stride in zip(starts, new_limits, strides, strict=True)
    )
    if inferred != padded.shape:
        # A strided slice: the widened limits do not give the padded size (the reference's
        # verifier rejects the new slice).
        raise VerifyError(
            f"'stablehlo.slice' op inferred type(s) '{TensorType(inferred, padded.element_type)}' "
            f"are incompatible with return type(s) of operation '{padded}'",
            op.location,
        )
    new_value = conv.new_op(
        "stablehlo.slice",
        [operands[0]],
        padded,
        op,
        sharding,
        start_indices=i64s(starts),
        limit_indices=i64s(new_limits),
        strides=op.properties["strides"],
    )
    conv.replace(op, [new_value])


def _communication_free_slice(
    op: Op, dim: int, sharding: TensorSharding | None, conv: Conversion
) -> bool:
    if sharding is None:
        return False  # Shardy dereferences a null sharding here
    # The operand's own mesh measures its shards (the result's may be another mesh, whose
    # axes the operand's sharding does not name).
    mesh = conv.mesh_of(sharding)
    assert mesh is not None
    return is_communication_free_slice_dim(op, dim, sharding, mesh)


def _dot_general(op: Op, operands: list[Value], conv: Conversion) -> None:
    """`StablehloDotGeneralOpPattern`: contracting dims padded with zeros, then generic."""
    nums = parse_dot_dimension_numbers(op.properties["dot_dimension_numbers"])
    lhs = ensure_padding(
        conv, operands[0], cast(TensorType, op.operands[0].type), ZERO,
        nums.lhs_contracting_dimensions,
    )  # fmt: skip
    rhs = ensure_padding(
        conv, operands[1], cast(TensorType, op.operands[1].type), ZERO,
        nums.rhs_contracting_dimensions,
    )  # fmt: skip
    _generic(op, [lhs, rhs], conv)


# -- sdy collectives ----------------------------------------------------------------------


def _collective(op: Op, operand: Value, type: Type, conv: Conversion) -> Value:
    new = Op(
        op.name,
        [operand],
        [type],
        properties={k: copy_attr(v) for k, v in op.properties.items()},
        attributes={k: copy_attr(v) for k, v in op.attributes.items()},
        location=op.location,
        loc_text=op.loc_text,
    )
    return conv.insert(new).results[0]


def _all_slice(op: Op, operands: list[Value], conv: Conversion) -> None:
    """`AllSliceOpPattern`: pad the input to its padded type under the out sharding (with
    the padding it is known to have, else zeros) and slice that; the padding kind carries."""
    source = operands[0]
    out_sharding = cast(TensorSharding, op.properties["out_sharding"])
    padded = padded_type(source.type, out_sharding, conv.meshes)
    kind = conv.kinds.get(source)
    if padded != source.type:
        kind = kind or ZERO
        source = padded_value(conv, cast(TensorType, padded), source, kind)
    new = _collective(op, source, padded, conv)
    if kind is not None:
        conv.kinds[new] = kind
    conv.replace(op, [new])


def _all_gather(op: Op, operands: list[Value], conv: Conversion) -> None:
    """`AllGatherOpPattern`: gather the padded input, slice the gathered dims back."""
    source = operands[0]
    padded = cast(TensorType, conv.padded(op.results[0]))
    shape = tuple(max(a, b) for a, b in zip(_shape(source), padded.shape, strict=True))
    new = _collective(op, source, TensorType(shape, padded.element_type), conv)
    kind = conv.kinds.get(source)
    if kind is not None:
        conv.kinds[new] = kind
    axes = parse_list_of_axis_ref_lists(op.properties["gathering_axes"])
    dims = [d for d, a in enumerate(axes) if a]
    sharding = cast(TensorSharding, op.properties["out_sharding"])
    conv.replace(op, [trim(conv, new, op.results[0].type, dims, sharding, kind)])
