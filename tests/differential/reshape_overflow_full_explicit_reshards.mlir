// Fuzzer finding (seed 1813-1912-0): sdy-insert-explicit-reshards{enable-full-version=true} on a
// reshape with overflow axes stopped with an internal KeyError: after the axes were spread
// again, the inverse projection reached a factor the projection had not created (the dim had
// stopped at an overflow). Fixed in propagation/projection.py (_create_dim_sharding).
// (compared by test_reshape_overflow_regression.py)
module {
  sdy.mesh @mesh = <["x"=8, "y"=3]>
  func.func @main(%a0: tensor<1xf32>, %a1: tensor<1x4x6xf32>, %a2: tensor<1xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %a3: tensor<1xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y", "x", ?}]>}, %a4: tensor<4x2x8xf32>, %a5: tensor<16x1xi32>, %a6: tensor<3xf32>, %a7: tensor<12x2x4xf32>, %a8: tensor<1xi1>) -> (tensor<2x4x12xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y", ?}, {?}, {}]>}, tensor<1xf32>, tensor<12x2x4xf32>) {
    %v0 = stablehlo.exponential %a0 : tensor<1xf32>
    %v2 = sdy.propagation_barrier %v0 allowed_direction=BACKWARD : tensor<1xf32>
    %v3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %v5 = stablehlo.slice %a0 [0:1:1] : (tensor<1xf32>) -> tensor<1xf32>
    %v13:4 = func.call @"my-fn0"(%a4) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{?}, {"y", "x"}]>, <@mesh, [{}, {?}, {"y", "x":(2)4, ?}]>, <@mesh, [{"y", "x", ?}, {}, {?}]>, <@mesh, [{?}, {?}, {}], replicated={"y"}>]>} : (tensor<4x2x8xf32>) -> (tensor<4x8xf32>, tensor<4x2x8xf32>, tensor<4x2x8xf32>, tensor<4x2x8xf32>)
    %r0_1 = sdy.reshard %a7 <@mesh, [{"y", ?}, {"x":(1)4}, {}]> : tensor<12x2x4xf32>
    %v22 = stablehlo.reshape %r0_1 : (tensor<12x2x4xf32>) -> tensor<2x4x12xf32>
    return %v22, %v5, %r0_1 : tensor<2x4x12xf32>, tensor<1xf32>, tensor<12x2x4xf32>
  }
  func.func private @"my-fn0"(%a0: tensor<4x2x8xf32>) -> (tensor<4x8xf32>, tensor<4x2x8xf32>, tensor<4x2x8xf32>, tensor<4x2x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y", ?}, {"x", ?}p0, {?}p3]>}) {
    %v0 = sdy.reshard %a0 <@mesh, [{}, {?}p0, {"y", "x"}p0]> : tensor<4x2x8xf32>
    %v1 = stablehlo.add %a0, %v0 : tensor<4x2x8xf32>
    %v2 = stablehlo.add %a0, %a0 : tensor<4x2x8xf32>
    %v3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %v4 = stablehlo.reduce(%a0 init: %v3) applies stablehlo.add across dimensions = [1] : (tensor<4x2x8xf32>, tensor<f32>) -> tensor<4x8xf32>
    return %v4, %v2, %v1, %a0 : tensor<4x8xf32>, tensor<4x2x8xf32>, tensor<4x2x8xf32>, tensor<4x2x8xf32>
  }
}
