"""Hand-written propagation cases, one per behaviour, each with the passes to compare.

Every module is our own input (not taken from Shardy's tests); the expected output is whatever
the reference prints for it. ``T`` stands for ``tensor<8x16xf32>``.
"""

from __future__ import annotations

MESH = 'sdy.mesh @mesh = <["x"=2, "y"=4, "z"=2]>'
T = "tensor<8x16xf32>"

BASIC = "sdy-basic-propagate"
AGGRESSIVE = "sdy-aggressive-propagate"
OP_PRIORITY = "sdy-op-priority-propagate"
USER_PRIORITY = "sdy-user-priority-propagate"
ALL = (BASIC, AGGRESSIVE, OP_PRIORITY, USER_PRIORITY)


def _m(body: str, mesh: str = MESH) -> str:
    return f"module {{\n  {mesh}\n{body.replace('T8', T)}\n}}\n"


CASES: dict[str, tuple[str, tuple[str, ...]]] = {
    # A closed argument dim stays as given; the open one takes the result's axis.
    "closed_dims": (
        _m(
            """  func.func @main(%arg0: T8 {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: T8 {sdy.sharding = #sdy.sharding<@mesh, [{?}, {?}]>}) -> (T8 {sdy.sharding = #sdy.sharding<@mesh, [{"y", ?}, {"z", ?}]>}) {
    %0 = stablehlo.add %arg0, %arg1 : T8
    return %0 : T8
  }"""
        ),
        ALL,
    ),
    # p0 beats p1 beats the default; each round of the user-priority pass adds one level.
    "priorities": (
        _m(
            """  func.func @main(%arg0: T8 {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}p1, {?}]>}, %arg1: T8 {sdy.sharding = #sdy.sharding<@mesh, [{"y", ?}p0, {"z", ?}p2]>}, %arg2: tensor<16x4xf32>) -> T8 {
    %0 = stablehlo.add %arg0, %arg1 : T8
    %1 = stablehlo.dot_general %0, %arg2, contracting_dims = [1] x [0] : (T8, tensor<16x4xf32>) -> tensor<8x4xf32>
    %2 = stablehlo.negate %arg0 : T8
    return %2 : T8
  }"""
        ),
        ALL,
    ),
    # Barriers block one direction each.
    "barriers": (
        _m(
            """  func.func @main(%arg0: T8 {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}, {?}]>}) -> (T8, T8 {sdy.sharding = #sdy.sharding<@mesh, [{?}, {"y", ?}]>}) {
    %0 = sdy.propagation_barrier %arg0 allowed_direction=BACKWARD : T8
    %1 = stablehlo.abs %0 : T8
    %2 = sdy.propagation_barrier %1 allowed_direction=FORWARD : T8
    %3 = stablehlo.negate %2 : T8
    %4 = sdy.propagation_barrier %arg0 allowed_direction=NONE : T8
    return %3, %4 : T8, T8
  }"""
        ),
        ALL,
    ),
    # A constraint in the middle of a chain: closed dims pin it, open dims can grow.
    "constraints": (
        _m(
            """  func.func @main(%arg0: T8 {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}, {?}]>}) -> T8 {
    %0 = stablehlo.exponential %arg0 : T8
    %1 = sdy.sharding_constraint %0 <@mesh, [{"y"}, {"z", ?}]> : T8
    %2 = stablehlo.tanh %1 : T8
    %3 = stablehlo.add %2, %0 : T8
    return %3 : T8
  }"""
        ),
        ALL,
    ),
    # Reshape 8 -> 2x4 over "x"=8 splits the axis into sub-axes; merge back reassembles it.
    "sub_axes": (
        _m(
            """  func.func @main(%arg0: tensor<8x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {?}]>}, %arg1: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(2)2, "y"}]>}) -> (tensor<2x4x6xf32>, tensor<4x4xf32>) {
    %0 = stablehlo.reshape %arg0 : (tensor<8x6xf32>) -> tensor<2x4x6xf32>
    %1 = stablehlo.reshape %arg1 : (tensor<16xf32>) -> tensor<4x4xf32>
    return %0, %1 : tensor<2x4x6xf32>, tensor<4x4xf32>
  }""",
            'sdy.mesh @mesh = <["x"=8, "y"=2]>',
        ),
        ALL,
    ),
    # Axes that do not divide a dim (overflow / non-divisible) and the conservative mode.
    "overflow_and_conservative": (
        _m(
            """  func.func @main(%arg0: tensor<6x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y", ?}, {"x", ?}]>}) -> tensor<3x2x16xf32> {
    %0 = stablehlo.reshape %arg0 : (tensor<6x16xf32>) -> tensor<3x2x16xf32>
    %1 = stablehlo.negate %0 : tensor<3x2x16xf32>
    return %1 : tensor<3x2x16xf32>
  }"""
        ),
        ALL
        + (
            "sdy-aggressive-propagate{conservative-propagation=true}",
            "sdy-user-priority-propagate{conservative-propagation=true}",
        ),
    ),
    # keep-sharding-rules leaves the sdy.sharding_rule of every op in the output.
    "keep_sharding_rules": (
        _m(
            """  func.func @main(%arg0: T8 {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}, %arg1: tensor<16x4xf32>) -> tensor<8x4xf32> {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (T8, tensor<16x4xf32>) -> tensor<8x4xf32>
    return %0 : tensor<8x4xf32>
  }"""
        ),
        (
            "sdy-basic-propagate{keep-sharding-rules=true}",
            "sdy-aggressive-propagate{keep-sharding-rules=true}",
            "sdy-op-priority-propagate{keep-sharding-rules=true}",
        ),
    ),
    # Strategies of the aggressive pass.
    "strategies": (
        _m(
            """  func.func @main(%arg0: T8 {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}, {?}]>}, %arg1: T8 {sdy.sharding = #sdy.sharding<@mesh, [{"y", ?}, {"z", ?}]>}) -> T8 {
    %0 = stablehlo.add %arg0, %arg1 : T8
    %1 = stablehlo.multiply %0, %arg1 : T8
    return %1 : T8
  }"""
        ),
        (
            "sdy-aggressive-propagate{propagation-strategy=basic}",
            "sdy-aggressive-propagate{propagation-strategy=basic-then-aggressive}",
        ),
    ),
    # Two meshes meeting at one op: no sharding crosses meshes.
    "multiple_meshes": (
        _m(
            """  sdy.mesh @other = <["a"=4]>
  func.func @main(%arg0: T8 {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}, {?}]>}, %arg1: T8 {sdy.sharding = #sdy.sharding<@other, [{"a", ?}, {?}]>}, %arg2: T8 {sdy.sharding = #sdy.sharding<@other, [{?}, {"a", ?}]>}) -> (T8, T8) {
    %0 = stablehlo.add %arg0, %arg1 : T8
    %1 = stablehlo.add %arg1, %arg2 : T8
    return %0, %1 : T8, T8
  }"""
        ),
        ALL,
    ),
    # A maximal-mesh sharding (one device) is never propagated.
    "maximal_mesh": (
        _m(
            """  sdy.mesh @maximal = <[], device_ids=[0]>
  func.func @main(%arg0: T8 {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}, {?}]>}) -> T8 {
    %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@maximal, []>]>} : T8
    %1 = stablehlo.abs %0 : T8
    return %1 : T8
  }"""
        ),
        ALL,
    ),
    # A while loop: shardings flow through its data-flow edges into the body and out.
    "while_loop": (
        _m(
            """  func.func @main(%arg0: T8 {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}, {?}]>}) -> T8 {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<1> : tensor<i32>
    %c_1 = stablehlo.constant dense<4> : tensor<i32>
    %0:2 = stablehlo.while(%iterArg = %arg0, %iterArg_2 = %c) : T8, tensor<i32>
    cond {
      %1 = stablehlo.compare  LT, %iterArg_2, %c_1 : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %1 : tensor<i1>
    } do {
      %1 = stablehlo.multiply %iterArg, %iterArg : T8
      %2 = sdy.sharding_constraint %1 <@mesh, [{?}, {"y", ?}]> : T8
      %3 = stablehlo.add %iterArg_2, %c_0 : tensor<i32>
      stablehlo.return %2, %3 : T8, tensor<i32>
    }
    return %0#0 : T8
  }"""
        ),
        ALL,
    ),
    # A manual computation: the free axis "z" propagates around it, manual axes stay inside.
    "manual_computation": (
        _m(
            """  func.func @main(%arg0: T8 {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}, {?}]>}) -> T8 {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x", ?}, {"z", ?}]>] out_shardings=[<@mesh, [{"x", ?}, {?}]>] manual_axes={"x"} (%arg1: tensor<4x16xf32>) {
      %1 = stablehlo.negate %arg1 : tensor<4x16xf32>
      sdy.return %1 : tensor<4x16xf32>
    } : (T8) -> T8
    %2 = stablehlo.abs %0 : T8
    return %2 : T8
  }"""
        ),
        ALL,
    ),
}
