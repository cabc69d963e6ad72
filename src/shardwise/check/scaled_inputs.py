"""Inputs that keep a deep program finite, for when normal(0, 1) inputs make it overflow.

A stack of many dense or convolution layers whose weights are drawn normal(0, 1) grows its
activations by about the square root of the fan-in per layer, and an optimizer step takes
the square root of a second-moment argument that normal(0, 1) makes negative: every element
of such a result is NaN or infinite in the unsharded program, and a check of it says only
that both programs overflow in the same places (`ResultCheck.vacuous`). Model code
initializes such programs the way this module draws their inputs:

- a float argument that is an operand of a ``dot_general`` (directly, or through layout ops
  and calls) is drawn normal(0, gain^2 / fan-in), the fan-in being the product of its
  contracting dims; a ``convolution`` kernel the same with its input features times its
  window (LeCun's initialization at gain 1, He's at sqrt(2));
- a float argument that reaches the operand of a ``sqrt``, ``rsqrt``, ``log`` or
  ``log_plus_one`` (or the base of a ``power``) through elementwise and layout ops only is
  drawn |normal(0, 1)|, as a variance or a step count is non-negative.

`finite_inputs` draws a few such input sets (gains 1, sqrt(2), 1/sqrt(2)), runs the
unsharded program on each (one compile) and returns the one whose float results have the
most finite, non-zero elements, if it has more than the normal(0, 1) inputs had. The checker
asks only when some float result is NaN or infinite everywhere, so every other check runs on
the inputs it always did.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from shardwise import ir
from shardwise.ir import Module, Op, Value
from shardwise.sdy.funcs import callee_name
from shardwise.sdy.op_properties import is_elementwise

__all__ = ["Scaling", "argument_scaling", "draw", "finite_inputs", "informative"]

# Ops a weight passes through on its way to a dot unchanged in its elements (for fan-in),
# and that keep a value's sign on its way to a sqrt or log (for the domain).
_LAYOUT = frozenset(
    {
        "stablehlo.convert",
        "stablehlo.reshape",
        "stablehlo.transpose",
        "stablehlo.broadcast_in_dim",
        "stablehlo.copy",
        "stablehlo.slice",
        "stablehlo.dynamic_slice",
        "stablehlo.optimization_barrier",
        "sdy.sharding_constraint",
        "sdy.reshard",
    }
)
_DOMAIN = frozenset(
    {"stablehlo.sqrt", "stablehlo.rsqrt", "stablehlo.log", "stablehlo.log_plus_one"}
)
_GAINS = (1.0, math.sqrt(2.0), math.sqrt(0.5))


@dataclass(frozen=True, slots=True)
class Scaling:
    """How one argument is drawn: normal(0, 1) times `scale`, absolute if `non_negative`."""

    scale_at_gain_1: float = 1.0  # 1/sqrt(fan-in) for a weight, 1 otherwise
    weight: bool = False
    non_negative: bool = False


def argument_scaling(module: Module) -> list[Scaling]:
    """Per argument of main: whether it is a weight (and its fan-in), or non-negative."""
    from shardwise.check.programs import find_main

    funcs = {module.symbol_name(f) or "": f for f in module.funcs}
    main = find_main(module)
    out = []
    for arg in main.regions[0].entry.args:
        fan_in = max(_fan_ins(arg, funcs), default=0)
        out.append(
            Scaling(
                1.0 / math.sqrt(fan_in) if fan_in > 0 else 1.0,
                weight=fan_in > 0,
                non_negative=_reaches_domain(arg, funcs),
            )
        )
    return out


def _forward(value: Value, funcs: dict[str, Op], through) -> Iterator[tuple[Op, int]]:
    """Every (op, operand index) that reads `value` or what `through` ops make of it, calls
    followed into their callees' arguments."""
    seen: set[int] = set()
    stack = [value]
    while stack:
        v = stack.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        for op, index in v.uses:
            yield op, index
            if op.name == "func.call":
                callee = funcs.get(callee_name(op))
                if callee is not None and callee.regions and callee.regions[0].blocks:
                    args = callee.regions[0].entry.args
                    if index < len(args):
                        stack.append(args[index])
            elif through(op):
                stack.extend(op.results)


