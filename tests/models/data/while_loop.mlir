module @jit_f attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=2, "model"=4]> {stablehlo.mesh = {axes = [{name = "data", size = 2 : i64}, {name = "model", size = 4 : i64}]}}
  func.func public @main(%arg0: tensor<64x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}, %arg1: tensor<64x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"data"}]>}) -> (tensor<64x8xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{}, {"data"}]>}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %0:4 = stablehlo.while(%iterArg = %arg0, %iterArg_0 = %c, %iterArg_1 = %arg1, %iterArg_2 = %cst) : tensor<64x64xf32>, tensor<i32>, tensor<64x8xf32>, tensor<f32>
    cond {
      %c_3 = stablehlo.constant dense<50> : tensor<i32>
      %1 = stablehlo.compare LT, %iterArg_0, %c_3, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %cst_4 = stablehlo.constant dense<9.99999974E-5> : tensor<f32>
      %2 = stablehlo.compare GT, %iterArg_2, %cst_4, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %c_5 = stablehlo.constant dense<false> : tensor<i1>
      %3 = stablehlo.broadcast_in_dim %c_5, dims = [] : (tensor<i1>) -> tensor<i1>
      %4 = stablehlo.compare NE, %1, %3, UNSIGNED : (tensor<i1>, tensor<i1>) -> tensor<i1>
      %5 = stablehlo.convert %4 : tensor<i1>
      %6 = stablehlo.and %5, %2 : tensor<i1>
      stablehlo.return %6 : tensor<i1>
    } do {
      %1 = stablehlo.dot_general %iterArg, %iterArg_1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x64xf32>, tensor<64x8xf32>) -> tensor<64x8xf32>
      %2 = func.call @norm(%1) : (tensor<64x8xf32>) -> tensor<1x8xf32>
      %3 = stablehlo.broadcast_in_dim %2, dims = [0, 1] : (tensor<1x8xf32>) -> tensor<64x8xf32>
      %4 = stablehlo.divide %1, %3 : tensor<64x8xf32>
      %c_3 = stablehlo.constant dense<1> : tensor<i32>
      %5 = stablehlo.add %iterArg_0, %c_3 : tensor<i32>
      %6 = stablehlo.subtract %4, %iterArg_1 : tensor<64x8xf32>
      %7 = stablehlo.abs %6 : tensor<64x8xf32>
      %cst_4 = stablehlo.constant dense<0xFF800000> : tensor<f32>
      %8 = stablehlo.reduce(%7 init: %cst_4) applies stablehlo.maximum across dimensions = [0, 1] : (tensor<64x8xf32>, tensor<f32>) -> tensor<f32>
      stablehlo.return %iterArg, %5, %4, %8 : tensor<64x64xf32>, tensor<i32>, tensor<64x8xf32>, tensor<f32>
    }
    return %0#2 : tensor<64x8xf32>
  }
  func.func private @norm(%arg0: tensor<64x8xf32>) -> tensor<1x8xf32> {
    %0 = stablehlo.multiply %arg0, %arg0 : tensor<64x8xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.reduce(%0 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<64x8xf32>, tensor<f32>) -> tensor<8xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [1] : (tensor<8xf32>) -> tensor<1x8xf32>
    %3 = stablehlo.sqrt %2 : tensor<1x8xf32>
    return %3 : tensor<1x8xf32>
  }
}
