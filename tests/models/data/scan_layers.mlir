module @jit_f attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=2, "model"=4]> {stablehlo.mesh = {axes = [{name = "data", size = 2 : i64}, {name = "model", size = 4 : i64}]}}
  func.func public @main(%arg0: tensor<4x64x256xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {"model"}]>}, %arg1: tensor<4x256x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}, {}]>}, %arg2: tensor<8x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) -> (tensor<8x64xf32> {jax.result_info = "result[0]", sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}, tensor<4xf32> {jax.result_info = "result[1]", sdy.sharding = #sdy.sharding<@mesh, [{}]>}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1:5 = stablehlo.while(%iterArg = %arg0, %iterArg_0 = %arg1, %iterArg_1 = %c, %iterArg_2 = %arg2, %iterArg_3 = %0) : tensor<4x64x256xf32>, tensor<4x256x64xf32>, tensor<i32>, tensor<8x64xf32>, tensor<4xf32>
    cond {
      %c_4 = stablehlo.constant dense<4> : tensor<i32>
      %2 = stablehlo.compare LT, %iterArg_1, %c_4, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %2 : tensor<i1>
    } do {
      %2 = func.call @dynamic_index_in_dim(%iterArg, %iterArg_1) : (tensor<4x64x256xf32>, tensor<i32>) -> tensor<64x256xf32>
      %3 = func.call @dynamic_index_in_dim_0(%iterArg_0, %iterArg_1) : (tensor<4x256x64xf32>, tensor<i32>) -> tensor<256x64xf32>
      %4:2 = func.call @closed_call(%iterArg_2, %2, %3) : (tensor<8x64xf32>, tensor<64x256xf32>, tensor<256x64xf32>) -> (tensor<8x64xf32>, tensor<f32>)
      %5 = func.call @dynamic_update_index_in_dim(%iterArg_3, %4#1, %iterArg_1) : (tensor<4xf32>, tensor<f32>, tensor<i32>) -> tensor<4xf32>
      %c_4 = stablehlo.constant dense<1> : tensor<i32>
      %6 = stablehlo.add %iterArg_1, %c_4 : tensor<i32>
      stablehlo.return %iterArg, %iterArg_0, %6, %4#0, %5 : tensor<4x64x256xf32>, tensor<4x256x64xf32>, tensor<i32>, tensor<8x64xf32>, tensor<4xf32>
    }
    return %1#3, %1#4 : tensor<8x64xf32>, tensor<4xf32>
  }
  func.func private @dynamic_index_in_dim(%arg0: tensor<4x64x256xf32>, %arg1: tensor<i32>) -> tensor<64x256xf32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.dynamic_slice %arg0, %arg1, %c, %c_0, sizes = [1, 64, 256] : (tensor<4x64x256xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x64x256xf32>
    %1 = stablehlo.reshape %0 : (tensor<1x64x256xf32>) -> tensor<64x256xf32>
    return %1 : tensor<64x256xf32>
  }
  func.func private @dynamic_index_in_dim_0(%arg0: tensor<4x256x64xf32>, %arg1: tensor<i32>) -> tensor<256x64xf32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.dynamic_slice %arg0, %arg1, %c, %c_0, sizes = [1, 256, 64] : (tensor<4x256x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x256x64xf32>
    %1 = stablehlo.reshape %0 : (tensor<1x256x64xf32>) -> tensor<256x64xf32>
    return %1 : tensor<256x64xf32>
  }
  func.func private @closed_call(%arg0: tensor<8x64xf32>, %arg1: tensor<64x256xf32>, %arg2: tensor<256x64xf32>) -> (tensor<8x64xf32>, tensor<f32>) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x64xf32>, tensor<64x256xf32>) -> tensor<8x256xf32>
    %1 = call @relu(%0) : (tensor<8x256xf32>) -> tensor<8x256xf32>
    %2 = stablehlo.dot_general %1, %arg2, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x256xf32>, tensor<256x64xf32>) -> tensor<8x64xf32>
    %3 = stablehlo.add %arg0, %2 : tensor<8x64xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %4 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x64xf32>, tensor<f32>) -> tensor<f32>
    %cst_0 = stablehlo.constant dense<5.120000e+02> : tensor<f32>
    %5 = stablehlo.divide %4, %cst_0 : tensor<f32>
    return %3, %5 : tensor<8x64xf32>, tensor<f32>
  }
  func.func private @relu(%arg0: tensor<8x256xf32>) -> tensor<8x256xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x256xf32>
    %1 = stablehlo.maximum %arg0, %0 : tensor<8x256xf32>
    return %1 : tensor<8x256xf32>
  }
  func.func private @dynamic_update_index_in_dim(%arg0: tensor<4xf32>, %arg1: tensor<f32>, %arg2: tensor<i32>) -> tensor<4xf32> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [] : (tensor<f32>) -> tensor<1xf32>
    %1 = stablehlo.dynamic_update_slice %arg0, %0, %arg2 : (tensor<4xf32>, tensor<1xf32>, tensor<i32>) -> tensor<4xf32>
    return %1 : tensor<4xf32>
  }
}
