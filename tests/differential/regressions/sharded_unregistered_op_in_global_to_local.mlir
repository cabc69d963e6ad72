// Fuzzer finding (seed 1812-607-0): a sharded op of an unregistered dialect through
// sdy-convert-global-to-local: the reference gives its result the local type of its sharding.
// pass: sdy-propagation-pipeline,sdy-insert-explicit-reshards{enable-full-version=true},sdy-reshard-to-collectives,sdy-convert-global-to-local
module {
  sdy.mesh @mesh = <["w"=3]>
  func.func @main(%a4: tensor<3x2x2x1x6x6x4xf32>) -> (tensor<3x2x2x1x6x6x4xf32>) {
    %u0 = "vendor.fused_kernel"(%a4) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"w"}, {?}, {?}, {?}, {?}, {}, {}]>]>} : (tensor<3x2x2x1x6x6x4xf32>) -> tensor<3x2x2x1x6x6x4xf32>
    return %u0 : tensor<3x2x2x1x6x6x4xf32>
  }
}
