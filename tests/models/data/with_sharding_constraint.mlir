module @jit_f attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=2, "model"=4]> {stablehlo.mesh = {axes = [{name = "data", size = 2 : i64}, {name = "model", size = 4 : i64}]}}
  func.func public @main(%arg0: tensor<8x64xf32>, %arg1: tensor<8x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}) -> (tensor<8x2x4xf32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x64xf32>
    %1 = stablehlo.multiply %arg0, %0 : tensor<8x64xf32>
    %2 = sdy.sharding_constraint %1 <@mesh, [{"data"}, {}]> : tensor<8x64xf32>
    %3 = stablehlo.add %2, %arg1 : tensor<8x64xf32>
    %4 = sdy.sharding_constraint %3 <@mesh, [{}, {"model"}]> : tensor<8x64xf32>
    %5 = stablehlo.exponential %4 : tensor<8x64xf32>
    %6 = sdy.sharding_constraint %5 <@mesh, [{?}, {"model"}]> : tensor<8x64xf32>
    %7 = stablehlo.transpose %6, dims = [1, 0] : (tensor<8x64xf32>) -> tensor<64x8xf32>
    %8 = stablehlo.dot_general %6, %7, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x64xf32>, tensor<64x8xf32>) -> tensor<8x8xf32>
    %9 = stablehlo.reshape %8 : (tensor<8x8xf32>) -> tensor<8x2x4xf32>
    return %9 : tensor<8x2x4xf32>
  }
}
