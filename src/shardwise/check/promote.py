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
  any other custom call. The types they keep are renamed to a placeholder that the rewrite
  does not touch (`_KEEP`), then named back.

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
_KEEP = "KEEPFLOAT"
_PINNED_OPS = frozenset({"stablehlo.bitcast_convert", "stablehlo.rng"})
# A float element type in a tensor or complex type: tensor<4xf32>, tensor<f32>, complex<f32>.
_ELEMENT = re.compile(r"(?<=[x<])(bf16|f16|f32)(?=[>,])")
_HEX = re.compile(
    r'dense<("?)0x([0-9A-Fa-f]+)\1>(\s*:\s*tensor<(?:[0-9?]+x)*)(complex<)?(bf16|f16|f32)>'
)
_LAPACK = re.compile(r"@lapack_([sc])")


def promote_to_f64(module: Module) -> str:
    """The text of `module` (a stripped reference program) with its floats in f64; the
    module itself is changed (its pinned ops get converts)."""
    for op in list(module.walk()):
        if _pinned(op):
            _keep_precision(op)
    text = write_text(module)
    text = _HEX.sub(_hex_to_f64, text)
    text = _ELEMENT.sub("f64", text)
    text = _LAPACK.sub(lambda m: "@lapack_" + {"s": "d", "c": "z"}[m.group(1)], text)
    return text.replace(_KEEP, "")


def _pinned(op: Op) -> bool:
    if op.name in _PINNED_OPS:
        return True
    if op.name != "stablehlo.custom_call":
        return False
    target = op.properties.get("call_target_name") or op.attributes.get("call_target_name")
    return not str(target).strip('"').startswith("lapack_")


def _promotable(type_: ir.Type) -> bool:
    return isinstance(type_, TensorType) and _element(type_.element_type) in PROMOTED


def _element(element_type: str) -> str:
    return (
        element_type[len("complex<") : -1] if element_type.startswith("complex<") else element_type
    )


def _kept(type_: TensorType) -> TensorType:
    """The same type, named so that the rewrite leaves it at its precision."""
    e = type_.element_type
    inner = _element(e)
    kept = _KEEP + inner
    return TensorType(type_.shape, f"complex<{kept}>" if e != inner else kept)


def _keep_precision(op: Op) -> None:
    """Convert `op`'s float operands to their own type (pinned) before it and its float
    results back after it, so that it runs at the program's precision."""
    block = op.parent
    assert block is not None
    for i, operand in enumerate(list(op.operands)):
        if _promotable(operand.type):
            assert isinstance(operand.type, TensorType)
            convert = Op("stablehlo.convert", [operand], [_kept(operand.type)])
            block.insert_before(op, convert)
            op.set_operand(i, convert.results[0])
    for result in op.results:
        if _promotable(result.type):
            assert isinstance(result.type, TensorType)
            original = result.type
            result.type = _kept(original)
            convert = Op("stablehlo.convert", [result], [original])
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
