// A callee whose symbol name needs quoting (@"my-fn"): the propagation driver compared the
// quoted text with func names and stopped with KeyError under dedup-functions-fully; Shardy
// propagates it. Fixed with the one callee lookup (shardwise.sdy.funcs.callee_name).
// pass: sdy-propagation-pipeline{dedup-functions-fully=true}
sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<8x8xf32> {
  %0 = call @"my-fn"(%arg0) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %1 = call @"my-fn"(%0) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}
func.func private @"my-fn"(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = stablehlo.add %arg0, %arg0 : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
