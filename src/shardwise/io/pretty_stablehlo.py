"""Per-op custom assembly formats of StableHLO and CHLO ops for `pretty_printer`.

The formats of ``StablehloOps.td`` / ``ChloOps.td`` (``assemblyFormat``) and of StableHLO's
``AssemblyFormat.cpp`` / ``StablehloOps.cpp`` custom printers, each tested against the MLIR
bindings; registered into `pretty_ops.OP_PRINTERS` (see `pretty_ops` for the contract).
"""

from __future__ import annotations

import functools
import re

from shardwise import ir
from shardwise.errors import ShardwiseError
from shardwise.io.pretty_ops import (
    ENUM_RE,
    I32_RE,
    NAME_HINTS,
    enum_value,
    i64_list,
    integer,
    ints,
    only,
    register,
    same_shapes,
    same_type,
)
from shardwise.io.pretty_printer import OpPrinter, Printer, Unsupported
from shardwise.rules.stablehlo_attrs import parse_dot_dimension_numbers

__all__: list[str] = []

_INT_ELEMENT_RE = re.compile(r"[su]?i\d+")
_COMPLEX_RE = re.compile(r"complex<(\w+)>")


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


@register(*("stablehlo." + n for n in _UNARY))
def _unary(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    only(op, 1, 1)
    if op.properties:  # result_accuracy: elided when default, not verified here
        raise Unsupported(f"{op.name} properties")
    return name + " " + p.operands(op) + p.attr_dict(op) + " : " + same_type(p, op)


@register(*("stablehlo." + n for n in _BINARY), "stablehlo.clamp")
def _binary(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    if op.properties or op.regions or len(op.results) != 1:
        raise Unsupported(f"{op.name} form")
    operands = op.operands
    if len(operands) != 2:
        if op.name != "stablehlo.clamp" or len(operands) != 3:
            raise Unsupported(f"{op.name} operands")
        return name + " " + p.operands(op) + p.attr_dict(op) + " : " + same_type(p, op)
    names = p.names
    text = name + " " + names[operands[0]] + ", " + names[operands[1]]
    return text + p.attr_dict(op) + " : " + same_type(p, op)


@register("stablehlo.complex")
def _complex(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    only(op, 2, 1)
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


@register(
    "stablehlo.reshape",
    "stablehlo.bitcast_convert",
    "stablehlo.dynamic_update_slice",
    "stablehlo.is_finite",
)
def _operands_functional(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    only(op, None, 1)
    if not op.operands or op.properties:
        raise Unsupported(f"{op.name} form")
    return name + " " + p.operands(op) + p.attr_dict(op) + " : " + p.functional_type(op)


@register("stablehlo.compare")
def _compare(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    only(op, 2, 1)
    text = name + " " + enum_value(p, op, "comparison_direction", "comparison_direction")
    text += ", " + p.operands(op)
    if "compare_type" in op.properties:
        text += ", " + enum_value(p, op, "compare_type", "comparison_type")
    elided = ("comparison_direction", "compare_type")
    return text + p.attr_dict(op, elided) + " : " + p.functional_type(op)


@register("stablehlo.select")
def _select(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    only(op, 3, 1)
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


def _with_dims(keyword: str, attr: str, one_type: bool = False) -> OpPrinter:
    """``name %x, <keyword> = [..] {attrs} : types`` (broadcast_in_dim, transpose, reverse)."""

    def print_op(p: Printer, op: ir.Op, indent: str, name: str) -> str:
        only(op, 1, 1)
        text = name + " " + p.operands(op) + ", " + keyword + " = " + ints(p, op, attr)
        types = same_type(p, op) if one_type else p.functional_type(op)
        return text + p.attr_dict(op, (attr,)) + " : " + types

    return print_op


register("stablehlo.broadcast_in_dim")(_with_dims("dims", "broadcast_dimensions"))
register("stablehlo.transpose")(_with_dims("dims", "permutation"))
register("stablehlo.reverse")(_with_dims("dims", "dimensions", one_type=True))


@register("stablehlo.iota")
def _iota(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    only(op, 0, 1)
    text = name + " dim = " + integer(p, op, "iota_dimension")
    return text + p.attr_dict(op, ("iota_dimension",)) + " : " + p.type_text(op.results[0].type)


@register("stablehlo.slice")
def _slice(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    only(op, 1, 1)
    starts = ints(p, op, "start_indices")[1:-1].split(", ")
    limits = ints(p, op, "limit_indices")[1:-1].split(", ")
    strides = ints(p, op, "strides")[1:-1].split(", ")
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


@register("stablehlo.concatenate")
def _concatenate(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    only(op, None, 1)
    if not op.operands:
        raise Unsupported("concatenate of nothing")
    text = name + " " + p.operands(op) + ", dim = " + integer(p, op, "dimension")
    return text + p.attr_dict(op, ("dimension",)) + " : " + p.functional_type(op)


@register("stablehlo.dynamic_slice")
def _dynamic_slice(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    only(op, None, 1)
    if len(op.operands) < 2:
        raise Unsupported("dynamic_slice without indices")
    text = name + " " + p.operands(op) + ", sizes = " + ints(p, op, "slice_sizes")
    return text + p.attr_dict(op, ("slice_sizes",)) + " : " + p.functional_type(op)


@register("stablehlo.pad")
def _pad(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    only(op, 2, 1)
    text = name + " " + p.operands(op)
    text += ", low = " + ints(p, op, "edge_padding_low")
    text += ", high = " + ints(p, op, "edge_padding_high")
    text += ", interior = " + ints(p, op, "interior_padding")
    elided = ("edge_padding_low", "edge_padding_high", "interior_padding")
    return text + p.attr_dict(op, elided) + " : " + p.functional_type(op)


@register("stablehlo.fft")
def _fft(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    only(op, 1, 1)
    text = name + " " + p.operands(op) + ", type = " + enum_value(p, op, "fft_type", "fft_type")
    text += ", length = " + ints(p, op, "fft_length")
    return text + p.attr_dict(op, ("fft_type", "fft_length")) + " : " + p.functional_type(op)


@register("stablehlo.reduce_precision")
def _reduce_precision(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    only(op, 1, 1)
    exponent = integer(p, op, "exponent_bits", I32_RE)
    mantissa = integer(p, op, "mantissa_bits", I32_RE)
    text = name + " " + p.operands(op) + ", format = e" + exponent + "m" + mantissa
    elided = ("exponent_bits", "mantissa_bits")
    return text + p.attr_dict(op, elided) + " : " + same_type(p, op)


@register("stablehlo.dot_general")
def _dot_general(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    only(op, 2, 1)
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
    try:
        dims = parse_dot_dimension_numbers(text)
    except ShardwiseError:
        raise Unsupported("dot dimension numbers") from None
    fields = {
        "lhs_batching_dimensions": dims.lhs_batching_dimensions,
        "rhs_batching_dimensions": dims.rhs_batching_dimensions,
        "lhs_contracting_dimensions": dims.lhs_contracting_dimensions,
        "rhs_contracting_dimensions": dims.rhs_contracting_dimensions,
    }
    # Printed back, the fields must give the text itself: no other field, no other spelling.
    rebuilt = ", ".join(f"{k} = [{_joined(v)}]" for k, v in fields.items() if v)
    if "#stablehlo.dot<" + rebuilt + ">" != text:
        raise Unsupported("dot dimension numbers")
    out = ""
    if dims.lhs_batching_dimensions or dims.rhs_batching_dimensions:
        lhs, rhs = _joined(dims.lhs_batching_dimensions), _joined(dims.rhs_batching_dimensions)
        out = f"batching_dims = [{lhs}] x [{rhs}], "
    lhs, rhs = _joined(dims.lhs_contracting_dimensions), _joined(dims.rhs_contracting_dimensions)
    return out + f"contracting_dims = [{lhs}] x [{rhs}]"


def _joined(values: tuple[int, ...]) -> str:
    return ", ".join(map(str, values))


@functools.lru_cache(maxsize=256)
def _precisions(text: str) -> str:
    """``[#stablehlo<precision DEFAULT>, ...]`` -> ``[DEFAULT, ...]``."""
    if not (text.startswith("[") and text.endswith("]")):
        raise Unsupported("precision config")
    inner = text[1:-1]
    values = []
    for part in inner.split(", ") if inner else []:
        m = ENUM_RE.fullmatch(part)
        if m is None or m.group(1) != "precision":
            raise Unsupported("precision config")
        values.append(m.group(2))
    return "[" + ", ".join(values) + "]"


# -- StableHLO: ops with regions, calls, misc ---------------------------------------------


@register("stablehlo.reduce")
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
    text += " across dimensions = " + ints(p, op, "dimensions")
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
        text += f"({names[a]}: {type_text(a.type)}{p.arg_loc(a)}, "
        text += f"{names[b]}: {type_text(b.type)}{p.arg_loc(b)}) "
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


@register("stablehlo.while")
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


@register("stablehlo.return")
def _hlo_return(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    only(op, None, 0)
    if not op.operands:
        return name + p.attr_dict(op)
    return name + " " + p.operands(op) + p.attr_dict(op) + " : " + p.types_text(op.operands)


@register("stablehlo.optimization_barrier")
def _optimization_barrier(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    only(op, None, len(op.operands))
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


@register("stablehlo.custom_call")
def _custom_call(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    only(op, None, None)
    target = p.symbol(p.prop_text(op, "call_target_name"))
    elided = ["call_target_name"]
    for key, default in _CUSTOM_CALL_DEFAULTS.items():
        value = op.properties.get(key)
        if value is not None and p.attr_text(value) == default:
            elided.append(key)
    text = name + " " + target + "(" + p.operands(op) + ")"
    return text + p.attr_dict(op, tuple(elided)) + " : " + p.functional_type(op)


@register("stablehlo.dot")
def _dot(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    only(op, 2, 1)
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


@register("stablehlo.convolution")
def _convolution(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    only(op, 2, 1)
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
            window.append(label + " = " + i64_list(text))
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


@register(*("chlo." + n for n in _CHLO_UNARY))
def _chlo_unary(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    only(op, 1, 1)
    same_shapes(op)
    text = name + " " + p.operands(op) + p.attr_dict(op) + " : "
    return text + p.type_text(op.operands[0].type) + " -> " + p.type_text(op.results[0].type)


@register("chlo.top_k")
def _top_k(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    only(op, 1, 2)
    if "is_stable" in op.properties:  # not in the jaxlib this was tested with
        raise Unsupported("top_k is_stable")
    text = name + "(" + p.operands(op) + ", k = " + integer(p, op, "k")
    text += ")" + p.attr_dict(op, ("k",)) + " : "
    return text + p.type_text(op.operands[0].type) + " -> (" + p.types_text(op.results) + ")"


# Ops without a custom form: MLIR prints them generically, with pretty value names.
_GENERIC = (
    "gather scatter sort case if all_reduce all_gather reduce_scatter all_to_all "
    "collective_permute reduce_window select_and_scatter"
).split()


@register(*("stablehlo." + n for n in _GENERIC))
def _generic(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    return p.generic(op, indent)


def _constant_name(op: ir.Op) -> list[str]:
    """``stablehlo.constant``'s result name: ``c`` for integer elements, else ``cst``."""
    type = op.results[0].type if op.results else None
    if type is None or type.__class__ is not ir.TensorType:
        raise Unsupported("constant type")
    return ["c" if _INT_ELEMENT_RE.fullmatch(type.element_type) else "cst"]


NAME_HINTS["stablehlo.constant"] = _constant_name
NAME_HINTS["chlo.top_k"] = lambda op: ["values", "indices"]
