module @jit_f attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=2, "model"=4]> {stablehlo.mesh = {axes = [{name = "data", size = 2 : i64}, {name = "model", size = 4 : i64}]}}
  func.func public @main(%arg0: tensor<8x16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"model"}, {}]>}) -> (tensor<8x16x9xf32> {jax.result_info = "result[0]", sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}, {}]>}, tensor<8x16x16xf32> {jax.result_info = "result[1]", sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}, {}]>}) {
    %0 = call @fft(%arg0) : (tensor<8x16x16xf32>) -> tensor<8x16x9xcomplex<f32>>
    %1 = stablehlo.real %0 : (tensor<8x16x9xcomplex<f32>>) -> tensor<8x16x9xf32>
    %2 = stablehlo.imag %0 : (tensor<8x16x9xcomplex<f32>>) -> tensor<8x16x9xf32>
    %3 = stablehlo.negate %2 : tensor<8x16x9xf32>
    %4 = stablehlo.complex %1, %3 : tensor<8x16x9xcomplex<f32>>
    %5 = stablehlo.multiply %0, %4 : tensor<8x16x9xcomplex<f32>>
    %6 = call @fft_0(%5) : (tensor<8x16x9xcomplex<f32>>) -> tensor<8x16x9xcomplex<f32>>
    %7 = stablehlo.abs %6 : (tensor<8x16x9xcomplex<f32>>) -> tensor<8x16x9xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %8 = call @_pad(%0, %c) : (tensor<8x16x9xcomplex<f32>>, tensor<i32>) -> tensor<8x16x9xcomplex<f32>>
    %9 = call @fft_1(%8) : (tensor<8x16x9xcomplex<f32>>) -> tensor<8x16x16xf32>
    return %7, %9 : tensor<8x16x9xf32>, tensor<8x16x16xf32>
  }
  func.func private @fft(%arg0: tensor<8x16x16xf32>) -> tensor<8x16x9xcomplex<f32>> {
    %0 = stablehlo.fft %arg0, type = RFFT, length = [16, 16] : (tensor<8x16x16xf32>) -> tensor<8x16x9xcomplex<f32>>
    return %0 : tensor<8x16x9xcomplex<f32>>
  }
  func.func private @fft_0(%arg0: tensor<8x16x9xcomplex<f32>>) -> tensor<8x16x9xcomplex<f32>> {
    %0 = stablehlo.fft %arg0, type = IFFT, length = [9] : (tensor<8x16x9xcomplex<f32>>) -> tensor<8x16x9xcomplex<f32>>
    return %0 : tensor<8x16x9xcomplex<f32>>
  }
  func.func private @_pad(%arg0: tensor<8x16x9xcomplex<f32>>, %arg1: tensor<i32>) -> tensor<8x16x9xcomplex<f32>> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<complex<f32>>
    %1 = stablehlo.pad %arg0, %0, low = [0, 0, 0], high = [0, 0, 0], interior = [0, 0, 0] : (tensor<8x16x9xcomplex<f32>>, tensor<complex<f32>>) -> tensor<8x16x9xcomplex<f32>>
    return %1 : tensor<8x16x9xcomplex<f32>>
  }
  func.func private @fft_1(%arg0: tensor<8x16x9xcomplex<f32>>) -> tensor<8x16x16xf32> {
    %0 = stablehlo.fft %arg0, type = IRFFT, length = [16, 16] : (tensor<8x16x9xcomplex<f32>>) -> tensor<8x16x16xf32>
    return %0 : tensor<8x16x16xf32>
  }
}