def _fan_ins(arg: Value, funcs: dict[str, Op]) -> Iterator[int]:
    from shardwise.rules.stablehlo_attrs import (
        parse_conv_dimension_numbers,
        parse_dot_dimension_numbers,
    )

    for op, index in _forward(arg, funcs, lambda op: op.name in _LAYOUT):
        shape = _shape(op.operands[index]) if index < len(op.operands) else None
        if shape is None:
            continue
        if op.name == "stablehlo.dot_general" and index < 2:
            nums = parse_dot_dimension_numbers(op.get_attr("dot_dimension_numbers"))
            dims = (
                nums.lhs_contracting_dimensions if index == 0 else nums.rhs_contracting_dimensions
            )
            yield math.prod(shape[d] for d in dims)
        elif op.name == "stablehlo.dot" and index < 2:
            yield shape[-1] if index == 0 else shape[0]
        elif op.name == "stablehlo.convolution" and index == 1:
            conv = parse_conv_dimension_numbers(op.get_attr("dimension_numbers"))
            window = math.prod(shape[d] for d in conv.kernel_spatial_dimensions)
            yield shape[conv.kernel_input_feature_dimension] * window


def _reaches_domain(arg: Value, funcs: dict[str, Op]) -> bool:
    if not _is_float(arg.type):
        return False
    for op, index in _forward(arg, funcs, lambda op: op.name in _LAYOUT or is_elementwise(op)):
        if op.name in _DOMAIN or (op.name == "stablehlo.power" and index == 0):
            return True
    return False


def _shape(value: Value) -> tuple[int, ...] | None:
    t = value.type
    return t.shape if isinstance(t, ir.TensorType) and t.is_static else None


def _is_float(t: object) -> bool:
    return isinstance(t, ir.TensorType) and t.element_type in ("f16", "bf16", "f32", "f64")


def draw(
    defaults: Sequence[np.ndarray], scalings: Sequence[Scaling], gain: float
) -> list[np.ndarray]:
    """`defaults` (normal(0, 1) floats) rescaled: weights by gain/sqrt(fan-in), the
    non-negative arguments made absolute; integers and booleans kept."""
    out = []
    for x, s in zip(defaults, scalings, strict=True):
        if x.dtype.kind != "f":
            out.append(x)
            continue
        y = x.astype(np.float64)
        if s.non_negative:
            y = np.abs(y)
        if s.weight:
            y = y * (gain * s.scale_at_gain_1)
        out.append(y.astype(x.dtype))
    return out


def informative(outputs: Sequence[np.ndarray]) -> int:
    """How many float result elements are finite and non-zero (a result all NaN, infinite
    or zero checks nothing)."""
    return sum(
        int(np.count_nonzero(np.isfinite(y) & (y != 0))) for y in outputs if y.dtype.kind in "fc"
    )


def finite_inputs(
    run_many, reference_text: str, module: Module, defaults: Sequence[np.ndarray], base: int
) -> tuple[list[np.ndarray], str] | None:
    """The scaled inputs (and how they were drawn) that make the most float result elements
    finite and non-zero, if more than `base` (the defaults' count); None otherwise.
    `run_many(text, input_sets)` runs the unsharded program on each set."""
    scalings = argument_scaling(module)
    if not any(s.weight or s.non_negative for s in scalings):
        return None
    candidates = [draw(defaults, scalings, g) for g in _GAINS]
    runs = run_many(reference_text, candidates)
    best, best_count = None, base
    for gain, inputs, outputs in zip(_GAINS, candidates, runs, strict=True):
        count = informative(outputs)
        if count > best_count:
            best, best_count = (inputs, _describe(scalings, gain)), count
    return best


def _describe(scalings: Sequence[Scaling], gain: float) -> str:
    weights = sum(s.weight for s in scalings)
    non_negative = sum(s.non_negative for s in scalings)
    parts = []
    if weights:
        parts.append(f"{weights} weights normal(0, {gain:.3g}^2/fan-in)")
    if non_negative:
        parts.append(f"{non_negative} arguments of sqrt/log |normal(0, 1)|")
    return (
        "scaled: " + ", ".join(parts) + " (at normal(0, 1) a result was NaN or infinite everywhere)"
    )
