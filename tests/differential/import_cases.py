"""Own small inputs for the import passes, keyed by pass name (ids -> MLIR text).

Each input is run through Shardy's pass of the same name and through ours; the printed
modules must be equal. Written for this suite (not taken from Shardy's lit tests). The first
cases live in `import_cases_base`; this module adds the rest to the same tables.
"""

from tests.differential.import_cases_base import (
    _DIAMOND,
    ADD_DATA_FLOW_EDGES,
    ADD_FUNC_DATA_FLOW_EDGES,
    APPLY_SHARDING_CONSTRAINTS,
    APPLY_SHARDING_CONSTRAINTS_AFTER_EDGES,
    CONSTANT_OR_SCALAR_SPLITTER,
    FLATTEN_CALL_GRAPH,
    IMPORT_FUNC_CALLS,
    IMPORT_PIPELINE,
    LIFT_INLINED_MESHES,
    MANUAL_AXES_CLEANUP,
    MESH,
    PRE_ORDER_FUNCS,
    PROPAGATE_SHARDING_FROM_FUNC_TO_CALL,
    REMOVE_SIZE_ONE_AXES,
    SHARDING_GROUP_IMPORT,
    SYMBOL_DCE,
)

__all__ = [
    "MESH",
    "SYMBOL_DCE",
    "LIFT_INLINED_MESHES",
    "REMOVE_SIZE_ONE_AXES",
    "PROPAGATE_SHARDING_FROM_FUNC_TO_CALL",
    "CONSTANT_OR_SCALAR_SPLITTER",
    "MANUAL_AXES_CLEANUP",
    "ADD_DATA_FLOW_EDGES",
    "FLATTEN_CALL_GRAPH",
    "IMPORT_FUNC_CALLS",
    "PRE_ORDER_FUNCS",
    "ADD_FUNC_DATA_FLOW_EDGES",
    "APPLY_SHARDING_CONSTRAINTS",
    "APPLY_SHARDING_CONSTRAINTS_AFTER_EDGES",
    "SHARDING_GROUP_IMPORT",
    "IMPORT_PIPELINE",
]
# -- more cases, per pass ---------------------------------------------------------------------

SYMBOL_DCE.update(
    {
        "self_recursive_private_unused": """
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
func.func private @loop(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = call @loop(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
func.func private @"quoted-name"(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
""",
        "quoted_symbol_kept": """
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = call @"a-b"(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
func.func private @"a-b"(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
func.func private @a(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
""",
    }
)

LIFT_INLINED_MESHES.update(
    {
        "meshes_after_funcs_and_existing_empty_name": """
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<mesh<[]>, [{}]>}) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<mesh<["a"=4], device_ids=[3, 2, 1, 0]>, [{"a"}]>}) {
  %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<mesh<["a"=4]>, [{"a"}]>]>} : tensor<8xf32>
  return %0 : tensor<8xf32>
}
sdy.mesh @empty_mesh = <["q"=4]>
sdy.mesh @m = <["a"=4]>
sdy.mesh @m_again = <["a"=4]>
""",
        "only_identical_meshes": """
sdy.mesh @x = <["a"=2]>
sdy.mesh @y = <["a"=2]>
sdy.mesh @z = <["a"=2], device_ids=[1, 0]>
sdy.mesh @w = <["a"=2], device_ids=[1, 0]>
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@y, [{"a"}]>}) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@w, [{"a"}]>}) {
  return %arg0 : tensor<8xf32>
}
""",
    }
)

