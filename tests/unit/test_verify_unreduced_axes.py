"""`sdy-verify-unreduced-axes`: hand-derived cases (the jaxlib 0.10.2 reference lacks it).

Each row is a function body over ``%arg0`` (sharded ``[{"x"}, {}]`` with ``unreduced={"y"}``)
and ``%arg1`` (replicated), and the error Shardy's pass reports for it (None: valid). Expected
messages follow ``export/verify_unreduced_axes.cc`` and ``verifyUnreducedAxesTransition``.
"""

from __future__ import annotations

import pytest

from shardwise.errors import VerifyError
from shardwise.io.mlir import load_text
from shardwise.passes import get_pass

HEADER = """
sdy.mesh @mesh = <["x"=2, "y"=2, "z"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}], unreduced={"y"}>},
                %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>})
    -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]RESULT>}) {
"""
U_Y = ', unreduced={"y"}'
U_YZ = ', unreduced={"y", "z"}'
DROP = (
    " without a blessed operation (e.g., sdy.reshard). "
    "This is an invalid transition from unreduced to reduced."
)

CASES = [
    (
        "add-keeps-unreduced",
        U_Y,
        """
  %0 = stablehlo.add %arg0, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}], unreduced={"y"}>]>} : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>""",
        None,
    ),
    (
        "add-drops-unreduced",
        "",
        """
  %0 = stablehlo.add %arg0, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>""",
        "'stablehlo.add' op dropped unreduced axis 'y'" + DROP,
    ),
    (
        "add-introduces-sum",
        U_YZ,
        """
  %0 = stablehlo.add %arg0, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}], unreduced={"y", "z"}>]>} : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>""",
        None,
    ),
    (
        "reshard-drops",
        "",
        """
  %0 = sdy.reshard %arg0 <@mesh, [{"x"}, {}]> : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>""",
        None,
    ),
    (
        "return-drops",
        "",
        """
  return %arg0 : tensor<8x8xf32>""",
        "'func.return' op has unreduced axes mismatch for 'y' at return value 0" + DROP,
    ),
    (
        "return-after-reshard",
        "",
        """
  %0 = sdy.reshard %arg0 <@mesh, [{"x"}, {}], unreduced={"y"}> : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>""",
        None,
    ),
    (
        "reduce-add-introduces-sum",
        "",
        """
  %c = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.reduce(%arg1 init: %c) applies stablehlo.add across dimensions = [1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}], unreduced={"z"}>]>} : (tensor<8x8xf32>, tensor<f32>) -> tensor<8xf32>
  %1 = stablehlo.broadcast_in_dim %0, dims = [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}], unreduced={"z"}>]>} : (tensor<8xf32>) -> tensor<8x8xf32>
  %2 = sdy.reshard %1 <@mesh, [{"x"}, {}]> : tensor<8x8xf32>
  return %2 : tensor<8x8xf32>""",
        None,
    ),
    (
        "reduce-max-introduces-sum",
        "",
        """
  %c = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.reduce(%arg1 init: %c) applies stablehlo.maximum across dimensions = [1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}], unreduced={"z"}>]>} : (tensor<8x8xf32>, tensor<f32>) -> tensor<8xf32>
  %1 = stablehlo.broadcast_in_dim %0, dims = [0] : (tensor<8xf32>) -> tensor<8x8xf32>
  return %1 : tensor<8x8xf32>""",
        "'stablehlo.reduce' op cannot introduce 'sum' unreduced axes. Expected 'max'.",
    ),
    (
        "reduce-drops",
        "",
        """
  %c = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.reduce(%arg0 init: %c) applies stablehlo.add across dimensions = [1] : (tensor<8x8xf32>, tensor<f32>) -> tensor<8xf32>
  %1 = stablehlo.broadcast_in_dim %0, dims = [0] : (tensor<8xf32>) -> tensor<8x8xf32>
  return %1 : tensor<8x8xf32>""",
        "'stablehlo.reduce' op dropped unreduced axis 'y'" + DROP,
    ),
    (
        "dot-introduces-sum",
        "",
        """
  %0 = stablehlo.dot_general %arg1, %arg1, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}], unreduced={"z"}>]>} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %1 = sdy.all_reduce {"z"} %0 out_sharding=<@mesh, [{"x"}, {}]> : tensor<8x8xf32>
  return %1 : tensor<8x8xf32>""",
        None,
    ),
    (
        "call-argument-mismatch",
        "",
        """
  %0 = call @callee(%arg0) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>""",
        "'func.call' op has unreduced axes mismatch for 'y' at call argument 0.",
    ),
    (
        "call-result-mismatch",
        "",
        """
  %0 = sdy.reshard %arg0 <@mesh, [{"x"}, {}]> : tensor<8x8xf32>
  %1 = call @callee(%0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}], unreduced={"z"}>]>} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %2 = sdy.reshard %1 <@mesh, [{"x"}, {}]> : tensor<8x8xf32>
  return %2 : tensor<8x8xf32>""",
        "'func.call' op has unreduced axes mismatch for 'z' at call result 0.",
    ),
    (
        "manual-computation-body-drops",
        "",
        """
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {}], unreduced={"y"}>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x"} (%a: tensor<4x8xf32>) {
    sdy.return %a : tensor<4x8xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>""",
        "'sdy.return' op has unreduced axes mismatch for 'y' at return value 0" + DROP,
    ),
    (
        "manual-computation-drops-after-body-reshard",
        "",
        """
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {}], unreduced={"y"}>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x"} (%a: tensor<4x8xf32>) {
    %1 = sdy.reshard %a <@mesh, [{}, {}]> : tensor<4x8xf32>
    sdy.return %1 : tensor<4x8xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>""",
        "'sdy.manual_computation' op dropped unreduced axis 'y'" + DROP,
    ),
]

CALLEE = """
func.func private @callee(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
  return %arg0 : tensor<8x8xf32>
}
"""


@pytest.mark.parametrize(
    ("result", "body", "error"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_verify_unreduced_axes(result: str, body: str, error: str | None) -> None:
    module = load_text(HEADER.replace("RESULT", result) + body + "\n}\n" + CALLEE)
    if error is None:
        get_pass("sdy-verify-unreduced-axes").run(module)
        return
    with pytest.raises(VerifyError) as e:
        get_pass("sdy-verify-unreduced-axes").run(module)
    assert e.value.args[0] == error
