module @jit_loss attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=2, "model"=4]> {stablehlo.mesh = {axes = [{name = "data", size = 2 : i64}, {name = "model", size = 4 : i64}]}}
  func.func public @main(%arg0: tensor<64x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg1: tensor<8x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) -> (tensor<64x64xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}) {
    %0 = stablehlo.dot_general %arg1, %arg0, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
    %1 = stablehlo.tanh %0 : tensor<8x64xf32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x64xf32>
    %3:3 = stablehlo.optimization_barrier %arg0, %1, %2 : tensor<64x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>
    %4 = stablehlo.dot_general %3#1, %3#0, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
    %5 = stablehlo.tanh %4 : tensor<8x64xf32>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %6 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<8x64xf32>
    %7 = stablehlo.subtract %6, %5 : tensor<8x64xf32>
    %8 = stablehlo.multiply %3#2, %7 : tensor<8x64xf32>
    %9 = stablehlo.multiply %8, %5 : tensor<8x64xf32>
    %10 = stablehlo.add %8, %9 : tensor<8x64xf32>
    %11 = stablehlo.dot_general %10, %3#1, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x64xf32>, tensor<8x64xf32>) -> tensor<64x64xf32>
    %12 = stablehlo.transpose %11, dims = [1, 0] : (tensor<64x64xf32>) -> tensor<64x64xf32>
    %13 = stablehlo.dot_general %10, %3#0, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
    %14:3 = stablehlo.optimization_barrier %arg0, %arg1, %13 : tensor<64x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>
    %15 = stablehlo.dot_general %14#1, %14#0, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
    %16 = stablehlo.tanh %15 : tensor<8x64xf32>
    %cst_1 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %17 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<8x64xf32>
    %18 = stablehlo.subtract %17, %16 : tensor<8x64xf32>
    %19 = stablehlo.multiply %14#2, %18 : tensor<8x64xf32>
    %20 = stablehlo.multiply %19, %16 : tensor<8x64xf32>
    %21 = stablehlo.add %19, %20 : tensor<8x64xf32>
    %22 = stablehlo.dot_general %21, %14#1, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x64xf32>, tensor<8x64xf32>) -> tensor<64x64xf32>
    %23 = stablehlo.transpose %22, dims = [1, 0] : (tensor<64x64xf32>) -> tensor<64x64xf32>
    %24 = stablehlo.add %12, %23 : tensor<64x64xf32>
    return %24 : tensor<64x64xf32>
  }
}
