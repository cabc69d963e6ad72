module @jit_f attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=2, "model"=4]> {stablehlo.mesh = {axes = [{name = "data", size = 2 : i64}, {name = "model", size = 4 : i64}]}}
  func.func public @main(%arg0: tensor<8x64xf32>, %arg1: tensor<64x256xf32>) -> (tensor<8x256xf32> {jax.result_info = "result[0]", sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}, tensor<256xf32> {jax.result_info = "result[1]", sdy.sharding = #sdy.sharding<@mesh, [{}]>}) {
    %0 = stablehlo.sine %arg0 : tensor<8x64xf32>
    %1:2 = sdy.manual_computation(%0, %arg1) in_shardings=[<@mesh, [{"data"}, {"model"}]>, <@mesh, [{"model"}, {}]>] out_shardings=[<@mesh, [{"data"}, {}]>, <@mesh, [{}, {}]>] manual_axes={"data", "model"} (%arg2: tensor<4x16xf32>, %arg3: tensor<16x256xf32>) {
      %4 = stablehlo.dot_general %arg2, %arg3, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x16xf32>, tensor<16x256xf32>) -> tensor<4x256xf32>
      %5 = "stablehlo.all_reduce"(%4) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3], [4, 5, 6, 7]]> : tensor<2x4xi64>, use_global_device_ids}> ({
      ^bb0(%arg4: tensor<f32>, %arg5: tensor<f32>):
        %7 = stablehlo.add %arg4, %arg5 : tensor<f32>
        stablehlo.return %7 : tensor<f32>
      }) : (tensor<4x256xf32>) -> tensor<4x256xf32>
      %6 = "stablehlo.all_gather"(%5) <{all_gather_dim = 0 : i64, channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 4], [1, 5], [2, 6], [3, 7]]> : tensor<4x2xi64>, use_global_device_ids}> : (tensor<4x256xf32>) -> tensor<8x256xf32>
      sdy.return %5, %6 : tensor<4x256xf32>, tensor<8x256xf32>
    } : (tensor<8x64xf32>, tensor<64x256xf32>) -> (tensor<8x256xf32>, tensor<8x256xf32>)
    %2 = stablehlo.cosine %1#0 : tensor<8x256xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %3 = stablehlo.reduce(%1#1 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<8x256xf32>, tensor<f32>) -> tensor<256xf32>
    return %2, %3 : tensor<8x256xf32>, tensor<256xf32>
  }
}
