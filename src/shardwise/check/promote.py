"""The float64 truth: the reference program with every f32, f16 and bf16 type made f64.

`values.compare` measures the program under test, and the unsharded f32 program, against
what this program computes from the same inputs (converted exactly to f64). The rewrite is
textual on the stripped reference (every type, function signature and region argument in one
pass), with three repairs:

- float constants written in hex (``dense<0x7FC00000>``, ``dense<"0x...">`` blobs) are
  re-encoded as f64;
- jaxlib's LAPACK custom calls get their f64/c128 targets (``lapack_s*`` -> ``lapack_d*``,
  ``lapack_c*`` -> ``lapack_z*``);
- ops whose meaning depends on the bits of the type stay at their precision, with converts
  around them: ``bitcast_convert`` (the random bits of dropout become an f32), ``rng``, and
  any other custom call. Each such op and its converts carry a marker attribute (`_MARK`)
  while the module is written; their lines keep (the op) or half-promote (the converts) their
  types, and the marker is removed.

A program the rewrite cannot serve is one XLA rejects: the checker then uses the fixed
tolerance and says so.
"""

from __future__ import annotations

import re

import numpy as np

from shardwise import ir
from shardwise.io.mlir import write_text
from shardwise.ir import Module, Op, TensorType

__all__ = ["promote_to_f64", "PROMOTED"]

PROMOTED = ("f32", "f16", "bf16")
_MARK = "shardwise.truth_keep"
_PINNED_OPS = frozenset({"stablehlo.bitcast_convert", "stablehlo.rng"})
# A float element type in a tensor or complex type: tensor<4xf32>, tensor<f32>, complex<f32>.
_ELEMENT = re.compile(r"(?<=[x<])(bf16|f16|f32)(?=[>,])")
_HEX = re.compile(
    r'dense<("?)0x([0-9A-Fa-f]+)\1>(\s*:\s*tensor<(?:[0-9?]+x)*)(complex<)?(bf16|f16|f32)>'
)
_LAPACK = re.compile(r"@lapack_([sc])")
_MARKED = re.compile(r",?\s*" + re.escape(_MARK) + r' = "(op|in|out)"')
_LAST_TYPE = re.compile(r"(tensor<[^>]*(?:<[^>]*>)?[^>]*>)\s*$")


def promote_to_f64(module: Module) -> str:
    """The text of `module` (a stripped reference program) with its floats in f64; the
    module itself is changed (its pinned ops get converts)."""
    for op in list(module.walk()):
        if _pinned(op):
            _keep_precision(op)
    lines = []
    for line in write_text(module).splitlines():
        marked = _MARKED.search(line)
        if marked is None:
            lines.append(_promote(line))
            continue
        line = _MARKED.sub("", line).replace("{, ", "{").replace(" {}", "")
        if marked.group(1) == "op":
            lines.append(line)
            continue
        head, _, _ = line.rpartition(" : ")
        found = _LAST_TYPE.search(line)
        assert found is not None, line
        kept = found.group(1)
        wide = _ELEMENT.sub("f64", kept)
        pair = f"({wide}) -> {kept}" if marked.group(1) == "in" else f"({kept}) -> {wide}"
        lines.append(f"{head} : {pair}")
    text = "\n".join(lines) + "\n"
    return _LAPACK.sub(lambda m: "@lapack_" + {"s": "d", "c": "z"}[m.group(1)], text)


def _promote(line: str) -> str:
    return _ELEMENT.sub("f64", _HEX.sub(_hex_to_f64, line))


def _pinned(op: Op) -> bool:
    if op.name in _PINNED_OPS:
        return True
    if op.name != "stablehlo.custom_call":
        return False
    target = op.properties.get("call_target_name") or op.attributes.get("call_target_name")
    return not str(target).strip('"').startswith("lapack_")


def _promotable(type_: ir.Type) -> bool:
    if not isinstance(type_, TensorType):
        return False
    e = type_.element_type
    return (e[len("complex<") : -1] if e.startswith("complex<") else e) in PROMOTED


def _keep_precision(op: Op) -> None:
    """Put a convert to the same type before each float operand of `op` and after each float
    result, all marked (`_MARK`): the text rewrite keeps `op` at its precision."""
    block = op.parent
    assert block is not None
    op.attributes[_MARK] = ir.RawAttr('"op"')
    for i, operand in enumerate(list(op.operands)):
        if _promotable(operand.type):
            convert = Op("stablehlo.convert", [operand], [operand.type])
            convert.attributes[_MARK] = ir.RawAttr('"in"')
            block.insert_before(op, convert)
            op.set_operand(i, convert.results[0])
    for result in op.results:
        if _promotable(result.type):
            convert = Op("stablehlo.convert", [result], [result.type])
            convert.attributes[_MARK] = ir.RawAttr('"out"')
            block.insert_after(op, convert)
            result.replace_all_uses_with(convert.results[0], except_op=convert)


def _hex_to_f64(match: re.Match[str]) -> str:
    quoted, digits, type_text, complex_, element = match.groups()
    dtype = _numpy(element)
    if quoted:  # a blob: the elements' bytes, little-endian
        values = np.frombuffer(bytes.fromhex(digits), dtype=dtype)
        blob = values.astype(np.float64).tobytes().hex().upper()
        return f'dense<"0x{blob}">{type_text}{complex_ or ""}{element}>'
    if complex_:  # a complex splat: left as it is, so XLA rejects the program (no truth)
        return match.group(0)
    bits = int(digits, 16)  # a splat: the element's bits
    width = np.dtype(dtype).itemsize
    value = np.array([bits], dtype=f"u{width}").view(dtype).astype(np.float64)
    return f"dense<0x{int(value.view(np.uint64)[0]):016X}>{type_text}{element}>"


def _numpy(element: str) -> np.dtype:
    if element == "bf16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype({"f32": "float32", "f16": "float16"}[element])