REMOVE_SIZE_ONE_AXES.update(
    {
        "inline_only_size_one_is_ignored": MESH
        + """
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<mesh<["x"=1, "y"=2]>, [{"x", "y"}]>}) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
""",
        "data_flow_ops_and_results": """
sdy.mesh @mesh = <["a"=2, "one"=1]>
func.func @main(%arg0: tensor<8xf32>, %arg1: tensor<i32>) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"one", "a"}]>}) {
  %0:2 = stablehlo.while(%iterArg = %arg0, %iterArg_0 = %arg1) : tensor<8xf32>, tensor<i32> attributes {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a", "one"}]>, <@mesh, [], replicated={"one"}>]>}
    cond {
    %2 = stablehlo.compare LT, %iterArg_0, %iterArg_0 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %2 : tensor<i1>
  } do {
    stablehlo.return %iterArg, %iterArg_0 : tensor<8xf32>, tensor<i32>
  }
  %1:2 = "stablehlo.optimization_barrier"(%0#0, %arg0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"one"}p3]>, <@mesh, [{"one", ?}p3]>]>} : (tensor<8xf32>, tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>)
  return %1#0 : tensor<8xf32>
}
""",
    }
)

CONSTANT_OR_SCALAR_SPLITTER.update(
    {
        "constant_used_inside_regions_and_by_call": """
func.func @main(%arg0: tensor<8xf32>, %arg1: tensor<i32>) -> (tensor<8xf32>, tensor<f32>) {
  %c = stablehlo.constant dense<1.0> : tensor<8xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.broadcast_in_dim %c, dims = [0] : (tensor<8xf32>) -> tensor<8x8xf32>
  %1 = stablehlo.reduce(%0 init: %z) applies stablehlo.add across dimensions = [1] : (tensor<8x8xf32>, tensor<f32>) -> tensor<8xf32>
  %2 = call @user(%c, %1) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %3 = stablehlo.reduce(%c init: %z) applies stablehlo.add across dimensions = [0] : (tensor<8xf32>, tensor<f32>) -> tensor<f32>
  %4 = stablehlo.add %2, %c : tensor<8xf32>
  return %4, %3 : tensor<8xf32>, tensor<f32>
}
func.func private @user(%arg0: tensor<8xf32>, %arg1: tensor<8xf32>) -> tensor<8xf32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<8xf32>
  return %0 : tensor<8xf32>
}
""",
        "constant_func_called_twice": """
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = call @k() : () -> tensor<8xf32>
  %1 = call @k() : () -> tensor<8xf32>
  %2 = stablehlo.add %0, %arg0 : tensor<8xf32>
  %3 = stablehlo.add %2, %1 : tensor<8xf32>
  %4 = stablehlo.multiply %3, %0 : tensor<8xf32>
  return %4 : tensor<8xf32>
}
func.func private @k() -> tensor<8xf32> {
  %0 = call @k2() : () -> tensor<8xf32>
  %1 = stablehlo.negate %0 : tensor<8xf32>
  return %1 : tensor<8xf32>
}
func.func private @k2() -> tensor<8xf32> {
  %0 = stablehlo.iota dim = 0 : tensor<8xf32>
  return %0 : tensor<8xf32>
}
""",
        "broadcast_of_scalar_argument_and_nonconst_ops": """
func.func @main(%arg0: tensor<f32>, %arg1: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %0 = stablehlo.broadcast_in_dim %arg0, dims = [] : (tensor<f32>) -> tensor<8x8xf32>
  %1 = stablehlo.add %arg1, %0 : tensor<8x8xf32>
  %2 = stablehlo.dot_general %0, %1, contracting_dims = [1] x [0] : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %c = stablehlo.constant dense<1.0> : tensor<8x8xf32>
  %3 = stablehlo.transpose %c, dims = [1, 0] : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %4 = stablehlo.add %3, %2 : tensor<8x8xf32>
  %5 = stablehlo.add %3, %0 : tensor<8x8xf32>
  return %4, %5 : tensor<8x8xf32>, tensor<8x8xf32>
}
""",
        "nested_named_computations": """
func.func @main(%arg0: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %0 = sdy.named_computation<"outer">(%arg0) (%arg1: tensor<8xf32>) {
    %c = stablehlo.constant dense<2.0> : tensor<8xf32>
    %2 = sdy.named_computation<"inner">() () {
      %c2 = stablehlo.constant dense<3.0> : tensor<8xf32>
      sdy.return %c2 : tensor<8xf32>
    } : () -> tensor<8xf32>
    %3 = stablehlo.add %arg1, %c : tensor<8xf32>
    %4 = stablehlo.add %3, %2 : tensor<8xf32>
    %5 = stablehlo.multiply %4, %c : tensor<8xf32>
    %6 = stablehlo.multiply %5, %2 : tensor<8xf32>
    sdy.return %6 : tensor<8xf32>
  } : (tensor<8xf32>) -> tensor<8xf32>
  %1 = sdy.named_computation<"outer">(%0) (%arg1: tensor<8xf32>) {
    sdy.return %arg1 : tensor<8xf32>
  } : (tensor<8xf32>) -> tensor<8xf32>
  return %0, %1 : tensor<8xf32>, tensor<8xf32>
}
""",
    }
)

