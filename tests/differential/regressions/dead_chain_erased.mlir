// Fuzzer finding (seed 1-19-0): a dead reshape chain; Shardy erases both ops, we kept the
// first (driver requeued nothing after erasing the second). Fixed in driver.py.
// pass: sdy-basic-propagate
module {
  sdy.mesh @mesh2 = <[]>
  func.func @main(%a0: tensor<4x32x4x16xf32>) -> (tensor<4x32x4x16xf32>) {
    %v1 = stablehlo.reshape %a0 : (tensor<4x32x4x16xf32>) -> tensor<16x16x8x4xf32>
    %v3 = stablehlo.reshape %v1 : (tensor<16x16x8x4xf32>) -> tensor<4x4x16x8x4xf32>
    return %a0 : tensor<4x32x4x16xf32>
  }
}
