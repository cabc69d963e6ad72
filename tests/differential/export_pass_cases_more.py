"""More inputs for `test_export_passes.py`: canonicalization patterns and edge cases.

Appends to `export_pass_cases.CASES` (import this module to get the full table).
"""

from __future__ import annotations

from tests.differential.export_pass_cases import (
    CALL_RESHARDS,
    CASES,
    MERGER,
    MESHES,
    NAMED,
    SINK,
    UNFLATTEN,
    Case,
    _func,
    add,
)

__all__ = ["CASES", "Case"]

# -- canonicalize{enable-patterns=sdy-collective|sdy-reshard} ---------------------------------

CANON = "canonicalize"
COLLECTIVE = {"enable-patterns": "sdy-collective"}
RESHARD = {"enable-patterns": "sdy-reshard"}
CANON_MESH = 'sdy.mesh @mesh = <["x"=2, "y"=4, "z"=2]>\n'


def _canon_func(body: str, result: str = "%r") -> str:
    return (
        CANON_MESH
        + """func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>},
                %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) -> tensor<8x8xf32> {
"""
        + body
        + f"\n  return {result} : tensor<8x8xf32>\n}}\n"
    )


CANON_NOOPS = _canon_func(
    """
  %0 = sdy.all_gather [{}, {}] %arg0 out_sharding=<@mesh, [{"x"}, {"y"}]> : tensor<8x8xf32>
  %1 = sdy.all_slice [{}, {}] %0 out_sharding=<@mesh, [{"x"}, {"y"}]> : tensor<8x8xf32>
  %2 = sdy.all_reduce {} %1 out_sharding=<@mesh, [{"x"}, {"y"}]> : tensor<8x8xf32>
  %3 = sdy.reduce_scatter [{}, {}] %2 out_sharding=<@mesh, [{"x"}, {"y"}]> : tensor<8x8xf32>
  %4 = sdy.collective_permute %3 out_sharding=<@mesh, [{"x", ?}, {"y"}]> : tensor<8x8xf32>
  %5 = sdy.collective_permute %4 out_sharding=<@mesh, [{"z"}, {"y"}]> : tensor<8x8xf32>
  %6 = sdy.all_gather [{"z"}, {}] %5 out_sharding=<@mesh, [{}, {"y"}]> : tensor<8x8xf32>
  %r = stablehlo.add %6, %4 : tensor<8x8xf32>"""
)
add(CANON, "noops", CANON_NOOPS, **COLLECTIVE)
add(CANON, "noops-reshard-label-only", CANON_NOOPS, **RESHARD)
add(
    CANON,
    "slice-of-gather",
    _canon_func(
        """
  %0 = sdy.all_gather [{"x"}, {"y"}] %arg0 out_sharding=<@mesh, [{}, {}]> : tensor<8x8xf32>
  %1 = sdy.all_slice [{"x"}, {"y"}] %0 out_sharding=<@mesh, [{"x"}, {"y"}]> : tensor<8x8xf32>
  %2 = sdy.all_gather [{"x"}, {}] %arg0 out_sharding=<@mesh, [{}, {"y"}]> : tensor<8x8xf32>
  %3 = sdy.all_slice [{}, {"x"}] %2 out_sharding=<@mesh, [{}, {"y", "x"}]> : tensor<8x8xf32>
  %4 = sdy.all_slice [{"x"}, {}] %2 out_sharding=<@mesh, [{"x"}, {"y"}]> : tensor<8x8xf32>
  %5 = stablehlo.add %1, %4 : tensor<8x8xf32>
  %r = stablehlo.add %5, %3 : tensor<8x8xf32>"""
    ),
    **COLLECTIVE,
)
add(
    CANON,
    "unreduced-round-trips",
    _canon_func(
        """
  %0 = sdy.replicated_to_unreduced {"z"} %arg0 out_sharding=<@mesh, [{"x"}, {"y"}], unreduced={"z"}> : tensor<8x8xf32>
  %1 = sdy.all_reduce {"z"} %0 out_sharding=<@mesh, [{"x"}, {"y"}]> : tensor<8x8xf32>
  %2 = sdy.sharded_to_unreduced [{"x"}, {"y"}] %1 out_sharding=<@mesh, [{}, {}], unreduced={"x", "y"}> : tensor<8x8xf32>
  %3 = sdy.all_reduce {"x", "y"} %2 out_sharding=<@mesh, [{}, {}]> : tensor<8x8xf32>
  %4 = sdy.sharded_to_unreduced [{}, {"y"}] %arg0 out_sharding=<@mesh, [{"x"}, {}], unreduced={"y"}> : tensor<8x8xf32>
  %5 = sdy.all_reduce {"y"} %4 out_sharding=<@mesh, [{"x"}, {}]> : tensor<8x8xf32>
  %6 = sdy.sharded_to_unreduced [{"x"}, {"y"}] %arg0 out_sharding=<@mesh, [{}, {}], unreduced={"x", "y"}> : tensor<8x8xf32>
  %7 = sdy.all_reduce {"x"} %6 out_sharding=<@mesh, [{}, {}], unreduced={"y"}> : tensor<8x8xf32>
  %8 = sdy.all_reduce {"y"} %7 out_sharding=<@mesh, [{}, {}]> : tensor<8x8xf32>
  %9 = stablehlo.add %3, %5 : tensor<8x8xf32>
  %r = stablehlo.add %9, %8 : tensor<8x8xf32>"""
    ),
    **COLLECTIVE,
)
add(
    CANON,
    "all-to-all",
    CANON_MESH
    + """func.func @main(%arg0: tensor<8x8x8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}, {"z"}, {}]>}) -> tensor<8x8x8x8xf32> {
  %0 = sdy.all_to_all [{"z"}: 2->3] %arg0 out_sharding=<@mesh, [{"x"}, {}, {}, {"z"}]> : tensor<8x8x8x8xf32>
  %1 = sdy.all_to_all [{"x"}: 0->1] %0 out_sharding=<@mesh, [{}, {"x"}, {}, {"z"}]> : tensor<8x8x8x8xf32>
  %2 = sdy.all_to_all [{"x"}: 1->2] %1 out_sharding=<@mesh, [{}, {}, {"x"}, {"z"}]> : tensor<8x8x8x8xf32>
  %3 = sdy.all_to_all [{"z"}: 3->0] %2 out_sharding=<@mesh, [{"z"}, {}, {"x"}, {}]> : tensor<8x8x8x8xf32>
  %4 = sdy.all_to_all [{"x"}: 0->1] %arg0 out_sharding=<@mesh, [{}, {"x"}, {"z"}, {}]> : tensor<8x8x8x8xf32>
  return %3 : tensor<8x8x8x8xf32>
}
""",
    **COLLECTIVE,
)
add(
    CANON,
    "reduce-scatter-fusion",
    """
sdy.mesh @mesh = <["x"=2, "y"=2, "z"=2, "w"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>},
                %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}) -> tensor<8x8xf32> {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}], unreduced={"y", "z"}>]>} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %1 = sdy.all_reduce {"y", "z"} %0 out_sharding=<@mesh, [{"x"}, {}]> : tensor<8x8xf32>
  %2 = sdy.all_slice [{"y"}, {"z"}] %1 out_sharding=<@mesh, [{"x", "y"}, {"z"}]> : tensor<8x8xf32>
  %3 = sdy.all_slice [{"y"}, {"z"}] %1 out_sharding=<@mesh, [{"x", "y"}, {"z"}]> : tensor<8x8xf32>
  %4 = sdy.all_reduce {"y"} %0 out_sharding=<@mesh, [{"x"}, {}], unreduced={"z"}> : tensor<8x8xf32>
  %5 = sdy.all_slice [{}, {"y", "w"}] %4 out_sharding=<@mesh, [{"x"}, {"y", "w"}], unreduced={"z"}> : tensor<8x8xf32>
  %6 = sdy.all_reduce {"y", "z"} %0 out_sharding=<@mesh, [{"x"}, {}]> : tensor<8x8xf32>
  %7 = sdy.all_slice [{"y"}, {}] %6 out_sharding=<@mesh, [{"x", "y"}, {}]> : tensor<8x8xf32>
  %8 = sdy.all_reduce {"y"} %0 out_sharding=<@mesh, [{"x"}, {}], unreduced={"z"}> : tensor<8x8xf32>
  %9 = sdy.all_slice [{"y"}, {}] %8 out_sharding=<@mesh, [{"x", "y"}, {}], unreduced={"z"}> : tensor<8x8xf32>
  %10 = sdy.all_slice [{}, {"y"}] %8 out_sharding=<@mesh, [{"x"}, {"y"}], unreduced={"z"}> : tensor<8x8xf32>
  %11 = sdy.all_reduce {"y"} %0 out_sharding=<@mesh, [{"x"}, {}], unreduced={"z"}> : tensor<8x8xf32>
  %12 = sdy.all_slice [{"w", "y"}, {}] %11 out_sharding=<@mesh, [{"x", "w", "y"}, {}], unreduced={"z"}> : tensor<8x8xf32>
  %13 = sdy.all_reduce {"y"} %0 out_sharding=<@mesh, [{"x"}, {}], unreduced={"z"}> : tensor<8x8xf32>
  %14 = sdy.all_slice [{"w"}, {}] %13 out_sharding=<@mesh, [{"x", "w"}, {}], unreduced={"z"}> : tensor<8x8xf32>
  %15 = sdy.all_slice [{"y"}, {}] %13 out_sharding=<@mesh, [{"x", "y"}, {}], unreduced={"z"}> : tensor<8x8xf32>
  %16 = stablehlo.add %2, %3 : tensor<8x8xf32>
  %17 = stablehlo.add %16, %5 : tensor<8x8xf32>
  %18 = stablehlo.add %17, %7 : tensor<8x8xf32>
  %19 = stablehlo.add %18, %9 : tensor<8x8xf32>
  %20 = stablehlo.add %19, %10 : tensor<8x8xf32>
  %21 = stablehlo.add %20, %12 : tensor<8x8xf32>
  %22 = stablehlo.add %21, %14 : tensor<8x8xf32>
  %23 = stablehlo.add %22, %15 : tensor<8x8xf32>
  return %23 : tensor<8x8xf32>
}
""",
    **COLLECTIVE,
)
CANON_RESHARDS = _canon_func(
    """
  %0 = stablehlo.negate %arg0 : tensor<8x8xf32>
  %1 = sdy.reshard %0 <@mesh, [{"x"}, {}]> : tensor<8x8xf32>
  %2 = sdy.reshard %1 <@mesh, [{}, {"y"}]> {foo = 1 : i32} : tensor<8x8xf32>
  %3 = sdy.reshard %2 <@mesh, [{"y"}, {}]> : tensor<8x8xf32>
  %4 = sdy.reshard %0 <@mesh, [{"y"}, {}]> : tensor<8x8xf32>
  %5 = sdy.reshard %4 <@mesh, [{"x"}, {}]> : tensor<8x8xf32>
  %6 = stablehlo.add %3, %4 : tensor<8x8xf32>
  %7 = sdy.reshard %0 <@mesh, [{"z"}, {}]> : tensor<8x8xf32>
  %r = stablehlo.add %6, %5 : tensor<8x8xf32>"""
)
add(CANON, "reshard-of-reshard", CANON_RESHARDS, **RESHARD)
add(CANON, "reshards-collective-label", CANON_RESHARDS, **COLLECTIVE)
CANON_CONSTANTS = (
    CANON_MESH
    + """func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> tensor<8x8xf32> {
  %0 = stablehlo.negate %arg0 : tensor<8x8xf32>
  %c0 = stablehlo.constant dense<1.0> : tensor<8x8xf32>
  %c1 = stablehlo.constant {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} dense<1.0> : tensor<8x8xf32>
  %c2 = stablehlo.constant dense<5.0> : tensor<8x8xf32>
  %i = stablehlo.constant dense<0> : tensor<i32>
  %1 = stablehlo.add %0, %c1 : tensor<8x8xf32>
  %w:2 = stablehlo.while(%iterArg = %1, %iterArg_0 = %i) : tensor<8x8xf32>, tensor<i32>
    cond {
    %c = stablehlo.constant dense<3> : tensor<i32>
    %r = stablehlo.compare LT, %iterArg_0, %c : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %r : tensor<i1>
  } do {
    %c = stablehlo.constant dense<1.0> : tensor<8x8xf32>
    %dead = stablehlo.abs %iterArg : tensor<8x8xf32>
    %2 = stablehlo.add %iterArg, %c : tensor<8x8xf32>
    stablehlo.return %2, %iterArg_0 : tensor<8x8xf32>, tensor<i32>
  }
  %3 = sdy.manual_computation(%w#0) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x"} (%a: tensor<4x8xf32>) {
    %d = stablehlo.abs %a : tensor<4x8xf32>
    %k = stablehlo.constant dense<2.0> : tensor<4x8xf32>
    %k2 = stablehlo.constant dense<2.0> : tensor<4x8xf32>
    %m = stablehlo.multiply %a, %k : tensor<4x8xf32>
    %m2 = stablehlo.multiply %m, %k2 : tensor<4x8xf32>
    sdy.return %m2 : tensor<4x8xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %4 = stablehlo.add %3, %c0 : tensor<8x8xf32>
  %5 = stablehlo.custom_call @sink(%c2) {has_side_effect = true} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %6 = sdy.constant dense<1.0> : tensor<8x8xf32>
  %7 = stablehlo.add %4, %6 : tensor<8x8xf32>
  return %7 : tensor<8x8xf32>
}
"""
)
add(CANON, "constants-and-dead-ops", CANON_CONSTANTS, **COLLECTIVE)