MANUAL_AXES_CLEANUP.update(
    {
        "inline_mesh_and_nested": """
sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"a"}]>] out_shardings=[<@mesh, [{"a"}]>] manual_axes={"a"} (%arg1: tensor<4xf32>) {
    %1 = sdy.manual_computation(%arg1) in_shardings=[<@mesh, [{}]>] out_shardings=[<@mesh, [{}], replicated={"b"}>] manual_axes={"b"} (%arg2: tensor<4xf32>) {
      sdy.return %arg2 : tensor<4xf32>
    } : (tensor<4xf32>) -> tensor<4xf32>
    sdy.return %1 : tensor<4xf32>
  } : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
""",
    }
)

ADD_DATA_FLOW_EDGES.update(
    {
        "nested_while_and_case_token": MESH
        + """
func.func @main(%arg0: tensor<8xf32>, %arg1: tensor<i32>, %arg2: !stablehlo.token) -> (tensor<8xf32>, !stablehlo.token) {
  %0:2 = stablehlo.while(%iterArg = %arg0, %iterArg_0 = %arg1) : tensor<8xf32>, tensor<i32>
    cond {
    %2 = stablehlo.compare LT, %iterArg_0, %iterArg_0 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %2 : tensor<i1>
  } do {
    %2:2 = stablehlo.while(%a = %iterArg, %b = %iterArg_0) : tensor<8xf32>, tensor<i32> attributes {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"b"}]>, <@mesh, []>]>}
      cond {
      %3 = stablehlo.compare LT, %b, %b : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %3 : tensor<i1>
    } do {
      %3 = stablehlo.negate %a : tensor<8xf32>
      stablehlo.return %3, %b : tensor<8xf32>, tensor<i32>
    }
    stablehlo.return %2#0, %iterArg_0 : tensor<8xf32>, tensor<i32>
  }
  %1:2 = "stablehlo.case"(%arg1) ({
    stablehlo.return %0#0, %arg2 : tensor<8xf32>, !stablehlo.token
  }, {
    stablehlo.return %arg0, %arg2 : tensor<8xf32>, !stablehlo.token
  }) : (tensor<i32>) -> (tensor<8xf32>, !stablehlo.token)
  return %1#0, %1#1 : tensor<8xf32>, !stablehlo.token
}
""",
    }
)

FLATTEN_CALL_GRAPH.update(
    {
        "deep_chain_called_three_times_in_regions": """
func.func @main(%arg0: tensor<8xf32>, %arg1: tensor<i32>) -> tensor<8xf32> {
  %0 = call @a(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
  %1:2 = stablehlo.while(%iterArg = %0, %iterArg_0 = %arg1) : tensor<8xf32>, tensor<i32>
    cond {
    %3 = stablehlo.compare LT, %iterArg_0, %iterArg_0 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %3 : tensor<i1>
  } do {
    %3 = func.call @a(%iterArg) : (tensor<8xf32>) -> tensor<8xf32>
    stablehlo.return %3, %iterArg_0 : tensor<8xf32>, tensor<i32>
  }
  %2 = call @a(%1#0) : (tensor<8xf32>) -> tensor<8xf32>
  return %2 : tensor<8xf32>
}
func.func private @a(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = call @b(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
  %1 = call @c(%0) : (tensor<8xf32>) -> tensor<8xf32>
  return %1 : tensor<8xf32>
}
func.func private @b(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = call @c(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
func.func private @c(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
""",
        "already_flattened_names": """
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = call @f(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
  %1 = call @f_0(%0) : (tensor<8xf32>) -> tensor<8xf32>
  %2 = call @f(%1) : (tensor<8xf32>) -> tensor<8xf32>
  return %2 : tensor<8xf32>
}
func.func private @f(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
func.func private @f_0(%arg0: tensor<8xf32>) -> tensor<8xf32> attributes {sdy.original_func_name = "f"} {
  return %arg0 : tensor<8xf32>
}
""",
    }
)

