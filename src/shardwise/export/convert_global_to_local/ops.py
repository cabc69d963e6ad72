"""The non-collective patterns: funcs, calls, computations, constants and StableHLO ops.

| op                                  | per-device program                                      |
| ----------------------------------- | ------------------------------------------------------- |
| `func.func`                         | argument and result types local (by their shardings)    |
| `func.return`, `sdy.return`, others | converted operands, local result types (in place)       |
| `sdy.manual_computation`            | body inlined in place of the op                         |
| `sdy.named_computation`             | kept, with local types inside and out                   |
| `sdy.constant`                      | unsharded or splat: `stablehlo.constant`; else the      |
|                                     | global constant and a `dynamic_slice` of this device's  |
| `stablehlo.iota`                    | local iota plus this device's offset along the iota dim |
| `stablehlo.slice`                   | a full slice of a sharded dim becomes a local slice     |
| `stablehlo.concatenate`             | local concatenate (the concat dim must be unsharded)    |
| `stablehlo.dot(_general)`           | local dot; sharded contracting dims need an all_reduce  |
"""

from __future__ import annotations

import re

from shardwise.errors import UnsupportedError, VerifyError
from shardwise.export.collective_attrs import parse_axis_ref_list
from shardwise.export.convert_global_to_local.builder import OpBuilder, i64_array
from shardwise.export.convert_global_to_local.state import ConversionState
from shardwise.ir import Op, RawAttr, TensorType, Value, func_result_types
from shardwise.sharding import TensorSharding

__all__ = ["OP_PATTERNS"]


def generic(state: ConversionState, op: Op) -> None:
    state.remap_in_place(op)


def func(state: ConversionState, op: Op) -> None:
    """`FuncOpSignaturePattern`: arguments by their shardings, results by ``res_attrs``."""
    results = [state.func_result_type(op, i, t) for i, t in enumerate(func_result_types(op))]
    if not op.regions or not op.regions[0].blocks:
        # A declaration has no block arguments, so the reference's signature conversion sees
        # no inputs: the new type takes none (and the argument attributes go with them).
        op.properties.pop("arg_attrs", None)
        op.properties["function_type"] = RawAttr(_function_type([], [str(t) for t in results]))
        return
    args = op.regions[0].entry.args
    for arg in args:
        state.set_type(arg, state.local_type(arg, op))
    op.properties["function_type"] = RawAttr(
        _function_type([str(a.type) for a in args], [str(t) for t in results])
    )


def _function_type(args: list[str], results: list[str]) -> str:
    """MLIR's spelling: one result bare unless it is itself a function type."""
    if len(results) == 1 and not results[0].startswith("("):
        result_text = results[0]
    else:
        result_text = "(" + ", ".join(results) + ")"
    return "(" + ", ".join(args) + ") -> " + result_text


def call(state: ConversionState, op: Op) -> None:
    """`populateCallOpTypeConversionPattern`: a new call of the callee (no other attribute
    survives, not even ``sdy.sharding``), operands converted, result types kept (the
    type-only conversion is the identity)."""
    properties = {"callee": op.properties["callee"]}
    new = OpBuilder(op).create(
        "func.call", state.operands(op), [r.type for r in op.results], properties
    )
    state.replace(op, new.results)


def manual_computation(state: ConversionState, op: Op) -> None:
    block = op.regions[0].entry
    for arg, outer in zip(block.args, state.operands(op), strict=True):
        state.replacements[arg] = outer
    terminator = block.ops[-1]
    for nested in list(block.ops[:-1]):
        block.ops.remove(nested)
        nested.parent = None
        parent = op.parent
        assert parent is not None
        parent.insert_before(op, nested)
    state.replace(op, list(terminator.operands))
    state.erased.add(id(terminator))


def named_computation(state: ConversionState, op: Op) -> None:
    block = op.regions[0].entry
    for arg in block.args:
        state.set_type(arg, state.local_type(arg, op))
    state.remap_in_place(op)


def sdy_constant(state: ConversionState, op: Op) -> None:
    result = op.results[0]
    local = state.local_tensor_type(result, op)
    value_text = str(op.properties["value"])
    b = OpBuilder(op)
    if local == result.type or _is_splat(value_text):
        text = value_text if local == result.type else _retype_splat(value_text, local)
        state.replace(op, [b.constant(text, local)])
        return
    sharding = state.sharding(result)
    mesh = state.require_mesh(sharding, op)
    assert sharding is not None and isinstance(result.type, TensorType)
    global_value = b.constant(value_text, result.type)
    axes = [d.axes for d in sharding.dim_shardings]
    state.replace(op, [b.slice_for_axes(global_value, mesh, axes, local)])


