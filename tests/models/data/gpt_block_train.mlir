module @jit_step attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=2, "model"=4]> {stablehlo.mesh = {axes = [{name = "data", size = 2 : i64}, {name = "model", size = 4 : i64}]}}
  func.func public @main(%arg0: tensor<64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg1: tensor<64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg2: tensor<64x192xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg3: tensor<64x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}, %arg4: tensor<64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg5: tensor<64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg6: tensor<64x256xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg7: tensor<256x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}, %arg8: tensor<8x16x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}, {}]>}) -> (tensor<64xf32> {jax.result_info = "result[0][0]", sdy.sharding = #sdy.sharding<@mesh, [{}]>}, tensor<64xf32> {jax.result_info = "result[0][1]", sdy.sharding = #sdy.sharding<@mesh, [{}]>}, tensor<64x192xf32> {jax.result_info = "result[0][2]", sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, tensor<64x64xf32> {jax.result_info = "result[0][3]", sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}, tensor<64xf32> {jax.result_info = "result[0][4]", sdy.sharding = #sdy.sharding<@mesh, [{}]>}, tensor<64xf32> {jax.result_info = "result[0][5]", sdy.sharding = #sdy.sharding<@mesh, [{}]>}, tensor<64x256xf32> {jax.result_info = "result[0][6]", sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, tensor<256x64xf32> {jax.result_info = "result[0][7]", sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}, tensor<f32> {jax.result_info = "result[1]", sdy.sharding = #sdy.sharding<@mesh, []>}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.reduce(%arg8 init: %cst) applies stablehlo.add across dimensions = [2] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<8x16xf32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [0, 1] : (tensor<8x16xf32>) -> tensor<8x16x1xf32>
    %cst_0 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<8x16x1xf32>
    %3 = stablehlo.divide %1, %2 : tensor<8x16x1xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1, 2] : (tensor<8x16x1xf32>) -> tensor<8x16x64xf32>
    %5 = stablehlo.subtract %arg8, %4 : tensor<8x16x64xf32>
    %6 = stablehlo.multiply %5, %5 : tensor<8x16x64xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %7 = stablehlo.reduce(%6 init: %cst_1) applies stablehlo.add across dimensions = [2] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<8x16xf32>
    %8 = stablehlo.broadcast_in_dim %7, dims = [0, 1] : (tensor<8x16xf32>) -> tensor<8x16x1xf32>
    %cst_2 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %9 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<8x16x1xf32>
    %10 = stablehlo.divide %8, %9 : tensor<8x16x1xf32>
    %11 = stablehlo.broadcast_in_dim %3, dims = [0, 1, 2] : (tensor<8x16x1xf32>) -> tensor<8x16x64xf32>
    %12 = stablehlo.subtract %arg8, %11 : tensor<8x16x64xf32>
    %cst_3 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %13 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<8x16x1xf32>
    %14 = stablehlo.add %10, %13 : tensor<8x16x1xf32>
    %15 = stablehlo.rsqrt %14 : tensor<8x16x1xf32>
    %16 = stablehlo.broadcast_in_dim %15, dims = [0, 1, 2] : (tensor<8x16x1xf32>) -> tensor<8x16x64xf32>
    %17 = stablehlo.multiply %12, %16 : tensor<8x16x64xf32>
    %18 = stablehlo.broadcast_in_dim %arg0, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %19 = stablehlo.broadcast_in_dim %18, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<8x16x64xf32>
    %20 = stablehlo.multiply %17, %19 : tensor<8x16x64xf32>
    %21 = stablehlo.broadcast_in_dim %arg1, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %22 = stablehlo.broadcast_in_dim %21, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<8x16x64xf32>
    %23 = stablehlo.add %20, %22 : tensor<8x16x64xf32>
    %24 = stablehlo.dot_general %23, %arg2, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x16x64xf32>, tensor<64x192xf32>) -> tensor<8x16x192xf32>
    %25 = sdy.sharding_constraint %24 <@mesh, [{"data"}, {}, {"model"}]> : tensor<8x16x192xf32>
    %26 = stablehlo.slice %25 [0:8, 0:16, 0:64] : (tensor<8x16x192xf32>) -> tensor<8x16x64xf32>
    %27 = stablehlo.slice %25 [0:8, 0:16, 64:128] : (tensor<8x16x192xf32>) -> tensor<8x16x64xf32>
    %28 = stablehlo.slice %25 [0:8, 0:16, 128:192] : (tensor<8x16x192xf32>) -> tensor<8x16x64xf32>
    %29 = stablehlo.reshape %26 : (tensor<8x16x64xf32>) -> tensor<8x16x4x16xf32>
    %30 = stablehlo.reshape %27 : (tensor<8x16x64xf32>) -> tensor<8x16x4x16xf32>
    %31 = stablehlo.reshape %28 : (tensor<8x16x64xf32>) -> tensor<8x16x4x16xf32>
    %32 = sdy.sharding_constraint %29 <@mesh, [{"data"}, {}, {"model"}, {}]> : tensor<8x16x4x16xf32>
    %33 = stablehlo.dot_general %32, %30, batching_dims = [0, 2] x [0, 2], contracting_dims = [3] x [3], precision = [DEFAULT, DEFAULT] : (tensor<8x16x4x16xf32>, tensor<8x16x4x16xf32>) -> tensor<8x4x16x16xf32>
    %cst_4 = stablehlo.constant dense<4.000000e+00> : tensor<f32>
    %34 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<8x4x16x16xf32>
    %35 = stablehlo.divide %33, %34 : tensor<8x4x16x16xf32>
    %c = stablehlo.constant dense<true> : tensor<i1>
    %36 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i1>) -> tensor<16x16xi1>
    %37 = call @tril(%36) : (tensor<16x16xi1>) -> tensor<16x16xi1>
    %cst_5 = stablehlo.constant dense<-1.000000e+09> : tensor<f32>
    %38:2 = call @_where(%37, %35, %cst_5) : (tensor<16x16xi1>, tensor<8x4x16x16xf32>, tensor<f32>) -> (tensor<8x4x16x16xf32>, tensor<8x4x16x16xi1>)
    %cst_6 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %39 = stablehlo.reduce(%38#0 init: %cst_6) applies stablehlo.maximum across dimensions = [3] : (tensor<8x4x16x16xf32>, tensor<f32>) -> tensor<8x4x16xf32>
    %cst_7 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %40 = stablehlo.broadcast_in_dim %cst_7, dims = [] : (tensor<f32>) -> tensor<8x4x16xf32>
    %41 = stablehlo.maximum %40, %39 : tensor<8x4x16xf32>
    %42 = stablehlo.broadcast_in_dim %41, dims = [0, 1, 2] : (tensor<8x4x16xf32>) -> tensor<8x4x16x1xf32>
    %43 = stablehlo.broadcast_in_dim %42, dims = [0, 1, 2, 3] : (tensor<8x4x16x1xf32>) -> tensor<8x4x16x16xf32>
    %44 = stablehlo.subtract %38#0, %43 : tensor<8x4x16x16xf32>
    %45 = stablehlo.exponential %44 : tensor<8x4x16x16xf32>
    %cst_8 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %46 = stablehlo.reduce(%45 init: %cst_8) applies stablehlo.add across dimensions = [3] : (tensor<8x4x16x16xf32>, tensor<f32>) -> tensor<8x4x16xf32>
    %47 = stablehlo.broadcast_in_dim %46, dims = [0, 1, 2] : (tensor<8x4x16xf32>) -> tensor<8x4x16x1xf32>
    %48 = stablehlo.broadcast_in_dim %47, dims = [0, 1, 2, 3] : (tensor<8x4x16x1xf32>) -> tensor<8x4x16x16xf32>
    %49 = stablehlo.divide %45, %48 : tensor<8x4x16x16xf32>
    %50 = stablehlo.multiply %47, %47 : tensor<8x4x16x1xf32>
    %cst_9 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %51 = stablehlo.broadcast_in_dim %cst_9, dims = [] : (tensor<f32>) -> tensor<8x4x16x1xf32>
    %52 = stablehlo.divide %51, %50 : tensor<8x4x16x1xf32>
    %53 = stablehlo.dot_general %31, %49, batching_dims = [0, 2] x [0, 1], contracting_dims = [1] x [3], precision = [DEFAULT, DEFAULT] : (tensor<8x16x4x16xf32>, tensor<8x4x16x16xf32>) -> tensor<8x4x16x16xf32>
    %54 = stablehlo.transpose %53, dims = [0, 3, 1, 2] : (tensor<8x4x16x16xf32>) -> tensor<8x16x4x16xf32>
    %55 = stablehlo.reshape %54 : (tensor<8x16x4x16xf32>) -> tensor<8x16x64xf32>
    %56 = stablehlo.dot_general %55, %arg3, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x16x64xf32>, tensor<64x64xf32>) -> tensor<8x16x64xf32>
    %57 = sdy.sharding_constraint %56 <@mesh, [{"data"}, {}, {}]> : tensor<8x16x64xf32>
    %58 = stablehlo.add %arg8, %57 : tensor<8x16x64xf32>
    %cst_10 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %59 = stablehlo.reduce(%58 init: %cst_10) applies stablehlo.add across dimensions = [2] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<8x16xf32>
    %60 = stablehlo.broadcast_in_dim %59, dims = [0, 1] : (tensor<8x16xf32>) -> tensor<8x16x1xf32>
    %cst_11 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %61 = stablehlo.broadcast_in_dim %cst_11, dims = [] : (tensor<f32>) -> tensor<8x16x1xf32>
    %62 = stablehlo.divide %60, %61 : tensor<8x16x1xf32>
    %63 = stablehlo.broadcast_in_dim %62, dims = [0, 1, 2] : (tensor<8x16x1xf32>) -> tensor<8x16x64xf32>
    %64 = stablehlo.subtract %58, %63 : tensor<8x16x64xf32>
    %65 = stablehlo.multiply %64, %64 : tensor<8x16x64xf32>
    %cst_12 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %66 = stablehlo.broadcast_in_dim %cst_12, dims = [] : (tensor<f32>) -> tensor<8x16x64xf32>
    %67 = stablehlo.multiply %66, %64 : tensor<8x16x64xf32>
    %cst_13 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %68 = stablehlo.reduce(%65 init: %cst_13) applies stablehlo.add across dimensions = [2] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<8x16xf32>
    %69 = stablehlo.broadcast_in_dim %68, dims = [0, 1] : (tensor<8x16xf32>) -> tensor<8x16x1xf32>
    %cst_14 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %70 = stablehlo.broadcast_in_dim %cst_14, dims = [] : (tensor<f32>) -> tensor<8x16x1xf32>
    %71 = stablehlo.divide %69, %70 : tensor<8x16x1xf32>
    %72 = stablehlo.broadcast_in_dim %62, dims = [0, 1, 2] : (tensor<8x16x1xf32>) -> tensor<8x16x64xf32>
    %73 = stablehlo.subtract %58, %72 : tensor<8x16x64xf32>
    %cst_15 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %74 = stablehlo.broadcast_in_dim %cst_15, dims = [] : (tensor<f32>) -> tensor<8x16x1xf32>
    %75 = stablehlo.add %71, %74 : tensor<8x16x1xf32>
    %76 = stablehlo.rsqrt %75 : tensor<8x16x1xf32>
    %77 = stablehlo.divide %76, %75 : tensor<8x16x1xf32>
    %cst_16 = stablehlo.constant dense<-5.000000e-01> : tensor<f32>
    %78 = stablehlo.broadcast_in_dim %cst_16, dims = [] : (tensor<f32>) -> tensor<8x16x1xf32>
    %79 = stablehlo.multiply %78, %77 : tensor<8x16x1xf32>
    %80 = stablehlo.broadcast_in_dim %76, dims = [0, 1, 2] : (tensor<8x16x1xf32>) -> tensor<8x16x64xf32>
    %81 = stablehlo.multiply %73, %80 : tensor<8x16x64xf32>
    %82 = stablehlo.broadcast_in_dim %arg4, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %83 = stablehlo.broadcast_in_dim %82, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<8x16x64xf32>
    %84 = stablehlo.multiply %81, %83 : tensor<8x16x64xf32>
    %85 = stablehlo.broadcast_in_dim %arg5, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %86 = stablehlo.broadcast_in_dim %85, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<8x16x64xf32>
    %87 = stablehlo.add %84, %86 : tensor<8x16x64xf32>
    %88 = stablehlo.dot_general %87, %arg6, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x16x64xf32>, tensor<64x256xf32>) -> tensor<8x16x256xf32>
    %89 = stablehlo.multiply %88, %88 : tensor<8x16x256xf32>
    %90 = stablehlo.multiply %89, %88 : tensor<8x16x256xf32>
    %91 = stablehlo.multiply %88, %88 : tensor<8x16x256xf32>
    %cst_17 = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %92 = stablehlo.broadcast_in_dim %cst_17, dims = [] : (tensor<f32>) -> tensor<8x16x256xf32>
    %93 = stablehlo.multiply %92, %91 : tensor<8x16x256xf32>
    %cst_18 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %94 = stablehlo.broadcast_in_dim %cst_18, dims = [] : (tensor<f32>) -> tensor<8x16x256xf32>
    %95 = stablehlo.multiply %94, %90 : tensor<8x16x256xf32>
    %96 = stablehlo.add %88, %95 : tensor<8x16x256xf32>
    %cst_19 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %97 = stablehlo.broadcast_in_dim %cst_19, dims = [] : (tensor<f32>) -> tensor<8x16x256xf32>
    %98 = stablehlo.multiply %97, %96 : tensor<8x16x256xf32>
    %99 = stablehlo.tanh %98 : tensor<8x16x256xf32>
    %cst_20 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %100 = stablehlo.broadcast_in_dim %cst_20, dims = [] : (tensor<f32>) -> tensor<8x16x256xf32>
    %101 = stablehlo.subtract %100, %99 : tensor<8x16x256xf32>
    %cst_21 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %102 = stablehlo.broadcast_in_dim %cst_21, dims = [] : (tensor<f32>) -> tensor<8x16x256xf32>
    %103 = stablehlo.add %102, %99 : tensor<8x16x256xf32>
    %cst_22 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %104 = stablehlo.broadcast_in_dim %cst_22, dims = [] : (tensor<f32>) -> tensor<8x16x256xf32>
    %105 = stablehlo.multiply %104, %103 : tensor<8x16x256xf32>
    %106 = stablehlo.multiply %88, %105 : tensor<8x16x256xf32>
    %107 = sdy.sharding_constraint %106 <@mesh, [{"data"}, {}, {"model"}]> : tensor<8x16x256xf32>
    %108 = stablehlo.dot_general %107, %arg7, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x16x256xf32>, tensor<256x64xf32>) -> tensor<8x16x64xf32>
    %109 = sdy.sharding_constraint %108 <@mesh, [{"data"}, {}, {}]> : tensor<8x16x64xf32>
    %110 = stablehlo.add %58, %109 : tensor<8x16x64xf32>
    %111 = stablehlo.multiply %110, %110 : tensor<8x16x64xf32>
    %cst_23 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %112 = stablehlo.broadcast_in_dim %cst_23, dims = [] : (tensor<f32>) -> tensor<8x16x64xf32>
    %113 = stablehlo.multiply %112, %110 : tensor<8x16x64xf32>
    %cst_24 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %114 = stablehlo.reduce(%111 init: %cst_24) applies stablehlo.add across dimensions = [0, 1, 2] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<f32>
    %cst_25 = stablehlo.constant dense<8.192000e+03> : tensor<f32>
    %115 = stablehlo.divide %114, %cst_25 : tensor<f32>
    %cst_26 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %cst_27 = stablehlo.constant dense<8.192000e+03> : tensor<f32>
    %116 = stablehlo.divide %cst_26, %cst_27 : tensor<f32>
    %117 = stablehlo.broadcast_in_dim %116, dims = [] : (tensor<f32>) -> tensor<8x16x64xf32>
    %118 = stablehlo.multiply %117, %113 : tensor<8x16x64xf32>
    %119 = sdy.sharding_constraint %118 <@mesh, [{"data"}, {}, {}]> : tensor<8x16x64xf32>
    %120 = stablehlo.dot_general %119, %107, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<8x16x64xf32>, tensor<8x16x256xf32>) -> tensor<64x256xf32>
    %121 = stablehlo.transpose %120, dims = [1, 0] : (tensor<64x256xf32>) -> tensor<256x64xf32>
    %122 = stablehlo.dot_general %119, %arg7, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x16x64xf32>, tensor<256x64xf32>) -> tensor<8x16x256xf32>
    %123 = sdy.sharding_constraint %122 <@mesh, [{"data"}, {}, {"model"}]> : tensor<8x16x256xf32>
    %124 = stablehlo.multiply %88, %123 : tensor<8x16x256xf32>
    %125 = stablehlo.multiply %123, %105 : tensor<8x16x256xf32>
    %cst_28 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %126 = stablehlo.broadcast_in_dim %cst_28, dims = [] : (tensor<f32>) -> tensor<8x16x256xf32>
    %127 = stablehlo.multiply %126, %124 : tensor<8x16x256xf32>
    %128 = stablehlo.multiply %127, %101 : tensor<8x16x256xf32>
    %129 = stablehlo.multiply %128, %99 : tensor<8x16x256xf32>
    %130 = stablehlo.add %128, %129 : tensor<8x16x256xf32>
    %cst_29 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %131 = stablehlo.broadcast_in_dim %cst_29, dims = [] : (tensor<f32>) -> tensor<8x16x256xf32>
    %132 = stablehlo.multiply %131, %130 : tensor<8x16x256xf32>
    %133 = stablehlo.add %125, %132 : tensor<8x16x256xf32>
    %cst_30 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %134 = stablehlo.broadcast_in_dim %cst_30, dims = [] : (tensor<f32>) -> tensor<8x16x256xf32>
    %135 = stablehlo.multiply %134, %132 : tensor<8x16x256xf32>
    %136 = stablehlo.multiply %135, %93 : tensor<8x16x256xf32>
    %137 = stablehlo.add %133, %136 : tensor<8x16x256xf32>
    %138 = stablehlo.dot_general %137, %87, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<8x16x256xf32>, tensor<8x16x64xf32>) -> tensor<256x64xf32>
    %139 = stablehlo.transpose %138, dims = [1, 0] : (tensor<256x64xf32>) -> tensor<64x256xf32>
    %140 = stablehlo.dot_general %137, %arg6, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x16x256xf32>, tensor<64x256xf32>) -> tensor<8x16x64xf32>
    %cst_31 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %141 = stablehlo.reduce(%140 init: %cst_31) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<64xf32>
    %142 = stablehlo.reshape %141 : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %cst_32 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %143 = stablehlo.reduce(%142 init: %cst_32) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x64xf32>, tensor<f32>) -> tensor<64xf32>
    %144 = stablehlo.multiply %81, %140 : tensor<8x16x64xf32>
    %cst_33 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %145 = stablehlo.reduce(%144 init: %cst_33) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<64xf32>
    %146 = stablehlo.reshape %145 : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %147 = stablehlo.broadcast_in_dim %82, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<8x16x64xf32>
    %148 = stablehlo.multiply %140, %147 : tensor<8x16x64xf32>
    %cst_34 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %149 = stablehlo.reduce(%146 init: %cst_34) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x64xf32>, tensor<f32>) -> tensor<64xf32>
    %150 = stablehlo.multiply %73, %148 : tensor<8x16x64xf32>
    %cst_35 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %151 = stablehlo.reduce(%150 init: %cst_35) applies stablehlo.add across dimensions = [2] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<8x16xf32>
    %152 = stablehlo.reshape %151 : (tensor<8x16xf32>) -> tensor<8x16x1xf32>
    %153 = stablehlo.broadcast_in_dim %76, dims = [0, 1, 2] : (tensor<8x16x1xf32>) -> tensor<8x16x64xf32>
    %154 = stablehlo.multiply %148, %153 : tensor<8x16x64xf32>
    %155 = stablehlo.multiply %152, %79 : tensor<8x16x1xf32>
    %156 = stablehlo.negate %154 : tensor<8x16x64xf32>
    %cst_36 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %157 = stablehlo.reduce(%156 init: %cst_36) applies stablehlo.add across dimensions = [2] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<8x16xf32>
    %158 = stablehlo.reshape %157 : (tensor<8x16xf32>) -> tensor<8x16x1xf32>
    %159 = stablehlo.add %118, %154 : tensor<8x16x64xf32>
    %cst_37 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %160 = stablehlo.broadcast_in_dim %cst_37, dims = [] : (tensor<f32>) -> tensor<8x16x1xf32>
    %161 = stablehlo.divide %155, %160 : tensor<8x16x1xf32>
    %cst_38 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %162 = stablehlo.reduce(%161 init: %cst_38) applies stablehlo.add across dimensions = [2] : (tensor<8x16x1xf32>, tensor<f32>) -> tensor<8x16xf32>
    %163 = stablehlo.broadcast_in_dim %162, dims = [0, 1] : (tensor<8x16xf32>) -> tensor<8x16x64xf32>
    %164 = stablehlo.multiply %163, %67 : tensor<8x16x64xf32>
    %165 = stablehlo.negate %164 : tensor<8x16x64xf32>
    %cst_39 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %166 = stablehlo.reduce(%165 init: %cst_39) applies stablehlo.add across dimensions = [2] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<8x16xf32>
    %167 = stablehlo.reshape %166 : (tensor<8x16xf32>) -> tensor<8x16x1xf32>
    %168 = stablehlo.add %159, %164 : tensor<8x16x64xf32>
    %169 = stablehlo.add %158, %167 : tensor<8x16x1xf32>
    %cst_40 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %170 = stablehlo.broadcast_in_dim %cst_40, dims = [] : (tensor<f32>) -> tensor<8x16x1xf32>
    %171 = stablehlo.divide %169, %170 : tensor<8x16x1xf32>
    %cst_41 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %172 = stablehlo.reduce(%171 init: %cst_41) applies stablehlo.add across dimensions = [2] : (tensor<8x16x1xf32>, tensor<f32>) -> tensor<8x16xf32>
    %173 = stablehlo.broadcast_in_dim %172, dims = [0, 1] : (tensor<8x16xf32>) -> tensor<8x16x64xf32>
    %174 = stablehlo.add %168, %173 : tensor<8x16x64xf32>
    %175 = sdy.sharding_constraint %174 <@mesh, [{"data"}, {}, {}]> : tensor<8x16x64xf32>
    %176 = stablehlo.dot_general %175, %55, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<8x16x64xf32>, tensor<8x16x64xf32>) -> tensor<64x64xf32>
    %177 = stablehlo.transpose %176, dims = [1, 0] : (tensor<64x64xf32>) -> tensor<64x64xf32>
    %178 = stablehlo.dot_general %175, %arg3, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x16x64xf32>, tensor<64x64xf32>) -> tensor<8x16x64xf32>
    %179 = stablehlo.reshape %178 : (tensor<8x16x64xf32>) -> tensor<8x16x4x16xf32>
    %180 = stablehlo.transpose %179, dims = [0, 2, 3, 1] : (tensor<8x16x4x16xf32>) -> tensor<8x4x16x16xf32>
    %181 = stablehlo.dot_general %180, %31, batching_dims = [0, 1] x [0, 2], contracting_dims = [2] x [3], precision = [DEFAULT, DEFAULT] : (tensor<8x4x16x16xf32>, tensor<8x16x4x16xf32>) -> tensor<8x4x16x16xf32>
    %182 = stablehlo.dot_general %180, %49, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2], precision = [DEFAULT, DEFAULT] : (tensor<8x4x16x16xf32>, tensor<8x4x16x16xf32>) -> tensor<8x4x16x16xf32>
    %183 = stablehlo.transpose %182, dims = [0, 3, 1, 2] : (tensor<8x4x16x16xf32>) -> tensor<8x16x4x16xf32>
    %184 = stablehlo.broadcast_in_dim %52, dims = [0, 1, 2, 3] : (tensor<8x4x16x1xf32>) -> tensor<8x4x16x16xf32>
    %185 = stablehlo.multiply %181, %184 : tensor<8x4x16x16xf32>
    %186 = stablehlo.multiply %185, %45 : tensor<8x4x16x16xf32>
    %cst_42 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %187 = stablehlo.reduce(%186 init: %cst_42) applies stablehlo.add across dimensions = [3] : (tensor<8x4x16x16xf32>, tensor<f32>) -> tensor<8x4x16xf32>
    %188 = stablehlo.reshape %187 : (tensor<8x4x16xf32>) -> tensor<8x4x16x1xf32>
    %189 = stablehlo.negate %188 : tensor<8x4x16x1xf32>
    %190 = stablehlo.broadcast_in_dim %47, dims = [0, 1, 2, 3] : (tensor<8x4x16x1xf32>) -> tensor<8x4x16x16xf32>
    %191 = stablehlo.divide %181, %190 : tensor<8x4x16x16xf32>
    %cst_43 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %192 = stablehlo.reduce(%189 init: %cst_43) applies stablehlo.add across dimensions = [3] : (tensor<8x4x16x1xf32>, tensor<f32>) -> tensor<8x4x16xf32>
    %193 = stablehlo.broadcast_in_dim %192, dims = [0, 1, 2] : (tensor<8x4x16xf32>) -> tensor<8x4x16x16xf32>
    %194 = stablehlo.add %191, %193 : tensor<8x4x16x16xf32>
    %195 = stablehlo.multiply %194, %45 : tensor<8x4x16x16xf32>
    %196 = call @_where_0(%38#1, %195) : (tensor<8x4x16x16xi1>, tensor<8x4x16x16xf32>) -> tensor<8x4x16x16xf32>
    %cst_44 = stablehlo.constant dense<4.000000e+00> : tensor<f32>
    %197 = stablehlo.broadcast_in_dim %cst_44, dims = [] : (tensor<f32>) -> tensor<8x4x16x16xf32>
    %198 = stablehlo.divide %196, %197 : tensor<8x4x16x16xf32>
    %199 = stablehlo.dot_general %198, %32, batching_dims = [0, 1] x [0, 2], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x4x16x16xf32>, tensor<8x16x4x16xf32>) -> tensor<8x4x16x16xf32>
    %200 = stablehlo.transpose %199, dims = [0, 2, 1, 3] : (tensor<8x4x16x16xf32>) -> tensor<8x16x4x16xf32>
    %201 = stablehlo.dot_general %198, %30, batching_dims = [0, 1] x [0, 2], contracting_dims = [3] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x4x16x16xf32>, tensor<8x16x4x16xf32>) -> tensor<8x4x16x16xf32>
    %202 = stablehlo.transpose %201, dims = [0, 2, 1, 3] : (tensor<8x4x16x16xf32>) -> tensor<8x16x4x16xf32>
    %203 = sdy.sharding_constraint %202 <@mesh, [{"data"}, {}, {"model"}, {}]> : tensor<8x16x4x16xf32>
    %204 = stablehlo.reshape %183 : (tensor<8x16x4x16xf32>) -> tensor<8x16x64xf32>
    %205 = stablehlo.reshape %200 : (tensor<8x16x4x16xf32>) -> tensor<8x16x64xf32>
    %206 = stablehlo.reshape %203 : (tensor<8x16x4x16xf32>) -> tensor<8x16x64xf32>
    %207 = stablehlo.concatenate %206, %205, %204, dim = 2 : (tensor<8x16x64xf32>, tensor<8x16x64xf32>, tensor<8x16x64xf32>) -> tensor<8x16x192xf32>
    %208 = sdy.sharding_constraint %207 <@mesh, [{"data"}, {}, {"model"}]> : tensor<8x16x192xf32>
    %209 = stablehlo.dot_general %208, %23, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<8x16x192xf32>, tensor<8x16x64xf32>) -> tensor<192x64xf32>
    %210 = stablehlo.transpose %209, dims = [1, 0] : (tensor<192x64xf32>) -> tensor<64x192xf32>
    %211 = stablehlo.dot_general %208, %arg2, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x16x192xf32>, tensor<64x192xf32>) -> tensor<8x16x64xf32>
    %cst_45 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %212 = stablehlo.reduce(%211 init: %cst_45) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<64xf32>
    %213 = stablehlo.reshape %212 : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %cst_46 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %214 = stablehlo.reduce(%213 init: %cst_46) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x64xf32>, tensor<f32>) -> tensor<64xf32>
    %215 = stablehlo.multiply %17, %211 : tensor<8x16x64xf32>
    %cst_47 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %216 = stablehlo.reduce(%215 init: %cst_47) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<64xf32>
    %217 = stablehlo.reshape %216 : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %cst_48 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %218 = stablehlo.reduce(%217 init: %cst_48) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x64xf32>, tensor<f32>) -> tensor<64xf32>
    %cst_49 = stablehlo.constant dense<0.00999999977> : tensor<f32>
    %219 = stablehlo.broadcast_in_dim %cst_49, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %220 = stablehlo.multiply %219, %218 : tensor<64xf32>
    %221 = stablehlo.subtract %arg0, %220 : tensor<64xf32>
    %cst_50 = stablehlo.constant dense<0.00999999977> : tensor<f32>
    %222 = stablehlo.broadcast_in_dim %cst_50, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %223 = stablehlo.multiply %222, %214 : tensor<64xf32>
    %224 = stablehlo.subtract %arg1, %223 : tensor<64xf32>
    %cst_51 = stablehlo.constant dense<0.00999999977> : tensor<f32>
    %225 = stablehlo.broadcast_in_dim %cst_51, dims = [] : (tensor<f32>) -> tensor<64x192xf32>
    %226 = stablehlo.multiply %225, %210 : tensor<64x192xf32>
    %227 = stablehlo.subtract %arg2, %226 : tensor<64x192xf32>
    %cst_52 = stablehlo.constant dense<0.00999999977> : tensor<f32>
    %228 = stablehlo.broadcast_in_dim %cst_52, dims = [] : (tensor<f32>) -> tensor<64x64xf32>
    %229 = stablehlo.multiply %228, %177 : tensor<64x64xf32>
    %230 = stablehlo.subtract %arg3, %229 : tensor<64x64xf32>
    %cst_53 = stablehlo.constant dense<0.00999999977> : tensor<f32>
    %231 = stablehlo.broadcast_in_dim %cst_53, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %232 = stablehlo.multiply %231, %149 : tensor<64xf32>
    %233 = stablehlo.subtract %arg4, %232 : tensor<64xf32>
    %cst_54 = stablehlo.constant dense<0.00999999977> : tensor<f32>
    %234 = stablehlo.broadcast_in_dim %cst_54, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %235 = stablehlo.multiply %234, %143 : tensor<64xf32>
    %236 = stablehlo.subtract %arg5, %235 : tensor<64xf32>
    %cst_55 = stablehlo.constant dense<0.00999999977> : tensor<f32>
    %237 = stablehlo.broadcast_in_dim %cst_55, dims = [] : (tensor<f32>) -> tensor<64x256xf32>
    %238 = stablehlo.multiply %237, %139 : tensor<64x256xf32>
    %239 = stablehlo.subtract %arg6, %238 : tensor<64x256xf32>
    %cst_56 = stablehlo.constant dense<0.00999999977> : tensor<f32>
    %240 = stablehlo.broadcast_in_dim %cst_56, dims = [] : (tensor<f32>) -> tensor<256x64xf32>
    %241 = stablehlo.multiply %240, %121 : tensor<256x64xf32>
    %242 = stablehlo.subtract %arg7, %241 : tensor<256x64xf32>
    return %221, %224, %227, %230, %233, %236, %239, %242, %115 : tensor<64xf32>, tensor<64xf32>, tensor<64x192xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x256xf32>, tensor<256x64xf32>, tensor<f32>
  }
  func.func private @tril(%arg0: tensor<16x16xi1>) -> tensor<16x16xi1> {
    %0 = stablehlo.iota dim = 0 : tensor<16x16xi32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<16x16xi32>
    %2 = stablehlo.add %0, %1 : tensor<16x16xi32>
    %3 = stablehlo.iota dim = 1 : tensor<16x16xi32>
    %4 = stablehlo.compare GE, %2, %3, SIGNED : (tensor<16x16xi32>, tensor<16x16xi32>) -> tensor<16x16xi1>
    %c_0 = stablehlo.constant dense<false> : tensor<i1>
    %5 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i1>) -> tensor<16x16xi1>
    %6 = stablehlo.select %4, %arg0, %5 : tensor<16x16xi1>, tensor<16x16xi1>
    return %6 : tensor<16x16xi1>
  }
  func.func private @_where(%arg0: tensor<16x16xi1>, %arg1: tensor<8x4x16x16xf32>, %arg2: tensor<f32>) -> (tensor<8x4x16x16xf32>, tensor<8x4x16x16xi1>) {
    %0 = stablehlo.convert %arg2 : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %arg0, dims = [2, 3] : (tensor<16x16xi1>) -> tensor<8x4x16x16xi1>
    %2 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<8x4x16x16xf32>
    %3 = stablehlo.select %1, %arg1, %2 : tensor<8x4x16x16xi1>, tensor<8x4x16x16xf32>
    return %3, %1 : tensor<8x4x16x16xf32>, tensor<8x4x16x16xi1>
  }
  func.func private @_where_0(%arg0: tensor<8x4x16x16xi1>, %arg1: tensor<8x4x16x16xf32>) -> tensor<8x4x16x16xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x4x16x16xf32>
    %1 = stablehlo.select %arg0, %arg1, %0 : tensor<8x4x16x16xi1>, tensor<8x4x16x16xf32>
    return %1 : tensor<8x4x16x16xf32>
  }
}
