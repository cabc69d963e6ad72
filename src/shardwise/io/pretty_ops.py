"""Per-op custom assembly formats for `pretty_printer`: builtin, func, sdy and StableHLO.

Each printer returns what MLIR prints after ``%results = `` for one op: the op name (as
`pretty_printer` shortened it in its dialect's regions), operands, the op's own syntax,
the attribute dictionary (the attributes the syntax shows are elided) and the types. The
formats are those of the ops' ODS ``assemblyFormat`` / custom printers (StableHLO's
``StablehloOps.td`` and ``AssemblyFormat.cpp``, Shardy's ``ops.td``, MLIR's func dialect and
``FunctionImplementation.cpp``); every one is tested against the MLIR bindings. An attribute
whose text does not have the exact shape a printer expects gives up (`Unsupported`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

from shardwise import ir
from shardwise.io.pretty_printer import OpPrinter, Printer, Unsupported

__all__ = ["OP_PRINTERS", "NAME_HINTS"]

OP_PRINTERS: dict[str, OpPrinter] = {}


def _register(*names: str) -> Callable[[OpPrinter], OpPrinter]:
    def decorate(fn: OpPrinter) -> OpPrinter:
        for name in names:
            if name in OP_PRINTERS:
                raise ValueError(f"two printers for {name}")
            OP_PRINTERS[name] = fn
        return fn

    return decorate


# -- attribute texts --------------------------------------------------------------------------

_I64_ARRAY_RE = re.compile(r"array<i64(?:: (-?\d+(?:, -?\d+)*))?>")
_ENUM_RE = re.compile(r"#stablehlo<(\w+) (\w+)>")
_I64_RE = re.compile(r"(-?\d+) : i64")
_I32_RE = re.compile(r"(-?\d+) : i32")
_DOT_FIELD_RE = re.compile(r"(\w+) = \[((?:-?\d+(?:, -?\d+)*)?)\]")
_DOT_FIELDS = (
    "lhs_batching_dimensions",
    "rhs_batching_dimensions",
    "lhs_contracting_dimensions",
    "rhs_contracting_dimensions",
)
_INT_ELEMENT_RE = re.compile(r"[su]?i\d+")
_COMPLEX_RE = re.compile(r"complex<(\w+)>")
_SYMBOL_STRING_RE = re.compile(r'"[A-Za-z0-9_$.\- ]*"')
_SYMBOL_REF_RE = re.compile(r"@[A-Za-z_][A-Za-z0-9_$.]*")


@functools.lru_cache(maxsize=4096)
def _i64_list(text: str) -> str:
    """``array<i64: 0, 1>`` -> ``[0, 1]`` (``array<i64>`` -> ``[]``)."""
    m = _I64_ARRAY_RE.fullmatch(text)
    if m is None:
        raise Unsupported(f"not an i64 array: {text[:60]}")
    return "[" + (m.group(1) or "") + "]"


def _ints(p: Printer, op: ir.Op, name: str) -> str:
    return _i64_list(p.prop_text(op, name))


def _enum(p: Printer, op: ir.Op, name: str, kind: str) -> str:
    """``#stablehlo<kind VALUE>`` -> ``VALUE``."""
    m = _ENUM_RE.fullmatch(p.prop_text(op, name))
    if m is None or m.group(1) != kind:
        raise Unsupported(f"{op.name} {name}")
    return m.group(2)


def _integer(p: Printer, op: ir.Op, name: str, pattern: re.Pattern[str] = _I64_RE) -> str:
    m = pattern.fullmatch(p.prop_text(op, name))
    if m is None:
        raise Unsupported(f"{op.name} {name}")
    return m.group(1)


def _stripped(p: Printer, value: Any, prefix: str, suffix: str = "") -> str:
    """A dialect attribute's text without its ``#dialect.name`` prefix (`printStripped...`)."""
    text = p.attr_text(value)
    if not text.startswith(prefix) or not text.endswith(suffix):
        raise Unsupported(f"expected {prefix}...: {text[:60]}")
    return text[len(prefix) : len(text) - len(suffix)]


def _only(op: ir.Op, operands: int | None, results: int | None) -> None:
    """Give up unless the op has this many operands/results and no regions."""
    if operands is not None and len(op.operands) != operands:
        raise Unsupported(f"{op.name} with {len(op.operands)} operands")
    if results is not None and len(op.results) != results:
        raise Unsupported(f"{op.name} with {len(op.results)} results")
    if op.regions:
        raise Unsupported(f"{op.name} with regions")