def _is_splat(text: str) -> bool:
    body = text[len("dense<") :] if text.startswith("dense<") else ""
    return bool(body) and not body.startswith("[") and not body.startswith('"0x')


def _retype_splat(text: str, local: TensorType) -> str:
    return text[: text.rindex(":")] + ": " + str(local)


def stablehlo_constant(state: ConversionState, op: Op) -> None:
    local = state.local_type(op.results[0], op)
    if local != op.results[0].type:
        raise VerifyError(
            f"'stablehlo.constant' op inferred type(s) '{op.results[0].type}' are incompatible "
            f"with return type(s) of operation '{local}': a sharded stablehlo.constant has no "
            "local form (the export pipeline turns constants into sdy.constant first)",
            op.location,
        )
    generic(state, op)


def iota(state: ConversionState, op: Op) -> None:
    sharding = state.sharding(op.results[0])
    if sharding is None or sharding.is_fully_replicated:
        return
    mesh = state.require_mesh(sharding, op)
    local = state.local_tensor_type(op.results[0], op)
    dim = int(str(op.properties["iota_dimension"]).split(":")[0])
    b = OpBuilder(op)
    local_iota = b.value(
        "stablehlo.iota", [], local, iota_dimension=op.properties["iota_dimension"]
    )
    axes = sharding.dim_shardings[dim].axes
    if not axes:
        state.replace(op, [local_iota])
        return
    offset = b.dimension_offset(mesh, axes, local.shape[dim])
    offset = b.value("stablehlo.convert", [offset], TensorType((), local.element_type))
    offset = b.value(
        "stablehlo.broadcast_in_dim",
        [offset],
        local,
        broadcast_dimensions=RawAttr("array<i64>"),
    )
    state.replace(op, [b.value("stablehlo.add", [local_iota, offset], local)])


def _axes_text(axes) -> str:
    return "[" + ", ".join(str(a) for a in axes) + "]"


def _dim_axes(sharding: TensorSharding | None, dim: int):
    if sharding is None or dim >= len(sharding.dim_shardings):
        return ()
    return sharding.dim_shardings[dim].axes


def slice_op(state: ConversionState, op: Op) -> None:
    in_sharding = state.sharding(op.operands[0])
    out_sharding = state.sharding(op.results[0])
    if _replicated(in_sharding) and _replicated(out_sharding):
        generic(state, op)
        return
    if in_sharding is None or out_sharding is None:
        raise UnsupportedError(
            "'stablehlo.slice' between a sharded and an unsharded value: the reference "
            "build crashes on it; reshard both sides to the same sharding first",
            op.location,
        )
    operand_type = state.global_type(op.operands[0])
    assert isinstance(operand_type, TensorType)
    starts = _i64s(op.properties["start_indices"])
    limits = _i64s(op.properties["limit_indices"])
    (value,) = state.operands(op)
    assert isinstance(value.type, TensorType)
    new_starts, new_limits = [], []
    for dim in range(operand_type.rank):
        in_axes, out_axes = _dim_axes(in_sharding, dim), _dim_axes(out_sharding, dim)
        if in_axes != out_axes:
            raise VerifyError(
                f"'stablehlo.slice' op dimension {dim} has mismatched sharding axes "
                f"({_axes_text(in_axes)} vs {_axes_text(out_axes)}). This requires a reshard "
                "which should have been handled by previous passes.",
                op.location,
            )
        if not in_axes:
            new_starts.append(starts[dim])
            new_limits.append(limits[dim])
            continue
        if starts[dim] != 0 or limits[dim] != operand_type.shape[dim]:
            raise VerifyError(
                f"'stablehlo.slice' op dimension {dim} is sharded but the slice is not a full "
                "slice and requires device communication.",
                op.location,
            )
        new_starts.append(0)
        new_limits.append(value.type.shape[dim])
    local = state.local_tensor_type(op.results[0], op)
    new = OpBuilder(op).value(
        "stablehlo.slice",
        [value],
        local,
        limit_indices=i64_array(new_limits),
        start_indices=i64_array(new_starts),
        strides=op.properties["strides"],
    )
    state.replace(op, [new])


def _i64s(attr: object) -> list[int]:
    text = str(attr)
    body = text[text.index("<") + 1 : text.rindex(">")]
    _, _, values = body.partition(":")
    return [int(v) for v in values.split(",") if v.strip()]


def _replicated(sharding: TensorSharding | None) -> bool:
    return sharding is None or sharding.is_fully_replicated


