module @jit_f attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=2, "model"=4]> {stablehlo.mesh = {axes = [{name = "data", size = 2 : i64}, {name = "model", size = 4 : i64}]}}
  func.func public @main(%arg0: tensor<8x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"model"}]>}, %arg1: tensor<8x64xf32>) -> (tensor<8x64xf32> {jax.result_info = "result[0]"}, tensor<8x64xf32> {jax.result_info = "result[1]"}) {
    %0 = stablehlo.tanh %arg0 : tensor<8x64xf32>
    %1 = stablehlo.exponential %arg1 : tensor<8x64xf32>
    sdy.sharding_group %0 group_id=0 : tensor<8x64xf32>
    sdy.sharding_group %1 group_id=0 : tensor<8x64xf32>
    %2 = stablehlo.add %0, %1 : tensor<8x64xf32>
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x64xf32>
    %4 = stablehlo.multiply %1, %3 : tensor<8x64xf32>
    return %2, %4 : tensor<8x64xf32>, tensor<8x64xf32>
  }
}
