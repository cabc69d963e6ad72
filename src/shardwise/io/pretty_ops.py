"""Per-op custom assembly formats for `pretty_printer`: builtin, func and sdy (StableHLO and
CHLO in `pretty_stablehlo`), the registry of them all and the helpers they share.

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
from shardwise.io.pretty_printer import (
    OpPrinter,
    Printer,
    Unsupported,
    _Counters,
    _Scope,
    _short_name,
)

__all__ = ["OP_PRINTERS", "NAME_HINTS", "func_signature", "register"]

OP_PRINTERS: dict[str, OpPrinter] = {}
# Ops that name their results (`getAsmResultNames`): one name per result.
NAME_HINTS: dict[str, Callable[[ir.Op], list[str]]] = {}


def register(*names: str) -> Callable[[OpPrinter], OpPrinter]:
    """Decorator: the printer of the ops `names` (each registered once)."""

    def decorate(fn: OpPrinter) -> OpPrinter:
        for name in names:
            if name in OP_PRINTERS:
                raise ValueError(f"two printers for {name}")
            OP_PRINTERS[name] = fn
        return fn

    return decorate


# -- attribute texts --------------------------------------------------------------------------

_I64_ARRAY_RE = re.compile(r"array<i64(?:: (-?\d+(?:, -?\d+)*))?>")
ENUM_RE = re.compile(r"#stablehlo<(\w+) (\w+)>")
I64_RE = re.compile(r"(-?\d+) : i64")
I32_RE = re.compile(r"(-?\d+) : i32")
_SYMBOL_STRING_RE = re.compile(r'"[A-Za-z0-9_$.\- ]*"')
_SYMBOL_REF_RE = re.compile(r"@[A-Za-z_][A-Za-z0-9_$.]*")


@functools.lru_cache(maxsize=4096)
def i64_list(text: str) -> str:
    """``array<i64: 0, 1>`` -> ``[0, 1]`` (``array<i64>`` -> ``[]``)."""
    m = _I64_ARRAY_RE.fullmatch(text)
    if m is None:
        raise Unsupported(f"not an i64 array: {text[:60]}")
    return "[" + (m.group(1) or "") + "]"


def ints(p: Printer, op: ir.Op, name: str) -> str:
    return i64_list(p.prop_text(op, name))


def enum_value(p: Printer, op: ir.Op, name: str, kind: str) -> str:
    """``#stablehlo<kind VALUE>`` -> ``VALUE``."""
    m = ENUM_RE.fullmatch(p.prop_text(op, name))
    if m is None or m.group(1) != kind:
        raise Unsupported(f"{op.name} {name}")
    return m.group(2)


def integer(p: Printer, op: ir.Op, name: str, pattern: re.Pattern[str] = I64_RE) -> str:
    m = pattern.fullmatch(p.prop_text(op, name))
    if m is None:
        raise Unsupported(f"{op.name} {name}")
    return m.group(1)


def stripped(p: Printer, value: Any, prefix: str, suffix: str = "") -> str:
    """A dialect attribute's text without its ``#dialect.name`` prefix (`printStripped...`)."""
    text = p.attr_text(value)
    if not text.startswith(prefix) or not text.endswith(suffix):
        raise Unsupported(f"expected {prefix}...: {text[:60]}")
    return text[len(prefix) : len(text) - len(suffix)]


def only(op: ir.Op, operands: int | None, results: int | None) -> None:
    """Give up unless the op has this many operands/results and no regions."""
    if operands is not None and len(op.operands) != operands:
        raise Unsupported(f"{op.name} with {len(op.operands)} operands")
    if results is not None and len(op.results) != results:
        raise Unsupported(f"{op.name} with {len(op.results)} results")
    if op.regions:
        raise Unsupported(f"{op.name} with regions")


def same_type(p: Printer, op: ir.Op) -> str:
    """StableHLO's ``SameOperandsAndResultType``: one type if all equal, else functional.

    The ops printed so are elementwise: operands and result of another shape would fail MLIR's
    verifier, so they give up (the MLIR path reports them).
    """
    result = op.results[0].type
    for v in op.operands:
        if v.type is not result and v.type != result:
            if op.name != "stablehlo.clamp":  # its bounds may be 0-d
                same_shapes(op)
            return p.functional_type(op)
    return p.type_text(result)


def same_shapes(op: ir.Op) -> None:
    shapes = {getattr(v.type, "shape", None) for v in (*op.operands, *op.results)}
    if len(shapes) != 1 or None in shapes:
        raise Unsupported(f"{op.name} operands and result of different shapes")


# -- builtin and func -------------------------------------------------------------------------