def concatenate(state: ConversionState, op: Op) -> None:
    out_sharding = state.sharding(op.results[0])
    dim = int(str(op.properties["dimension"]).split(":")[0])
    if _dim_axes(out_sharding, dim):
        raise VerifyError(
            f"'stablehlo.concatenate' op dimension {dim} is sharded but the concatenation is "
            "on this dimension.",
            op.location,
        )
    for index, operand in enumerate(op.operands):
        in_sharding = state.sharding(operand)
        if _replicated(in_sharding):
            continue
        assert in_sharding is not None
        if _dim_axes(in_sharding, dim):
            raise VerifyError(
                f"'stablehlo.concatenate' op operand {index} is sharded on concatenation "
                f"dimension {dim}. This is not supported.",
                op.location,
            )
        for d in range(len(in_sharding.dim_shardings)):
            if d == dim:
                continue
            in_axes, out_axes = _dim_axes(in_sharding, d), _dim_axes(out_sharding, d)
            if in_axes != out_axes:
                raise VerifyError(
                    f"'stablehlo.concatenate' op dimension {d} has mismatched sharding axes "
                    f"({_axes_text(in_axes)} vs {_axes_text(out_axes)}). This requires a "
                    "reshard which should have been handled by previous passes.",
                    op.location,
                )
    generic(state, op)


def _check_contracting(state: ConversionState, op: Op, lhs_dims: list[int], kind: str) -> None:
    lhs = op.operands[0]
    sharding = state.sharding(lhs)
    if _replicated(sharding):
        return
    assert sharding is not None and isinstance(lhs.type, TensorType)
    mesh = state.require_mesh(sharding, op)
    axes = [a for d in lhs_dims for a in sharding.dim_shardings[d].axes]
    if not axes:
        return
    for operand in op.operands[:2]:
        if not _non_pad_or_pad_with_zero(operand):
            raise VerifyError(
                f"Padding value must be zero for sharded contracting {kind} (the reference "
                "aborts unless the pad's value is a stablehlo.constant splat zero): the padded "
                "elements would add to the sum of each device's piece",
                op.location,
            )
    users = op.results[0].users
    if len(op.results[0].uses) != 1 or users[0].name != "sdy.all_reduce":
        raise VerifyError(
            f"Expected sharded contracting {kind} to have one user and the user is an "
            "sdy.all_reduce.",
            op.location,
        )
    reduction = parse_axis_ref_list(users[0].properties["reduction_axes"])
    if tuple(reduction) != tuple(axes):
        raise VerifyError(
            f"The axes of the sdy.all_reduce should match the sharded contracting dimension"
            f"{'s' if kind == 'dot_general' else ''} of the {kind}.",
            op.location,
        )
    del mesh


_ZERO_RE = re.compile(r"^dense<(-?0(\.0*)?(e[+-]?0+)?|false|\(0\.0+e\+00,0\.0+e\+00\))>")


def _non_pad_or_pad_with_zero(operand: Value) -> bool:
    """`NonPadOrPadWithZero`: not a pad, or a pad whose padding value is a splat zero."""
    pad = operand.defining_op
    if pad is None or pad.name != "stablehlo.pad":
        return True
    value = pad.operands[1].defining_op
    # Only a stablehlo.constant matches the reference's `m_Constant` (an sdy.constant,
    # converted before, does not).
    if value is None or value.name != "stablehlo.constant":
        return False
    return bool(_ZERO_RE.match(str(value.properties.get("value", ""))))


def dot(state: ConversionState, op: Op) -> None:
    lhs_type = state.global_type(op.operands[0])
    assert isinstance(lhs_type, TensorType)
    _check_contracting(state, op, [lhs_type.rank - 1], "dot")
    generic(state, op)


def dot_general(state: ConversionState, op: Op) -> None:
    text = str(op.properties["dot_dimension_numbers"])
    dims = _field(text, "lhs_contracting_dimensions")
    _check_contracting(state, op, dims, "dot_general")
    generic(state, op)


def _field(text: str, name: str) -> list[int]:
    at = text.find(name)
    if at < 0:
        return []
    start = text.index("[", at)
    end = text.index("]", start)
    return [int(v) for v in text[start + 1 : end].split(",") if v.strip()]


OP_PATTERNS = {
    "func.func": func,
    "func.call": call,
    "sdy.manual_computation": manual_computation,
    "sdy.named_computation": named_computation,
    "sdy.constant": sdy_constant,
    "sdy.return": generic,
    "stablehlo.constant": stablehlo_constant,
    "stablehlo.iota": iota,
    "stablehlo.slice": slice_op,
    "stablehlo.concatenate": concatenate,
    "stablehlo.dot": dot,
    "stablehlo.dot_general": dot_general,
}
