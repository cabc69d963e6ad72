module @jit_f attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=2, "y"=2, "z"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 2 : i64}, {name = "y", size = 2 : i64}, {name = "z", size = 2 : i64}]}}
  func.func public @main(%arg0: tensor<8x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}, {"z"}]>}, %arg1: tensor<8x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y", "z"}]>}, %arg2: tensor<8xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> (tensor<8x4x4xf32> {jax.result_info = "result[0]", sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}, {}]>}, tensor<8x4xi32> {jax.result_info = "result[1]"}, tensor<4x16xi32> {jax.result_info = "result[2]", sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}, tensor<8x64xbf16> {jax.result_info = "result[3]", sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}, {}]>}) {
    %0 = stablehlo.concatenate %arg0, %arg1, dim = 1 : (tensor<8x64xf32>, tensor<8x64xf32>) -> tensor<8x128xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = call @_pad(%0, %c) : (tensor<8x128xf32>, tensor<i32>) -> tensor<8x132xf32>
    %2 = stablehlo.slice %1 [0:8, 2:130] : (tensor<8x132xf32>) -> tensor<8x128xf32>
    %3 = call @cumsum(%2) : (tensor<8x128xf32>) -> tensor<8x128xf32>
    %4 = stablehlo.reverse %3, dims = [1] : tensor<8x128xf32>
    %5 = stablehlo.reshape %4 : (tensor<8x128xf32>) -> tensor<8x4x32xf32>
    %6 = stablehlo.transpose %5, dims = [2, 0, 1] : (tensor<8x4x32xf32>) -> tensor<32x8x4xf32>
    %7 = stablehlo.dot_general %6, %6, batching_dims = [1] x [1], contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<32x8x4xf32>, tensor<32x8x4xf32>) -> tensor<8x4x4xf32>
    %8 = call @_one_hot(%arg2) : (tensor<8xi32>) -> tensor<8x4xf32>
    %9 = call @argmax(%7) : (tensor<8x4x4xf32>) -> tensor<8x4xi32>
    %cst = stablehlo.constant dense<-1.000000e+00> : tensor<f32>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %10 = call @clip(%arg0, %cst, %cst_0) : (tensor<8x64xf32>, tensor<f32>, tensor<f32>) -> tensor<8x64xf32>
    %11 = stablehlo.bitcast_convert %10 : (tensor<8x64xf32>) -> tensor<8x64xi32>
    %12 = stablehlo.reduce_precision %arg1, format = e5m10 : tensor<8x64xf32>
    %13 = stablehlo.broadcast_in_dim %8, dims = [0, 1] : (tensor<8x4xf32>) -> tensor<8x4x1xf32>
    %14 = stablehlo.broadcast_in_dim %13, dims = [0, 1, 2] : (tensor<8x4x1xf32>) -> tensor<8x4x4xf32>
    %15 = stablehlo.multiply %7, %14 : tensor<8x4x4xf32>
    %16 = stablehlo.slice %11 [0:8:2, 1:64:4] : (tensor<8x64xi32>) -> tensor<4x16xi32>
    %17 = stablehlo.convert %12 : (tensor<8x64xf32>) -> tensor<8x64xbf16>
    return %15, %9, %16, %17 : tensor<8x4x4xf32>, tensor<8x4xi32>, tensor<4x16xi32>, tensor<8x64xbf16>
  }
  func.func private @_pad(%arg0: tensor<8x128xf32>, %arg1: tensor<i32>) -> tensor<8x132xf32> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %1 = stablehlo.pad %arg0, %0, low = [0, 2], high = [0, 2], interior = [0, 0] : (tensor<8x128xf32>, tensor<f32>) -> tensor<8x132xf32>
    return %1 : tensor<8x132xf32>
  }
  func.func private @cumsum(%arg0: tensor<8x128xf32>) -> tensor<8x128xf32> {
    %0 = call @cumsum_0(%arg0) : (tensor<8x128xf32>) -> tensor<8x128xf32>
    return %0 : tensor<8x128xf32>
  }
  func.func private @cumsum_0(%arg0: tensor<8x128xf32>) -> tensor<8x128xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<f32>
    %1 = "stablehlo.reduce_window"(%arg0, %0) <{base_dilations = array<i64: 1, 1>, padding = dense<[[0, 0], [127, 0]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 1, 128>, window_strides = array<i64: 1, 1>}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %2 = stablehlo.add %arg1, %arg2 : tensor<f32>
      stablehlo.return %2 : tensor<f32>
    }) : (tensor<8x128xf32>, tensor<f32>) -> tensor<8x128xf32>
    return %1 : tensor<8x128xf32>
  }
  func.func private @_one_hot(%arg0: tensor<8xi32>) -> tensor<8x4xf32> {
    %0 = stablehlo.broadcast_in_dim %arg0, dims = [0] : (tensor<8xi32>) -> tensor<8x1xi32>
    %1 = stablehlo.iota dim = 1 : tensor<1x4xi32>
    %2 = stablehlo.broadcast_in_dim %0, dims = [0, 1] : (tensor<8x1xi32>) -> tensor<8x4xi32>
    %3 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<1x4xi32>) -> tensor<8x4xi32>
    %4 = stablehlo.compare EQ, %2, %3, SIGNED : (tensor<8x4xi32>, tensor<8x4xi32>) -> tensor<8x4xi1>
    %5 = stablehlo.convert %4 : (tensor<8x4xi1>) -> tensor<8x4xf32>
    return %5 : tensor<8x4xf32>
  }
  func.func private @argmax(%arg0: tensor<8x4x4xf32>) -> tensor<8x4xi32> {
    %0 = stablehlo.iota dim = 2 : tensor<8x4x4xi32>
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1:2 = stablehlo.reduce(%arg0 init: %cst), (%0 init: %c) across dimensions = [2] : (tensor<8x4x4xf32>, tensor<8x4x4xi32>, tensor<f32>, tensor<i32>) -> (tensor<8x4xf32>, tensor<8x4xi32>)
     reducer(%arg1: tensor<f32>, %arg3: tensor<f32>) (%arg2: tensor<i32>, %arg4: tensor<i32>)  {
      %2 = stablehlo.compare GT, %arg1, %arg3, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %3 = stablehlo.compare NE, %arg1, %arg1, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %4 = stablehlo.or %2, %3 : tensor<i1>
      %5 = stablehlo.compare EQ, %arg1, %arg3, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %6 = stablehlo.compare LT, %arg2, %arg4, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %7 = stablehlo.and %5, %6 : tensor<i1>
      %8 = stablehlo.or %4, %7 : tensor<i1>
      %9 = stablehlo.select %4, %arg1, %arg3 : tensor<i1>, tensor<f32>
      %10 = stablehlo.select %8, %arg2, %arg4 : tensor<i1>, tensor<i32>
      stablehlo.return %9, %10 : tensor<f32>, tensor<i32>
    }
    return %1#1 : tensor<8x4xi32>
  }
  func.func private @clip(%arg0: tensor<8x64xf32>, %arg1: tensor<f32>, %arg2: tensor<f32>) -> tensor<8x64xf32> {
    %0 = stablehlo.convert %arg1 : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<8x64xf32>
    %2 = stablehlo.maximum %1, %arg0 : tensor<8x64xf32>
    %3 = stablehlo.convert %arg2 : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [] : (tensor<f32>) -> tensor<8x64xf32>
    %5 = stablehlo.minimum %4, %2 : tensor<8x64xf32>
    return %5 : tensor<8x64xf32>
  }
}