IMPORT_FUNC_CALLS.update(
    {
        "execution_thread_token_and_nested": MESH
        + """
func.func @main(%arg0: tensor<8xf32>, %arg1: !stablehlo.token) -> (tensor<8xf32>, !stablehlo.token) {
  %0:2 = call @f(%arg0, %arg1) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a"}]>, <@mesh, []>]>} : (tensor<8xf32>, !stablehlo.token) -> (tensor<8xf32>, !stablehlo.token)
  return %0#0, %0#1 : tensor<8xf32>, !stablehlo.token
}
func.func private @f(%arg0: tensor<8xf32>, %arg1: !stablehlo.token) -> (tensor<8xf32>, !stablehlo.token) attributes {execution_thread = "side"} {
  %0 = call @g(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
  return %0, %arg1 : tensor<8xf32>, !stablehlo.token
}
func.func private @g(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b"}]>}) -> tensor<8xf32> {
  %0 = stablehlo.negate %arg0 : tensor<8xf32>
  return %0 : tensor<8xf32>
}
""",
        "flattened_first": _DIAMOND.replace("@foo(%1)", "@foo_1(%1)").replace(
            "func.func private @bar(",
            "func.func private @foo_1(%arg0: tensor<8xf32>) -> tensor<8xf32> "
            'attributes {sdy.original_func_name = "foo"} {\n'
            "  %0 = stablehlo.abs %arg0 : tensor<8xf32>\n  return %0 : tensor<8xf32>\n}\n"
            "func.func private @bar(",
        ),
    }
)

APPLY_SHARDING_CONSTRAINTS.update(
    {
        "chain_uses_in_other_blocks_and_return": MESH
        + """
func.func @main(%arg0: tensor<8xf32>, %arg1: tensor<i32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %0 = stablehlo.negate %arg0 : tensor<8xf32>
  %1 = sdy.sharding_constraint %0 <@mesh, [{"a"}]> : tensor<8xf32>
  %2 = sdy.sharding_constraint %1 <@mesh, [{"b"}]> : tensor<8xf32>
  %3:2 = stablehlo.while(%iterArg = %2, %iterArg_0 = %arg1) : tensor<8xf32>, tensor<i32>
    cond {
    %5 = stablehlo.compare LT, %iterArg_0, %iterArg_0 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %5 : tensor<i1>
  } do {
    %5 = stablehlo.add %iterArg, %0 : tensor<8xf32>
    stablehlo.return %5, %iterArg_0 : tensor<8xf32>, tensor<i32>
  }
  %4 = stablehlo.add %3#0, %0 : tensor<8xf32>
  return %4, %0 : tensor<8xf32>, tensor<8xf32>
}
""",
        "manual_computation_func_arg_and_conflict": MESH
        + """
func.func @main(%arg0: tensor<8xf32>, %arg1: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %0 = sdy.manual_computation(%arg0, %arg1) in_shardings=[<@mesh, [{"a"}]>, <@mesh, [{"a"}]>] out_shardings=[<@mesh, [{"a"}]>] manual_axes={"a"} (%arg2: tensor<4xf32>, %arg3: tensor<4xf32>) {
    %2 = stablehlo.add %arg2, %arg3 : tensor<4xf32>
    sdy.return %2 : tensor<4xf32>
  } : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %1 = sdy.sharding_constraint %arg1 <@mesh, [{"b"}]> : tensor<8xf32>
  return %0, %1 : tensor<8xf32>, tensor<8xf32>
}
""",
        "scalar_block_arg_input": MESH
        + """
func.func @main(%arg0: tensor<8xf32>) -> tensor<f32> {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.reduce(%arg0 init: %z) across dimensions = [0] : (tensor<8xf32>, tensor<f32>) -> tensor<f32>
    reducer(%a: tensor<f32>, %b: tensor<f32>) {
    %1 = sdy.sharding_constraint %a <@mesh, []> : tensor<f32>
    %2 = stablehlo.add %1, %b : tensor<f32>
    stablehlo.return %2 : tensor<f32>
  }
  return %0 : tensor<f32>
}
""",
    }
)

