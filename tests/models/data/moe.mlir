module @jit_f attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=2, "expert"=4]> {stablehlo.mesh = {axes = [{name = "data", size = 2 : i64}, {name = "expert", size = 4 : i64}]}}
  func.func public @main(%arg0: tensor<64x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, %arg1: tensor<8x64x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"expert"}, {}, {}]>}, %arg2: tensor<8x32x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"expert"}, {}, {}]>}, %arg3: tensor<128x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) -> (tensor<128x64xf32> {jax.result_info = "result[0]", sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}, tensor<8xf32> {jax.result_info = "result[1]", sdy.sharding = #sdy.sharding<@mesh, [{}]>}) {
    %0 = stablehlo.dot_general %arg3, %arg0, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<128x64xf32>, tensor<64x8xf32>) -> tensor<128x8xf32>
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %1 = stablehlo.reduce(%0 init: %cst) applies stablehlo.maximum across dimensions = [1] : (tensor<128x8xf32>, tensor<f32>) -> tensor<128xf32>
    %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<128xf32>
    %3 = stablehlo.maximum %2, %1 : tensor<128xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0] : (tensor<128xf32>) -> tensor<128x1xf32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0, 1] : (tensor<128x1xf32>) -> tensor<128x8xf32>
    %6 = stablehlo.subtract %0, %5 : tensor<128x8xf32>
    %7 = stablehlo.exponential %6 : tensor<128x8xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %8 = stablehlo.reduce(%7 init: %cst_1) applies stablehlo.add across dimensions = [1] : (tensor<128x8xf32>, tensor<f32>) -> tensor<128xf32>
    %9 = stablehlo.broadcast_in_dim %8, dims = [0] : (tensor<128xf32>) -> tensor<128x1xf32>
    %10 = stablehlo.broadcast_in_dim %9, dims = [0, 1] : (tensor<128x1xf32>) -> tensor<128x8xf32>
    %11 = stablehlo.divide %7, %10 : tensor<128x8xf32>
    %values, %indices = chlo.top_k(%11, k = 2) : tensor<128x8xf32> -> (tensor<128x2xf32>, tensor<128x2xi32>)
    %12 = stablehlo.dot_general %arg3, %arg1, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<128x64xf32>, tensor<8x64x32xf32>) -> tensor<128x8x32xf32>
    %13 = sdy.sharding_constraint %12 <@mesh, [{"data"}, {"expert"}, {}]> : tensor<128x8x32xf32>
    %14 = call @relu(%13) : (tensor<128x8x32xf32>) -> tensor<128x8x32xf32>
    %15 = stablehlo.dot_general %arg2, %14, batching_dims = [0] x [1], contracting_dims = [1] x [2], precision = [DEFAULT, DEFAULT] : (tensor<8x32x64xf32>, tensor<128x8x32xf32>) -> tensor<8x64x128xf32>
    %16 = stablehlo.transpose %15, dims = [2, 0, 1] : (tensor<8x64x128xf32>) -> tensor<128x8x64xf32>
    %17 = stablehlo.broadcast_in_dim %indices, dims = [0, 1] : (tensor<128x2xi32>) -> tensor<128x2x1xi32>
    %18 = call @take_along_axis(%16, %17) : (tensor<128x8x64xf32>, tensor<128x2x1xi32>) -> tensor<128x2x64xf32>
    %19 = stablehlo.broadcast_in_dim %values, dims = [0, 1] : (tensor<128x2xf32>) -> tensor<128x2x1xf32>
    %20 = stablehlo.broadcast_in_dim %19, dims = [0, 1, 2] : (tensor<128x2x1xf32>) -> tensor<128x2x64xf32>
    %21 = stablehlo.multiply %18, %20 : tensor<128x2x64xf32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %22 = stablehlo.reduce(%21 init: %cst_2) applies stablehlo.add across dimensions = [1] : (tensor<128x2x64xf32>, tensor<f32>) -> tensor<128x64xf32>
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %23 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %24 = stablehlo.reshape %indices : (tensor<128x2xi32>) -> tensor<256xi32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %25 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<256xi32>
    %26 = stablehlo.compare LT, %24, %25, SIGNED : (tensor<256xi32>, tensor<256xi32>) -> tensor<256xi1>
    %c_4 = stablehlo.constant dense<8> : tensor<i32>
    %27 = stablehlo.broadcast_in_dim %c_4, dims = [] : (tensor<i32>) -> tensor<256xi32>
    %28 = stablehlo.add %24, %27 : tensor<256xi32>
    %29 = stablehlo.select %26, %28, %24 : tensor<256xi1>, tensor<256xi32>
    %30 = stablehlo.broadcast_in_dim %29, dims = [0] : (tensor<256xi32>) -> tensor<256x1xi32>
    %cst_5 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %31 = stablehlo.broadcast_in_dim %cst_5, dims = [] : (tensor<f32>) -> tensor<256xf32>
    %32 = "stablehlo.scatter"(%23, %30, %31) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg4: tensor<f32>, %arg5: tensor<f32>):
      %33 = stablehlo.add %arg4, %arg5 : tensor<f32>
      stablehlo.return %33 : tensor<f32>
    }) : (tensor<8xf32>, tensor<256x1xi32>, tensor<256xf32>) -> tensor<8xf32>
    return %22, %32 : tensor<128x64xf32>, tensor<8xf32>
  }
  func.func private @relu(%arg0: tensor<128x8x32xf32>) -> tensor<128x8x32xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<128x8x32xf32>
    %1 = stablehlo.maximum %arg0, %0 : tensor<128x8x32xf32>
    return %1 : tensor<128x8x32xf32>
  }
  func.func private @take_along_axis(%arg0: tensor<128x8x64xf32>, %arg1: tensor<128x2x1xi32>) -> tensor<128x2x64xf32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<128x2x1xi32>
    %1 = stablehlo.compare LT, %arg1, %0, SIGNED : (tensor<128x2x1xi32>, tensor<128x2x1xi32>) -> tensor<128x2x1xi1>
    %c_0 = stablehlo.constant dense<8> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<128x2x1xi32>
    %3 = stablehlo.add %arg1, %2 : tensor<128x2x1xi32>
    %4 = stablehlo.select %1, %3, %arg1 : tensor<128x2x1xi1>, tensor<128x2x1xi32>
    %c_1 = stablehlo.constant dense<7> : tensor<1xi32>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %5 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<128x2x1xi32>
    %6 = stablehlo.compare GE, %4, %5, SIGNED : (tensor<128x2x1xi32>, tensor<128x2x1xi32>) -> tensor<128x2x1xi1>
    %7 = stablehlo.broadcast_in_dim %c_1, dims = [2] : (tensor<1xi32>) -> tensor<1x1x1xi32>
    %8 = stablehlo.broadcast_in_dim %7, dims = [0, 1, 2] : (tensor<1x1x1xi32>) -> tensor<128x2x1xi32>
    %9 = stablehlo.compare LE, %4, %8, SIGNED : (tensor<128x2x1xi32>, tensor<128x2x1xi32>) -> tensor<128x2x1xi1>
    %10 = stablehlo.and %6, %9 : tensor<128x2x1xi1>
    %c_3 = stablehlo.constant dense<true> : tensor<i1>
    %11 = stablehlo.reduce(%10 init: %c_3) applies stablehlo.and across dimensions = [2] : (tensor<128x2x1xi1>, tensor<i1>) -> tensor<128x2xi1>
    %12 = "stablehlo.gather"(%arg0, %4) <{dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [1], operand_batching_dims = [0], start_indices_batching_dims = [0], start_index_map = [1], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1, 64>}> : (tensor<128x8x64xf32>, tensor<128x2x1xi32>) -> tensor<128x2x64xf32>
    %13 = stablehlo.broadcast_in_dim %11, dims = [0, 1] : (tensor<128x2xi1>) -> tensor<128x2x64xi1>
    %cst = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %14 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<128x2x64xf32>
    %15 = stablehlo.select %13, %12, %14 : tensor<128x2x64xi1>, tensor<128x2x64xf32>
    return %15 : tensor<128x2x64xf32>
  }
}
