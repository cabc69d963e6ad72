module @jit_f attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=2, "model"=4]> {stablehlo.mesh = {axes = [{name = "data", size = 2 : i64}, {name = "model", size = 4 : i64}]}}
  func.func public @main(%arg0: tensor<8x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}, %arg1: tensor<64x256xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg2: tensor<256x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}) -> (tensor<8x64xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) {
    %0 = call @block(%arg0, %arg1, %arg2) : (tensor<8x64xf32>, tensor<64x256xf32>, tensor<256x64xf32>) -> tensor<8x64xf32>
    %1 = call @block_2(%0, %arg1, %arg2) : (tensor<8x64xf32>, tensor<64x256xf32>, tensor<256x64xf32>) -> tensor<8x64xf32>
    return %1 : tensor<8x64xf32>
  }
  func.func private @block(%arg0: tensor<8x64xf32>, %arg1: tensor<64x256xf32>, %arg2: tensor<256x64xf32>) -> tensor<8x64xf32> {
    %0 = call @dense(%arg0, %arg1) : (tensor<8x64xf32>, tensor<64x256xf32>) -> tensor<8x256xf32>
    %1 = sdy.sharding_constraint %0 <@mesh, [{"data"}, {"model"}]> : tensor<8x256xf32>
    %2 = call @dense_0(%1, %arg2) : (tensor<8x256xf32>, tensor<256x64xf32>) -> tensor<8x64xf32>
    %3 = stablehlo.add %2, %arg0 : tensor<8x64xf32>
    return %3 : tensor<8x64xf32>
  }
  func.func private @dense(%arg0: tensor<8x64xf32>, %arg1: tensor<64x256xf32>) -> tensor<8x256xf32> {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x64xf32>, tensor<64x256xf32>) -> tensor<8x256xf32>
    %1 = call @relu(%0) : (tensor<8x256xf32>) -> tensor<8x256xf32>
    return %1 : tensor<8x256xf32>
  }
  func.func private @relu(%arg0: tensor<8x256xf32>) -> tensor<8x256xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x256xf32>
    %1 = stablehlo.maximum %arg0, %0 : tensor<8x256xf32>
    return %1 : tensor<8x256xf32>
  }
  func.func private @dense_0(%arg0: tensor<8x256xf32>, %arg1: tensor<256x64xf32>) -> tensor<8x64xf32> {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x256xf32>, tensor<256x64xf32>) -> tensor<8x64xf32>
    %1 = call @relu_1(%0) : (tensor<8x64xf32>) -> tensor<8x64xf32>
    return %1 : tensor<8x64xf32>
  }
  func.func private @relu_1(%arg0: tensor<8x64xf32>) -> tensor<8x64xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x64xf32>
    %1 = stablehlo.maximum %arg0, %0 : tensor<8x64xf32>
    return %1 : tensor<8x64xf32>
  }
  func.func private @block_2(%arg0: tensor<8x64xf32>, %arg1: tensor<64x256xf32>, %arg2: tensor<256x64xf32>) -> tensor<8x64xf32> {
    %0 = call @dense_3(%arg0, %arg1) : (tensor<8x64xf32>, tensor<64x256xf32>) -> tensor<8x256xf32>
    %1 = sdy.sharding_constraint %0 <@mesh, [{"data"}, {"model"}]> : tensor<8x256xf32>
    %2 = call @dense_0(%1, %arg2) : (tensor<8x256xf32>, tensor<256x64xf32>) -> tensor<8x64xf32>
    %3 = stablehlo.add %2, %arg0 : tensor<8x64xf32>
    return %3 : tensor<8x64xf32>
  }
  func.func private @dense_3(%arg0: tensor<8x64xf32>, %arg1: tensor<64x256xf32>) -> tensor<8x256xf32> {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x64xf32>, tensor<64x256xf32>) -> tensor<8x256xf32>
    %1 = call @relu_4(%0) : (tensor<8x256xf32>) -> tensor<8x256xf32>
    return %1 : tensor<8x256xf32>
  }
  func.func private @relu_4(%arg0: tensor<8x256xf32>) -> tensor<8x256xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x256xf32>
    %1 = stablehlo.maximum %arg0, %0 : tensor<8x256xf32>
    return %1 : tensor<8x256xf32>
  }
}