APPLY_SHARDING_CONSTRAINTS_AFTER_EDGES.update(
    {
        "manual_computation_operand_is_edge": MESH
        + """
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0:2 = stablehlo.optimization_barrier %arg0, %arg0 : tensor<8xf32>, tensor<8xf32>
  %1 = sdy.manual_computation(%0#0) in_shardings=[<@mesh, [{"a"}], unreduced={"b"}>] out_shardings=[<@mesh, [{"a"}]>] manual_axes={"a"} (%arg2: tensor<4xf32>) {
    sdy.return %arg2 : tensor<4xf32>
  } : (tensor<8xf32>) -> tensor<8xf32>
  %2 = stablehlo.add %1, %0#1 : tensor<8xf32>
  %3 = sdy.sharding_constraint %0#1 <@mesh, [{"b"}]> : tensor<8xf32>
  %4 = stablehlo.add %2, %3 : tensor<8xf32>
  return %4 : tensor<8xf32>
}
""",
        "named_computation_block_arg": MESH
        + """
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = sdy.named_computation<"f">(%arg0) (%arg1: tensor<8xf32>) {
    %1 = stablehlo.negate %arg1 : tensor<8xf32>
    %2 = sdy.sharding_constraint %arg1 <@mesh, [{"a"}]> : tensor<8xf32>
    %3 = stablehlo.add %1, %2 : tensor<8xf32>
    sdy.return %3 : tensor<8xf32>
  } : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
""",
    }
)

ADD_FUNC_DATA_FLOW_EDGES.update(
    {
        "calls_in_regions_no_arg_func": MESH
        + """
func.func @main(%arg0: tensor<8xf32>, %arg1: tensor<i32>) -> tensor<8xf32> {
  %0:2 = stablehlo.while(%iterArg = %arg0, %iterArg_0 = %arg1) : tensor<8xf32>, tensor<i32>
    cond {
    %2 = stablehlo.compare LT, %iterArg_0, %iterArg_0 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %2 : tensor<i1>
  } do {
    %2 = func.call @k() : () -> tensor<8xf32>
    %3 = stablehlo.add %2, %iterArg : tensor<8xf32>
    stablehlo.return %3, %iterArg_0 : tensor<8xf32>, tensor<i32>
  }
  %1 = call @k() : () -> tensor<8xf32>
  %4 = stablehlo.add %0#0, %1 : tensor<8xf32>
  return %4 : tensor<8xf32>
}
func.func private @k() -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}]>}) {
  %0 = stablehlo.iota dim = 0 : tensor<8xf32>
  return %0 : tensor<8xf32>
}
""",
    }
)

