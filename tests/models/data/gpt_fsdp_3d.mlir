module @jit_step attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=2, "fsdp"=2, "model"=2]> {stablehlo.mesh = {axes = [{name = "data", size = 2 : i64}, {name = "fsdp", size = 2 : i64}, {name = "model", size = 2 : i64}]}}
  func.func public @main(%arg0: tensor<64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg1: tensor<64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg2: tensor<64x192xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"fsdp"}, {"model"}]>}, %arg3: tensor<64x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {"fsdp"}]>}, %arg4: tensor<64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg5: tensor<64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg6: tensor<64x256xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"fsdp"}, {"model"}]>}, %arg7: tensor<256x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {"fsdp"}]>}, %arg8: tensor<64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg9: tensor<64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg10: tensor<64x192xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"fsdp"}, {"model"}]>}, %arg11: tensor<64x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {"fsdp"}]>}, %arg12: tensor<64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg13: tensor<64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg14: tensor<64x256xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"fsdp"}, {"model"}]>}, %arg15: tensor<256x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {"fsdp"}]>}, %arg16: tensor<8x16x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data", "fsdp"}, {}, {}]>}) -> (tensor<64xf32> {jax.result_info = "result[0][0][0]", sdy.sharding = #sdy.sharding<@mesh, [{}]>}, tensor<64xf32> {jax.result_info = "result[0][0][1]", sdy.sharding = #sdy.sharding<@mesh, [{}]>}, tensor<64x192xf32> {jax.result_info = "result[0][0][2]", sdy.sharding = #sdy.sharding<@mesh, [{"fsdp"}, {"model"}]>}, tensor<64x64xf32> {jax.result_info = "result[0][0][3]", sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {"fsdp"}]>}, tensor<64xf32> {jax.result_info = "result[0][0][4]", sdy.sharding = #sdy.sharding<@mesh, [{}]>}, tensor<64xf32> {jax.result_info = "result[0][0][5]", sdy.sharding = #sdy.sharding<@mesh, [{}]>}, tensor<64x256xf32> {jax.result_info = "result[0][0][6]", sdy.sharding = #sdy.sharding<@mesh, [{"fsdp"}, {"model"}]>}, tensor<256x64xf32> {jax.result_info = "result[0][0][7]", sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {"fsdp"}]>}, tensor<64xf32> {jax.result_info = "result[0][1][0]", sdy.sharding = #sdy.sharding<@mesh, [{}]>}, tensor<64xf32> {jax.result_info = "result[0][1][1]", sdy.sharding = #sdy.sharding<@mesh, [{}]>}, tensor<64x192xf32> {jax.result_info = "result[0][1][2]", sdy.sharding = #sdy.sharding<@mesh, [{"fsdp"}, {"model"}]>}, tensor<64x64xf32> {jax.result_info = "result[0][1][3]", sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {"fsdp"}]>}, tensor<64xf32> {jax.result_info = "result[0][1][4]", sdy.sharding = #sdy.sharding<@mesh, [{}]>}, tensor<64xf32> {jax.result_info = "result[0][1][5]", sdy.sharding = #sdy.sharding<@mesh, [{}]>}, tensor<64x256xf32> {jax.result_info = "result[0][1][6]", sdy.sharding = #sdy.sharding<@mesh, [{"fsdp"}, {"model"}]>}, tensor<256x64xf32> {jax.result_info = "result[0][1][7]", sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {"fsdp"}]>}, tensor<f32> {jax.result_info = "result[1]", sdy.sharding = #sdy.sharding<@mesh, []>}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.reduce(%arg16 init: %cst) applies stablehlo.add across dimensions = [2] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<8x16xf32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [0, 1] : (tensor<8x16xf32>) -> tensor<8x16x1xf32>
    %cst_0 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<8x16x1xf32>
    %3 = stablehlo.divide %1, %2 : tensor<8x16x1xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1, 2] : (tensor<8x16x1xf32>) -> tensor<8x16x64xf32>
    %5 = stablehlo.subtract %arg16, %4 : tensor<8x16x64xf32>
    %6 = stablehlo.multiply %5, %5 : tensor<8x16x64xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %7 = stablehlo.reduce(%6 init: %cst_1) applies stablehlo.add across dimensions = [2] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<8x16xf32>
    %8 = stablehlo.broadcast_in_dim %7, dims = [0, 1] : (tensor<8x16xf32>) -> tensor<8x16x1xf32>
    %cst_2 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %9 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<8x16x1xf32>
    %10 = stablehlo.divide %8, %9 : tensor<8x16x1xf32>
    %11 = stablehlo.broadcast_in_dim %3, dims = [0, 1, 2] : (tensor<8x16x1xf32>) -> tensor<8x16x64xf32>
    %12 = stablehlo.subtract %arg16, %11 : tensor<8x16x64xf32>
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
    %25 = sdy.sharding_constraint %24 <@mesh, [{"data", "fsdp"}, {}, {"model"}]> : tensor<8x16x192xf32>
    %26 = stablehlo.slice %25 [0:8, 0:16, 0:64] : (tensor<8x16x192xf32>) -> tensor<8x16x64xf32>
    %27 = stablehlo.slice %25 [0:8, 0:16, 64:128] : (tensor<8x16x192xf32>) -> tensor<8x16x64xf32>
    %28 = stablehlo.slice %25 [0:8, 0:16, 128:192] : (tensor<8x16x192xf32>) -> tensor<8x16x64xf32>
    %29 = stablehlo.reshape %26 : (tensor<8x16x64xf32>) -> tensor<8x16x4x16xf32>
    %30 = stablehlo.reshape %27 : (tensor<8x16x64xf32>) -> tensor<8x16x4x16xf32>
    %31 = stablehlo.reshape %28 : (tensor<8x16x64xf32>) -> tensor<8x16x4x16xf32>
    %32 = sdy.sharding_constraint %29 <@mesh, [{"data", "fsdp"}, {}, {"model"}, {}]> : tensor<8x16x4x16xf32>
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
    %57 = sdy.sharding_constraint %56 <@mesh, [{"data", "fsdp"}, {}, {}]> : tensor<8x16x64xf32>
    %58 = stablehlo.add %arg16, %57 : tensor<8x16x64xf32>
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
    %107 = sdy.sharding_constraint %106 <@mesh, [{"data", "fsdp"}, {}, {"model"}]> : tensor<8x16x256xf32>
    %108 = stablehlo.dot_general %107, %arg7, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x16x256xf32>, tensor<256x64xf32>) -> tensor<8x16x64xf32>
    %109 = sdy.sharding_constraint %108 <@mesh, [{"data", "fsdp"}, {}, {}]> : tensor<8x16x64xf32>
    %110 = stablehlo.add %58, %109 : tensor<8x16x64xf32>
    %cst_23 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %111 = stablehlo.reduce(%110 init: %cst_23) applies stablehlo.add across dimensions = [2] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<8x16xf32>
    %112 = stablehlo.broadcast_in_dim %111, dims = [0, 1] : (tensor<8x16xf32>) -> tensor<8x16x1xf32>
    %cst_24 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %113 = stablehlo.broadcast_in_dim %cst_24, dims = [] : (tensor<f32>) -> tensor<8x16x1xf32>
    %114 = stablehlo.divide %112, %113 : tensor<8x16x1xf32>
    %115 = stablehlo.broadcast_in_dim %114, dims = [0, 1, 2] : (tensor<8x16x1xf32>) -> tensor<8x16x64xf32>
    %116 = stablehlo.subtract %110, %115 : tensor<8x16x64xf32>
    %117 = stablehlo.multiply %116, %116 : tensor<8x16x64xf32>
    %cst_25 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %118 = stablehlo.broadcast_in_dim %cst_25, dims = [] : (tensor<f32>) -> tensor<8x16x64xf32>
    %119 = stablehlo.multiply %118, %116 : tensor<8x16x64xf32>
    %cst_26 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %120 = stablehlo.reduce(%117 init: %cst_26) applies stablehlo.add across dimensions = [2] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<8x16xf32>
    %121 = stablehlo.broadcast_in_dim %120, dims = [0, 1] : (tensor<8x16xf32>) -> tensor<8x16x1xf32>
    %cst_27 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %122 = stablehlo.broadcast_in_dim %cst_27, dims = [] : (tensor<f32>) -> tensor<8x16x1xf32>
    %123 = stablehlo.divide %121, %122 : tensor<8x16x1xf32>
    %124 = stablehlo.broadcast_in_dim %114, dims = [0, 1, 2] : (tensor<8x16x1xf32>) -> tensor<8x16x64xf32>
    %125 = stablehlo.subtract %110, %124 : tensor<8x16x64xf32>
    %cst_28 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %126 = stablehlo.broadcast_in_dim %cst_28, dims = [] : (tensor<f32>) -> tensor<8x16x1xf32>
    %127 = stablehlo.add %123, %126 : tensor<8x16x1xf32>
    %128 = stablehlo.rsqrt %127 : tensor<8x16x1xf32>
    %129 = stablehlo.divide %128, %127 : tensor<8x16x1xf32>
    %cst_29 = stablehlo.constant dense<-5.000000e-01> : tensor<f32>
    %130 = stablehlo.broadcast_in_dim %cst_29, dims = [] : (tensor<f32>) -> tensor<8x16x1xf32>
    %131 = stablehlo.multiply %130, %129 : tensor<8x16x1xf32>
    %132 = stablehlo.broadcast_in_dim %128, dims = [0, 1, 2] : (tensor<8x16x1xf32>) -> tensor<8x16x64xf32>
    %133 = stablehlo.multiply %125, %132 : tensor<8x16x64xf32>
    %134 = stablehlo.broadcast_in_dim %arg8, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %135 = stablehlo.broadcast_in_dim %134, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<8x16x64xf32>
    %136 = stablehlo.multiply %133, %135 : tensor<8x16x64xf32>
    %137 = stablehlo.broadcast_in_dim %arg9, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %138 = stablehlo.broadcast_in_dim %137, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<8x16x64xf32>
    %139 = stablehlo.add %136, %138 : tensor<8x16x64xf32>
    %140 = stablehlo.dot_general %139, %arg10, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x16x64xf32>, tensor<64x192xf32>) -> tensor<8x16x192xf32>
    %141 = sdy.sharding_constraint %140 <@mesh, [{"data", "fsdp"}, {}, {"model"}]> : tensor<8x16x192xf32>
    %142 = stablehlo.slice %141 [0:8, 0:16, 0:64] : (tensor<8x16x192xf32>) -> tensor<8x16x64xf32>
    %143 = stablehlo.slice %141 [0:8, 0:16, 64:128] : (tensor<8x16x192xf32>) -> tensor<8x16x64xf32>
    %144 = stablehlo.slice %141 [0:8, 0:16, 128:192] : (tensor<8x16x192xf32>) -> tensor<8x16x64xf32>
    %145 = stablehlo.reshape %142 : (tensor<8x16x64xf32>) -> tensor<8x16x4x16xf32>
    %146 = stablehlo.reshape %143 : (tensor<8x16x64xf32>) -> tensor<8x16x4x16xf32>
    %147 = stablehlo.reshape %144 : (tensor<8x16x64xf32>) -> tensor<8x16x4x16xf32>
    %148 = sdy.sharding_constraint %145 <@mesh, [{"data", "fsdp"}, {}, {"model"}, {}]> : tensor<8x16x4x16xf32>
    %149 = stablehlo.dot_general %148, %146, batching_dims = [0, 2] x [0, 2], contracting_dims = [3] x [3], precision = [DEFAULT, DEFAULT] : (tensor<8x16x4x16xf32>, tensor<8x16x4x16xf32>) -> tensor<8x4x16x16xf32>
    %cst_30 = stablehlo.constant dense<4.000000e+00> : tensor<f32>
    %150 = stablehlo.broadcast_in_dim %cst_30, dims = [] : (tensor<f32>) -> tensor<8x4x16x16xf32>
    %151 = stablehlo.divide %149, %150 : tensor<8x4x16x16xf32>
    %c_31 = stablehlo.constant dense<true> : tensor<i1>
    %152 = stablehlo.broadcast_in_dim %c_31, dims = [] : (tensor<i1>) -> tensor<16x16xi1>
    %153 = call @tril(%152) : (tensor<16x16xi1>) -> tensor<16x16xi1>
    %cst_32 = stablehlo.constant dense<-1.000000e+09> : tensor<f32>
    %154:2 = call @_where(%153, %151, %cst_32) : (tensor<16x16xi1>, tensor<8x4x16x16xf32>, tensor<f32>) -> (tensor<8x4x16x16xf32>, tensor<8x4x16x16xi1>)
    %cst_33 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %155 = stablehlo.reduce(%154#0 init: %cst_33) applies stablehlo.maximum across dimensions = [3] : (tensor<8x4x16x16xf32>, tensor<f32>) -> tensor<8x4x16xf32>
    %cst_34 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %156 = stablehlo.broadcast_in_dim %cst_34, dims = [] : (tensor<f32>) -> tensor<8x4x16xf32>
    %157 = stablehlo.maximum %156, %155 : tensor<8x4x16xf32>
    %158 = stablehlo.broadcast_in_dim %157, dims = [0, 1, 2] : (tensor<8x4x16xf32>) -> tensor<8x4x16x1xf32>
    %159 = stablehlo.broadcast_in_dim %158, dims = [0, 1, 2, 3] : (tensor<8x4x16x1xf32>) -> tensor<8x4x16x16xf32>
    %160 = stablehlo.subtract %154#0, %159 : tensor<8x4x16x16xf32>
    %161 = stablehlo.exponential %160 : tensor<8x4x16x16xf32>
    %cst_35 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %162 = stablehlo.reduce(%161 init: %cst_35) applies stablehlo.add across dimensions = [3] : (tensor<8x4x16x16xf32>, tensor<f32>) -> tensor<8x4x16xf32>
    %163 = stablehlo.broadcast_in_dim %162, dims = [0, 1, 2] : (tensor<8x4x16xf32>) -> tensor<8x4x16x1xf32>
    %164 = stablehlo.broadcast_in_dim %163, dims = [0, 1, 2, 3] : (tensor<8x4x16x1xf32>) -> tensor<8x4x16x16xf32>
    %165 = stablehlo.divide %161, %164 : tensor<8x4x16x16xf32>
    %166 = stablehlo.multiply %163, %163 : tensor<8x4x16x1xf32>
    %cst_36 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %167 = stablehlo.broadcast_in_dim %cst_36, dims = [] : (tensor<f32>) -> tensor<8x4x16x1xf32>
    %168 = stablehlo.divide %167, %166 : tensor<8x4x16x1xf32>
    %169 = stablehlo.dot_general %147, %165, batching_dims = [0, 2] x [0, 1], contracting_dims = [1] x [3], precision = [DEFAULT, DEFAULT] : (tensor<8x16x4x16xf32>, tensor<8x4x16x16xf32>) -> tensor<8x4x16x16xf32>
    %170 = stablehlo.transpose %169, dims = [0, 3, 1, 2] : (tensor<8x4x16x16xf32>) -> tensor<8x16x4x16xf32>
    %171 = stablehlo.reshape %170 : (tensor<8x16x4x16xf32>) -> tensor<8x16x64xf32>
    %172 = stablehlo.dot_general %171, %arg11, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x16x64xf32>, tensor<64x64xf32>) -> tensor<8x16x64xf32>
    %173 = sdy.sharding_constraint %172 <@mesh, [{"data", "fsdp"}, {}, {}]> : tensor<8x16x64xf32>
    %174 = stablehlo.add %110, %173 : tensor<8x16x64xf32>
    %cst_37 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %175 = stablehlo.reduce(%174 init: %cst_37) applies stablehlo.add across dimensions = [2] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<8x16xf32>
    %176 = stablehlo.broadcast_in_dim %175, dims = [0, 1] : (tensor<8x16xf32>) -> tensor<8x16x1xf32>
    %cst_38 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %177 = stablehlo.broadcast_in_dim %cst_38, dims = [] : (tensor<f32>) -> tensor<8x16x1xf32>
    %178 = stablehlo.divide %176, %177 : tensor<8x16x1xf32>
    %179 = stablehlo.broadcast_in_dim %178, dims = [0, 1, 2] : (tensor<8x16x1xf32>) -> tensor<8x16x64xf32>
    %180 = stablehlo.subtract %174, %179 : tensor<8x16x64xf32>
    %181 = stablehlo.multiply %180, %180 : tensor<8x16x64xf32>
    %cst_39 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %182 = stablehlo.broadcast_in_dim %cst_39, dims = [] : (tensor<f32>) -> tensor<8x16x64xf32>
    %183 = stablehlo.multiply %182, %180 : tensor<8x16x64xf32>
    %cst_40 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %184 = stablehlo.reduce(%181 init: %cst_40) applies stablehlo.add across dimensions = [2] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<8x16xf32>
    %185 = stablehlo.broadcast_in_dim %184, dims = [0, 1] : (tensor<8x16xf32>) -> tensor<8x16x1xf32>
    %cst_41 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %186 = stablehlo.broadcast_in_dim %cst_41, dims = [] : (tensor<f32>) -> tensor<8x16x1xf32>
    %187 = stablehlo.divide %185, %186 : tensor<8x16x1xf32>
    %188 = stablehlo.broadcast_in_dim %178, dims = [0, 1, 2] : (tensor<8x16x1xf32>) -> tensor<8x16x64xf32>
    %189 = stablehlo.subtract %174, %188 : tensor<8x16x64xf32>
    %cst_42 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %190 = stablehlo.broadcast_in_dim %cst_42, dims = [] : (tensor<f32>) -> tensor<8x16x1xf32>
    %191 = stablehlo.add %187, %190 : tensor<8x16x1xf32>
    %192 = stablehlo.rsqrt %191 : tensor<8x16x1xf32>
    %193 = stablehlo.divide %192, %191 : tensor<8x16x1xf32>
    %cst_43 = stablehlo.constant dense<-5.000000e-01> : tensor<f32>
    %194 = stablehlo.broadcast_in_dim %cst_43, dims = [] : (tensor<f32>) -> tensor<8x16x1xf32>
    %195 = stablehlo.multiply %194, %193 : tensor<8x16x1xf32>
    %196 = stablehlo.broadcast_in_dim %192, dims = [0, 1, 2] : (tensor<8x16x1xf32>) -> tensor<8x16x64xf32>
    %197 = stablehlo.multiply %189, %196 : tensor<8x16x64xf32>
    %198 = stablehlo.broadcast_in_dim %arg12, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %199 = stablehlo.broadcast_in_dim %198, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<8x16x64xf32>
    %200 = stablehlo.multiply %197, %199 : tensor<8x16x64xf32>
    %201 = stablehlo.broadcast_in_dim %arg13, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %202 = stablehlo.broadcast_in_dim %201, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<8x16x64xf32>
    %203 = stablehlo.add %200, %202 : tensor<8x16x64xf32>
    %204 = stablehlo.dot_general %203, %arg14, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x16x64xf32>, tensor<64x256xf32>) -> tensor<8x16x256xf32>
    %205 = stablehlo.multiply %204, %204 : tensor<8x16x256xf32>
    %206 = stablehlo.multiply %205, %204 : tensor<8x16x256xf32>
    %207 = stablehlo.multiply %204, %204 : tensor<8x16x256xf32>
    %cst_44 = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %208 = stablehlo.broadcast_in_dim %cst_44, dims = [] : (tensor<f32>) -> tensor<8x16x256xf32>
    %209 = stablehlo.multiply %208, %207 : tensor<8x16x256xf32>
    %cst_45 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %210 = stablehlo.broadcast_in_dim %cst_45, dims = [] : (tensor<f32>) -> tensor<8x16x256xf32>
    %211 = stablehlo.multiply %210, %206 : tensor<8x16x256xf32>
    %212 = stablehlo.add %204, %211 : tensor<8x16x256xf32>
    %cst_46 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %213 = stablehlo.broadcast_in_dim %cst_46, dims = [] : (tensor<f32>) -> tensor<8x16x256xf32>
    %214 = stablehlo.multiply %213, %212 : tensor<8x16x256xf32>
    %215 = stablehlo.tanh %214 : tensor<8x16x256xf32>
    %cst_47 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %216 = stablehlo.broadcast_in_dim %cst_47, dims = [] : (tensor<f32>) -> tensor<8x16x256xf32>
    %217 = stablehlo.subtract %216, %215 : tensor<8x16x256xf32>
    %cst_48 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %218 = stablehlo.broadcast_in_dim %cst_48, dims = [] : (tensor<f32>) -> tensor<8x16x256xf32>
    %219 = stablehlo.add %218, %215 : tensor<8x16x256xf32>
    %cst_49 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %220 = stablehlo.broadcast_in_dim %cst_49, dims = [] : (tensor<f32>) -> tensor<8x16x256xf32>
    %221 = stablehlo.multiply %220, %219 : tensor<8x16x256xf32>
    %222 = stablehlo.multiply %204, %221 : tensor<8x16x256xf32>
    %223 = sdy.sharding_constraint %222 <@mesh, [{"data", "fsdp"}, {}, {"model"}]> : tensor<8x16x256xf32>
    %224 = stablehlo.dot_general %223, %arg15, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x16x256xf32>, tensor<256x64xf32>) -> tensor<8x16x64xf32>
    %225 = sdy.sharding_constraint %224 <@mesh, [{"data", "fsdp"}, {}, {}]> : tensor<8x16x64xf32>
    %226 = stablehlo.add %174, %225 : tensor<8x16x64xf32>
    %227 = stablehlo.multiply %226, %226 : tensor<8x16x64xf32>
    %cst_50 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %228 = stablehlo.broadcast_in_dim %cst_50, dims = [] : (tensor<f32>) -> tensor<8x16x64xf32>
    %229 = stablehlo.multiply %228, %226 : tensor<8x16x64xf32>
    %cst_51 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %230 = stablehlo.reduce(%227 init: %cst_51) applies stablehlo.add across dimensions = [0, 1, 2] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<f32>
    %cst_52 = stablehlo.constant dense<8.192000e+03> : tensor<f32>
    %231 = stablehlo.divide %230, %cst_52 : tensor<f32>
    %cst_53 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %cst_54 = stablehlo.constant dense<8.192000e+03> : tensor<f32>
    %232 = stablehlo.divide %cst_53, %cst_54 : tensor<f32>
    %233 = stablehlo.broadcast_in_dim %232, dims = [] : (tensor<f32>) -> tensor<8x16x64xf32>
    %234 = stablehlo.multiply %233, %229 : tensor<8x16x64xf32>
    %235 = sdy.sharding_constraint %234 <@mesh, [{"data", "fsdp"}, {}, {}]> : tensor<8x16x64xf32>
    %236 = stablehlo.dot_general %235, %223, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<8x16x64xf32>, tensor<8x16x256xf32>) -> tensor<64x256xf32>
    %237 = stablehlo.transpose %236, dims = [1, 0] : (tensor<64x256xf32>) -> tensor<256x64xf32>
    %238 = stablehlo.dot_general %235, %arg15, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x16x64xf32>, tensor<256x64xf32>) -> tensor<8x16x256xf32>
    %239 = sdy.sharding_constraint %238 <@mesh, [{"data", "fsdp"}, {}, {"model"}]> : tensor<8x16x256xf32>
    %240 = stablehlo.multiply %204, %239 : tensor<8x16x256xf32>
    %241 = stablehlo.multiply %239, %221 : tensor<8x16x256xf32>
    %cst_55 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %242 = stablehlo.broadcast_in_dim %cst_55, dims = [] : (tensor<f32>) -> tensor<8x16x256xf32>
    %243 = stablehlo.multiply %242, %240 : tensor<8x16x256xf32>
    %244 = stablehlo.multiply %243, %217 : tensor<8x16x256xf32>
    %245 = stablehlo.multiply %244, %215 : tensor<8x16x256xf32>
    %246 = stablehlo.add %244, %245 : tensor<8x16x256xf32>
    %cst_56 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %247 = stablehlo.broadcast_in_dim %cst_56, dims = [] : (tensor<f32>) -> tensor<8x16x256xf32>
    %248 = stablehlo.multiply %247, %246 : tensor<8x16x256xf32>
    %249 = stablehlo.add %241, %248 : tensor<8x16x256xf32>
    %cst_57 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %250 = stablehlo.broadcast_in_dim %cst_57, dims = [] : (tensor<f32>) -> tensor<8x16x256xf32>
    %251 = stablehlo.multiply %250, %248 : tensor<8x16x256xf32>
    %252 = stablehlo.multiply %251, %209 : tensor<8x16x256xf32>
    %253 = stablehlo.add %249, %252 : tensor<8x16x256xf32>
    %254 = stablehlo.dot_general %253, %203, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<8x16x256xf32>, tensor<8x16x64xf32>) -> tensor<256x64xf32>
    %255 = stablehlo.transpose %254, dims = [1, 0] : (tensor<256x64xf32>) -> tensor<64x256xf32>
    %256 = stablehlo.dot_general %253, %arg14, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x16x256xf32>, tensor<64x256xf32>) -> tensor<8x16x64xf32>
    %cst_58 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %257 = stablehlo.reduce(%256 init: %cst_58) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<64xf32>
    %258 = stablehlo.reshape %257 : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %cst_59 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %259 = stablehlo.reduce(%258 init: %cst_59) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x64xf32>, tensor<f32>) -> tensor<64xf32>
    %260 = stablehlo.multiply %197, %256 : tensor<8x16x64xf32>
    %cst_60 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %261 = stablehlo.reduce(%260 init: %cst_60) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<64xf32>
    %262 = stablehlo.reshape %261 : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %263 = stablehlo.broadcast_in_dim %198, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<8x16x64xf32>
    %264 = stablehlo.multiply %256, %263 : tensor<8x16x64xf32>
    %cst_61 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %265 = stablehlo.reduce(%262 init: %cst_61) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x64xf32>, tensor<f32>) -> tensor<64xf32>
    %266 = stablehlo.multiply %189, %264 : tensor<8x16x64xf32>
    %cst_62 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %267 = stablehlo.reduce(%266 init: %cst_62) applies stablehlo.add across dimensions = [2] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<8x16xf32>
    %268 = stablehlo.reshape %267 : (tensor<8x16xf32>) -> tensor<8x16x1xf32>
    %269 = stablehlo.broadcast_in_dim %192, dims = [0, 1, 2] : (tensor<8x16x1xf32>) -> tensor<8x16x64xf32>
    %270 = stablehlo.multiply %264, %269 : tensor<8x16x64xf32>
    %271 = stablehlo.multiply %268, %195 : tensor<8x16x1xf32>
    %272 = stablehlo.negate %270 : tensor<8x16x64xf32>
    %cst_63 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %273 = stablehlo.reduce(%272 init: %cst_63) applies stablehlo.add across dimensions = [2] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<8x16xf32>
    %274 = stablehlo.reshape %273 : (tensor<8x16xf32>) -> tensor<8x16x1xf32>
    %275 = stablehlo.add %234, %270 : tensor<8x16x64xf32>
    %cst_64 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %276 = stablehlo.broadcast_in_dim %cst_64, dims = [] : (tensor<f32>) -> tensor<8x16x1xf32>
    %277 = stablehlo.divide %271, %276 : tensor<8x16x1xf32>
    %cst_65 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %278 = stablehlo.reduce(%277 init: %cst_65) applies stablehlo.add across dimensions = [2] : (tensor<8x16x1xf32>, tensor<f32>) -> tensor<8x16xf32>
    %279 = stablehlo.broadcast_in_dim %278, dims = [0, 1] : (tensor<8x16xf32>) -> tensor<8x16x64xf32>
    %280 = stablehlo.multiply %279, %183 : tensor<8x16x64xf32>
    %281 = stablehlo.negate %280 : tensor<8x16x64xf32>
    %cst_66 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %282 = stablehlo.reduce(%281 init: %cst_66) applies stablehlo.add across dimensions = [2] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<8x16xf32>
    %283 = stablehlo.reshape %282 : (tensor<8x16xf32>) -> tensor<8x16x1xf32>
    %284 = stablehlo.add %275, %280 : tensor<8x16x64xf32>
    %285 = stablehlo.add %274, %283 : tensor<8x16x1xf32>
    %cst_67 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %286 = stablehlo.broadcast_in_dim %cst_67, dims = [] : (tensor<f32>) -> tensor<8x16x1xf32>
    %287 = stablehlo.divide %285, %286 : tensor<8x16x1xf32>
    %cst_68 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %288 = stablehlo.reduce(%287 init: %cst_68) applies stablehlo.add across dimensions = [2] : (tensor<8x16x1xf32>, tensor<f32>) -> tensor<8x16xf32>
    %289 = stablehlo.broadcast_in_dim %288, dims = [0, 1] : (tensor<8x16xf32>) -> tensor<8x16x64xf32>
    %290 = stablehlo.add %284, %289 : tensor<8x16x64xf32>
    %291 = sdy.sharding_constraint %290 <@mesh, [{"data", "fsdp"}, {}, {}]> : tensor<8x16x64xf32>
    %292 = stablehlo.dot_general %291, %171, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<8x16x64xf32>, tensor<8x16x64xf32>) -> tensor<64x64xf32>
    %293 = stablehlo.transpose %292, dims = [1, 0] : (tensor<64x64xf32>) -> tensor<64x64xf32>
    %294 = stablehlo.dot_general %291, %arg11, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x16x64xf32>, tensor<64x64xf32>) -> tensor<8x16x64xf32>
    %295 = stablehlo.reshape %294 : (tensor<8x16x64xf32>) -> tensor<8x16x4x16xf32>
    %296 = stablehlo.transpose %295, dims = [0, 2, 3, 1] : (tensor<8x16x4x16xf32>) -> tensor<8x4x16x16xf32>
    %297 = stablehlo.dot_general %296, %147, batching_dims = [0, 1] x [0, 2], contracting_dims = [2] x [3], precision = [DEFAULT, DEFAULT] : (tensor<8x4x16x16xf32>, tensor<8x16x4x16xf32>) -> tensor<8x4x16x16xf32>
    %298 = stablehlo.dot_general %296, %165, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2], precision = [DEFAULT, DEFAULT] : (tensor<8x4x16x16xf32>, tensor<8x4x16x16xf32>) -> tensor<8x4x16x16xf32>
    %299 = stablehlo.transpose %298, dims = [0, 3, 1, 2] : (tensor<8x4x16x16xf32>) -> tensor<8x16x4x16xf32>
    %300 = stablehlo.broadcast_in_dim %168, dims = [0, 1, 2, 3] : (tensor<8x4x16x1xf32>) -> tensor<8x4x16x16xf32>
    %301 = stablehlo.multiply %297, %300 : tensor<8x4x16x16xf32>
    %302 = stablehlo.multiply %301, %161 : tensor<8x4x16x16xf32>
    %cst_69 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %303 = stablehlo.reduce(%302 init: %cst_69) applies stablehlo.add across dimensions = [3] : (tensor<8x4x16x16xf32>, tensor<f32>) -> tensor<8x4x16xf32>
    %304 = stablehlo.reshape %303 : (tensor<8x4x16xf32>) -> tensor<8x4x16x1xf32>
    %305 = stablehlo.negate %304 : tensor<8x4x16x1xf32>
    %306 = stablehlo.broadcast_in_dim %163, dims = [0, 1, 2, 3] : (tensor<8x4x16x1xf32>) -> tensor<8x4x16x16xf32>
    %307 = stablehlo.divide %297, %306 : tensor<8x4x16x16xf32>
    %cst_70 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %308 = stablehlo.reduce(%305 init: %cst_70) applies stablehlo.add across dimensions = [3] : (tensor<8x4x16x1xf32>, tensor<f32>) -> tensor<8x4x16xf32>
    %309 = stablehlo.broadcast_in_dim %308, dims = [0, 1, 2] : (tensor<8x4x16xf32>) -> tensor<8x4x16x16xf32>
    %310 = stablehlo.add %307, %309 : tensor<8x4x16x16xf32>
    %311 = stablehlo.multiply %310, %161 : tensor<8x4x16x16xf32>
    %312 = call @_where_0(%154#1, %311) : (tensor<8x4x16x16xi1>, tensor<8x4x16x16xf32>) -> tensor<8x4x16x16xf32>
    %cst_71 = stablehlo.constant dense<4.000000e+00> : tensor<f32>
    %313 = stablehlo.broadcast_in_dim %cst_71, dims = [] : (tensor<f32>) -> tensor<8x4x16x16xf32>
    %314 = stablehlo.divide %312, %313 : tensor<8x4x16x16xf32>
    %315 = stablehlo.dot_general %314, %148, batching_dims = [0, 1] x [0, 2], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x4x16x16xf32>, tensor<8x16x4x16xf32>) -> tensor<8x4x16x16xf32>
    %316 = stablehlo.transpose %315, dims = [0, 2, 1, 3] : (tensor<8x4x16x16xf32>) -> tensor<8x16x4x16xf32>
    %317 = stablehlo.dot_general %314, %146, batching_dims = [0, 1] x [0, 2], contracting_dims = [3] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x4x16x16xf32>, tensor<8x16x4x16xf32>) -> tensor<8x4x16x16xf32>
    %318 = stablehlo.transpose %317, dims = [0, 2, 1, 3] : (tensor<8x4x16x16xf32>) -> tensor<8x16x4x16xf32>
    %319 = sdy.sharding_constraint %318 <@mesh, [{"data", "fsdp"}, {}, {"model"}, {}]> : tensor<8x16x4x16xf32>
    %320 = stablehlo.reshape %299 : (tensor<8x16x4x16xf32>) -> tensor<8x16x64xf32>
    %321 = stablehlo.reshape %316 : (tensor<8x16x4x16xf32>) -> tensor<8x16x64xf32>
    %322 = stablehlo.reshape %319 : (tensor<8x16x4x16xf32>) -> tensor<8x16x64xf32>
    %323 = stablehlo.concatenate %322, %321, %320, dim = 2 : (tensor<8x16x64xf32>, tensor<8x16x64xf32>, tensor<8x16x64xf32>) -> tensor<8x16x192xf32>
    %324 = sdy.sharding_constraint %323 <@mesh, [{"data", "fsdp"}, {}, {"model"}]> : tensor<8x16x192xf32>
    %325 = stablehlo.dot_general %324, %139, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<8x16x192xf32>, tensor<8x16x64xf32>) -> tensor<192x64xf32>
    %326 = stablehlo.transpose %325, dims = [1, 0] : (tensor<192x64xf32>) -> tensor<64x192xf32>
    %327 = stablehlo.dot_general %324, %arg10, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x16x192xf32>, tensor<64x192xf32>) -> tensor<8x16x64xf32>
    %cst_72 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %328 = stablehlo.reduce(%327 init: %cst_72) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<64xf32>
    %329 = stablehlo.reshape %328 : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %cst_73 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %330 = stablehlo.reduce(%329 init: %cst_73) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x64xf32>, tensor<f32>) -> tensor<64xf32>
    %331 = stablehlo.multiply %133, %327 : tensor<8x16x64xf32>
    %cst_74 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %332 = stablehlo.reduce(%331 init: %cst_74) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<64xf32>
    %333 = stablehlo.reshape %332 : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %334 = stablehlo.broadcast_in_dim %134, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<8x16x64xf32>
    %335 = stablehlo.multiply %327, %334 : tensor<8x16x64xf32>
    %cst_75 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %336 = stablehlo.reduce(%333 init: %cst_75) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x64xf32>, tensor<f32>) -> tensor<64xf32>
    %337 = stablehlo.multiply %125, %335 : tensor<8x16x64xf32>
    %cst_76 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %338 = stablehlo.reduce(%337 init: %cst_76) applies stablehlo.add across dimensions = [2] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<8x16xf32>
    %339 = stablehlo.reshape %338 : (tensor<8x16xf32>) -> tensor<8x16x1xf32>
    %340 = stablehlo.broadcast_in_dim %128, dims = [0, 1, 2] : (tensor<8x16x1xf32>) -> tensor<8x16x64xf32>
    %341 = stablehlo.multiply %335, %340 : tensor<8x16x64xf32>
    %342 = stablehlo.multiply %339, %131 : tensor<8x16x1xf32>
    %343 = stablehlo.negate %341 : tensor<8x16x64xf32>
    %cst_77 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %344 = stablehlo.reduce(%343 init: %cst_77) applies stablehlo.add across dimensions = [2] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<8x16xf32>
    %345 = stablehlo.reshape %344 : (tensor<8x16xf32>) -> tensor<8x16x1xf32>
    %346 = stablehlo.add %290, %341 : tensor<8x16x64xf32>
    %cst_78 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %347 = stablehlo.broadcast_in_dim %cst_78, dims = [] : (tensor<f32>) -> tensor<8x16x1xf32>
    %348 = stablehlo.divide %342, %347 : tensor<8x16x1xf32>
    %cst_79 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %349 = stablehlo.reduce(%348 init: %cst_79) applies stablehlo.add across dimensions = [2] : (tensor<8x16x1xf32>, tensor<f32>) -> tensor<8x16xf32>
    %350 = stablehlo.broadcast_in_dim %349, dims = [0, 1] : (tensor<8x16xf32>) -> tensor<8x16x64xf32>
    %351 = stablehlo.multiply %350, %119 : tensor<8x16x64xf32>
    %352 = stablehlo.negate %351 : tensor<8x16x64xf32>
    %cst_80 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %353 = stablehlo.reduce(%352 init: %cst_80) applies stablehlo.add across dimensions = [2] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<8x16xf32>
    %354 = stablehlo.reshape %353 : (tensor<8x16xf32>) -> tensor<8x16x1xf32>
    %355 = stablehlo.add %346, %351 : tensor<8x16x64xf32>
    %356 = stablehlo.add %345, %354 : tensor<8x16x1xf32>
    %cst_81 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %357 = stablehlo.broadcast_in_dim %cst_81, dims = [] : (tensor<f32>) -> tensor<8x16x1xf32>
    %358 = stablehlo.divide %356, %357 : tensor<8x16x1xf32>
    %cst_82 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %359 = stablehlo.reduce(%358 init: %cst_82) applies stablehlo.add across dimensions = [2] : (tensor<8x16x1xf32>, tensor<f32>) -> tensor<8x16xf32>
    %360 = stablehlo.broadcast_in_dim %359, dims = [0, 1] : (tensor<8x16xf32>) -> tensor<8x16x64xf32>
    %361 = stablehlo.add %355, %360 : tensor<8x16x64xf32>
    %362 = sdy.sharding_constraint %361 <@mesh, [{"data", "fsdp"}, {}, {}]> : tensor<8x16x64xf32>
    %363 = stablehlo.dot_general %362, %107, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<8x16x64xf32>, tensor<8x16x256xf32>) -> tensor<64x256xf32>
    %364 = stablehlo.transpose %363, dims = [1, 0] : (tensor<64x256xf32>) -> tensor<256x64xf32>
    %365 = stablehlo.dot_general %362, %arg7, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x16x64xf32>, tensor<256x64xf32>) -> tensor<8x16x256xf32>
    %366 = sdy.sharding_constraint %365 <@mesh, [{"data", "fsdp"}, {}, {"model"}]> : tensor<8x16x256xf32>
    %367 = stablehlo.multiply %88, %366 : tensor<8x16x256xf32>
    %368 = stablehlo.multiply %366, %105 : tensor<8x16x256xf32>
    %cst_83 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %369 = stablehlo.broadcast_in_dim %cst_83, dims = [] : (tensor<f32>) -> tensor<8x16x256xf32>
    %370 = stablehlo.multiply %369, %367 : tensor<8x16x256xf32>
    %371 = stablehlo.multiply %370, %101 : tensor<8x16x256xf32>
    %372 = stablehlo.multiply %371, %99 : tensor<8x16x256xf32>
    %373 = stablehlo.add %371, %372 : tensor<8x16x256xf32>
    %cst_84 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %374 = stablehlo.broadcast_in_dim %cst_84, dims = [] : (tensor<f32>) -> tensor<8x16x256xf32>
    %375 = stablehlo.multiply %374, %373 : tensor<8x16x256xf32>
    %376 = stablehlo.add %368, %375 : tensor<8x16x256xf32>
    %cst_85 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %377 = stablehlo.broadcast_in_dim %cst_85, dims = [] : (tensor<f32>) -> tensor<8x16x256xf32>
    %378 = stablehlo.multiply %377, %375 : tensor<8x16x256xf32>
    %379 = stablehlo.multiply %378, %93 : tensor<8x16x256xf32>
    %380 = stablehlo.add %376, %379 : tensor<8x16x256xf32>
    %381 = stablehlo.dot_general %380, %87, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<8x16x256xf32>, tensor<8x16x64xf32>) -> tensor<256x64xf32>
    %382 = stablehlo.transpose %381, dims = [1, 0] : (tensor<256x64xf32>) -> tensor<64x256xf32>
    %383 = stablehlo.dot_general %380, %arg6, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x16x256xf32>, tensor<64x256xf32>) -> tensor<8x16x64xf32>
    %cst_86 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %384 = stablehlo.reduce(%383 init: %cst_86) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<64xf32>
    %385 = stablehlo.reshape %384 : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %cst_87 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %386 = stablehlo.reduce(%385 init: %cst_87) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x64xf32>, tensor<f32>) -> tensor<64xf32>
    %387 = stablehlo.multiply %81, %383 : tensor<8x16x64xf32>
    %cst_88 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %388 = stablehlo.reduce(%387 init: %cst_88) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<64xf32>
    %389 = stablehlo.reshape %388 : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %390 = stablehlo.broadcast_in_dim %82, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<8x16x64xf32>
    %391 = stablehlo.multiply %383, %390 : tensor<8x16x64xf32>
    %cst_89 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %392 = stablehlo.reduce(%389 init: %cst_89) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x64xf32>, tensor<f32>) -> tensor<64xf32>
    %393 = stablehlo.multiply %73, %391 : tensor<8x16x64xf32>
    %cst_90 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %394 = stablehlo.reduce(%393 init: %cst_90) applies stablehlo.add across dimensions = [2] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<8x16xf32>
    %395 = stablehlo.reshape %394 : (tensor<8x16xf32>) -> tensor<8x16x1xf32>
    %396 = stablehlo.broadcast_in_dim %76, dims = [0, 1, 2] : (tensor<8x16x1xf32>) -> tensor<8x16x64xf32>
    %397 = stablehlo.multiply %391, %396 : tensor<8x16x64xf32>
    %398 = stablehlo.multiply %395, %79 : tensor<8x16x1xf32>
    %399 = stablehlo.negate %397 : tensor<8x16x64xf32>
    %cst_91 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %400 = stablehlo.reduce(%399 init: %cst_91) applies stablehlo.add across dimensions = [2] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<8x16xf32>
    %401 = stablehlo.reshape %400 : (tensor<8x16xf32>) -> tensor<8x16x1xf32>
    %402 = stablehlo.add %361, %397 : tensor<8x16x64xf32>
    %cst_92 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %403 = stablehlo.broadcast_in_dim %cst_92, dims = [] : (tensor<f32>) -> tensor<8x16x1xf32>
    %404 = stablehlo.divide %398, %403 : tensor<8x16x1xf32>
    %cst_93 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %405 = stablehlo.reduce(%404 init: %cst_93) applies stablehlo.add across dimensions = [2] : (tensor<8x16x1xf32>, tensor<f32>) -> tensor<8x16xf32>
    %406 = stablehlo.broadcast_in_dim %405, dims = [0, 1] : (tensor<8x16xf32>) -> tensor<8x16x64xf32>
    %407 = stablehlo.multiply %406, %67 : tensor<8x16x64xf32>
    %408 = stablehlo.negate %407 : tensor<8x16x64xf32>
    %cst_94 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %409 = stablehlo.reduce(%408 init: %cst_94) applies stablehlo.add across dimensions = [2] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<8x16xf32>
    %410 = stablehlo.reshape %409 : (tensor<8x16xf32>) -> tensor<8x16x1xf32>
    %411 = stablehlo.add %402, %407 : tensor<8x16x64xf32>
    %412 = stablehlo.add %401, %410 : tensor<8x16x1xf32>
    %cst_95 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %413 = stablehlo.broadcast_in_dim %cst_95, dims = [] : (tensor<f32>) -> tensor<8x16x1xf32>
    %414 = stablehlo.divide %412, %413 : tensor<8x16x1xf32>
    %cst_96 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %415 = stablehlo.reduce(%414 init: %cst_96) applies stablehlo.add across dimensions = [2] : (tensor<8x16x1xf32>, tensor<f32>) -> tensor<8x16xf32>
    %416 = stablehlo.broadcast_in_dim %415, dims = [0, 1] : (tensor<8x16xf32>) -> tensor<8x16x64xf32>
    %417 = stablehlo.add %411, %416 : tensor<8x16x64xf32>
    %418 = sdy.sharding_constraint %417 <@mesh, [{"data", "fsdp"}, {}, {}]> : tensor<8x16x64xf32>
    %419 = stablehlo.dot_general %418, %55, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<8x16x64xf32>, tensor<8x16x64xf32>) -> tensor<64x64xf32>
    %420 = stablehlo.transpose %419, dims = [1, 0] : (tensor<64x64xf32>) -> tensor<64x64xf32>
    %421 = stablehlo.dot_general %418, %arg3, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x16x64xf32>, tensor<64x64xf32>) -> tensor<8x16x64xf32>
    %422 = stablehlo.reshape %421 : (tensor<8x16x64xf32>) -> tensor<8x16x4x16xf32>
    %423 = stablehlo.transpose %422, dims = [0, 2, 3, 1] : (tensor<8x16x4x16xf32>) -> tensor<8x4x16x16xf32>
    %424 = stablehlo.dot_general %423, %31, batching_dims = [0, 1] x [0, 2], contracting_dims = [2] x [3], precision = [DEFAULT, DEFAULT] : (tensor<8x4x16x16xf32>, tensor<8x16x4x16xf32>) -> tensor<8x4x16x16xf32>
    %425 = stablehlo.dot_general %423, %49, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2], precision = [DEFAULT, DEFAULT] : (tensor<8x4x16x16xf32>, tensor<8x4x16x16xf32>) -> tensor<8x4x16x16xf32>
    %426 = stablehlo.transpose %425, dims = [0, 3, 1, 2] : (tensor<8x4x16x16xf32>) -> tensor<8x16x4x16xf32>
    %427 = stablehlo.broadcast_in_dim %52, dims = [0, 1, 2, 3] : (tensor<8x4x16x1xf32>) -> tensor<8x4x16x16xf32>
    %428 = stablehlo.multiply %424, %427 : tensor<8x4x16x16xf32>
    %429 = stablehlo.multiply %428, %45 : tensor<8x4x16x16xf32>
    %cst_97 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %430 = stablehlo.reduce(%429 init: %cst_97) applies stablehlo.add across dimensions = [3] : (tensor<8x4x16x16xf32>, tensor<f32>) -> tensor<8x4x16xf32>
    %431 = stablehlo.reshape %430 : (tensor<8x4x16xf32>) -> tensor<8x4x16x1xf32>
    %432 = stablehlo.negate %431 : tensor<8x4x16x1xf32>
    %433 = stablehlo.broadcast_in_dim %47, dims = [0, 1, 2, 3] : (tensor<8x4x16x1xf32>) -> tensor<8x4x16x16xf32>
    %434 = stablehlo.divide %424, %433 : tensor<8x4x16x16xf32>
    %cst_98 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %435 = stablehlo.reduce(%432 init: %cst_98) applies stablehlo.add across dimensions = [3] : (tensor<8x4x16x1xf32>, tensor<f32>) -> tensor<8x4x16xf32>
    %436 = stablehlo.broadcast_in_dim %435, dims = [0, 1, 2] : (tensor<8x4x16xf32>) -> tensor<8x4x16x16xf32>
    %437 = stablehlo.add %434, %436 : tensor<8x4x16x16xf32>
    %438 = stablehlo.multiply %437, %45 : tensor<8x4x16x16xf32>
    %439 = call @_where_0(%38#1, %438) : (tensor<8x4x16x16xi1>, tensor<8x4x16x16xf32>) -> tensor<8x4x16x16xf32>
    %cst_99 = stablehlo.constant dense<4.000000e+00> : tensor<f32>
    %440 = stablehlo.broadcast_in_dim %cst_99, dims = [] : (tensor<f32>) -> tensor<8x4x16x16xf32>
    %441 = stablehlo.divide %439, %440 : tensor<8x4x16x16xf32>
    %442 = stablehlo.dot_general %441, %32, batching_dims = [0, 1] x [0, 2], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x4x16x16xf32>, tensor<8x16x4x16xf32>) -> tensor<8x4x16x16xf32>
    %443 = stablehlo.transpose %442, dims = [0, 2, 1, 3] : (tensor<8x4x16x16xf32>) -> tensor<8x16x4x16xf32>
    %444 = stablehlo.dot_general %441, %30, batching_dims = [0, 1] x [0, 2], contracting_dims = [3] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x4x16x16xf32>, tensor<8x16x4x16xf32>) -> tensor<8x4x16x16xf32>
    %445 = stablehlo.transpose %444, dims = [0, 2, 1, 3] : (tensor<8x4x16x16xf32>) -> tensor<8x16x4x16xf32>
    %446 = sdy.sharding_constraint %445 <@mesh, [{"data", "fsdp"}, {}, {"model"}, {}]> : tensor<8x16x4x16xf32>
    %447 = stablehlo.reshape %426 : (tensor<8x16x4x16xf32>) -> tensor<8x16x64xf32>
    %448 = stablehlo.reshape %443 : (tensor<8x16x4x16xf32>) -> tensor<8x16x64xf32>
    %449 = stablehlo.reshape %446 : (tensor<8x16x4x16xf32>) -> tensor<8x16x64xf32>
    %450 = stablehlo.concatenate %449, %448, %447, dim = 2 : (tensor<8x16x64xf32>, tensor<8x16x64xf32>, tensor<8x16x64xf32>) -> tensor<8x16x192xf32>
    %451 = sdy.sharding_constraint %450 <@mesh, [{"data", "fsdp"}, {}, {"model"}]> : tensor<8x16x192xf32>
    %452 = stablehlo.dot_general %451, %23, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<8x16x192xf32>, tensor<8x16x64xf32>) -> tensor<192x64xf32>
    %453 = stablehlo.transpose %452, dims = [1, 0] : (tensor<192x64xf32>) -> tensor<64x192xf32>
    %454 = stablehlo.dot_general %451, %arg2, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x16x192xf32>, tensor<64x192xf32>) -> tensor<8x16x64xf32>
    %cst_100 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %455 = stablehlo.reduce(%454 init: %cst_100) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<64xf32>
    %456 = stablehlo.reshape %455 : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %cst_101 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %457 = stablehlo.reduce(%456 init: %cst_101) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x64xf32>, tensor<f32>) -> tensor<64xf32>
    %458 = stablehlo.multiply %17, %454 : tensor<8x16x64xf32>
    %cst_102 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %459 = stablehlo.reduce(%458 init: %cst_102) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<64xf32>
    %460 = stablehlo.reshape %459 : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %cst_103 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %461 = stablehlo.reduce(%460 init: %cst_103) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x64xf32>, tensor<f32>) -> tensor<64xf32>
    %cst_104 = stablehlo.constant dense<0.00999999977> : tensor<f32>
    %462 = stablehlo.broadcast_in_dim %cst_104, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %463 = stablehlo.multiply %462, %461 : tensor<64xf32>
    %464 = stablehlo.subtract %arg0, %463 : tensor<64xf32>
    %cst_105 = stablehlo.constant dense<0.00999999977> : tensor<f32>
    %465 = stablehlo.broadcast_in_dim %cst_105, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %466 = stablehlo.multiply %465, %457 : tensor<64xf32>
    %467 = stablehlo.subtract %arg1, %466 : tensor<64xf32>
    %cst_106 = stablehlo.constant dense<0.00999999977> : tensor<f32>
    %468 = stablehlo.broadcast_in_dim %cst_106, dims = [] : (tensor<f32>) -> tensor<64x192xf32>
    %469 = stablehlo.multiply %468, %453 : tensor<64x192xf32>
    %470 = stablehlo.subtract %arg2, %469 : tensor<64x192xf32>
    %cst_107 = stablehlo.constant dense<0.00999999977> : tensor<f32>
    %471 = stablehlo.broadcast_in_dim %cst_107, dims = [] : (tensor<f32>) -> tensor<64x64xf32>
    %472 = stablehlo.multiply %471, %420 : tensor<64x64xf32>
    %473 = stablehlo.subtract %arg3, %472 : tensor<64x64xf32>
    %cst_108 = stablehlo.constant dense<0.00999999977> : tensor<f32>
    %474 = stablehlo.broadcast_in_dim %cst_108, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %475 = stablehlo.multiply %474, %392 : tensor<64xf32>
    %476 = stablehlo.subtract %arg4, %475 : tensor<64xf32>
    %cst_109 = stablehlo.constant dense<0.00999999977> : tensor<f32>
    %477 = stablehlo.broadcast_in_dim %cst_109, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %478 = stablehlo.multiply %477, %386 : tensor<64xf32>
    %479 = stablehlo.subtract %arg5, %478 : tensor<64xf32>
    %cst_110 = stablehlo.constant dense<0.00999999977> : tensor<f32>
    %480 = stablehlo.broadcast_in_dim %cst_110, dims = [] : (tensor<f32>) -> tensor<64x256xf32>
    %481 = stablehlo.multiply %480, %382 : tensor<64x256xf32>
    %482 = stablehlo.subtract %arg6, %481 : tensor<64x256xf32>
    %cst_111 = stablehlo.constant dense<0.00999999977> : tensor<f32>
    %483 = stablehlo.broadcast_in_dim %cst_111, dims = [] : (tensor<f32>) -> tensor<256x64xf32>
    %484 = stablehlo.multiply %483, %364 : tensor<256x64xf32>
    %485 = stablehlo.subtract %arg7, %484 : tensor<256x64xf32>
    %cst_112 = stablehlo.constant dense<0.00999999977> : tensor<f32>
    %486 = stablehlo.broadcast_in_dim %cst_112, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %487 = stablehlo.multiply %486, %336 : tensor<64xf32>
    %488 = stablehlo.subtract %arg8, %487 : tensor<64xf32>
    %cst_113 = stablehlo.constant dense<0.00999999977> : tensor<f32>
    %489 = stablehlo.broadcast_in_dim %cst_113, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %490 = stablehlo.multiply %489, %330 : tensor<64xf32>
    %491 = stablehlo.subtract %arg9, %490 : tensor<64xf32>
    %cst_114 = stablehlo.constant dense<0.00999999977> : tensor<f32>
    %492 = stablehlo.broadcast_in_dim %cst_114, dims = [] : (tensor<f32>) -> tensor<64x192xf32>
    %493 = stablehlo.multiply %492, %326 : tensor<64x192xf32>
    %494 = stablehlo.subtract %arg10, %493 : tensor<64x192xf32>
    %cst_115 = stablehlo.constant dense<0.00999999977> : tensor<f32>
    %495 = stablehlo.broadcast_in_dim %cst_115, dims = [] : (tensor<f32>) -> tensor<64x64xf32>
    %496 = stablehlo.multiply %495, %293 : tensor<64x64xf32>
    %497 = stablehlo.subtract %arg11, %496 : tensor<64x64xf32>
    %cst_116 = stablehlo.constant dense<0.00999999977> : tensor<f32>
    %498 = stablehlo.broadcast_in_dim %cst_116, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %499 = stablehlo.multiply %498, %265 : tensor<64xf32>
    %500 = stablehlo.subtract %arg12, %499 : tensor<64xf32>
    %cst_117 = stablehlo.constant dense<0.00999999977> : tensor<f32>
    %501 = stablehlo.broadcast_in_dim %cst_117, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %502 = stablehlo.multiply %501, %259 : tensor<64xf32>
    %503 = stablehlo.subtract %arg13, %502 : tensor<64xf32>
    %cst_118 = stablehlo.constant dense<0.00999999977> : tensor<f32>
    %504 = stablehlo.broadcast_in_dim %cst_118, dims = [] : (tensor<f32>) -> tensor<64x256xf32>
    %505 = stablehlo.multiply %504, %255 : tensor<64x256xf32>
    %506 = stablehlo.subtract %arg14, %505 : tensor<64x256xf32>
    %cst_119 = stablehlo.constant dense<0.00999999977> : tensor<f32>
    %507 = stablehlo.broadcast_in_dim %cst_119, dims = [] : (tensor<f32>) -> tensor<256x64xf32>
    %508 = stablehlo.multiply %507, %237 : tensor<256x64xf32>
    %509 = stablehlo.subtract %arg15, %508 : tensor<256x64xf32>
    return %464, %467, %470, %473, %476, %479, %482, %485, %488, %491, %494, %497, %500, %503, %506, %509, %231 : tensor<64xf32>, tensor<64xf32>, tensor<64x192xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x256xf32>, tensor<256x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x192xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x256xf32>, tensor<256x64xf32>, tensor<f32>
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
