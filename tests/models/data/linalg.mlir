module @jit_f attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=2, "model"=4]> {stablehlo.mesh = {axes = [{name = "data", size = 2 : i64}, {name = "model", size = 4 : i64}]}}
  func.func public @main(%arg0: tensor<8x16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}, {}]>}, %arg1: tensor<8x16x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}, {"model"}]>}) -> (tensor<8x16x4xf32> {jax.result_info = "result[0]", sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}, {}]>}, tensor<8x16x16xf32> {jax.result_info = "result[1]", sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}, {}]>}, tensor<8x16x16xf32> {jax.result_info = "result[2]", sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}, {}]>}, tensor<8x16xf32> {jax.result_info = "result[3]", sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}, tensor<8x16x16xf32> {jax.result_info = "result[4]", sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}, {}]>}) {
    %0 = stablehlo.transpose %arg0, dims = [0, 2, 1] : (tensor<8x16x16xf32>) -> tensor<8x16x16xf32>
    %1 = stablehlo.dot_general %arg0, %0, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x16x16xf32>, tensor<8x16x16xf32>) -> tensor<8x16x16xf32>
    %2 = stablehlo.iota dim = 0 : tensor<16x16xi32>
    %3 = stablehlo.iota dim = 1 : tensor<16x16xi32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %4 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<16x16xi32>
    %5 = stablehlo.add %2, %4 : tensor<16x16xi32>
    %6 = stablehlo.compare EQ, %5, %3, SIGNED : (tensor<16x16xi32>, tensor<16x16xi32>) -> tensor<16x16xi1>
    %7 = stablehlo.convert %6 : (tensor<16x16xi1>) -> tensor<16x16xf32>
    %cst = stablehlo.constant dense<1.600000e+01> : tensor<f32>
    %8 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<16x16xf32>
    %9 = stablehlo.multiply %8, %7 : tensor<16x16xf32>
    %10 = stablehlo.broadcast_in_dim %9, dims = [1, 2] : (tensor<16x16xf32>) -> tensor<1x16x16xf32>
    %11 = stablehlo.broadcast_in_dim %10, dims = [0, 1, 2] : (tensor<1x16x16xf32>) -> tensor<8x16x16xf32>
    %12 = stablehlo.add %1, %11 : tensor<8x16x16xf32>
    %13 = call @cholesky(%12) : (tensor<8x16x16xf32>) -> tensor<8x16x16xf32>
    %14 = call @_solve_triangular(%13, %arg1) : (tensor<8x16x16xf32>, tensor<8x16x4xf32>) -> tensor<8x16x4xf32>
    %15:2 = call @qr(%arg0) : (tensor<8x16x16xf32>) -> (tensor<8x16x16xf32>, tensor<8x16x16xf32>)
    %16:2 = call @eigh(%12) : (tensor<8x16x16xf32>) -> (tensor<8x16xf32>, tensor<8x16x16xf32>)
    return %14, %15#0, %15#1, %16#0, %16#1 : tensor<8x16x4xf32>, tensor<8x16x16xf32>, tensor<8x16x16xf32>, tensor<8x16xf32>, tensor<8x16x16xf32>
  }
  func.func private @cholesky(%arg0: tensor<8x16x16xf32>) -> tensor<8x16x16xf32> {
    %0 = stablehlo.transpose %arg0, dims = [0, 2, 1] : (tensor<8x16x16xf32>) -> tensor<8x16x16xf32>
    %1 = stablehlo.add %arg0, %0 : tensor<8x16x16xf32>
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x16x16xf32>
    %3 = stablehlo.divide %1, %2 : tensor<8x16x16xf32>
    %4:2 = stablehlo.custom_call @lapack_spotrf_ffi(%3) {backend_config = "", mhlo.backend_config = {uplo = 76 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "1"}, operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<0> : tensor<1xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j, k])->([i, l, m], [i]) {i=8, j=16, k=16, l=16, m=16}, custom>} : (tensor<8x16x16xf32>) -> (tensor<8x16x16xf32>, tensor<8xi32>)
    %c = stablehlo.constant dense<0> : tensor<i32>
    %5 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<8xi32>
    %6 = stablehlo.compare EQ, %4#1, %5, SIGNED : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi1>
    %7 = stablehlo.broadcast_in_dim %6, dims = [0] : (tensor<8xi1>) -> tensor<8x1x1xi1>
    %cst_0 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %8 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<8x16x16xf32>
    %9 = stablehlo.broadcast_in_dim %7, dims = [0, 1, 2] : (tensor<8x1x1xi1>) -> tensor<8x16x16xi1>
    %10 = stablehlo.select %9, %4#0, %8 : tensor<8x16x16xi1>, tensor<8x16x16xf32>
    %11 = stablehlo.iota dim = 0 : tensor<16x16xi32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %12 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i32>) -> tensor<16x16xi32>
    %13 = stablehlo.add %11, %12 : tensor<16x16xi32>
    %14 = stablehlo.iota dim = 1 : tensor<16x16xi32>
    %15 = stablehlo.compare GE, %13, %14, SIGNED : (tensor<16x16xi32>, tensor<16x16xi32>) -> tensor<16x16xi1>
    %16 = stablehlo.broadcast_in_dim %15, dims = [1, 2] : (tensor<16x16xi1>) -> tensor<8x16x16xi1>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %17 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<8x16x16xf32>
    %18 = stablehlo.select %16, %10, %17 : tensor<8x16x16xi1>, tensor<8x16x16xf32>
    return %18 : tensor<8x16x16xf32>
  }
  func.func private @_solve_triangular(%arg0: tensor<8x16x16xf32>, %arg1: tensor<8x16x4xf32>) -> tensor<8x16x4xf32> {
    %0 = stablehlo.custom_call @lapack_strsm_ffi(%arg0, %arg1) {backend_config = "", mhlo.backend_config = {diag = 78 : ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 76 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "1"}, operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 2, 0]> : tensor<3xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 1, operand_tuple_indices = []>], result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j, k], [i, l, m])->([i, n, o]) {i=8, j=16, k=16, l=16, m=4, n=16, o=4}, custom>} : (tensor<8x16x16xf32>, tensor<8x16x4xf32>) -> tensor<8x16x4xf32>
    return %0 : tensor<8x16x4xf32>
  }
  func.func private @qr(%arg0: tensor<8x16x16xf32>) -> (tensor<8x16x16xf32>, tensor<8x16x16xf32>) {
    %0:2 = stablehlo.custom_call @lapack_sgeqrf_ffi(%arg0) {backend_config = "", mhlo.backend_config = {}, mhlo.frontend_attributes = {num_batch_dims = "1"}, operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 0]> : tensor<2xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j, k])->([i, l, m], [i, n]) {i=8, j=16, k=16, l=16, m=16, n=16}, custom>} : (tensor<8x16x16xf32>) -> (tensor<8x16x16xf32>, tensor<8x16xf32>)
    %1 = stablehlo.custom_call @lapack_sorgqr_ffi(%0#0, %0#1) {backend_config = "", mhlo.backend_config = {}, mhlo.frontend_attributes = {num_batch_dims = "1"}, operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 0]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j, k], [i, l])->([i, m, n]) {i=8, j=16, k=16, l=16, m=16, n=16}, custom>} : (tensor<8x16x16xf32>, tensor<8x16xf32>) -> tensor<8x16x16xf32>
    %2 = stablehlo.iota dim = 0 : tensor<16x16xi32>
    %c = stablehlo.constant dense<-1> : tensor<i32>
    %3 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<16x16xi32>
    %4 = stablehlo.add %2, %3 : tensor<16x16xi32>
    %5 = stablehlo.iota dim = 1 : tensor<16x16xi32>
    %6 = stablehlo.compare GE, %4, %5, SIGNED : (tensor<16x16xi32>, tensor<16x16xi32>) -> tensor<16x16xi1>
    %7 = stablehlo.broadcast_in_dim %6, dims = [1, 2] : (tensor<16x16xi1>) -> tensor<8x16x16xi1>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %8 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x16x16xf32>
    %9 = stablehlo.select %7, %8, %0#0 : tensor<8x16x16xi1>, tensor<8x16x16xf32>
    return %1, %9 : tensor<8x16x16xf32>, tensor<8x16x16xf32>
  }
  func.func private @eigh(%arg0: tensor<8x16x16xf32>) -> (tensor<8x16xf32>, tensor<8x16x16xf32>) {
    %0 = stablehlo.transpose %arg0, dims = [0, 2, 1] : (tensor<8x16x16xf32>) -> tensor<8x16x16xf32>
    %1 = stablehlo.add %arg0, %0 : tensor<8x16x16xf32>
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x16x16xf32>
    %3 = stablehlo.divide %1, %2 : tensor<8x16x16xf32>
    %4:3 = stablehlo.custom_call @lapack_ssyevd_ffi(%3) {backend_config = "", mhlo.backend_config = {mode = 86 : ui8, uplo = 76 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "1"}, operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 0]> : tensor<2xindex>, dense<0> : tensor<1xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j, k])->([i, l, m], [i, n], [i]) {i=8, j=16, k=16, l=16, m=16, n=16}, custom>} : (tensor<8x16x16xf32>) -> (tensor<8x16x16xf32>, tensor<8x16xf32>, tensor<8xi32>)
    %c = stablehlo.constant dense<0> : tensor<i32>
    %5 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<8xi32>
    %6 = stablehlo.compare EQ, %4#2, %5, SIGNED : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi1>
    %7 = stablehlo.broadcast_in_dim %6, dims = [0] : (tensor<8xi1>) -> tensor<8x1x1xi1>
    %cst_0 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %8 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<8x16x16xf32>
    %9 = stablehlo.broadcast_in_dim %7, dims = [0, 1, 2] : (tensor<8x1x1xi1>) -> tensor<8x16x16xi1>
    %10 = stablehlo.select %9, %4#0, %8 : tensor<8x16x16xi1>, tensor<8x16x16xf32>
    %11 = stablehlo.broadcast_in_dim %6, dims = [0] : (tensor<8xi1>) -> tensor<8x1xi1>
    %cst_1 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %12 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<8x16xf32>
    %13 = stablehlo.broadcast_in_dim %11, dims = [0, 1] : (tensor<8x1xi1>) -> tensor<8x16xi1>
    %14 = stablehlo.select %13, %4#1, %12 : tensor<8x16xi1>, tensor<8x16xf32>
    return %14, %10 : tensor<8x16xf32>, tensor<8x16x16xf32>
  }
}