LIFT_INLINED_MESHES["replica_groups_naming_a_duplicate"] = """
sdy.mesh @m = <["x"=2, "y"=2]>
sdy.mesh @m2 = <["x"=2, "y"=2]>
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = "stablehlo.all_reduce"(%arg0) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %2 = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %2 : tensor<f32>
  }) {replica_groups = #stablehlo.replica_group_mesh_axes<mesh = @m2, axes = ["x"]>} : (tensor<8xf32>) -> tensor<8xf32>
  %1 = "stablehlo.all_gather"(%0) {all_gather_dim = 0 : i64, replica_groups = #stablehlo.replica_group_mesh_axes<mesh = @m, axes = ["y"]>} : (tensor<8xf32>) -> tensor<16xf32>
  %3 = stablehlo.slice %1 [0:8] : (tensor<16xf32>) -> tensor<8xf32>
  return %3 : tensor<8xf32>
}
"""

# The callee returns an argument it also uses: the new sdy.return's uses are the newest.
IMPORT_FUNC_CALLS["callee_returns_its_argument"] = """
func.func @main(%arg0: tensor<8xf32>) -> (tensor<8xf32>, tensor<8x4xf32>) {
  %0:2 = call @f(%arg0) : (tensor<8xf32>) -> (tensor<8xf32>, tensor<8x4xf32>)
  return %0#0, %0#1 : tensor<8xf32>, tensor<8x4xf32>
}
func.func private @f(%arg0: tensor<8xf32>) -> (tensor<8xf32>, tensor<8x4xf32>) {
  %0 = stablehlo.broadcast_in_dim %arg0, dims = [0] : (tensor<8xf32>) -> tensor<8x4xf32>
  return %arg0, %0 : tensor<8xf32>, tensor<8x4xf32>
}
"""

PROPAGATE_SHARDING_FROM_FUNC_TO_CALL.update(
    {
        "calls_in_regions_and_nested_funcs": MESH
        + """
func.func @main(%arg0: tensor<8xf32>, %arg1: tensor<i32>) -> tensor<8xf32> {
  %0:2 = stablehlo.while(%iterArg = %arg0, %iterArg_0 = %arg1) : tensor<8xf32>, tensor<i32>
    cond {
    %2 = stablehlo.compare LT, %iterArg_0, %iterArg_0 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %2 : tensor<i1>
  } do {
    %2 = func.call @outer(%iterArg) : (tensor<8xf32>) -> tensor<8xf32>
    stablehlo.return %2, %iterArg_0 : tensor<8xf32>, tensor<i32>
  }
  %1 = call @outer(%0#0) : (tensor<8xf32>) -> tensor<8xf32>
  return %1 : tensor<8xf32>
}
func.func private @outer(%arg0: tensor<8xf32>) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b", ?}p2]>}) {
  %0 = call @inner(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
func.func private @inner(%arg0: tensor<8xf32>) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<mesh<["z"=2]>, [{"z"}]>}) {
  return %arg0 : tensor<8xf32>
}
""",
    }
)

IMPORT_PIPELINE.update(
    {
        "groups_manual_and_named": """
sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8x8xf32>, %arg1: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %c = stablehlo.constant dense<1.0> : tensor<f32>
  %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<8x8xf32>
  %1 = stablehlo.add %arg0, %0 : tensor<8x8xf32>
  %2 = stablehlo.add %arg1, %0 : tensor<8x8xf32>
  sdy.sharding_group %1 group_id=4 : tensor<8x8xf32>
  sdy.sharding_group %2 group_id=4 : tensor<8x8xf32>
  sdy.sharding_group %arg0 group_id=2 : tensor<8x8xf32>
  sdy.sharding_group %1 group_id=2 : tensor<8x8xf32>
  %3 = sdy.manual_computation(%1) in_shardings=[<@mesh, [{"b", "a"}, {}]>] out_shardings=[<@mesh, [{"b", "a"}, {}]>] manual_axes={"b", "a"} (%arg2: tensor<2x8xf32>) {
    %5 = stablehlo.multiply %arg2, %arg2 : tensor<2x8xf32>
    sdy.return %5 : tensor<2x8xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %4 = sdy.sharding_constraint %2 <@mesh, [{}, {"a"}]> : tensor<8x8xf32>
  return %3, %4 : tensor<8x8xf32>, tensor<8x8xf32>
}
""",
    }
)
