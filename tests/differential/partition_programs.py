"""Hand-written global programs for `shardwise partition` (differential) and `check` tests.

Each is a program a user writes: shardings on the arguments (and constraints where a layout
is wanted), the rest left to propagation.
"""

MESH_2X4 = 'sdy.mesh @mesh = <["data"=2, "model"=4]>\n'

# Megatron's MLP: the first weight split by columns, the second by rows; one all-reduce.
MATMUL_TP = (
    MESH_2X4
    + """
func.func @main(%x: tensor<8x32xf32>,
    %w1: tensor<32x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>},
    %w2: tensor<64x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>})
    -> (tensor<8x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
  %0 = stablehlo.dot_general %x, %w1, contracting_dims = [1] x [0]
      : (tensor<8x32xf32>, tensor<32x64xf32>) -> tensor<8x64xf32>
  %1 = stablehlo.tanh %0 : tensor<8x64xf32>
  %2 = stablehlo.dot_general %1, %w2, contracting_dims = [1] x [0]
      : (tensor<8x64xf32>, tensor<64x32xf32>) -> tensor<8x32xf32>
  return %2 : tensor<8x32xf32>
}
"""
)

# Data parallel: the batch split, weights replicated; the mean loss sums over the batch.
MLP_DP = (
    MESH_2X4
    + """
func.func @main(
    %x: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data", "model"}, {}]>},
    %w1: tensor<32x32xf32>, %b1: tensor<32xf32>, %w2: tensor<32x8xf32>)
    -> (tensor<16x8xf32>, tensor<f32>) {
  %0 = stablehlo.dot_general %x, %w1, contracting_dims = [1] x [0]
      : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
  %1 = stablehlo.broadcast_in_dim %b1, dims = [1] : (tensor<32xf32>) -> tensor<16x32xf32>
  %2 = stablehlo.add %0, %1 : tensor<16x32xf32>
  %3 = stablehlo.logistic %2 : tensor<16x32xf32>
  %4 = stablehlo.dot_general %3, %w2, contracting_dims = [1] x [0]
      : (tensor<16x32xf32>, tensor<32x8xf32>) -> tensor<16x8xf32>
  %5 = stablehlo.multiply %4, %4 : tensor<16x8xf32>
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %6 = stablehlo.reduce(%5 init: %cst) applies stablehlo.add across dimensions = [0, 1]
      : (tensor<16x8xf32>, tensor<f32>) -> tensor<f32>
  return %4, %6 : tensor<16x8xf32>, tensor<f32>
}
"""
)

# Elementwise ops only, one layout change in the middle (an all-to-all) and at the end.
ELEMENTWISE_CHAIN = (
    MESH_2X4
    + """
func.func @main(
    %a: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"model"}]>},
    %b: tensor<8x16xf32>)
    -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>},
        tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
  %0 = stablehlo.subtract %a, %b : tensor<8x16xf32>
  %1 = stablehlo.exponential %0 : tensor<8x16xf32>
  %2 = stablehlo.maximum %1, %b : tensor<8x16xf32>
  %3 = sdy.sharding_constraint %2 <@mesh, [{"data", "model"}, {}]> : tensor<8x16xf32>
  %4 = stablehlo.sine %3 : tensor<8x16xf32>
  %5 = stablehlo.multiply %4, %a : tensor<8x16xf32>
  return %5, %1 : tensor<8x16xf32>, tensor<8x16xf32>
}
"""
)

# Elementwise ops through two layouts: an all-to-all, then all-gathers to the results.
ELEMENTWISE_LAYOUTS = (
    MESH_2X4
    + """
func.func @main(
    %a: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"model"}]>},
    %b: tensor<8x16xf32>)
    -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>},
        tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) {
  %0 = stablehlo.add %a, %b : tensor<8x16xf32>
  %1 = stablehlo.tanh %0 : tensor<8x16xf32>
  %2 = sdy.sharding_constraint %1 <@mesh, [{"data", "model"}, {}]> : tensor<8x16xf32>
  %3 = stablehlo.exponential %2 : tensor<8x16xf32>
  %4 = stablehlo.multiply %3, %3 : tensor<8x16xf32>
  %5 = stablehlo.negate %1 : tensor<8x16xf32>
  return %4, %5 : tensor<8x16xf32>, tensor<8x16xf32>
}
"""
)

