"""Small global programs, one per op-level construct where jaxlib 0.10.2's Shardy stops or
partitions wrongly and `shardwise partition` goes further (`tests/check/test_partition_beyond_ops.py`).

Each shards the dim the construct works along; the value says what the reference chain does
with it: "rejects" (an error, or a crash), "wrong" (a program `shardwise check` finds
different).
"""

from __future__ import annotations

__all__ = ["BEYOND"]

BEYOND: dict[str, tuple[str, str]] = {}

BEYOND["slice"] = (
    """\
sdy.mesh @mesh = <["x"=4]>
func.func @main(%x: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) {
  %0 = stablehlo.slice %x [0:8, 2:10] : (tensor<8x16xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
""",
    "rejects",
)

BEYOND["slice_strided"] = (
    """\
sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%x: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> (tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) {
  %0 = stablehlo.slice %x [1:8:2, 1:16:4] : (tensor<8x16xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
""",
    "rejects",
)

BEYOND["concat_slices"] = (
    """\
sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%a: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) {
  %0 = stablehlo.slice %a [0:8, 0:8] : (tensor<8x16xf32>) -> tensor<8x8xf32>
  %1 = stablehlo.slice %a [0:8, 8:16] : (tensor<8x16xf32>) -> tensor<8x8xf32>
  %2 = stablehlo.negate %1 : tensor<8x8xf32>
  %3 = stablehlo.concatenate %2, %0, dim = 1 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x16xf32>
  return %3 : tensor<8x16xf32>
}
""",
    "rejects",
)

BEYOND["dynamic_slice"] = (
    """\
sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%x: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}, %i: tensor<i32>, %j: tensor<i32>) -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, tensor<2x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) {
  %c = stablehlo.constant dense<3> : tensor<i32>
  %j3 = stablehlo.remainder %j, %c : tensor<i32>
  %0 = stablehlo.dynamic_slice %x, %i, %j3, sizes = [8, 4] : (tensor<8x16xf32>, tensor<i32>, tensor<i32>) -> tensor<8x4xf32>
  %1 = stablehlo.dynamic_slice %x, %j3, %i, sizes = [2, 16] : (tensor<8x16xf32>, tensor<i32>, tensor<i32>) -> tensor<2x16xf32>
  return %0, %1 : tensor<8x4xf32>, tensor<2x16xf32>
}
""",
    "rejects",
)

BEYOND["dynamic_update_slice"] = (
    """\
sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%x: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}, %u: tensor<8x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %v: tensor<3x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}, %j: tensor<i32>) -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) {
  %c = stablehlo.constant dense<7> : tensor<i32>
  %z = stablehlo.constant dense<0> : tensor<i32>
  %j7 = stablehlo.remainder %j, %c : tensor<i32>
  %0 = stablehlo.dynamic_update_slice %x, %u, %z, %j7 : (tensor<8x16xf32>, tensor<8x2xf32>, tensor<i32>, tensor<i32>) -> tensor<8x16xf32>
  %1 = stablehlo.dynamic_update_slice %0, %v, %j7, %z : (tensor<8x16xf32>, tensor<3x16xf32>, tensor<i32>, tensor<i32>) -> tensor<8x16xf32>
  return %1 : tensor<8x16xf32>
}
""",
    "wrong",
)

BEYOND["gather"] = (
    """\
sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%t: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}, %i: tensor<4x6xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<4x6x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}, {}]>}) {
  %c = stablehlo.constant dense<16> : tensor<4x6xi32>
  %m = stablehlo.remainder %i, %c : tensor<4x6xi32>
  %idx = stablehlo.reshape %m : (tensor<4x6xi32>) -> tensor<4x6x1xi32>
  %0 = "stablehlo.gather"(%t, %idx) <{dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 8>}> : (tensor<16x8xf32>, tensor<4x6x1xi32>) -> tensor<4x6x8xf32>
  return %0 : tensor<4x6x8xf32>
}
""",
    "rejects",
)

BEYOND["top_k"] = (
    """\
sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%x: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> (tensor<8x3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, tensor<8x3xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
  %v, %i = chlo.top_k(%x, k = 3) : tensor<8x16xf32> -> (tensor<8x3xf32>, tensor<8x3xi32>)
  return %v, %i : tensor<8x3xf32>, tensor<8x3xi32>
}
""",
    "rejects",
)

BEYOND["erf_inv"] = (
    """\
sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%x: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) {
  %0 = stablehlo.tanh %x : tensor<8x16xf32>
  %1 = chlo.erf_inv %0 : tensor<8x16xf32> -> tensor<8x16xf32>
  %2 = chlo.lgamma %1 : tensor<8x16xf32> -> tensor<8x16xf32>
  return %2 : tensor<8x16xf32>
}
""",
    "rejects",
)

