module @jit_model attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=2, "model"=4]> {stablehlo.mesh = {axes = [{name = "data", size = 2 : i64}, {name = "model", size = 4 : i64}]}}
  func.func public @main(%arg0: tensor<512x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}, %arg1: tensor<64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg2: tensor<64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg3: tensor<64x192xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg4: tensor<64x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}, %arg5: tensor<64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg6: tensor<64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg7: tensor<64x256xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg8: tensor<256x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}, %arg9: tensor<64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg10: tensor<64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg11: tensor<64x192xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg12: tensor<64x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}, %arg13: tensor<64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg14: tensor<64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg15: tensor<64x256xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg16: tensor<256x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}, %arg17: tensor<64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg18: tensor<64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg19: tensor<64x192xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg20: tensor<64x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}, %arg21: tensor<64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg22: tensor<64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg23: tensor<64x256xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg24: tensor<256x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}, %arg25: tensor<64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg26: tensor<64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg27: tensor<64x192xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg28: tensor<64x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}, %arg29: tensor<64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg30: tensor<64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg31: tensor<64x256xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg32: tensor<256x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}, %arg33: tensor<8x16xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) -> (tensor<8x16x512xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}, {"model"}]>}) {
    %0 = call @_take(%arg0, %arg33) : (tensor<512x64xf32>, tensor<8x16xi32>) -> tensor<8x16x64xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.reduce(%0 init: %cst) applies stablehlo.add across dimensions = [2] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<8x16xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<8x16xf32>) -> tensor<8x16x1xf32>
    %cst_0 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<8x16x1xf32>
    %4 = stablehlo.divide %2, %3 : tensor<8x16x1xf32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0, 1, 2] : (tensor<8x16x1xf32>) -> tensor<8x16x64xf32>
    %6 = stablehlo.subtract %0, %5 : tensor<8x16x64xf32>
    %7 = stablehlo.multiply %6, %6 : tensor<8x16x64xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %8 = stablehlo.reduce(%7 init: %cst_1) applies stablehlo.add across dimensions = [2] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<8x16xf32>
    %9 = stablehlo.broadcast_in_dim %8, dims = [0, 1] : (tensor<8x16xf32>) -> tensor<8x16x1xf32>
    %cst_2 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %10 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<8x16x1xf32>
    %11 = stablehlo.divide %9, %10 : tensor<8x16x1xf32>
    %12 = stablehlo.broadcast_in_dim %4, dims = [0, 1, 2] : (tensor<8x16x1xf32>) -> tensor<8x16x64xf32>
    %13 = stablehlo.subtract %0, %12 : tensor<8x16x64xf32>
    %cst_3 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %14 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<8x16x1xf32>
    %15 = stablehlo.add %11, %14 : tensor<8x16x1xf32>
    %16 = stablehlo.rsqrt %15 : tensor<8x16x1xf32>
    %17 = stablehlo.broadcast_in_dim %16, dims = [0, 1, 2] : (tensor<8x16x1xf32>) -> tensor<8x16x64xf32>
    %18 = stablehlo.multiply %13, %17 : tensor<8x16x64xf32>
    %19 = stablehlo.broadcast_in_dim %arg1, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %20 = stablehlo.broadcast_in_dim %19, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<8x16x64xf32>
    %21 = stablehlo.multiply %18, %20 : tensor<8x16x64xf32>
    %22 = stablehlo.broadcast_in_dim %arg2, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %23 = stablehlo.broadcast_in_dim %22, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<8x16x64xf32>
    %24 = stablehlo.add %21, %23 : tensor<8x16x64xf32>
    %25 = stablehlo.dot_general %24, %arg3, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x16x64xf32>, tensor<64x192xf32>) -> tensor<8x16x192xf32>
    %26 = sdy.sharding_constraint %25 <@mesh, [{"data"}, {}, {"model"}]> : tensor<8x16x192xf32>
    %27 = stablehlo.slice %26 [0:8, 0:16, 0:64] : (tensor<8x16x192xf32>) -> tensor<8x16x64xf32>
    %28 = stablehlo.slice %26 [0:8, 0:16, 64:128] : (tensor<8x16x192xf32>) -> tensor<8x16x64xf32>
    %29 = stablehlo.slice %26 [0:8, 0:16, 128:192] : (tensor<8x16x192xf32>) -> tensor<8x16x64xf32>
    %30 = stablehlo.reshape %27 : (tensor<8x16x64xf32>) -> tensor<8x16x4x16xf32>
    %31 = stablehlo.reshape %28 : (tensor<8x16x64xf32>) -> tensor<8x16x4x16xf32>
    %32 = stablehlo.reshape %29 : (tensor<8x16x64xf32>) -> tensor<8x16x4x16xf32>
    %33 = sdy.sharding_constraint %30 <@mesh, [{"data"}, {}, {"model"}, {}]> : tensor<8x16x4x16xf32>
    %34 = stablehlo.dot_general %33, %31, batching_dims = [0, 2] x [0, 2], contracting_dims = [3] x [3], precision = [DEFAULT, DEFAULT] : (tensor<8x16x4x16xf32>, tensor<8x16x4x16xf32>) -> tensor<8x4x16x16xf32>
    %cst_4 = stablehlo.constant dense<4.000000e+00> : tensor<f32>
    %35 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<8x4x16x16xf32>
    %36 = stablehlo.divide %34, %35 : tensor<8x4x16x16xf32>
    %c = stablehlo.constant dense<true> : tensor<i1>
    %37 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i1>) -> tensor<16x16xi1>
    %38 = call @tril(%37) : (tensor<16x16xi1>) -> tensor<16x16xi1>
    %cst_5 = stablehlo.constant dense<-1.000000e+09> : tensor<f32>
    %39 = call @_where_0(%38, %36, %cst_5) : (tensor<16x16xi1>, tensor<8x4x16x16xf32>, tensor<f32>) -> tensor<8x4x16x16xf32>
    %cst_6 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %40 = stablehlo.reduce(%39 init: %cst_6) applies stablehlo.maximum across dimensions = [3] : (tensor<8x4x16x16xf32>, tensor<f32>) -> tensor<8x4x16xf32>
    %cst_7 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %41 = stablehlo.broadcast_in_dim %cst_7, dims = [] : (tensor<f32>) -> tensor<8x4x16xf32>
    %42 = stablehlo.maximum %41, %40 : tensor<8x4x16xf32>
    %43 = stablehlo.broadcast_in_dim %42, dims = [0, 1, 2] : (tensor<8x4x16xf32>) -> tensor<8x4x16x1xf32>
    %44 = stablehlo.broadcast_in_dim %43, dims = [0, 1, 2, 3] : (tensor<8x4x16x1xf32>) -> tensor<8x4x16x16xf32>
    %45 = stablehlo.subtract %39, %44 : tensor<8x4x16x16xf32>
    %46 = stablehlo.exponential %45 : tensor<8x4x16x16xf32>
    %cst_8 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %47 = stablehlo.reduce(%46 init: %cst_8) applies stablehlo.add across dimensions = [3] : (tensor<8x4x16x16xf32>, tensor<f32>) -> tensor<8x4x16xf32>
    %48 = stablehlo.broadcast_in_dim %47, dims = [0, 1, 2] : (tensor<8x4x16xf32>) -> tensor<8x4x16x1xf32>
    %49 = stablehlo.broadcast_in_dim %48, dims = [0, 1, 2, 3] : (tensor<8x4x16x1xf32>) -> tensor<8x4x16x16xf32>
    %50 = stablehlo.divide %46, %49 : tensor<8x4x16x16xf32>
    %51 = stablehlo.dot_general %32, %50, batching_dims = [0, 2] x [0, 1], contracting_dims = [1] x [3], precision = [DEFAULT, DEFAULT] : (tensor<8x16x4x16xf32>, tensor<8x4x16x16xf32>) -> tensor<8x4x16x16xf32>
    %52 = stablehlo.transpose %51, dims = [0, 3, 1, 2] : (tensor<8x4x16x16xf32>) -> tensor<8x16x4x16xf32>
    %53 = stablehlo.reshape %52 : (tensor<8x16x4x16xf32>) -> tensor<8x16x64xf32>
    %54 = stablehlo.dot_general %53, %arg4, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x16x64xf32>, tensor<64x64xf32>) -> tensor<8x16x64xf32>
    %55 = sdy.sharding_constraint %54 <@mesh, [{"data"}, {}, {}]> : tensor<8x16x64xf32>
    %56 = stablehlo.add %0, %55 : tensor<8x16x64xf32>
    %cst_9 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %57 = stablehlo.reduce(%56 init: %cst_9) applies stablehlo.add across dimensions = [2] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<8x16xf32>
    %58 = stablehlo.broadcast_in_dim %57, dims = [0, 1] : (tensor<8x16xf32>) -> tensor<8x16x1xf32>
    %cst_10 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %59 = stablehlo.broadcast_in_dim %cst_10, dims = [] : (tensor<f32>) -> tensor<8x16x1xf32>
    %60 = stablehlo.divide %58, %59 : tensor<8x16x1xf32>
    %61 = stablehlo.broadcast_in_dim %60, dims = [0, 1, 2] : (tensor<8x16x1xf32>) -> tensor<8x16x64xf32>
    %62 = stablehlo.subtract %56, %61 : tensor<8x16x64xf32>
    %63 = stablehlo.multiply %62, %62 : tensor<8x16x64xf32>
    %cst_11 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %64 = stablehlo.reduce(%63 init: %cst_11) applies stablehlo.add across dimensions = [2] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<8x16xf32>
    %65 = stablehlo.broadcast_in_dim %64, dims = [0, 1] : (tensor<8x16xf32>) -> tensor<8x16x1xf32>
    %cst_12 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %66 = stablehlo.broadcast_in_dim %cst_12, dims = [] : (tensor<f32>) -> tensor<8x16x1xf32>
    %67 = stablehlo.divide %65, %66 : tensor<8x16x1xf32>
    %68 = stablehlo.broadcast_in_dim %60, dims = [0, 1, 2] : (tensor<8x16x1xf32>) -> tensor<8x16x64xf32>
    %69 = stablehlo.subtract %56, %68 : tensor<8x16x64xf32>
    %cst_13 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %70 = stablehlo.broadcast_in_dim %cst_13, dims = [] : (tensor<f32>) -> tensor<8x16x1xf32>
    %71 = stablehlo.add %67, %70 : tensor<8x16x1xf32>
    %72 = stablehlo.rsqrt %71 : tensor<8x16x1xf32>
    %73 = stablehlo.broadcast_in_dim %72, dims = [0, 1, 2] : (tensor<8x16x1xf32>) -> tensor<8x16x64xf32>
    %74 = stablehlo.multiply %69, %73 : tensor<8x16x64xf32>
    %75 = stablehlo.broadcast_in_dim %arg5, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %76 = stablehlo.broadcast_in_dim %75, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<8x16x64xf32>
    %77 = stablehlo.multiply %74, %76 : tensor<8x16x64xf32>
    %78 = stablehlo.broadcast_in_dim %arg6, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %79 = stablehlo.broadcast_in_dim %78, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<8x16x64xf32>
    %80 = stablehlo.add %77, %79 : tensor<8x16x64xf32>
    %81 = stablehlo.dot_general %80, %arg7, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x16x64xf32>, tensor<64x256xf32>) -> tensor<8x16x256xf32>
    %82 = stablehlo.multiply %81, %81 : tensor<8x16x256xf32>
    %83 = stablehlo.multiply %82, %81 : tensor<8x16x256xf32>
    %cst_14 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %84 = stablehlo.broadcast_in_dim %cst_14, dims = [] : (tensor<f32>) -> tensor<8x16x256xf32>
    %85 = stablehlo.multiply %84, %83 : tensor<8x16x256xf32>
    %86 = stablehlo.add %81, %85 : tensor<8x16x256xf32>
    %cst_15 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %87 = stablehlo.broadcast_in_dim %cst_15, dims = [] : (tensor<f32>) -> tensor<8x16x256xf32>
    %88 = stablehlo.multiply %87, %86 : tensor<8x16x256xf32>
    %89 = stablehlo.tanh %88 : tensor<8x16x256xf32>
    %cst_16 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %90 = stablehlo.broadcast_in_dim %cst_16, dims = [] : (tensor<f32>) -> tensor<8x16x256xf32>
    %91 = stablehlo.add %90, %89 : tensor<8x16x256xf32>
    %cst_17 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %92 = stablehlo.broadcast_in_dim %cst_17, dims = [] : (tensor<f32>) -> tensor<8x16x256xf32>
    %93 = stablehlo.multiply %92, %91 : tensor<8x16x256xf32>
    %94 = stablehlo.multiply %81, %93 : tensor<8x16x256xf32>
    %95 = sdy.sharding_constraint %94 <@mesh, [{"data"}, {}, {"model"}]> : tensor<8x16x256xf32>
    %96 = stablehlo.dot_general %95, %arg8, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x16x256xf32>, tensor<256x64xf32>) -> tensor<8x16x64xf32>
    %97 = sdy.sharding_constraint %96 <@mesh, [{"data"}, {}, {}]> : tensor<8x16x64xf32>
    %98 = stablehlo.add %56, %97 : tensor<8x16x64xf32>
    %cst_18 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %99 = stablehlo.reduce(%98 init: %cst_18) applies stablehlo.add across dimensions = [2] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<8x16xf32>
    %100 = stablehlo.broadcast_in_dim %99, dims = [0, 1] : (tensor<8x16xf32>) -> tensor<8x16x1xf32>
    %cst_19 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %101 = stablehlo.broadcast_in_dim %cst_19, dims = [] : (tensor<f32>) -> tensor<8x16x1xf32>
    %102 = stablehlo.divide %100, %101 : tensor<8x16x1xf32>
    %103 = stablehlo.broadcast_in_dim %102, dims = [0, 1, 2] : (tensor<8x16x1xf32>) -> tensor<8x16x64xf32>
    %104 = stablehlo.subtract %98, %103 : tensor<8x16x64xf32>
    %105 = stablehlo.multiply %104, %104 : tensor<8x16x64xf32>
    %cst_20 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %106 = stablehlo.reduce(%105 init: %cst_20) applies stablehlo.add across dimensions = [2] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<8x16xf32>
    %107 = stablehlo.broadcast_in_dim %106, dims = [0, 1] : (tensor<8x16xf32>) -> tensor<8x16x1xf32>
    %cst_21 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %108 = stablehlo.broadcast_in_dim %cst_21, dims = [] : (tensor<f32>) -> tensor<8x16x1xf32>
    %109 = stablehlo.divide %107, %108 : tensor<8x16x1xf32>
    %110 = stablehlo.broadcast_in_dim %102, dims = [0, 1, 2] : (tensor<8x16x1xf32>) -> tensor<8x16x64xf32>
    %111 = stablehlo.subtract %98, %110 : tensor<8x16x64xf32>
    %cst_22 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %112 = stablehlo.broadcast_in_dim %cst_22, dims = [] : (tensor<f32>) -> tensor<8x16x1xf32>
    %113 = stablehlo.add %109, %112 : tensor<8x16x1xf32>
    %114 = stablehlo.rsqrt %113 : tensor<8x16x1xf32>
    %115 = stablehlo.broadcast_in_dim %114, dims = [0, 1, 2] : (tensor<8x16x1xf32>) -> tensor<8x16x64xf32>
    %116 = stablehlo.multiply %111, %115 : tensor<8x16x64xf32>
    %117 = stablehlo.broadcast_in_dim %arg9, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %118 = stablehlo.broadcast_in_dim %117, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<8x16x64xf32>
    %119 = stablehlo.multiply %116, %118 : tensor<8x16x64xf32>
    %120 = stablehlo.broadcast_in_dim %arg10, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %121 = stablehlo.broadcast_in_dim %120, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<8x16x64xf32>
    %122 = stablehlo.add %119, %121 : tensor<8x16x64xf32>
    %123 = stablehlo.dot_general %122, %arg11, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x16x64xf32>, tensor<64x192xf32>) -> tensor<8x16x192xf32>
    %124 = sdy.sharding_constraint %123 <@mesh, [{"data"}, {}, {"model"}]> : tensor<8x16x192xf32>
    %125 = stablehlo.slice %124 [0:8, 0:16, 0:64] : (tensor<8x16x192xf32>) -> tensor<8x16x64xf32>
    %126 = stablehlo.slice %124 [0:8, 0:16, 64:128] : (tensor<8x16x192xf32>) -> tensor<8x16x64xf32>
    %127 = stablehlo.slice %124 [0:8, 0:16, 128:192] : (tensor<8x16x192xf32>) -> tensor<8x16x64xf32>
    %128 = stablehlo.reshape %125 : (tensor<8x16x64xf32>) -> tensor<8x16x4x16xf32>
    %129 = stablehlo.reshape %126 : (tensor<8x16x64xf32>) -> tensor<8x16x4x16xf32>
    %130 = stablehlo.reshape %127 : (tensor<8x16x64xf32>) -> tensor<8x16x4x16xf32>
    %131 = sdy.sharding_constraint %128 <@mesh, [{"data"}, {}, {"model"}, {}]> : tensor<8x16x4x16xf32>
    %132 = stablehlo.dot_general %131, %129, batching_dims = [0, 2] x [0, 2], contracting_dims = [3] x [3], precision = [DEFAULT, DEFAULT] : (tensor<8x16x4x16xf32>, tensor<8x16x4x16xf32>) -> tensor<8x4x16x16xf32>
    %cst_23 = stablehlo.constant dense<4.000000e+00> : tensor<f32>
    %133 = stablehlo.broadcast_in_dim %cst_23, dims = [] : (tensor<f32>) -> tensor<8x4x16x16xf32>
    %134 = stablehlo.divide %132, %133 : tensor<8x4x16x16xf32>
    %c_24 = stablehlo.constant dense<true> : tensor<i1>
    %135 = stablehlo.broadcast_in_dim %c_24, dims = [] : (tensor<i1>) -> tensor<16x16xi1>
    %136 = call @tril(%135) : (tensor<16x16xi1>) -> tensor<16x16xi1>
    %cst_25 = stablehlo.constant dense<-1.000000e+09> : tensor<f32>
    %137 = call @_where_0(%136, %134, %cst_25) : (tensor<16x16xi1>, tensor<8x4x16x16xf32>, tensor<f32>) -> tensor<8x4x16x16xf32>
    %cst_26 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %138 = stablehlo.reduce(%137 init: %cst_26) applies stablehlo.maximum across dimensions = [3] : (tensor<8x4x16x16xf32>, tensor<f32>) -> tensor<8x4x16xf32>
    %cst_27 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %139 = stablehlo.broadcast_in_dim %cst_27, dims = [] : (tensor<f32>) -> tensor<8x4x16xf32>
    %140 = stablehlo.maximum %139, %138 : tensor<8x4x16xf32>
    %141 = stablehlo.broadcast_in_dim %140, dims = [0, 1, 2] : (tensor<8x4x16xf32>) -> tensor<8x4x16x1xf32>
    %142 = stablehlo.broadcast_in_dim %141, dims = [0, 1, 2, 3] : (tensor<8x4x16x1xf32>) -> tensor<8x4x16x16xf32>
    %143 = stablehlo.subtract %137, %142 : tensor<8x4x16x16xf32>
    %144 = stablehlo.exponential %143 : tensor<8x4x16x16xf32>
    %cst_28 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %145 = stablehlo.reduce(%144 init: %cst_28) applies stablehlo.add across dimensions = [3] : (tensor<8x4x16x16xf32>, tensor<f32>) -> tensor<8x4x16xf32>
    %146 = stablehlo.broadcast_in_dim %145, dims = [0, 1, 2] : (tensor<8x4x16xf32>) -> tensor<8x4x16x1xf32>
    %147 = stablehlo.broadcast_in_dim %146, dims = [0, 1, 2, 3] : (tensor<8x4x16x1xf32>) -> tensor<8x4x16x16xf32>
    %148 = stablehlo.divide %144, %147 : tensor<8x4x16x16xf32>
    %149 = stablehlo.dot_general %130, %148, batching_dims = [0, 2] x [0, 1], contracting_dims = [1] x [3], precision = [DEFAULT, DEFAULT] : (tensor<8x16x4x16xf32>, tensor<8x4x16x16xf32>) -> tensor<8x4x16x16xf32>
    %150 = stablehlo.transpose %149, dims = [0, 3, 1, 2] : (tensor<8x4x16x16xf32>) -> tensor<8x16x4x16xf32>
    %151 = stablehlo.reshape %150 : (tensor<8x16x4x16xf32>) -> tensor<8x16x64xf32>
    %152 = stablehlo.dot_general %151, %arg12, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x16x64xf32>, tensor<64x64xf32>) -> tensor<8x16x64xf32>
    %153 = sdy.sharding_constraint %152 <@mesh, [{"data"}, {}, {}]> : tensor<8x16x64xf32>
    %154 = stablehlo.add %98, %153 : tensor<8x16x64xf32>
    %cst_29 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %155 = stablehlo.reduce(%154 init: %cst_29) applies stablehlo.add across dimensions = [2] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<8x16xf32>
    %156 = stablehlo.broadcast_in_dim %155, dims = [0, 1] : (tensor<8x16xf32>) -> tensor<8x16x1xf32>
    %cst_30 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %157 = stablehlo.broadcast_in_dim %cst_30, dims = [] : (tensor<f32>) -> tensor<8x16x1xf32>
    %158 = stablehlo.divide %156, %157 : tensor<8x16x1xf32>
    %159 = stablehlo.broadcast_in_dim %158, dims = [0, 1, 2] : (tensor<8x16x1xf32>) -> tensor<8x16x64xf32>
    %160 = stablehlo.subtract %154, %159 : tensor<8x16x64xf32>
    %161 = stablehlo.multiply %160, %160 : tensor<8x16x64xf32>
    %cst_31 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %162 = stablehlo.reduce(%161 init: %cst_31) applies stablehlo.add across dimensions = [2] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<8x16xf32>
    %163 = stablehlo.broadcast_in_dim %162, dims = [0, 1] : (tensor<8x16xf32>) -> tensor<8x16x1xf32>
    %cst_32 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %164 = stablehlo.broadcast_in_dim %cst_32, dims = [] : (tensor<f32>) -> tensor<8x16x1xf32>
    %165 = stablehlo.divide %163, %164 : tensor<8x16x1xf32>
    %166 = stablehlo.broadcast_in_dim %158, dims = [0, 1, 2] : (tensor<8x16x1xf32>) -> tensor<8x16x64xf32>
    %167 = stablehlo.subtract %154, %166 : tensor<8x16x64xf32>
    %cst_33 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %168 = stablehlo.broadcast_in_dim %cst_33, dims = [] : (tensor<f32>) -> tensor<8x16x1xf32>
    %169 = stablehlo.add %165, %168 : tensor<8x16x1xf32>
    %170 = stablehlo.rsqrt %169 : tensor<8x16x1xf32>
    %171 = stablehlo.broadcast_in_dim %170, dims = [0, 1, 2] : (tensor<8x16x1xf32>) -> tensor<8x16x64xf32>
    %172 = stablehlo.multiply %167, %171 : tensor<8x16x64xf32>
    %173 = stablehlo.broadcast_in_dim %arg13, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %174 = stablehlo.broadcast_in_dim %173, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<8x16x64xf32>
    %175 = stablehlo.multiply %172, %174 : tensor<8x16x64xf32>
    %176 = stablehlo.broadcast_in_dim %arg14, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %177 = stablehlo.broadcast_in_dim %176, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<8x16x64xf32>
    %178 = stablehlo.add %175, %177 : tensor<8x16x64xf32>
    %179 = stablehlo.dot_general %178, %arg15, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x16x64xf32>, tensor<64x256xf32>) -> tensor<8x16x256xf32>
    %180 = stablehlo.multiply %179, %179 : tensor<8x16x256xf32>
    %181 = stablehlo.multiply %180, %179 : tensor<8x16x256xf32>
    %cst_34 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %182 = stablehlo.broadcast_in_dim %cst_34, dims = [] : (tensor<f32>) -> tensor<8x16x256xf32>
    %183 = stablehlo.multiply %182, %181 : tensor<8x16x256xf32>
    %184 = stablehlo.add %179, %183 : tensor<8x16x256xf32>
    %cst_35 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %185 = stablehlo.broadcast_in_dim %cst_35, dims = [] : (tensor<f32>) -> tensor<8x16x256xf32>
    %186 = stablehlo.multiply %185, %184 : tensor<8x16x256xf32>
    %187 = stablehlo.tanh %186 : tensor<8x16x256xf32>
    %cst_36 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %188 = stablehlo.broadcast_in_dim %cst_36, dims = [] : (tensor<f32>) -> tensor<8x16x256xf32>
    %189 = stablehlo.add %188, %187 : tensor<8x16x256xf32>
    %cst_37 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %190 = stablehlo.broadcast_in_dim %cst_37, dims = [] : (tensor<f32>) -> tensor<8x16x256xf32>
    %191 = stablehlo.multiply %190, %189 : tensor<8x16x256xf32>
    %192 = stablehlo.multiply %179, %191 : tensor<8x16x256xf32>
    %193 = sdy.sharding_constraint %192 <@mesh, [{"data"}, {}, {"model"}]> : tensor<8x16x256xf32>
    %194 = stablehlo.dot_general %193, %arg16, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x16x256xf32>, tensor<256x64xf32>) -> tensor<8x16x64xf32>
    %195 = sdy.sharding_constraint %194 <@mesh, [{"data"}, {}, {}]> : tensor<8x16x64xf32>
    %196 = stablehlo.add %154, %195 : tensor<8x16x64xf32>
    %cst_38 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %197 = stablehlo.reduce(%196 init: %cst_38) applies stablehlo.add across dimensions = [2] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<8x16xf32>
    %198 = stablehlo.broadcast_in_dim %197, dims = [0, 1] : (tensor<8x16xf32>) -> tensor<8x16x1xf32>
    %cst_39 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %199 = stablehlo.broadcast_in_dim %cst_39, dims = [] : (tensor<f32>) -> tensor<8x16x1xf32>
    %200 = stablehlo.divide %198, %199 : tensor<8x16x1xf32>
    %201 = stablehlo.broadcast_in_dim %200, dims = [0, 1, 2] : (tensor<8x16x1xf32>) -> tensor<8x16x64xf32>
    %202 = stablehlo.subtract %196, %201 : tensor<8x16x64xf32>
    %203 = stablehlo.multiply %202, %202 : tensor<8x16x64xf32>
    %cst_40 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %204 = stablehlo.reduce(%203 init: %cst_40) applies stablehlo.add across dimensions = [2] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<8x16xf32>
    %205 = stablehlo.broadcast_in_dim %204, dims = [0, 1] : (tensor<8x16xf32>) -> tensor<8x16x1xf32>
    %cst_41 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %206 = stablehlo.broadcast_in_dim %cst_41, dims = [] : (tensor<f32>) -> tensor<8x16x1xf32>
    %207 = stablehlo.divide %205, %206 : tensor<8x16x1xf32>
    %208 = stablehlo.broadcast_in_dim %200, dims = [0, 1, 2] : (tensor<8x16x1xf32>) -> tensor<8x16x64xf32>
    %209 = stablehlo.subtract %196, %208 : tensor<8x16x64xf32>
    %cst_42 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %210 = stablehlo.broadcast_in_dim %cst_42, dims = [] : (tensor<f32>) -> tensor<8x16x1xf32>
    %211 = stablehlo.add %207, %210 : tensor<8x16x1xf32>
    %212 = stablehlo.rsqrt %211 : tensor<8x16x1xf32>
    %213 = stablehlo.broadcast_in_dim %212, dims = [0, 1, 2] : (tensor<8x16x1xf32>) -> tensor<8x16x64xf32>
    %214 = stablehlo.multiply %209, %213 : tensor<8x16x64xf32>
    %215 = stablehlo.broadcast_in_dim %arg17, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %216 = stablehlo.broadcast_in_dim %215, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<8x16x64xf32>
    %217 = stablehlo.multiply %214, %216 : tensor<8x16x64xf32>
    %218 = stablehlo.broadcast_in_dim %arg18, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %219 = stablehlo.broadcast_in_dim %218, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<8x16x64xf32>
    %220 = stablehlo.add %217, %219 : tensor<8x16x64xf32>
    %221 = stablehlo.dot_general %220, %arg19, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x16x64xf32>, tensor<64x192xf32>) -> tensor<8x16x192xf32>
    %222 = sdy.sharding_constraint %221 <@mesh, [{"data"}, {}, {"model"}]> : tensor<8x16x192xf32>
    %223 = stablehlo.slice %222 [0:8, 0:16, 0:64] : (tensor<8x16x192xf32>) -> tensor<8x16x64xf32>
    %224 = stablehlo.slice %222 [0:8, 0:16, 64:128] : (tensor<8x16x192xf32>) -> tensor<8x16x64xf32>
    %225 = stablehlo.slice %222 [0:8, 0:16, 128:192] : (tensor<8x16x192xf32>) -> tensor<8x16x64xf32>
    %226 = stablehlo.reshape %223 : (tensor<8x16x64xf32>) -> tensor<8x16x4x16xf32>
    %227 = stablehlo.reshape %224 : (tensor<8x16x64xf32>) -> tensor<8x16x4x16xf32>
    %228 = stablehlo.reshape %225 : (tensor<8x16x64xf32>) -> tensor<8x16x4x16xf32>
    %229 = sdy.sharding_constraint %226 <@mesh, [{"data"}, {}, {"model"}, {}]> : tensor<8x16x4x16xf32>
    %230 = stablehlo.dot_general %229, %227, batching_dims = [0, 2] x [0, 2], contracting_dims = [3] x [3], precision = [DEFAULT, DEFAULT] : (tensor<8x16x4x16xf32>, tensor<8x16x4x16xf32>) -> tensor<8x4x16x16xf32>
    %cst_43 = stablehlo.constant dense<4.000000e+00> : tensor<f32>
    %231 = stablehlo.broadcast_in_dim %cst_43, dims = [] : (tensor<f32>) -> tensor<8x4x16x16xf32>
    %232 = stablehlo.divide %230, %231 : tensor<8x4x16x16xf32>
    %c_44 = stablehlo.constant dense<true> : tensor<i1>
    %233 = stablehlo.broadcast_in_dim %c_44, dims = [] : (tensor<i1>) -> tensor<16x16xi1>
    %234 = call @tril(%233) : (tensor<16x16xi1>) -> tensor<16x16xi1>
    %cst_45 = stablehlo.constant dense<-1.000000e+09> : tensor<f32>
    %235 = call @_where_0(%234, %232, %cst_45) : (tensor<16x16xi1>, tensor<8x4x16x16xf32>, tensor<f32>) -> tensor<8x4x16x16xf32>
    %cst_46 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %236 = stablehlo.reduce(%235 init: %cst_46) applies stablehlo.maximum across dimensions = [3] : (tensor<8x4x16x16xf32>, tensor<f32>) -> tensor<8x4x16xf32>
    %cst_47 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %237 = stablehlo.broadcast_in_dim %cst_47, dims = [] : (tensor<f32>) -> tensor<8x4x16xf32>
    %238 = stablehlo.maximum %237, %236 : tensor<8x4x16xf32>
    %239 = stablehlo.broadcast_in_dim %238, dims = [0, 1, 2] : (tensor<8x4x16xf32>) -> tensor<8x4x16x1xf32>
    %240 = stablehlo.broadcast_in_dim %239, dims = [0, 1, 2, 3] : (tensor<8x4x16x1xf32>) -> tensor<8x4x16x16xf32>
    %241 = stablehlo.subtract %235, %240 : tensor<8x4x16x16xf32>
    %242 = stablehlo.exponential %241 : tensor<8x4x16x16xf32>
    %cst_48 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %243 = stablehlo.reduce(%242 init: %cst_48) applies stablehlo.add across dimensions = [3] : (tensor<8x4x16x16xf32>, tensor<f32>) -> tensor<8x4x16xf32>
    %244 = stablehlo.broadcast_in_dim %243, dims = [0, 1, 2] : (tensor<8x4x16xf32>) -> tensor<8x4x16x1xf32>
    %245 = stablehlo.broadcast_in_dim %244, dims = [0, 1, 2, 3] : (tensor<8x4x16x1xf32>) -> tensor<8x4x16x16xf32>
    %246 = stablehlo.divide %242, %245 : tensor<8x4x16x16xf32>
    %247 = stablehlo.dot_general %228, %246, batching_dims = [0, 2] x [0, 1], contracting_dims = [1] x [3], precision = [DEFAULT, DEFAULT] : (tensor<8x16x4x16xf32>, tensor<8x4x16x16xf32>) -> tensor<8x4x16x16xf32>
    %248 = stablehlo.transpose %247, dims = [0, 3, 1, 2] : (tensor<8x4x16x16xf32>) -> tensor<8x16x4x16xf32>
    %249 = stablehlo.reshape %248 : (tensor<8x16x4x16xf32>) -> tensor<8x16x64xf32>
    %250 = stablehlo.dot_general %249, %arg20, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x16x64xf32>, tensor<64x64xf32>) -> tensor<8x16x64xf32>
    %251 = sdy.sharding_constraint %250 <@mesh, [{"data"}, {}, {}]> : tensor<8x16x64xf32>
    %252 = stablehlo.add %196, %251 : tensor<8x16x64xf32>
    %cst_49 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %253 = stablehlo.reduce(%252 init: %cst_49) applies stablehlo.add across dimensions = [2] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<8x16xf32>
    %254 = stablehlo.broadcast_in_dim %253, dims = [0, 1] : (tensor<8x16xf32>) -> tensor<8x16x1xf32>
    %cst_50 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %255 = stablehlo.broadcast_in_dim %cst_50, dims = [] : (tensor<f32>) -> tensor<8x16x1xf32>
    %256 = stablehlo.divide %254, %255 : tensor<8x16x1xf32>
    %257 = stablehlo.broadcast_in_dim %256, dims = [0, 1, 2] : (tensor<8x16x1xf32>) -> tensor<8x16x64xf32>
    %258 = stablehlo.subtract %252, %257 : tensor<8x16x64xf32>
    %259 = stablehlo.multiply %258, %258 : tensor<8x16x64xf32>
    %cst_51 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %260 = stablehlo.reduce(%259 init: %cst_51) applies stablehlo.add across dimensions = [2] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<8x16xf32>
    %261 = stablehlo.broadcast_in_dim %260, dims = [0, 1] : (tensor<8x16xf32>) -> tensor<8x16x1xf32>
    %cst_52 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %262 = stablehlo.broadcast_in_dim %cst_52, dims = [] : (tensor<f32>) -> tensor<8x16x1xf32>
    %263 = stablehlo.divide %261, %262 : tensor<8x16x1xf32>
    %264 = stablehlo.broadcast_in_dim %256, dims = [0, 1, 2] : (tensor<8x16x1xf32>) -> tensor<8x16x64xf32>
    %265 = stablehlo.subtract %252, %264 : tensor<8x16x64xf32>
    %cst_53 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %266 = stablehlo.broadcast_in_dim %cst_53, dims = [] : (tensor<f32>) -> tensor<8x16x1xf32>
    %267 = stablehlo.add %263, %266 : tensor<8x16x1xf32>
    %268 = stablehlo.rsqrt %267 : tensor<8x16x1xf32>
    %269 = stablehlo.broadcast_in_dim %268, dims = [0, 1, 2] : (tensor<8x16x1xf32>) -> tensor<8x16x64xf32>
    %270 = stablehlo.multiply %265, %269 : tensor<8x16x64xf32>
    %271 = stablehlo.broadcast_in_dim %arg21, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %272 = stablehlo.broadcast_in_dim %271, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<8x16x64xf32>
    %273 = stablehlo.multiply %270, %272 : tensor<8x16x64xf32>
    %274 = stablehlo.broadcast_in_dim %arg22, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %275 = stablehlo.broadcast_in_dim %274, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<8x16x64xf32>
    %276 = stablehlo.add %273, %275 : tensor<8x16x64xf32>
    %277 = stablehlo.dot_general %276, %arg23, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x16x64xf32>, tensor<64x256xf32>) -> tensor<8x16x256xf32>
    %278 = stablehlo.multiply %277, %277 : tensor<8x16x256xf32>
    %279 = stablehlo.multiply %278, %277 : tensor<8x16x256xf32>
    %cst_54 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %280 = stablehlo.broadcast_in_dim %cst_54, dims = [] : (tensor<f32>) -> tensor<8x16x256xf32>
    %281 = stablehlo.multiply %280, %279 : tensor<8x16x256xf32>
    %282 = stablehlo.add %277, %281 : tensor<8x16x256xf32>
    %cst_55 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %283 = stablehlo.broadcast_in_dim %cst_55, dims = [] : (tensor<f32>) -> tensor<8x16x256xf32>
    %284 = stablehlo.multiply %283, %282 : tensor<8x16x256xf32>
    %285 = stablehlo.tanh %284 : tensor<8x16x256xf32>
    %cst_56 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %286 = stablehlo.broadcast_in_dim %cst_56, dims = [] : (tensor<f32>) -> tensor<8x16x256xf32>
    %287 = stablehlo.add %286, %285 : tensor<8x16x256xf32>
    %cst_57 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %288 = stablehlo.broadcast_in_dim %cst_57, dims = [] : (tensor<f32>) -> tensor<8x16x256xf32>
    %289 = stablehlo.multiply %288, %287 : tensor<8x16x256xf32>
    %290 = stablehlo.multiply %277, %289 : tensor<8x16x256xf32>
    %291 = sdy.sharding_constraint %290 <@mesh, [{"data"}, {}, {"model"}]> : tensor<8x16x256xf32>
    %292 = stablehlo.dot_general %291, %arg24, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x16x256xf32>, tensor<256x64xf32>) -> tensor<8x16x64xf32>
    %293 = sdy.sharding_constraint %292 <@mesh, [{"data"}, {}, {}]> : tensor<8x16x64xf32>
    %294 = stablehlo.add %252, %293 : tensor<8x16x64xf32>
    %cst_58 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %295 = stablehlo.reduce(%294 init: %cst_58) applies stablehlo.add across dimensions = [2] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<8x16xf32>
    %296 = stablehlo.broadcast_in_dim %295, dims = [0, 1] : (tensor<8x16xf32>) -> tensor<8x16x1xf32>
    %cst_59 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %297 = stablehlo.broadcast_in_dim %cst_59, dims = [] : (tensor<f32>) -> tensor<8x16x1xf32>
    %298 = stablehlo.divide %296, %297 : tensor<8x16x1xf32>
    %299 = stablehlo.broadcast_in_dim %298, dims = [0, 1, 2] : (tensor<8x16x1xf32>) -> tensor<8x16x64xf32>
    %300 = stablehlo.subtract %294, %299 : tensor<8x16x64xf32>
    %301 = stablehlo.multiply %300, %300 : tensor<8x16x64xf32>
    %cst_60 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %302 = stablehlo.reduce(%301 init: %cst_60) applies stablehlo.add across dimensions = [2] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<8x16xf32>
    %303 = stablehlo.broadcast_in_dim %302, dims = [0, 1] : (tensor<8x16xf32>) -> tensor<8x16x1xf32>
    %cst_61 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %304 = stablehlo.broadcast_in_dim %cst_61, dims = [] : (tensor<f32>) -> tensor<8x16x1xf32>
    %305 = stablehlo.divide %303, %304 : tensor<8x16x1xf32>
    %306 = stablehlo.broadcast_in_dim %298, dims = [0, 1, 2] : (tensor<8x16x1xf32>) -> tensor<8x16x64xf32>
    %307 = stablehlo.subtract %294, %306 : tensor<8x16x64xf32>
    %cst_62 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %308 = stablehlo.broadcast_in_dim %cst_62, dims = [] : (tensor<f32>) -> tensor<8x16x1xf32>
    %309 = stablehlo.add %305, %308 : tensor<8x16x1xf32>
    %310 = stablehlo.rsqrt %309 : tensor<8x16x1xf32>
    %311 = stablehlo.broadcast_in_dim %310, dims = [0, 1, 2] : (tensor<8x16x1xf32>) -> tensor<8x16x64xf32>
    %312 = stablehlo.multiply %307, %311 : tensor<8x16x64xf32>
    %313 = stablehlo.broadcast_in_dim %arg25, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %314 = stablehlo.broadcast_in_dim %313, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<8x16x64xf32>
    %315 = stablehlo.multiply %312, %314 : tensor<8x16x64xf32>
    %316 = stablehlo.broadcast_in_dim %arg26, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %317 = stablehlo.broadcast_in_dim %316, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<8x16x64xf32>
    %318 = stablehlo.add %315, %317 : tensor<8x16x64xf32>
    %319 = stablehlo.dot_general %318, %arg27, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x16x64xf32>, tensor<64x192xf32>) -> tensor<8x16x192xf32>
    %320 = sdy.sharding_constraint %319 <@mesh, [{"data"}, {}, {"model"}]> : tensor<8x16x192xf32>
    %321 = stablehlo.slice %320 [0:8, 0:16, 0:64] : (tensor<8x16x192xf32>) -> tensor<8x16x64xf32>
    %322 = stablehlo.slice %320 [0:8, 0:16, 64:128] : (tensor<8x16x192xf32>) -> tensor<8x16x64xf32>
    %323 = stablehlo.slice %320 [0:8, 0:16, 128:192] : (tensor<8x16x192xf32>) -> tensor<8x16x64xf32>
    %324 = stablehlo.reshape %321 : (tensor<8x16x64xf32>) -> tensor<8x16x4x16xf32>
    %325 = stablehlo.reshape %322 : (tensor<8x16x64xf32>) -> tensor<8x16x4x16xf32>
    %326 = stablehlo.reshape %323 : (tensor<8x16x64xf32>) -> tensor<8x16x4x16xf32>
    %327 = sdy.sharding_constraint %324 <@mesh, [{"data"}, {}, {"model"}, {}]> : tensor<8x16x4x16xf32>
    %328 = stablehlo.dot_general %327, %325, batching_dims = [0, 2] x [0, 2], contracting_dims = [3] x [3], precision = [DEFAULT, DEFAULT] : (tensor<8x16x4x16xf32>, tensor<8x16x4x16xf32>) -> tensor<8x4x16x16xf32>
    %cst_63 = stablehlo.constant dense<4.000000e+00> : tensor<f32>
    %329 = stablehlo.broadcast_in_dim %cst_63, dims = [] : (tensor<f32>) -> tensor<8x4x16x16xf32>
    %330 = stablehlo.divide %328, %329 : tensor<8x4x16x16xf32>
    %c_64 = stablehlo.constant dense<true> : tensor<i1>
    %331 = stablehlo.broadcast_in_dim %c_64, dims = [] : (tensor<i1>) -> tensor<16x16xi1>
    %332 = call @tril(%331) : (tensor<16x16xi1>) -> tensor<16x16xi1>
    %cst_65 = stablehlo.constant dense<-1.000000e+09> : tensor<f32>
    %333 = call @_where_0(%332, %330, %cst_65) : (tensor<16x16xi1>, tensor<8x4x16x16xf32>, tensor<f32>) -> tensor<8x4x16x16xf32>
    %cst_66 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %334 = stablehlo.reduce(%333 init: %cst_66) applies stablehlo.maximum across dimensions = [3] : (tensor<8x4x16x16xf32>, tensor<f32>) -> tensor<8x4x16xf32>
    %cst_67 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %335 = stablehlo.broadcast_in_dim %cst_67, dims = [] : (tensor<f32>) -> tensor<8x4x16xf32>
    %336 = stablehlo.maximum %335, %334 : tensor<8x4x16xf32>
    %337 = stablehlo.broadcast_in_dim %336, dims = [0, 1, 2] : (tensor<8x4x16xf32>) -> tensor<8x4x16x1xf32>
    %338 = stablehlo.broadcast_in_dim %337, dims = [0, 1, 2, 3] : (tensor<8x4x16x1xf32>) -> tensor<8x4x16x16xf32>
    %339 = stablehlo.subtract %333, %338 : tensor<8x4x16x16xf32>
    %340 = stablehlo.exponential %339 : tensor<8x4x16x16xf32>
    %cst_68 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %341 = stablehlo.reduce(%340 init: %cst_68) applies stablehlo.add across dimensions = [3] : (tensor<8x4x16x16xf32>, tensor<f32>) -> tensor<8x4x16xf32>
    %342 = stablehlo.broadcast_in_dim %341, dims = [0, 1, 2] : (tensor<8x4x16xf32>) -> tensor<8x4x16x1xf32>
    %343 = stablehlo.broadcast_in_dim %342, dims = [0, 1, 2, 3] : (tensor<8x4x16x1xf32>) -> tensor<8x4x16x16xf32>
    %344 = stablehlo.divide %340, %343 : tensor<8x4x16x16xf32>
    %345 = stablehlo.dot_general %326, %344, batching_dims = [0, 2] x [0, 1], contracting_dims = [1] x [3], precision = [DEFAULT, DEFAULT] : (tensor<8x16x4x16xf32>, tensor<8x4x16x16xf32>) -> tensor<8x4x16x16xf32>
    %346 = stablehlo.transpose %345, dims = [0, 3, 1, 2] : (tensor<8x4x16x16xf32>) -> tensor<8x16x4x16xf32>
    %347 = stablehlo.reshape %346 : (tensor<8x16x4x16xf32>) -> tensor<8x16x64xf32>
    %348 = stablehlo.dot_general %347, %arg28, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x16x64xf32>, tensor<64x64xf32>) -> tensor<8x16x64xf32>
    %349 = sdy.sharding_constraint %348 <@mesh, [{"data"}, {}, {}]> : tensor<8x16x64xf32>
    %350 = stablehlo.add %294, %349 : tensor<8x16x64xf32>
    %cst_69 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %351 = stablehlo.reduce(%350 init: %cst_69) applies stablehlo.add across dimensions = [2] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<8x16xf32>
    %352 = stablehlo.broadcast_in_dim %351, dims = [0, 1] : (tensor<8x16xf32>) -> tensor<8x16x1xf32>
    %cst_70 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %353 = stablehlo.broadcast_in_dim %cst_70, dims = [] : (tensor<f32>) -> tensor<8x16x1xf32>
    %354 = stablehlo.divide %352, %353 : tensor<8x16x1xf32>
    %355 = stablehlo.broadcast_in_dim %354, dims = [0, 1, 2] : (tensor<8x16x1xf32>) -> tensor<8x16x64xf32>
    %356 = stablehlo.subtract %350, %355 : tensor<8x16x64xf32>
    %357 = stablehlo.multiply %356, %356 : tensor<8x16x64xf32>
    %cst_71 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %358 = stablehlo.reduce(%357 init: %cst_71) applies stablehlo.add across dimensions = [2] : (tensor<8x16x64xf32>, tensor<f32>) -> tensor<8x16xf32>
    %359 = stablehlo.broadcast_in_dim %358, dims = [0, 1] : (tensor<8x16xf32>) -> tensor<8x16x1xf32>
    %cst_72 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %360 = stablehlo.broadcast_in_dim %cst_72, dims = [] : (tensor<f32>) -> tensor<8x16x1xf32>
    %361 = stablehlo.divide %359, %360 : tensor<8x16x1xf32>
    %362 = stablehlo.broadcast_in_dim %354, dims = [0, 1, 2] : (tensor<8x16x1xf32>) -> tensor<8x16x64xf32>
    %363 = stablehlo.subtract %350, %362 : tensor<8x16x64xf32>
    %cst_73 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %364 = stablehlo.broadcast_in_dim %cst_73, dims = [] : (tensor<f32>) -> tensor<8x16x1xf32>
    %365 = stablehlo.add %361, %364 : tensor<8x16x1xf32>
    %366 = stablehlo.rsqrt %365 : tensor<8x16x1xf32>
    %367 = stablehlo.broadcast_in_dim %366, dims = [0, 1, 2] : (tensor<8x16x1xf32>) -> tensor<8x16x64xf32>
    %368 = stablehlo.multiply %363, %367 : tensor<8x16x64xf32>
    %369 = stablehlo.broadcast_in_dim %arg29, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %370 = stablehlo.broadcast_in_dim %369, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<8x16x64xf32>
    %371 = stablehlo.multiply %368, %370 : tensor<8x16x64xf32>
    %372 = stablehlo.broadcast_in_dim %arg30, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %373 = stablehlo.broadcast_in_dim %372, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<8x16x64xf32>
    %374 = stablehlo.add %371, %373 : tensor<8x16x64xf32>
    %375 = stablehlo.dot_general %374, %arg31, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x16x64xf32>, tensor<64x256xf32>) -> tensor<8x16x256xf32>
    %376 = stablehlo.multiply %375, %375 : tensor<8x16x256xf32>
    %377 = stablehlo.multiply %376, %375 : tensor<8x16x256xf32>
    %cst_74 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %378 = stablehlo.broadcast_in_dim %cst_74, dims = [] : (tensor<f32>) -> tensor<8x16x256xf32>
    %379 = stablehlo.multiply %378, %377 : tensor<8x16x256xf32>
    %380 = stablehlo.add %375, %379 : tensor<8x16x256xf32>
    %cst_75 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %381 = stablehlo.broadcast_in_dim %cst_75, dims = [] : (tensor<f32>) -> tensor<8x16x256xf32>
    %382 = stablehlo.multiply %381, %380 : tensor<8x16x256xf32>
    %383 = stablehlo.tanh %382 : tensor<8x16x256xf32>
    %cst_76 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %384 = stablehlo.broadcast_in_dim %cst_76, dims = [] : (tensor<f32>) -> tensor<8x16x256xf32>
    %385 = stablehlo.add %384, %383 : tensor<8x16x256xf32>
    %cst_77 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %386 = stablehlo.broadcast_in_dim %cst_77, dims = [] : (tensor<f32>) -> tensor<8x16x256xf32>
    %387 = stablehlo.multiply %386, %385 : tensor<8x16x256xf32>
    %388 = stablehlo.multiply %375, %387 : tensor<8x16x256xf32>
    %389 = sdy.sharding_constraint %388 <@mesh, [{"data"}, {}, {"model"}]> : tensor<8x16x256xf32>
    %390 = stablehlo.dot_general %389, %arg32, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x16x256xf32>, tensor<256x64xf32>) -> tensor<8x16x64xf32>
    %391 = sdy.sharding_constraint %390 <@mesh, [{"data"}, {}, {}]> : tensor<8x16x64xf32>
    %392 = stablehlo.add %350, %391 : tensor<8x16x64xf32>
    %393 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<512x64xf32>) -> tensor<64x512xf32>
    %394 = stablehlo.dot_general %392, %393, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x16x64xf32>, tensor<64x512xf32>) -> tensor<8x16x512xf32>
    return %394 : tensor<8x16x512xf32>
  }
  func.func private @_take(%arg0: tensor<512x64xf32>, %arg1: tensor<8x16xi32>) -> tensor<8x16x64xf32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<8x16xi32>
    %1 = stablehlo.compare LT, %arg1, %0, SIGNED : (tensor<8x16xi32>, tensor<8x16xi32>) -> tensor<8x16xi1>
    %c_0 = stablehlo.constant dense<512> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<8x16xi32>
    %3 = stablehlo.add %arg1, %2 : tensor<8x16xi32>
    %4 = call @_where(%1, %3, %arg1) : (tensor<8x16xi1>, tensor<8x16xi32>, tensor<8x16xi32>) -> tensor<8x16xi32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0, 1] : (tensor<8x16xi32>) -> tensor<8x16x1xi32>
    %c_1 = stablehlo.constant dense<511> : tensor<1xi32>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %6 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<8x16x1xi32>
    %7 = stablehlo.compare GE, %5, %6, SIGNED : (tensor<8x16x1xi32>, tensor<8x16x1xi32>) -> tensor<8x16x1xi1>
    %8 = stablehlo.broadcast_in_dim %c_1, dims = [2] : (tensor<1xi32>) -> tensor<1x1x1xi32>
    %9 = stablehlo.broadcast_in_dim %8, dims = [0, 1, 2] : (tensor<1x1x1xi32>) -> tensor<8x16x1xi32>
    %10 = stablehlo.compare LE, %5, %9, SIGNED : (tensor<8x16x1xi32>, tensor<8x16x1xi32>) -> tensor<8x16x1xi1>
    %11 = stablehlo.and %7, %10 : tensor<8x16x1xi1>
    %c_3 = stablehlo.constant dense<true> : tensor<i1>
    %12 = stablehlo.reduce(%11 init: %c_3) applies stablehlo.and across dimensions = [2] : (tensor<8x16x1xi1>, tensor<i1>) -> tensor<8x16xi1>
    %13 = "stablehlo.gather"(%arg0, %5) <{dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 64>}> : (tensor<512x64xf32>, tensor<8x16x1xi32>) -> tensor<8x16x64xf32>
    %14 = stablehlo.broadcast_in_dim %12, dims = [0, 1] : (tensor<8x16xi1>) -> tensor<8x16x64xi1>
    %cst = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %15 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x16x64xf32>
    %16 = stablehlo.select %14, %13, %15 : tensor<8x16x64xi1>, tensor<8x16x64xf32>
    return %16 : tensor<8x16x64xf32>
  }
  func.func private @_where(%arg0: tensor<8x16xi1>, %arg1: tensor<8x16xi32>, %arg2: tensor<8x16xi32>) -> tensor<8x16xi32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<8x16xi1>, tensor<8x16xi32>
    return %0 : tensor<8x16xi32>
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
  func.func private @_where_0(%arg0: tensor<16x16xi1>, %arg1: tensor<8x4x16x16xf32>, %arg2: tensor<f32>) -> tensor<8x4x16x16xf32> {
    %0 = stablehlo.convert %arg2 : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %arg0, dims = [2, 3] : (tensor<16x16xi1>) -> tensor<8x4x16x16xi1>
    %2 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<8x4x16x16xf32>
    %3 = stablehlo.select %1, %arg1, %2 : tensor<8x4x16x16xi1>, tensor<8x4x16x16xf32>
    return %3 : tensor<8x4x16x16xf32>
  }
}