# 6 rows on 4 devices: padded to 8 (the reference's global-to-local aborts without padding).
PAD_ELEMENTWISE = """sdy.mesh @mesh = <["x"=4]>
func.func @main(%arg0: tensor<6x8xf32>) -> tensor<6x8xf32> {
  %0 = stablehlo.exponential %arg0 : tensor<6x8xf32>
  %1 = sdy.sharding_constraint %0 <@mesh, [{"x"}, {}]> : tensor<6x8xf32>
  %2 = stablehlo.negate %1 : tensor<6x8xf32>
  %3 = sdy.sharding_constraint %2 <@mesh, [{}, {}]> : tensor<6x8xf32>
  return %3 : tensor<6x8xf32>
}
"""

# A row-parallel dot whose contracting dim does not divide: masked padding, an all-reduce.
PAD_DOT = """sdy.mesh @mesh = <["x"=4]>
func.func @main(%arg0: tensor<8x6xf32>, %arg1: tensor<6x8xf32>) -> tensor<8x8xf32> {
  %0 = sdy.sharding_constraint %arg0 <@mesh, [{}, {"x"}]> : tensor<8x6xf32>
  %1 = sdy.sharding_constraint %arg1 <@mesh, [{"x"}, {}]> : tensor<6x8xf32>
  %2 = stablehlo.dot_general %0, %1, contracting_dims = [1] x [0]
      : (tensor<8x6xf32>, tensor<6x8xf32>) -> tensor<8x8xf32>
  %3 = sdy.sharding_constraint %2 <@mesh, [{}, {}]> : tensor<8x8xf32>
  return %3 : tensor<8x8xf32>
}
"""

# A reduction whose result is sharded on the reduced axis: with the sdy-collective
# canonicalization the all-reduce and the all-slice become one reduce-scatter.
REDUCE_SCATTER = """sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>})
    -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}]>}) {
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [1]
      : (tensor<8x16xf32>, tensor<f32>) -> tensor<8xf32>
  %1 = stablehlo.sine %0 : tensor<8xf32>
  return %1 : tensor<8xf32>
}
"""

# A sharded contracting dot whose result is resharded: fused, its all-reduce becomes a
# reduce-scatter that the 0.10.2 global-to-local cannot lower (the reference aborts).
DOT_RESHARDED = """sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                %arg1: tensor<16x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>})
    -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {"x"}]>}) {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0]
      : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %1 = stablehlo.exponential %0 : tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}
"""


def reshard(mesh: str, source: str, target: str) -> str:
    """One tensor from `source` to `target` (a negate between): a reshard and nothing else."""
    return f"""sdy.mesh @mesh = {mesh}
func.func @main(%arg0: tensor<16x16xf32> {{sdy.sharding = #sdy.sharding<@mesh, {source}>}})
    -> (tensor<16x16xf32> {{sdy.sharding = #sdy.sharding<@mesh, {target}>}}) {{
  %0 = stablehlo.negate %arg0 : tensor<16x16xf32>
  return %0 : tensor<16x16xf32>
}}
"""


MESH_2X2X2 = '<["a"=2, "b"=2, "c"=2]>'
# Collective permutes between whole axes (the 0.10.2 lowering is right for them).
PERMUTE_WHOLE_AXES = reshard(MESH_2X2X2, '[{"b", "a"}, {"c"}]', '[{"c"}, {"a", "b"}]')
# A permute over sub-axes: [{}, {"a", "b":(1)2}] -> [{}, {"b"}] on a 2x4 mesh.
PERMUTE_SUB_AXES = reshard('<["a"=2, "b"=4]>', '[{}, {"a"}]', '[{}, {"b"}]')

# The corpus models (tests/models/data) the reference partitions; the rest it rejects (calls
# of sharded funcs, while loops carrying sharded values, partial slices of sharded dims, chlo
# ops, ...).
CORPUS_PARTITIONED = (
    "cond.mlir",
    "mlp_fwd_dp.mlir",
    "mlp_fwd_tp.mlir",
    "mlp_train.mlir",
    "remat_train.mlir",
    "shard_alike.mlir",
    "shard_map_collectives.mlir",
    "with_sharding_constraint.mlir",
)

# name -> (program, fuse_collectives)
HAND = {
    "matmul_tp": (MATMUL_TP, False),
    "mlp_dp": (MLP_DP, False),
    "elementwise_chain": (ELEMENTWISE_CHAIN, False),
    "elementwise_layouts": (ELEMENTWISE_LAYOUTS, False),
    "pad_elementwise": (PAD_ELEMENTWISE, False),
    "pad_dot": (PAD_DOT, False),
    "reduce_scatter_fused": (REDUCE_SCATTER, True),
    "reduce_scatter": (REDUCE_SCATTER, False),
    "dot_resharded": (DOT_RESHARDED, False),
    "permute_whole_axes": (PERMUTE_WHOLE_AXES, False),
    "permute_sub_axes": (PERMUTE_SUB_AXES, False),
}