# -- edge cases --------------------------------------------------------------------------------

# (Aggressive propagation crashes the reference on inline meshes, so these edges get their
# shardings from the barrier itself via sdy-add-data-flow-edges.)
BARRIER_SHARDINGS = {
    "inline-mesh-edges": '<mesh<["q"=2]>, [{"q"}, {}]>, <mesh<["q"=2]>, [{}, {"q"}]>',
    "mixed-edges": '<mesh<["q"=2]>, [{"q"}, {}]>, <@mesh, [{}, {"y"}]>',
    "named-second-edge": '<mesh<["q"=2]>, [{"q"}, {}]>, <@m2, [{"a", ?}, {?}]>',
}
for edge_id, shardings in BARRIER_SHARDINGS.items():
    add(
        SINK,
        edge_id,
        _func(
            f"""
  %0:2 = stablehlo.optimization_barrier {{sdy.sharding = #sdy.sharding_per_value<[{shardings}]>}} %arg0, %arg1 : tensor<8x8xf32>, tensor<8x8xf32>
  %1 = stablehlo.add %0#0, %0#1 : tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
""",
            args="%arg0: tensor<8x8xf32>, %arg1: tensor<8x8xf32>",
        ),
        pre="sdy-add-data-flow-edges",
    )
add(
    SINK,
    "tokens-and-case",
    _func(
        """
  %t = stablehlo.after_all : !stablehlo.token
  %p = stablehlo.constant dense<1> : tensor<i32>
  %0:2 = "stablehlo.case"(%p) ({
    stablehlo.return %arg0, %t : tensor<8x8xf32>, !stablehlo.token
  }, {
    %1 = stablehlo.negate %arg0 : tensor<8x8xf32>
    stablehlo.return %1, %t : tensor<8x8xf32>, !stablehlo.token
  }) : (tensor<i32>) -> (tensor<8x8xf32>, !stablehlo.token)
  return %0#0 : tensor<8x8xf32>
""",
        args='%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}, {?}]>}',
    ),
    pre="sdy-add-data-flow-edges,sdy-aggressive-propagate",
)
add(
    CALL_RESHARDS,
    "inline-mesh-and-no-results",
    MESHES
    + """
func.func @main(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = call @foo(%arg0) {sdy.sharding = #sdy.sharding_per_value<[<mesh<["q"=2]>, [{}, {"q"}]>]>} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  call @bar(%0) : (tensor<8x8xf32>) -> ()
  %1 = call @foo(%0) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}
func.func private @foo(%arg0: tensor<8x8xf32>) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<mesh<["q"=2]>, [{"q"}, {}]>}) {
  return %arg0 : tensor<8x8xf32>
}
func.func private @bar(%arg0: tensor<8x8xf32>) {
  return
}
""",
)
add(
    NAMED,
    "inline-mesh-in-while",
    _func(
        """
  %c = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.while(%iterArg = %arg0, %iterArg_0 = %c) : tensor<8x8xf32>, tensor<i32>
    cond {
    %1 = stablehlo.compare LT, %iterArg_0, %iterArg_0 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  } do {
    %1 = sdy.named_computation<"body">(%iterArg) in_shardings=[<mesh<["q"=2]>, [{"q"}, {}]>] out_shardings=[<mesh<["q"=2]>, [{}, {"q"}]>] (%a: tensor<8x8xf32>) {
      %2 = stablehlo.negate %a : tensor<8x8xf32>
      sdy.return %2 : tensor<8x8xf32>
    } : (tensor<8x8xf32>) -> tensor<8x8xf32>
    stablehlo.return %1, %iterArg_0 : tensor<8x8xf32>, tensor<i32>
  }
  return %0#0 : tensor<8x8xf32>
"""
    ),
)
add(
    MERGER,
    "types-and-nesting",
    _func(
        """
  %c0 = stablehlo.constant dense<1.0> : tensor<8x8xf32>
  %c1 = stablehlo.constant dense<1.0> : tensor<8x8xf16>
  %s = stablehlo.constant dense<2.0> : tensor<f32>
  %b0 = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<8x8xf32>
  %b1 = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<8xf32>
  %b2 = stablehlo.broadcast_in_dim %b1, dims = [0] : (tensor<8xf32>) -> tensor<8x8xf32>
  %b3 = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<8x8xf32>
  %0 = stablehlo.convert %c1 : (tensor<8x8xf16>) -> tensor<8x8xf32>
  %1 = stablehlo.add %c0, %0 : tensor<8x8xf32>
  %2 = stablehlo.add %b0, %b2 : tensor<8x8xf32>
  %3 = stablehlo.add %1, %2 : tensor<8x8xf32>
  %4 = stablehlo.add %3, %b3 : tensor<8x8xf32>
  %5 = sdy.manual_computation(%4) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x"} (%a: tensor<4x8xf32>) {
    %k = stablehlo.constant dense<1.0> : tensor<4x8xf32>
    %k2 = stablehlo.constant dense<1.0> : tensor<4x8xf32>
    %m = stablehlo.add %a, %k : tensor<4x8xf32>
    %m2 = stablehlo.add %m, %k2 : tensor<4x8xf32>
    sdy.return %m2 : tensor<4x8xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %5 : tensor<8x8xf32>
"""
    ),
)
add(
    UNFLATTEN,
    "calls-in-regions",
    MESHES
    + """
func.func @main(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = sdy.named_computation<"n">(%arg0) (%a: tensor<8x8xf32>) {
    %1 = func.call @f_0(%a) : (tensor<8x8xf32>) -> tensor<8x8xf32>
    sdy.return %1 : tensor<8x8xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %2 = call @f(%0) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %2 : tensor<8x8xf32>
}
func.func private @f(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> attributes {sdy.original_func_name = "f"} {
  return %arg0 : tensor<8x8xf32>
}
func.func private @f_0(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> attributes {sdy.original_func_name = "f"} {
  %0 = call @f_1(%arg0) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
func.func private @f_1(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> attributes {sdy.original_func_name = "f"} {
  return %arg0 : tensor<8x8xf32>
}
""",
)
add(
    CANON,
    "reshard-inner-two-uses-and-named",
    _canon_func(
        """
  %0 = sdy.reshard %arg0 <@mesh, [{"y"}, {}]> : tensor<8x8xf32>
  %1 = sdy.reshard %0 <@mesh, [{"z"}, {}]> : tensor<8x8xf32>
  %2 = sdy.reshard %0 <@mesh, [{}, {"z"}]> : tensor<8x8xf32>
  %3 = sdy.named_computation<"n">(%1) (%a: tensor<8x8xf32>) {
    %c = stablehlo.constant dense<1.0> : tensor<8x8xf32>
    %4 = sdy.reshard %a <@mesh, [{"x"}, {}]> : tensor<8x8xf32>
    %5 = sdy.reshard %4 <@mesh, [{}, {"x"}]> : tensor<8x8xf32>
    %6 = stablehlo.add %5, %c : tensor<8x8xf32>
    sdy.return %6 : tensor<8x8xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %r = stablehlo.add %3, %2 : tensor<8x8xf32>"""
    ),
    **RESHARD,
)

