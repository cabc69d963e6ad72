"""Inputs drawn like a model's initialization where normal(0, 1) ones overflow
(`shardwise.check.scaled_inputs`)."""

from __future__ import annotations

import math

import numpy as np

from shardwise.check import check
from shardwise.check.scaled_inputs import argument_scaling, draw
from shardwise.io.mlir import load_text, write_text
from shardwise.partition import partition


def _deep_linear_stack(layers: int, width: int) -> str:
    """`x @ w0 @ w1 ...`: at normal(0, 1) weights each layer grows the values by
    sqrt(width), so 40 layers of 256 overflow f32 (16^40 > 3e38)."""
    t = f"tensor<8x{width}xf32>"
    w = f"tensor<{width}x{width}xf32>"
    args = [f'%x: {t} {{sdy.sharding = #sdy.sharding<@mesh, [{{"d"}}, {{}}]>}}']
    args += [
        f'%w{i}: {w} {{sdy.sharding = #sdy.sharding<@mesh, [{{}}, {{"m"}}]>}}'
        for i in range(layers)
    ]
    body, prev = [], "%x"
    for i in range(layers):
        body.append(
            f"  %h{i} = stablehlo.dot_general {prev}, %w{i}, contracting_dims = [1] x [0] : ({t}, {w}) -> {t}"
        )
        prev = f"%h{i}"
    return (
        'sdy.mesh @mesh = <["d"=2, "m"=2]>\n'
        f"func.func @main({', '.join(args)}) -> {t} {{\n"
        + "\n".join(body)
        + f"\n  return {prev} : {t}\n}}\n"
    )


ADAM_LIKE = """sdy.mesh @mesh = <["d"=2]>
func.func @main(%w: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"d"}, {}]>}, %v: tensor<8x16xf32>, %count: tensor<f32>) -> tensor<8x16xf32> {
  %one = stablehlo.constant dense<1.0> : tensor<f32>
  %c = stablehlo.add %count, %one : tensor<f32>
  %b = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<8x16xf32>
  %q = stablehlo.multiply %v, %b : tensor<8x16xf32>
  %s = stablehlo.sqrt %q : tensor<8x16xf32>
  %r = stablehlo.subtract %w, %s : tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}
"""


def test_weights_and_arguments_of_sqrt_are_found() -> None:
    scalings = argument_scaling(load_text(_deep_linear_stack(3, 64), "f.mlir"))
    assert [s.weight for s in scalings] == [True] * 4  # x is a dot operand too
    assert all(math.isclose(s.scale_at_gain_1, 1 / 8) for s in scalings)
    assert not any(s.non_negative for s in scalings)
    w, v, count = argument_scaling(load_text(ADAM_LIKE, "f.mlir"))
    assert not w.non_negative and v.non_negative and count.non_negative
    assert not (w.weight or v.weight or count.weight)


def _partitioned(text: str) -> str:
    module = load_text(text, "f.mlir")
    partition(module)
    return write_text(module)


def test_an_overflowing_stack_is_checked_on_scaled_inputs(executor) -> None:
    text = _deep_linear_stack(40, 256)
    result = check(text, _partitioned(text), executor=executor)
    assert result.equal
    assert result.inputs.startswith("scaled: 41 weights normal(0, 1^2/fan-in)")
    assert not any(r.vacuous for r in result.results)
    assert "inputs: scaled" in str(result)


def test_a_variance_is_drawn_non_negative_and_weights_scaled() -> None:
    rng = np.random.default_rng(0)
    defaults = [rng.standard_normal((8, 16)).astype(np.float32) for _ in range(2)]
    defaults.append(np.float32(-1.5) * np.ones((), np.float32))
    w, v, count = draw(defaults, argument_scaling(load_text(ADAM_LIKE, "f.mlir")), 2.0)
    assert np.array_equal(w, defaults[0])  # neither a weight nor under a sqrt
    assert np.array_equal(v, np.abs(defaults[1])) and count == 1.5
    x, w0 = draw(
        defaults[:2], argument_scaling(load_text(_deep_linear_stack(1, 16), "f.mlir")), 2.0
    )
    assert np.allclose(w0, defaults[1] * 2.0 / 4.0)  # gain / sqrt(16)


def test_a_finite_program_keeps_normal_inputs(executor) -> None:
    text = _deep_linear_stack(3, 64)
    result = check(text, _partitioned(text), executor=executor)
    assert result.equal and result.inputs == "normal(0, 1)"