@register("builtin.module")
def _module(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    text = name
    sym = op.properties.get("sym_name")
    if sym is not None:
        text += " " + p.symbol(sym)
    attrs = p.attr_dict(op, ("sym_name",))
    if attrs:
        text += " attributes" + attrs
    return text + " " + p.region(op.regions[0], indent, "")


@register("func.func")
def _func(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    if len(op.regions) != 1 or len(op.regions[0].blocks) != 1:
        raise Unsupported("func.func without a body")
    body = p.region(op.regions[0], indent, "func")
    return _func_signature(p, op, name) + " " + body


def func_signature(module: ir.Module, func: ir.Op) -> str | None:
    """What the printout of `module` (without locations) prints of `func`, a func of its
    body, before the func's own body: ``func.func @main(%arg0: tensor<8xf32> {...}) -> ...``.
    It reads nothing of the body but the arguments' names, and the body's printout nothing of
    it: a change to the signature's attributes changes only this text. None where the printer
    gives up."""
    if len(func.regions) != 1 or len(func.regions[0].blocks) != 1:
        return None
    p = Printer(OP_PRINTERS, NAME_HINTS)
    p.meshes = module.meshes()
    try:
        # A func's region is numbered from the module's counters: no values, no arguments.
        p.name_args(func.regions[0], _Counters(0, 0, 0, _Scope(None)))
        return _func_signature(p, func, _short_name(func.name, ""))
    except Unsupported:
        return None


def _func_signature(p: Printer, op: ir.Op, name: str) -> str:
    """`_func`'s text before the body (the region numbered: its arguments named)."""
    args = op.regions[0].blocks[0].args
    arg_dicts = _attr_dicts(op, "arg_attrs", len(args))
    parts = []
    for i, arg in enumerate(args):
        text = p.names[arg] + ": " + p.type_text(arg.type)
        if arg_dicts is not None:
            _check_func_sharding(p, arg_dicts[i], arg.type)
            text += _dict_suffix(p, arg_dicts[i])
        parts.append(text + p.arg_loc(arg))
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
    return text


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


@register("func.call")
def _call(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    only(op, None, None)
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


@register("func.return")
def _func_return(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    only(op, None, 0)
    func = op.parent_op
    if func is None or func.name != "func.func":
        raise Unsupported("func.return outside a func.func")
    if [v.type for v in op.operands] != ir.func_result_types(func):
        raise Unsupported("func.return of other types than the function's results")
    return _return_form(p, op, name)


def _return_form(p: Printer, op: ir.Op, name: str) -> str:
    """``name {attrs} %a, %b : type, type`` (func's and sdy's return)."""
    text = name + p.attr_dict(op)
    if op.operands:
        text += " " + p.operands(op) + " : " + p.types_text(op.operands)
    return text


# -- sdy --------------------------------------------------------------------------------------


@register("sdy.mesh")
def _mesh(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    only(op, 0, 0)
    mesh = stripped(p, op.properties.get("mesh"), "#sdy.mesh<", "")
    text = name + " " + p.symbol(op.properties.get("sym_name")) + " = <" + mesh
    return text + p.attr_dict(op, ("sym_name", "mesh"))


@register("sdy.reshard", "sdy.sharding_constraint")
def _reshard(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    only(op, 1, 1)
    value = op.properties.get("sharding")
    p.check_sharding(value, [op.results[0].type], per_value=False)
    sharding = stripped(p, value, "#sdy.sharding<")
    text = name + " " + p.operands(op) + " <" + sharding + p.attr_dict(op, ("sharding",))
    return text + " : " + p.type_text(op.results[0].type)


@register("sdy.constant", "stablehlo.constant")
def _constant(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    only(op, 0, 1)
    value = p.prop_text(op, "value")
    if not value.endswith(" : " + p.type_text(op.results[0].type)):
        raise Unsupported("constant of another type than its result")
    return name + p.attr_dict(op, ("value",)) + " " + value


@register("sdy.return")
def _sdy_return(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    only(op, None, 0)
    return _return_form(p, op, name)


@register("sdy.manual_computation")
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
    ins = stripped(p, op.properties.get("in_shardings"), "#sdy.sharding_per_value<", ">")
    outs = stripped(p, op.properties.get("out_shardings"), "#sdy.sharding_per_value<", ">")
    axes = stripped(p, op.properties.get("manual_axes"), "#sdy<manual_axes", ">")
    text = name + "(" + p.operands(op) + ") in_shardings=" + ins + " out_shardings=" + outs
    text += " manual_axes=" + axes + " (" + p.region_args(region.blocks[0]) + ") " + body
    elided = ("in_shardings", "out_shardings", "manual_axes")
    return text + p.attr_dict(op, elided) + " : " + p.functional_type(op)


_DIRECTIONS = {"0 : i32": "NONE", "1 : i32": "FORWARD", "2 : i32": "BACKWARD", "3 : i32": "BOTH"}


@register("sdy.propagation_barrier")
def _propagation_barrier(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    only(op, 1, 1)
    direction = _DIRECTIONS.get(p.prop_text(op, "allowed_direction"))
    if direction is None:
        raise Unsupported("propagation_barrier direction")
    text = name + " " + p.operands(op) + " allowed_direction=" + direction
    return text + p.attr_dict(op, ("allowed_direction",)) + " : " + p.types_text(op.operands)


@register("sdy.sharding_group")
def _sharding_group(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    only(op, 1, 0)
    text = name + " " + p.operands(op) + " group_id=" + integer(p, op, "group_id")
    return text + p.attr_dict(op, ("group_id",)) + " : " + p.types_text(op.operands)


@register("sdy.func_data_flow_edge")
def _func_data_flow_edge(p: Printer, op: ir.Op, indent: str, name: str) -> str:
    only(op, 1, 1)
    return name + " " + p.operands(op) + p.attr_dict(op) + " : " + p.type_text(op.results[0].type)


@register("sdy.named_computation")
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
            text += " " + key + "=" + stripped(p, value, "#sdy.sharding_per_value<", ">")
    text += " (" + p.region_args(region.blocks[0]) + ") " + body
    elided = ("name", "in_shardings", "out_shardings")
    return text + p.attr_dict(op, elided) + " : " + p.functional_type(op)