BEYOND["reduce_window"] = (
    """\
sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%x: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) {
  %init = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %0 = "stablehlo.reduce_window"(%x, %init) <{window_dimensions = array<i64: 1, 3>, window_strides = array<i64: 1, 2>, padding = dense<[[0, 0], [1, 0]]> : tensor<2x2xi64>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %m = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }) : (tensor<8x16xf32>, tensor<f32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
""",
    "rejects",
)

BEYOND["pad"] = (
    """\
sdy.mesh @mesh = <["x"=4]>
func.func @main(%x: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) -> (tensor<8x20xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) {
  %z = stablehlo.constant dense<1.5> : tensor<f32>
  %0 = stablehlo.pad %x, %z, low = [0, 1], high = [0, 3], interior = [0, 0] : (tensor<8x16xf32>, tensor<f32>) -> tensor<8x20xf32>
  return %0 : tensor<8x20xf32>
}
""",
    "wrong",
)

BEYOND["reverse"] = (
    """\
sdy.mesh @mesh = <["x"=4]>
func.func @main(%x: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) {
  %0 = stablehlo.reverse %x, dims = [1] : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}
""",
    "wrong",
)

BEYOND["conv"] = (
    """\
sdy.mesh @mesh = <["x"=4]>
func.func @main(%x: tensor<1x16x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}, {}]>}, %w: tensor<3x2x4xf32>) -> (tensor<1x16x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}, {}]>}) {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f], window = {stride = [1], pad = [[1, 1]], rhs_dilate = [1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x16x2xf32>, tensor<3x2x4xf32>) -> tensor<1x16x4xf32>
  return %0 : tensor<1x16x4xf32>
}
""",
    "wrong",
)
BEYOND["reduce_max"] = (
    """\
sdy.mesh @mesh = <["x"=4]>
func.func @main(%x: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<8xf32>) {
  %m = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %1 = stablehlo.reduce(%x init: %m) applies stablehlo.maximum across dimensions = [0] : (tensor<8x8xf32>, tensor<f32>) -> tensor<8xf32>
  return %1 : tensor<8xf32>
}
""",
    "wrong",
)

BEYOND["non_divisible_reduce"] = (
    """\
sdy.mesh @mesh = <["x"=4]>
func.func @main(%x: tensor<6x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<8xf32>, tensor<8xf32>) {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %e = stablehlo.exponential %x : tensor<6x8xf32>
  %0 = stablehlo.reduce(%e init: %z) applies stablehlo.add across dimensions = [0] : (tensor<6x8xf32>, tensor<f32>) -> tensor<8xf32>
  %m = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %1 = stablehlo.reduce(%x init: %m) applies stablehlo.maximum across dimensions = [0] : (tensor<6x8xf32>, tensor<f32>) -> tensor<8xf32>
  return %0, %1 : tensor<8xf32>, tensor<8xf32>
}
""",
    "wrong",
)

BEYOND["non_divisible_elementwise"] = (
    """\
sdy.mesh @mesh = <["x"=4]>
func.func @main(%x: tensor<6x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<6x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
  %e = stablehlo.exponential %x : tensor<6x8xf32>
  return %e : tensor<6x8xf32>
}
""",
    "rejects",
)

BEYOND["argmax"] = (
    """\
sdy.mesh @mesh = <["x"=4]>
func.func @main(%x: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<8xf32>, tensor<8xf32>) {
  %m = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %1 = stablehlo.reduce(%x init: %m) applies stablehlo.maximum across dimensions = [0] : (tensor<8x8xf32>, tensor<f32>) -> tensor<8xf32>
  %2 = stablehlo.negate %1 : tensor<8xf32>
  %i = stablehlo.iota dim = 0 : tensor<8x8xi32>
  %z = stablehlo.constant dense<0> : tensor<i32>
  %3:2 = stablehlo.reduce(%x init: %m), (%i init: %z) across dimensions = [0] : (tensor<8x8xf32>, tensor<8x8xi32>, tensor<f32>, tensor<i32>) -> (tensor<8xf32>, tensor<8xi32>)
   reducer(%a: tensor<f32>, %c: tensor<f32>) (%b: tensor<i32>, %d: tensor<i32>)  {
    %g = stablehlo.compare GT, %a, %c : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %v = stablehlo.select %g, %a, %c : tensor<i1>, tensor<f32>
    %w = stablehlo.select %g, %b, %d : tensor<i1>, tensor<i32>
    stablehlo.return %v, %w : tensor<f32>, tensor<i32>
  }
  return %2, %3#0 : tensor<8xf32>, tensor<8xf32>
}
""",
    "wrong",
)