SINK_FUNC = "sdy-sink-func-data-flow-edges"
add(
    SINK_FUNC,
    "edge-without-sharding",
    MESHES
    + """
func.func @main(%arg0: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %0:2 = call @foo(%arg0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}], replicated={"y"}>, <@mesh, [{}, {"z"}]>]>} : (tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>)
  %1 = sdy.func_data_flow_edge %0#0 : tensor<8x8xf32>
  %2 = sdy.func_data_flow_edge %0#1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y", ?}, {?}]>]>} : tensor<8x8xf32>
  return %1, %2 : tensor<8x8xf32>, tensor<8x8xf32>
}
func.func private @foo(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m2, [{"a"}, {}]>}) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %0 = sdy.func_data_flow_edge %arg0 : tensor<8x8xf32>
  %1 = stablehlo.negate %0 : tensor<8x8xf32>
  return %1, %0 : tensor<8x8xf32>, tensor<8x8xf32>
}
""",
)
add(
    CALL_RESHARDS,
    "maximal-callee-results",
    MESHES
    + """
func.func @main(%arg0: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %0:2 = call @foo(%arg0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>, <@mesh, [{}, {}]>]>} : (tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>)
  %1 = stablehlo.add %0#0, %0#1 : tensor<8x8xf32>
  %2 = stablehlo.multiply %0#0, %1 : tensor<8x8xf32>
  return %1, %2 : tensor<8x8xf32>, tensor<8x8xf32>
}
func.func private @foo(%arg0: tensor<8x8xf32>) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@maximal, []>}, tensor<8x8xf32>) {
  return %arg0, %arg0 : tensor<8x8xf32>, tensor<8x8xf32>
}
""",
)
add(
    CALL_RESHARDS,
    "nested-call-many-uses",
    MESHES
    + """
func.func @main(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = sdy.named_computation<"n">(%arg0) (%a: tensor<8x8xf32>) {
    %1:2 = func.call @foo(%a) : (tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>)
    %2 = stablehlo.add %1#0, %1#1 : tensor<8x8xf32>
    %3 = stablehlo.add %2, %1#0 : tensor<8x8xf32>
    %4 = stablehlo.add %3, %1#1 : tensor<8x8xf32>
    sdy.return %4 : tensor<8x8xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
func.func private @foo(%arg0: tensor<8x8xf32>) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y", ?}]>}) {
  return %arg0, %arg0 : tensor<8x8xf32>, tensor<8x8xf32>
}
""",
)
