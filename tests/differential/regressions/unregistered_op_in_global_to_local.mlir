// Fuzzer finding (seed 1812-57-0): an op of an unregistered dialect reaches
// sdy-convert-global-to-local, which converts it like any StableHLO op in the reference (results
// to local types by their shardings) while ours called it illegal. Fixed in its driver.py.
// pass: sdy-propagation-pipeline,sdy-insert-explicit-reshards{enable-full-version=true},sdy-reshard-to-collectives,sdy-convert-global-to-local
module {
  sdy.mesh @mesh = <["x"=2]>
  func.func @main(%a0: tensor<16x2x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {}]>}) -> (tensor<16x2x8xf32>) {
    %u0 = "vendor.fused_kernel"(%a0) : (tensor<16x2x8xf32>) -> tensor<16x2x8xf32>
    return %u0 : tensor<16x2x8xf32>
  }
}
