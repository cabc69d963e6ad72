"""XLA CPU's FFT layout bug, avoided in the program under test.

jaxlib 0.10.2's CPU layout assignment gives an ``all_gather`` along a dimension other than
the major one an operand layout with that dimension major, and propagates it back through the
ops before it into a ``stablehlo.fft``'s result; the CPU FFT thunk accepts only row-major
layouts and stops (``RET_CHECK failure (fft_thunk.cc:168)
LayoutUtil::IsMonotonicWithDim0Major``). A plain ``jax.shard_map`` of ``ifft ->
all_gather(axis=1)`` fails the same way; optimization barriers, the thunk-runtime flag and
turning fusion off do not avoid it.

So, in a program that has an FFT, the checker runs each such ``all_gather`` as what it
computes: every device writes its piece at its offset in a tensor of zeros of the gathered
shape (``dynamic_update_slice``; the offset is the device's position in its replica group
times the piece's size along the dimension), and an ``all_reduce`` (sum) over the same
replica groups and channel adds the pieces. An all-reduce asks no layout. The two are equal
element for element, but a negative zero becomes a positive one; the comparison does not tell
them apart. The groups, channel and dimension are the program's own, so a wrong group or a
wrong dimension is as wrong in the sum as in the gather.
"""

from __future__ import annotations

import re

from shardwise.export.convert_global_to_local.builder import OpBuilder, dense_text
from shardwise.ir import Module, Op, TensorType

__all__ = ["NOTE", "gathers_as_sums", "zero_literal"]

NOTE = (
    "all_gathers along a non-major dim ran as the all_reduce of zero-padded pieces (an XLA CPU "
    "bug makes an FFT before such an all_gather fail: docs/check.md, Limits)"
)


def gathers_as_sums(module: Module) -> int:
    """Rewrite, in a module that holds a ``stablehlo.fft``, every single-operand cross-partition
    ``all_gather`` along a dimension other than 0 into its all-reduce form (module
    docstring). Returns how many were rewritten."""
    ops = list(module.walk())
    if not any(op.name == "stablehlo.fft" for op in ops):
        return 0
    count = 0
    for op in ops:
        if op.name == "stablehlo.all_gather" and _rewrite(op):
            count += 1
    return count


def _rewrite(op: Op) -> bool:
    if len(op.operands) != 1 or "channel_handle" not in op.properties:
        return False
    dim = int(str(op.properties["all_gather_dim"]).split(":")[0])
    piece, gathered = op.operands[0].type, op.results[0].type
    if dim == 0 or not isinstance(piece, TensorType) or not isinstance(gathered, TensorType):
        return False
    if not piece.is_static or piece.element_type == "i1":
        return False
    groups = _groups(str(op.properties["replica_groups"]))
    if groups is None:
        return False
    devices = max(d for g in groups for d in g) + 1
    table = [0] * devices
    for group in groups:
        for position, device in enumerate(group):
            table[device] = position * piece.shape[dim]
    b = OpBuilder(op)
    scalar = TensorType((), "i64")
    partition = b.value("stablehlo.partition_id", [], TensorType((), "ui32"))
    partition = b.value("stablehlo.convert", [partition], scalar)
    offsets = b.constant(dense_text(table, [devices]), TensorType((devices,), "i64"))
    offset = b.reshape(b.dynamic_slice(offsets, [partition], [1]), [])
    zero = b.i64_scalar(0)
    starts = [offset if d == dim else zero for d in range(piece.rank)]
    zeros = b.constant(f"dense<{zero_literal(gathered.element_type)}> : {gathered}", gathered)
    placed = b.value("stablehlo.dynamic_update_slice", [zeros, op.operands[0], *starts], gathered)
    properties = {
        k: v
        for k, v in op.properties.items()
        if k in ("channel_handle", "replica_groups", "use_global_device_ids")
    }
    reduce = b.create("stablehlo.all_reduce", [placed], [gathered], properties)
    b.add_reduction_body(reduce, gathered.element_type)
    op.results[0].replace_all_uses_with(reduce.results[0])
    op.erase()
    return True


def _groups(text: str) -> list[list[int]] | None:
    """``dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>`` -> the groups (None: another form)."""
    match = re.fullmatch(r"\s*dense<(.*)>\s*:\s*tensor<(\d+)x(\d+)xi64>\s*", text, re.S)
    if match is None:
        return None
    rows, cols = int(match.group(2)), int(match.group(3))
    values = [int(v) for v in re.findall(r"-?\d+", match.group(1))]
    if len(values) == 1:
        values = values * (rows * cols)
    if len(values) != rows * cols or any(v < 0 for v in values):
        return None
    return [values[r * cols : (r + 1) * cols] for r in range(rows)]


def zero_literal(element_type: str) -> str:
    """The text of a zero of `element_type` in a ``dense<...>`` attribute."""
    if element_type == "i1":
        return "false"
    if element_type.startswith("complex"):
        return "(0.000000e+00,0.000000e+00)"
    if element_type.startswith(("i", "ui", "si")):
        return "0"
    return "0.000000e+00"