def _same_type(p: Printer, op: ir.Op) -> str:
    """StableHLO's ``SameOperandsAndResultType``: one type if all equal, else functional.

    The ops printed so are elementwise: operands and result of another shape would fail MLIR's
    verifier, so they give up (the MLIR path reports them).
    """
    result = op.results[0].type
    for v in op.operands:
        if v.type is not result and v.type != result:
            if op.name != "stablehlo.clamp":  # its bounds may be 0-d
                _same_shapes(op)
            return p.functional_type(op)
    return p.type_text(result)


def _same_shapes(op: ir.Op) -> None:
    shapes = {getattr(v.type, "shape", None) for v in (*op.operands, *op.results)}
    if len(shapes) != 1 or None in shapes:
        raise Unsupported(f"{op.name} operands and result of different shapes")


# -- builtin and func -------------------------------------------------------------------------


@_register("builtin.module")
def _module(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    text = name
    sym = op.properties.get("sym_name")
    if sym is not None:
        text += " " + p.symbol(sym)
    attrs = p.attr_dict(op, ("sym_name",))
    if attrs:
        text += " attributes" + attrs
    return text + " " + p.region(op.regions[0], indent, "")


@_register("func.func")
def _func(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    if len(op.regions) != 1 or len(op.regions[0].blocks) != 1:
        raise Unsupported("func.func without a body")
    region = op.regions[0]
    body = p.region(region, indent, "func")
    args = region.blocks[0].args
    arg_dicts = _attr_dicts(op, "arg_attrs", len(args))
    parts = []
    for i, arg in enumerate(args):
        text = p.names[arg] + ": " + p.type_text(arg.type)
        if arg_dicts is not None:
            _check_func_sharding(p, arg_dicts[i], arg.type)
            text += _dict_suffix(p, arg_dicts[i])
        parts.append(text)
    result_types = ir.func_result_types(op)
    type_texts = [p.type_text(t) for t in result_types]
    # The signature is printed from the entry block and `function_type`'s results: they must
    # agree on the arguments (a pass may spell one result ``-> (t)``, which MLIR prints ``t``).
    inputs = "(" + ", ".join(p.type_text(a.type) for a in args) + ") -> "
    signature = p.attr_text(op.properties.get("function_type"))
    if signature != inputs + "(" + ", ".join(type_texts) + ")" and (
        len(type_texts) != 1 or signature != inputs + type_texts[0]
    ):
        raise Unsupported("func.func whose function_type is not its arguments'")
    text = name + " "
    visibility = op.properties.get("sym_visibility")
    if visibility is not None:
        m = re.fullmatch(r'"(public|private|nested)"', p.attr_text(visibility))
        if m is None:
            raise Unsupported("func visibility")
        text += m.group(1) + " "
    text += p.symbol(op.properties.get("sym_name")) + "(" + ", ".join(parts) + ")"
    if type_texts:
        text += " -> " + _func_results(p, op, type_texts)
    elided = ("sym_name", "function_type", "sym_visibility", "arg_attrs", "res_attrs")
    attrs = p.attr_dict(op, elided)
    if attrs:
        text += " attributes" + attrs
    return text + " " + body


def _attr_dicts(op: ir.Op, key: str, count: int) -> list[Any] | None:
    array = op.properties.get(key)
    if array is None:
        return None
    if type(array) is not ir.ArrayAttr or len(array.elements) != count:
        raise Unsupported(f"func.func {key}")
    if any(type(d) is not ir.DictAttr for d in array.elements):
        raise Unsupported(f"func.func {key}")
    return array.elements


def _dict_suffix(p: Printer, attrs: ir.DictAttr) -> str:
    text = p.entries_text(attrs.entries, ())
    return " {" + text + "}" if text else ""


def _check_func_sharding(p: Printer, attrs: ir.DictAttr, type: ir.Type) -> None:
    sharding = attrs.entries.get("sdy.sharding")
    if sharding is not None:
        p.check_sharding(sharding, [type], per_value=False)


def _func_results(p: Printer, op: ir.Op, type_texts: list[str]) -> str:
    dicts = _attr_dicts(op, "res_attrs", len(type_texts))
    if dicts is not None:
        for d, t in zip(dicts, ir.func_result_types(op), strict=True):
            _check_func_sharding(p, d, t)
    suffixes = [_dict_suffix(p, d) for d in dicts] if dicts is not None else [""] * len(type_texts)
    if len(type_texts) == 1 and not suffixes[0]:
        return type_texts[0]
    return "(" + ", ".join(t + s for t, s in zip(type_texts, suffixes, strict=True)) + ")"


@_register("func.call")
def _call(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    _only(op, None, None)
    callee = p.prop_text(op, "callee")
    if not _SYMBOL_REF_RE.fullmatch(callee):
        raise Unsupported(f"callee {callee}")
    text = name + " " + callee
    return (
        text
        + "("
        + p.operands(op)
        + ")"
        + p.attr_dict(op, ("callee",))
        + " : "
        + p.functional_type(op)
    )


@_register("func.return")
def _func_return(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    _only(op, None, 0)
    func = op.parent_op
    if func is None or func.name != "func.func":
        raise Unsupported("func.return outside a func.func")
    if [v.type for v in op.operands] != ir.func_result_types(func):
        raise Unsupported("func.return of other types than the function's results")
    text = name + p.attr_dict(op)
    if op.operands:
        text += " " + p.operands(op) + " : " + p.types_text(op.operands)
    return text


# -- sdy --------------------------------------------------------------------------------------


@_register("sdy.mesh")
def _mesh(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    _only(op, 0, 0)
    mesh = _stripped(p, op.properties.get("mesh"), "#sdy.mesh<", "")
    text = name + " " + p.symbol(op.properties.get("sym_name")) + " = <" + mesh
    return text + p.attr_dict(op, ("sym_name", "mesh"))


@_register("sdy.reshard", "sdy.sharding_constraint")
def _reshard(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    _only(op, 1, 1)
    value = op.properties.get("sharding")
    p.check_sharding(value, [op.results[0].type], per_value=False)
    sharding = _stripped(p, value, "#sdy.sharding<")
    text = name + " " + p.operands(op) + " <" + sharding + p.attr_dict(op, ("sharding",))
    return text + " : " + p.type_text(op.results[0].type)


@_register("sdy.constant", "stablehlo.constant")
def _constant(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    _only(op, 0, 1)
    value = p.prop_text(op, "value")
    if not value.endswith(" : " + p.type_text(op.results[0].type)):
        raise Unsupported("constant of another type than its result")
    return name + p.attr_dict(op, ("value",)) + " " + value


@_register("sdy.return")
def _sdy_return(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    _only(op, None, 0)
    text = name + p.attr_dict(op)
    if op.operands:
        text += " " + p.operands(op) + " : " + p.types_text(op.operands)
    return text


@_register("sdy.manual_computation")
def _manual_computation(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    if len(op.regions) != 1:
        raise Unsupported("manual_computation regions")
    region = op.regions[0]
    axes = op.properties.get("manual_axes")
    names = getattr(axes, "axes", None)
    if names is None:
        raise Unsupported("manual_computation manual_axes")
    outer = p.manual_axes
    p.manual_axes = {**outer, **{n: op.location for n in names if n not in outer}}
    try:
        body = p.region(region, indent, "")
    finally:
        p.manual_axes = outer
    ins = _stripped(p, op.properties.get("in_shardings"), "#sdy.sharding_per_value<", ">")
    outs = _stripped(p, op.properties.get("out_shardings"), "#sdy.sharding_per_value<", ">")
    axes = _stripped(p, op.properties.get("manual_axes"), "#sdy<manual_axes", ">")
    text = name + "(" + p.operands(op) + ") in_shardings=" + ins + " out_shardings=" + outs
    text += " manual_axes=" + axes + " (" + p.region_args(region.blocks[0]) + ") " + body
    elided = ("in_shardings", "out_shardings", "manual_axes")
    return text + p.attr_dict(op, elided) + " : " + p.functional_type(op)


_DIRECTIONS = {"0 : i32": "NONE", "1 : i32": "FORWARD", "2 : i32": "BACKWARD", "3 : i32": "BOTH"}


@_register("sdy.propagation_barrier")
def _propagation_barrier(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    _only(op, 1, 1)
    direction = _DIRECTIONS.get(p.prop_text(op, "allowed_direction"))
    if direction is None:
        raise Unsupported("propagation_barrier direction")
    text = name + " " + p.operands(op) + " allowed_direction=" + direction
    return text + p.attr_dict(op, ("allowed_direction",)) + " : " + p.types_text(op.operands)


@_register("sdy.sharding_group")
def _sharding_group(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    _only(op, 1, 0)
    text = name + " " + p.operands(op) + " group_id=" + _integer(p, op, "group_id")
    return text + p.attr_dict(op, ("group_id",)) + " : " + p.types_text(op.operands)


@_register("sdy.func_data_flow_edge")
def _func_data_flow_edge(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    _only(op, 1, 1)
    return name + " " + p.operands(op) + p.attr_dict(op) + " : " + p.type_text(op.results[0].type)


@_register("sdy.named_computation")
def _named_computation(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    if len(op.regions) != 1:
        raise Unsupported("named_computation regions")
    region = op.regions[0]
    body = p.region(region, indent, "")
    label = p.prop_text(op, "name")
    if not _SYMBOL_STRING_RE.fullmatch(label):
        raise Unsupported("named_computation name")
    text = name + "<" + label + ">(" + p.operands(op) + ")"
    for key in ("in_shardings", "out_shardings"):
        value = op.properties.get(key)
        if value is not None:
            text += " " + key + "=" + _stripped(p, value, "#sdy.sharding_per_value<", ">")
    text += " (" + p.region_args(region.blocks[0]) + ") " + body
    elided = ("name", "in_shardings", "out_shardings")
    return text + p.attr_dict(op, elided) + " : " + p.functional_type(op)


# -- StableHLO: elementwise -------------------------------------------------------------------

_UNARY = (
    "abs cbrt ceil convert count_leading_zeros cosine exponential exponential_minus_one floor "
    "imag log log_plus_one logistic not negate popcnt real round_nearest_afz round_nearest_even "
    "rsqrt sign sine sqrt tan tanh"
).split()
_BINARY = (
    "add atan2 divide maximum minimum multiply power remainder shift_left "
    "shift_right_arithmetic shift_right_logical subtract and or xor"
).split()
# StableHLO ops with the `IsCommutative` trait: the reducers of a compact `reduce`.
_COMMUTATIVE = frozenset(
    "stablehlo." + n for n in ("add", "maximum", "minimum", "multiply", "and", "or", "xor")
)


@_register(*("stablehlo." + n for n in _UNARY))
def _unary(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    _only(op, 1, 1)
    if op.properties:  # result_accuracy: elided when default, not verified here
        raise Unsupported(f"{op.name} properties")
    return name + " " + p.operands(op) + p.attr_dict(op) + " : " + _same_type(p, op)


@_register(*("stablehlo." + n for n in _BINARY), "stablehlo.clamp")
def _binary(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    if op.properties or op.regions or len(op.results) != 1:
        raise Unsupported(f"{op.name} form")
    operands = op.operands
    if len(operands) != 2:
        if op.name != "stablehlo.clamp" or len(operands) != 3:
            raise Unsupported(f"{op.name} operands")
        return name + " " + p.operands(op) + p.attr_dict(op) + " : " + _same_type(p, op)
    names = p.names
    text = name + " " + names[operands[0]] + ", " + names[operands[1]]
    return text + p.attr_dict(op) + " : " + _same_type(p, op)


@_register("stablehlo.complex")
def _complex(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    _only(op, 2, 1)
    result = op.results[0].type
    if type(result) is not ir.TensorType or op.properties:
        raise Unsupported("complex")
    m = _COMPLEX_RE.fullmatch(result.element_type)
    if m is None:
        raise Unsupported("complex element type")
    # str, not `type_text`: its cache is by identity, and this type is a temporary.
    real = str(ir.TensorType(result.shape, m.group(1), result.encoding))
    if all(p.type_text(v.type) == real for v in op.operands):
        types = p.type_text(result)
    else:
        types = p.functional_type(op)
    return name + " " + p.operands(op) + p.attr_dict(op) + " : " + types


@_register(
    "stablehlo.reshape",
    "stablehlo.bitcast_convert",
    "stablehlo.dynamic_update_slice",
    "stablehlo.is_finite",
)
def _operands_functional(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    _only(op, None, 1)
    if not op.operands or op.properties:
        raise Unsupported(f"{op.name} form")
    return name + " " + p.operands(op) + p.attr_dict(op) + " : " + p.functional_type(op)


@_register("stablehlo.compare")
def _compare(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    _only(op, 2, 1)
    text = name + " " + _enum(p, op, "comparison_direction", "comparison_direction")
    text += ", " + p.operands(op)
    if "compare_type" in op.properties:
        text += ", " + _enum(p, op, "compare_type", "comparison_type")
    elided = ("comparison_direction", "compare_type")
    return text + p.attr_dict(op, elided) + " : " + p.functional_type(op)


@_register("stablehlo.select")
def _select(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    _only(op, 3, 1)
    if op.properties:
        raise Unsupported("select properties")
    type_text = p.type_text
    result = type_text(op.results[0].type)
    pred, on_true, on_false = (type_text(v.type) for v in op.operands)
    if on_true == result and on_false == result:
        types = pred + ", " + result
    else:
        types = p.functional_type(op)
    return name + " " + p.operands(op) + p.attr_dict(op) + " : " + types


# -- StableHLO: shapes, slices, contractions --------------------------------------------------


def _with_dims(keyword: str, attr: str, same_type: bool = False) -> OpPrinter:
    """``name %x, <keyword> = [..] {attrs} : types`` (broadcast_in_dim, transpose, reverse)."""

    def print_op(p: Printer, op: ir.Op, indent: str, name: str) -> str:
        _only(op, 1, 1)
        text = name + " " + p.operands(op) + ", " + keyword + " = " + _ints(p, op, attr)
        types = _same_type(p, op) if same_type else p.functional_type(op)
        return text + p.attr_dict(op, (attr,)) + " : " + types

    return print_op


_register("stablehlo.broadcast_in_dim")(_with_dims("dims", "broadcast_dimensions"))
_register("stablehlo.transpose")(_with_dims("dims", "permutation"))
_register("stablehlo.reverse")(_with_dims("dims", "dimensions", same_type=True))


@_register("stablehlo.iota")
def _iota(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    _only(op, 0, 1)
    text = name + " dim = " + _integer(p, op, "iota_dimension")
    return text + p.attr_dict(op, ("iota_dimension",)) + " : " + p.type_text(op.results[0].type)


@_register("stablehlo.slice")
def _slice(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    _only(op, 1, 1)
    starts = _ints(p, op, "start_indices")[1:-1].split(", ")
    limits = _ints(p, op, "limit_indices")[1:-1].split(", ")
    strides = _ints(p, op, "strides")[1:-1].split(", ")
    if not (len(starts) == len(limits) == len(strides)):
        raise Unsupported("slice of mismatched ranks")
    ranges = []
    for start, limit, stride in zip(starts, limits, strides, strict=True):
        if start == "":
            continue  # rank 0: the empty list
        ranges.append(start + ":" + limit + ("" if stride == "1" else ":" + stride))
    text = name + " " + p.operands(op) + " [" + ", ".join(ranges) + "]"
    elided = ("start_indices", "limit_indices", "strides")
    return text + p.attr_dict(op, elided) + " : " + p.functional_type(op)


@_register("stablehlo.concatenate")
def _concatenate(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    _only(op, None, 1)
    if not op.operands:
        raise Unsupported("concatenate of nothing")
    text = name + " " + p.operands(op) + ", dim = " + _integer(p, op, "dimension")
    return text + p.attr_dict(op, ("dimension",)) + " : " + p.functional_type(op)


@_register("stablehlo.dynamic_slice")
def _dynamic_slice(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    _only(op, None, 1)
    if len(op.operands) < 2:
        raise Unsupported("dynamic_slice without indices")
    text = name + " " + p.operands(op) + ", sizes = " + _ints(p, op, "slice_sizes")
    return text + p.attr_dict(op, ("slice_sizes",)) + " : " + p.functional_type(op)


@_register("stablehlo.pad")
def _pad(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    _only(op, 2, 1)
    text = name + " " + p.operands(op)
    text += ", low = " + _ints(p, op, "edge_padding_low")
    text += ", high = " + _ints(p, op, "edge_padding_high")
    text += ", interior = " + _ints(p, op, "interior_padding")
    elided = ("edge_padding_low", "edge_padding_high", "interior_padding")
    return text + p.attr_dict(op, elided) + " : " + p.functional_type(op)


@_register("stablehlo.fft")
def _fft(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    _only(op, 1, 1)
    text = name + " " + p.operands(op) + ", type = " + _enum(p, op, "fft_type", "fft_type")
    text += ", length = " + _ints(p, op, "fft_length")
    return text + p.attr_dict(op, ("fft_type", "fft_length")) + " : " + p.functional_type(op)


@_register("stablehlo.reduce_precision")
def _reduce_precision(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    _only(op, 1, 1)
    exponent = _integer(p, op, "exponent_bits", _I32_RE)
    mantissa = _integer(p, op, "mantissa_bits", _I32_RE)
    text = name + " " + p.operands(op) + ", format = e" + exponent + "m" + mantissa
    elided = ("exponent_bits", "mantissa_bits")
    return text + p.attr_dict(op, elided) + " : " + _same_type(p, op)


@_register("stablehlo.dot_general")
def _dot_general(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    _only(op, 2, 1)
    if "algorithm" in op.properties:
        raise Unsupported("dot_general algorithm")
    text = name + " " + p.operands(op) + ", " + _dot_dims(p.prop_text(op, "dot_dimension_numbers"))
    precision = op.properties.get("precision_config")
    if precision is not None:
        text += ", precision = " + _precisions(p.attr_text(precision))
    elided = ("dot_dimension_numbers", "precision_config")
    return text + p.attr_dict(op, elided) + " : " + p.functional_type(op)


@functools.lru_cache(maxsize=1024)
def _dot_dims(text: str) -> str:
    """``#stablehlo.dot<lhs_contracting_dimensions = [2], ...>`` -> ``contracting_dims = ...``."""
    if not (text.startswith("#stablehlo.dot<") and text.endswith(">")):
        raise Unsupported("dot dimension numbers")
    fields = dict(_DOT_FIELD_RE.findall(text))
    rebuilt = ", ".join(f"{k} = [{fields[k]}]" for k in _DOT_FIELDS if fields.get(k))
    if "#stablehlo.dot<" + rebuilt + ">" != text or not set(fields) <= set(_DOT_FIELDS):
        raise Unsupported("dot dimension numbers")
    out = ""
    if fields.get("lhs_batching_dimensions") or fields.get("rhs_batching_dimensions"):
        lhs, rhs = (
            fields.get("lhs_batching_dimensions", ""),
            fields.get("rhs_batching_dimensions", ""),
        )
        out = f"batching_dims = [{lhs}] x [{rhs}], "
    lhs, rhs = (
        fields.get("lhs_contracting_dimensions", ""),
        fields.get("rhs_contracting_dimensions", ""),
    )
    return out + f"contracting_dims = [{lhs}] x [{rhs}]"


@functools.lru_cache(maxsize=256)
def _precisions(text: str) -> str:
    """``[#stablehlo<precision DEFAULT>, ...]`` -> ``[DEFAULT, ...]``."""
    if not (text.startswith("[") and text.endswith("]")):
        raise Unsupported("precision config")
    inner = text[1:-1]
    values = []
    for part in inner.split(", ") if inner else []:
        m = _ENUM_RE.fullmatch(part)
        if m is None or m.group(1) != "precision":
            raise Unsupported("precision config")
        values.append(m.group(2))
    return "[" + ", ".join(values) + "]"


# -- StableHLO: ops with regions, calls, misc ---------------------------------------------


@_register("stablehlo.reduce")
def _reduce(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    n = len(op.operands) // 2
    if len(op.regions) != 1 or n == 0 or len(op.operands) != 2 * n:
        raise Unsupported("reduce form")
    names = p.names
    operands = op.operands
    pairs = ", ".join(f"({names[operands[i]]} init: {names[operands[i + n]]})" for i in range(n))
    region = op.regions[0]
    compact = _compact_reducer(p, op)
    body = "" if compact is not None else p.region(region, indent, "")
    text = name + pairs
    if compact is not None:
        text += " applies " + compact
    text += " across dimensions = " + _ints(p, op, "dimensions")
    text += p.attr_dict(op, ("dimensions",)) + " : " + p.functional_type(op)
    if compact is not None:
        return text
    args = region.blocks[0].args
    if len(args) != 2 * n:
        raise Unsupported("reduce block arguments")
    type_text = p.type_text
    text += "\n" + indent + " reducer"
    for i in range(n):
        a, b = args[i], args[i + n]
        text += f"({names[a]}: {type_text(a.type)}, {names[b]}: {type_text(b.type)}) "
    return text + " " + body


def _compact_reducer(p: Printer, op: ir.Op) -> str | None:
    """The reducer's name if MLIR prints the reduce compactly (``applies stablehlo.add``).

    StableHLO's rule: the body is one commutative binary StableHLO op with no region whose
    operands and result all have one type, a 0-d tensor of the first input's element type,
    applied to the block arguments in order, its result returned as is.
    """
    region = op.regions[0]
    if len(region.blocks) != 1:
        return None
    block = region.blocks[0]
    if len(block.ops) != 2:
        return None
    inner, ret = block.ops
    if inner.name not in _COMMUTATIVE or inner.regions or len(inner.results) != 1:
        return None
    if len(inner.operands) != 2:
        return None
    first = inner.operands[0].type
    if any(v.type != first for v in (*inner.operands, *inner.results)):
        return None
    input_type = op.operands[0].type
    if type(input_type) is not ir.TensorType or type(first) is not ir.TensorType:
        return None
    if first.shape != () or first.element_type != input_type.element_type or first.encoding:
        return None
    if len(block.args) != 2 or any(
        a is not b for a, b in zip(block.args, inner.operands, strict=True)
    ):
        return None
    if ret.name.split(".", 1)[-1] != "return" or len(ret.operands) != 1:
        return None
    if ret.operands[0] is not inner.results[0]:
        return None
    return inner.name


@_register("stablehlo.while")
def _while(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    if len(op.regions) != 2 or not op.operands or op.properties:
        raise Unsupported("while form")
    cond = p.region(op.regions[0], indent, "")
    body = p.region(op.regions[1], indent, "")
    args = op.regions[1].blocks[0].args
    if len(args) != len(op.operands):
        raise Unsupported("while arguments")
    names = p.names
    pairs = ", ".join(f"{names[a]} = {names[v]}" for a, v in zip(args, op.operands, strict=True))
    text = name + "(" + pairs + ") : " + p.types_text(op.operands)
    attrs = p.attr_dict(op)
    if attrs:
        text += " attributes" + attrs
    return text + "\n" + indent + "cond " + cond + " do " + body


@_register("stablehlo.return")
def _hlo_return(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    _only(op, None, 0)
    if not op.operands:
        return name + p.attr_dict(op)
    return name + " " + p.operands(op) + p.attr_dict(op) + " : " + p.types_text(op.operands)


@_register("stablehlo.optimization_barrier")
def _optimization_barrier(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    _only(op, None, len(op.operands))
    if not op.operands or op.properties:
        raise Unsupported("optimization_barrier form")
    return name + p.attr_dict(op) + " " + p.operands(op) + " : " + p.types_text(op.operands)


# Defaults of custom_call's attributes: ODS leaves an attribute equal to its default out of
# the attribute dictionary.
_CUSTOM_CALL_DEFAULTS = {
    "api_version": "1 : i32",
    "has_side_effect": "false",
    "called_computations": "[]",
    "output_operand_aliases": "[]",
}


@_register("stablehlo.custom_call")
def _custom_call(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    _only(op, None, None)
    target = p.symbol(p.prop_text(op, "call_target_name"))
    elided = ["call_target_name"]
    for key, default in _CUSTOM_CALL_DEFAULTS.items():
        value = op.properties.get(key)
        if value is not None and p.attr_text(value) == default:
            elided.append(key)
    text = name + " " + target + "(" + p.operands(op) + ")"
    return text + p.attr_dict(op, tuple(elided)) + " : " + p.functional_type(op)


@_register("stablehlo.dot")
def _dot(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    _only(op, 2, 1)
    text = name + " " + p.operands(op)
    precision = op.properties.get("precision_config")
    if precision is not None:
        text += ", precision = " + _precisions(p.attr_text(precision))
    return text + p.attr_dict(op, ("precision_config",)) + " : " + p.functional_type(op)


_CONV_WINDOW = (
    ("window_strides", "stride"),
    ("padding", "pad"),
    ("lhs_dilation", "lhs_dilate"),
    ("rhs_dilation", "rhs_dilate"),
    ("window_reversal", "reverse"),
)
_CONV_DIMS_RE = re.compile(r"#stablehlo\.conv<(\[[\w, ]*\]x\[[\w, ]*\]->\[[\w, ]*\])>")
_BOOL_ARRAY_RE = re.compile(r"array<i1(?:: ((?:true|false)(?:, (?:true|false))*))?>")
_PADDING_RE = re.compile(r"dense<(.*)> : tensor<(\d+)x2xi64>")


@_register("stablehlo.convolution")
def _convolution(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    _only(op, 2, 1)
    m = _CONV_DIMS_RE.fullmatch(p.prop_text(op, "dimension_numbers"))
    if m is None:
        raise Unsupported("convolution dimension numbers")
    window = []
    for key, label in _CONV_WINDOW:
        value = op.properties.get(key)
        if value is None:
            continue
        text = p.attr_text(value)
        if key == "padding":
            window.append("pad = [" + _padding(text) + "]")
        elif key == "window_reversal":
            b = _BOOL_ARRAY_RE.fullmatch(text)
            if b is None:
                raise Unsupported("convolution window_reversal")
            window.append("reverse = [" + (b.group(1) or "") + "]")
        else:
            window.append(label + " = " + _i64_list(text))
    text = name + "(" + p.operands(op) + ") dim_numbers = " + m.group(1)
    text += ", window = {" + ", ".join(window) + "}"
    elided = ("dimension_numbers", *(key for key, _ in _CONV_WINDOW))
    return text + p.attr_dict(op, elided) + " : " + p.functional_type(op)


@functools.lru_cache(maxsize=256)
def _padding(text: str) -> str:
    """A ``dense<..> : tensor<Nx2xi64>`` padding as ``[lo, hi], [lo, hi]``."""
    m = _PADDING_RE.fullmatch(text)
    if m is None:
        raise Unsupported("convolution padding")
    rows = int(m.group(2))
    body = m.group(1)
    if re.fullmatch(r"-?\d+", body):
        return ", ".join([f"[{body}, {body}]"] * rows)
    pairs = re.findall(r"\[(-?\d+), (-?\d+)\]", body)
    if "[" + ", ".join(f"[{a}, {b}]" for a, b in pairs) + "]" != body or len(pairs) != rows:
        raise Unsupported("convolution padding")
    return ", ".join(f"[{a}, {b}]" for a, b in pairs)


_CHLO_UNARY = (
    "acos acosh asin asinh atan atanh bessel_i1e conj cosh sinh tan digamma erf erf_inv erfc "
    "is_inf lgamma square"
).split()


@_register(*("chlo." + n for n in _CHLO_UNARY))
def _chlo_unary(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    _only(op, 1, 1)
    _same_shapes(op)
    text = name + " " + p.operands(op) + p.attr_dict(op) + " : "
    return text + p.type_text(op.operands[0].type) + " -> " + p.type_text(op.results[0].type)


@_register("chlo.top_k")
def _top_k(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    _only(op, 1, 2)
    if "is_stable" in op.properties:  # not in the jaxlib this was tested with
        raise Unsupported("top_k is_stable")
    text = name + "(" + p.operands(op) + ", k = " + _integer(p, op, "k")
    text += ")" + p.attr_dict(op, ("k",)) + " : "
    return text + p.type_text(op.operands[0].type) + " -> (" + p.types_text(op.results) + ")"


# Ops without a custom form: MLIR prints them generically, with pretty value names.
_GENERIC = (
    "gather scatter sort case if all_reduce all_gather reduce_scatter all_to_all "
    "collective_permute reduce_window select_and_scatter"
).split()


@_register(*("stablehlo." + n for n in _GENERIC))
def _generic(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    return p.generic(op, indent)


def _constant_name(op: ir.Op) -> list[str]:
    """``stablehlo.constant``'s result name: ``c`` for integer elements, else ``cst``."""
    type = op.results[0].type if op.results else None
    if type is None or type.__class__ is not ir.TensorType:
        raise Unsupported("constant type")
    return ["c" if _INT_ELEMENT_RE.fullmatch(type.element_type) else "cst"]


# Ops that name their results (`getAsmResultNames`): one name per result.
NAME_HINTS: dict[str, Callable[[ir.Op], list[str]]] = {
    "stablehlo.constant": _constant_name,
    "chlo.top_k": lambda op: ["values", "indices"],
}
