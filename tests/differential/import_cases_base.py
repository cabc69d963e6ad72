"""Own small inputs for the import passes, keyed by pass name (ids -> MLIR text): first part.

`import_cases` adds more cases to these tables and is what the tests import.

Each input is run through Shardy's pass of the same name and through ours; the printed
modules must be equal. Written for this suite (not taken from Shardy's lit tests).
"""

MESH = 'sdy.mesh @mesh = <["a"=2, "b"=4]>\n'

SYMBOL_DCE = {
    "unused_private_func_and_mesh": MESH
    + """
sdy.mesh @unused = <["x"=8]>
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
func.func private @dead(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
func.func @public_unused(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
""",
    "call_chain_kept_dead_chain_erased": """
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = call @a(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
func.func private @a(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = call @b(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
func.func private @b(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
func.func private @c(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = call @d(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
func.func private @d(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
""",
    "custom_call_computation_and_string": """
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = stablehlo.custom_call @foo(%arg0) {called_computations = [@body], mhlo.frontend_attributes = {note = "@dead"}} : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
func.func private @body(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
func.func private @dead(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
""",
    "call_nested_in_while": """
func.func @main(%arg0: tensor<8xf32>, %arg1: tensor<i32>) -> tensor<8xf32> {
  %0:2 = stablehlo.while(%iterArg = %arg0, %iterArg_0 = %arg1) : tensor<8xf32>, tensor<i32>
    cond {
    %1 = stablehlo.compare LT, %iterArg_0, %iterArg_0 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  } do {
    %1 = func.call @step(%iterArg) : (tensor<8xf32>) -> tensor<8xf32>
    stablehlo.return %1, %iterArg_0 : tensor<8xf32>, tensor<i32>
  }
  return %0#0 : tensor<8xf32>
}
func.func private @step(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
func.func private @decl(%arg0: tensor<8xf32>) -> tensor<8xf32>
""",
}

LIFT_INLINED_MESHES = {
    "dedup_and_lift": """
sdy.mesh @m1 = <["a"=2, "b"=4]>
sdy.mesh @m2 = <["a"=2, "b"=4]>
sdy.mesh @m3 = <["c"=8]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m2, [{"a"}, {}]>}, %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<mesh<["a"=2, "b"=4]>, [{}, {"b"}]>}) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<mesh<["x"=8]>, [{"x"}, {}]>}) {
  %0 = stablehlo.add %arg0, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@m3, [{"c"}, {}]>]>} : tensor<8x8xf32>
  %1 = sdy.sharding_constraint %0 <mesh<["x"=8]>, [{}, {"x"}]> : tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}
""",
    "name_clashes_maximal_and_empty": """
sdy.mesh @mesh = <["a"=4]>
sdy.mesh @maximal_mesh_2 = <["z"=4]>
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<mesh<["y"=4]>, [{"y"}]>}) -> tensor<8xf32> {
  %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<mesh<[], device_ids=[2]>, []>]>} : tensor<8xf32>
  %1 = stablehlo.abs %0 {sdy.sharding = #sdy.sharding_per_value<[<mesh<["w"=4]>, [{"w"}]>]>} : tensor<8xf32>
  %2 = stablehlo.abs %1 {sdy.sharding = #sdy.sharding_per_value<[<mesh<[]>, [{}]>]>} : tensor<8xf32>
  %3 = stablehlo.abs %2 {sdy.sharding = #sdy.sharding_per_value<[<mesh<["y"=4]>, [{}]>]>} : tensor<8xf32>
  return %3 : tensor<8xf32>
}
""",
    "no_mesh_op_device_ids": """
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<mesh<["a"=2, "b"=2], device_ids=[3, 2, 1, 0]>, [{"a"}]>}) -> tensor<8xf32> {
  %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<mesh<["a"=2, "b"=2]>, [{"b"}]>]>} : tensor<8xf32>
  return %0 : tensor<8xf32>
}
""",
    "data_flow_and_manual_ops": """
sdy.mesh @mesh = <["a"=2, "b"=4]> {stablehlo.mesh = {axes = [{name = "a", size = 2 : i64}, {name = "b", size = 4 : i64}]}}
sdy.mesh @dup = <["a"=2, "b"=4]>
func.func @main(%arg0: tensor<8xf32>, %arg1: tensor<i32>) -> tensor<8xf32> {
  %0:2 = stablehlo.while(%iterArg = %arg0, %iterArg_0 = %arg1) : tensor<8xf32>, tensor<i32> attributes {sdy.sharding = #sdy.sharding_per_value<[<mesh<["q"=8]>, [{"q"}]>, <@dup, []>]>}
    cond {
    %2 = stablehlo.compare LT, %iterArg_0, %iterArg_0 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %2 : tensor<i1>
  } do {
    stablehlo.return %iterArg, %iterArg_0 : tensor<8xf32>, tensor<i32>
  }
  %1 = sdy.manual_computation(%0#0) in_shardings=[<@dup, [{"a"}]>] out_shardings=[<@dup, [{"a"}]>] manual_axes={"a"} (%arg2: tensor<4xf32>) {
    sdy.return %arg2 : tensor<4xf32>
  } : (tensor<8xf32>) -> tensor<8xf32>
  return %1 : tensor<8xf32>
}
""",
}

REMOVE_SIZE_ONE_AXES = {
    "nothing_to_do": MESH
    + """
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}]>}) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
""",
    "dims_replicated_unreduced_priorities": """
sdy.mesh @mesh = <["a"=1, "b"=4, "c"=1, "d"=2]>
sdy.mesh @other = <["x"=8]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", "b"}p1, {"c"}p2], replicated={"d"}>}) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"c", ?}p0, {}], unreduced={"a", "d"}>}) {
  %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@other, [{"x"}, {}]>]>} : tensor<8x8xf32>
  %1 = stablehlo.abs %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"b":(1)2, "a"}, {"d", "c"}]>]>} : tensor<8x8xf32>
  %2 = sdy.sharding_constraint %1 <@mesh, [{"a"}, {"c", "d"}]> : tensor<8x8xf32>
  %3 = stablehlo.abs %2 {sdy.sharding = #sdy.sharding_per_value<[<mesh<["a"=1, "e"=8]>, [{"a", "e"}, {}]>]>} : tensor<8x8xf32>
  return %3 : tensor<8x8xf32>
}
""",
    "manual_computation": """
sdy.mesh @mesh = <["a"=1, "b"=4]>
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"b", "a"}]>] out_shardings=[<@mesh, [{"b"}], replicated={"a"}>] manual_axes={"b"} (%arg1: tensor<2xf32>) {
    sdy.return %arg1 : tensor<2xf32>
  } : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
""",
}

PROPAGATE_SHARDING_FROM_FUNC_TO_CALL = {
    "fill_open_keep_existing_skip_unsharded": MESH
    + """
sdy.mesh @maximal = <[], device_ids=[0]>
func.func @main(%arg0: tensor<8xf32>) -> (tensor<8xf32>, tensor<8x4xf32>) {
  %0:2 = call @two(%arg0) : (tensor<8xf32>) -> (tensor<8xf32>, tensor<8x4xf32>)
  %1:2 = call @two(%0#0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}]>, <@mesh, [{}, {}]>]>} : (tensor<8xf32>) -> (tensor<8xf32>, tensor<8x4xf32>)
  %2 = call @plain(%1#0) : (tensor<8xf32>) -> tensor<8xf32>
  %3 = call @on_maximal(%2) : (tensor<8xf32>) -> tensor<8xf32>
  return %3, %1#1 : tensor<8xf32>, tensor<8x4xf32>
}
func.func private @two(%arg0: tensor<8xf32>) -> (tensor<8xf32>, tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {"b"}]>}) {
  %0 = stablehlo.broadcast_in_dim %arg0, dims = [0] : (tensor<8xf32>) -> tensor<8x4xf32>
  %1 = call @plain(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
  return %1, %0 : tensor<8xf32>, tensor<8x4xf32>
}
func.func private @plain(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
func.func private @on_maximal(%arg0: tensor<8xf32>) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@maximal, []>}) {
  return %arg0 : tensor<8xf32>
}
""",
}

CONSTANT_OR_SCALAR_SPLITTER = {
    "constant_two_users": MESH
    + """
func.func @main(%arg0: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %0 = stablehlo.constant {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a"}, {}]>]>} dense<1.0> : tensor<8x8xf32>
  %1 = stablehlo.add %arg0, %0 : tensor<8x8xf32>
  %2 = stablehlo.multiply %0, %1 : tensor<8x8xf32>
  return %1, %2 : tensor<8x8xf32>, tensor<8x8xf32>
}
""",
    "scalar_broadcast_and_chain": """
func.func @main(%arg0: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<64xf32>) {
  %c = stablehlo.constant dense<2.0> : tensor<f32>
  %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<8x8xf32>
  %1 = stablehlo.add %arg0, %0 : tensor<8x8xf32>
  %2 = stablehlo.multiply %1, %0 : tensor<8x8xf32>
  %3 = stablehlo.iota dim = 0 : tensor<8x8xf32>
  %4 = stablehlo.add %3, %3 : tensor<8x8xf32>
  %5 = stablehlo.reshape %4 : (tensor<8x8xf32>) -> tensor<64xf32>
  %6 = stablehlo.slice %4 [0:4, 0:8] : (tensor<8x8xf32>) -> tensor<4x8xf32>
  %7 = stablehlo.reshape %6 : (tensor<4x8xf32>) -> tensor<32xf32>
  %8 = stablehlo.concatenate %7, %7, dim = 0 : (tensor<32xf32>, tensor<32xf32>) -> tensor<64xf32>
  %9 = stablehlo.add %5, %8 : tensor<64xf32>
  %10 = stablehlo.add %9, %5 : tensor<64xf32>
  %11 = stablehlo.add %2, %4 : tensor<8x8xf32>
  return %11, %10 : tensor<8x8xf32>, tensor<64xf32>
}
""",
    "returned_constant_and_constraint_user": MESH
    + """
func.func @main(%arg0: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %0 = stablehlo.constant dense<1.0> : tensor<8xf32>
  %1 = sdy.sharding_constraint %0 <@mesh, [{"a"}]> : tensor<8xf32>
  %2 = stablehlo.add %arg0, %0 : tensor<8xf32>
  return %0, %1, %2 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}
""",
    "sharding_group_users": """
func.func @main(%arg0: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %0 = stablehlo.constant dense<1.0> : tensor<8xf32>
  sdy.sharding_group %0 group_id=0 : tensor<8xf32>
  %1 = stablehlo.negate %0 : tensor<8xf32>
  sdy.sharding_group %1 group_id=1 : tensor<8xf32>
  %2 = stablehlo.add %arg0, %1 : tensor<8xf32>
  %3 = stablehlo.subtract %arg0, %1 : tensor<8xf32>
  %4 = stablehlo.constant dense<3.0> : tensor<8xf32>
  sdy.sharding_group %4 group_id=2 : tensor<8xf32>
  return %2, %3 : tensor<8xf32>, tensor<8xf32>
}
""",
    "constant_calls_and_named_computations": """
func.func @main(%arg0: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %0 = call @make(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
  %1 = call @const() : () -> tensor<8xf32>
  %2 = sdy.named_computation<"nc">() () {
    %5 = stablehlo.constant dense<1.0> : tensor<8xf32>
    %6 = stablehlo.abs %5 : tensor<8xf32>
    sdy.return %6 : tensor<8xf32>
  } : () -> tensor<8xf32>
  %3 = stablehlo.add %1, %2 : tensor<8xf32>
  %4 = stablehlo.add %3, %0 : tensor<8xf32>
  %7 = stablehlo.multiply %1, %2 : tensor<8xf32>
  %8 = stablehlo.multiply %4, %7 : tensor<8xf32>
  return %8, %0 : tensor<8xf32>, tensor<8xf32>
}
func.func private @const() -> tensor<8xf32> {
  %0 = stablehlo.iota dim = 0 : tensor<8xf32>
  %1 = stablehlo.negate %0 : tensor<8xf32>
  return %1 : tensor<8xf32>
}
func.func private @make(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = stablehlo.constant dense<1.0> : tensor<8xf32>
  %1 = stablehlo.add %arg0, %0 : tensor<8xf32>
  %2 = stablehlo.multiply %1, %0 : tensor<8xf32>
  return %2 : tensor<8xf32>
}
""",
    "constants_in_while_body": """
func.func @main(%arg0: tensor<8xf32>, %arg1: tensor<i32>) -> tensor<8xf32> {
  %c = stablehlo.constant dense<1.0> : tensor<8xf32>
  %0:2 = stablehlo.while(%iterArg = %arg0, %iterArg_0 = %arg1) : tensor<8xf32>, tensor<i32>
    cond {
    %c1 = stablehlo.constant dense<4> : tensor<i32>
    %1 = stablehlo.compare LT, %iterArg_0, %c1 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  } do {
    %1 = stablehlo.add %iterArg, %c : tensor<8xf32>
    %2 = stablehlo.multiply %1, %c : tensor<8xf32>
    stablehlo.return %2, %iterArg_0 : tensor<8xf32>, tensor<i32>
  }
  return %0#0 : tensor<8xf32>
}
""",
}

MANUAL_AXES_CLEANUP = {
    "sort_and_add_unused": """
sdy.mesh @mesh = <["a"=2, "b"=2, "c"=4]>
func.func @main(%arg0: tensor<8x8xf32>, %arg1: tensor<8xf32>) -> tensor<8x8xf32> {
  %0 = sdy.manual_computation(%arg0, %arg1) in_shardings=[<@mesh, [{"c"}, {"a"}]>, <@mesh, [{"c", "b"}]>] out_shardings=[<@mesh, [{"c"}, {"a"}], replicated={"b"}>] manual_axes={"c", "a"} (%arg2: tensor<2x4xf32>, %arg3: tensor<2xf32>) {
    sdy.return %arg2 : tensor<2x4xf32>
  } : (tensor<8x8xf32>, tensor<8xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
""",
    "sub_axis_use_and_token": """
sdy.mesh @mesh = <["a"=4, "b"=2]>
func.func @main(%arg0: tensor<8xf32>, %arg1: !stablehlo.token) -> tensor<8xf32> {
  %0:2 = sdy.manual_computation(%arg0, %arg1) in_shardings=[<@mesh, [{"b", "a":(1)2}]>, <@mesh, []>] out_shardings=[<@mesh, [{"b"}]>, <@mesh, []>] manual_axes={"b"} (%arg2: tensor<4xf32>, %arg3: !stablehlo.token) {
    sdy.return %arg2, %arg3 : tensor<4xf32>, !stablehlo.token
  } : (tensor<8xf32>, !stablehlo.token) -> (tensor<8xf32>, !stablehlo.token)
  return %0#0 : tensor<8xf32>
}
""",
    "no_shardings_empty_body": """
sdy.mesh @mesh = <["a"=4, "b"=2]>
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  sdy.manual_computation() in_shardings=[] out_shardings=[] manual_axes={} () {
    sdy.return
  } : () -> ()
  return %arg0 : tensor<8xf32>
}
""",
}

_WHILE = """
func.func @main(%arg0: tensor<8xf32>, %arg1: tensor<i32>, %arg2: !stablehlo.token) -> (tensor<8xf32>, tensor<8xf32>) {
  %0:3 = stablehlo.while(%iterArg = %arg0, %iterArg_0 = %arg1, %t = %arg2) : tensor<8xf32>, tensor<i32>, !stablehlo.token attributes {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a"}]>, <@mesh, []>, <@mesh, []>]>}
    cond {
    %3 = stablehlo.compare LT, %iterArg_0, %iterArg_0 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %3 : tensor<i1>
  } do {
    %3 = stablehlo.add %iterArg, %iterArg : tensor<8xf32>
    stablehlo.return %3, %iterArg_0, %t : tensor<8xf32>, tensor<i32>, !stablehlo.token
  }
  %1:2 = stablehlo.optimization_barrier %0#0, %arg0 : tensor<8xf32>, tensor<8xf32>
  %2 = stablehlo.add %1#0, %0#0 : tensor<8xf32>
  return %2, %1#1 : tensor<8xf32>, tensor<8xf32>
}
"""

ADD_DATA_FLOW_EDGES = {
    "while_barrier_token": MESH + _WHILE,
    "case_manual_named": MESH
    + """
func.func @main(%arg0: tensor<i32>, %arg1: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %0:2 = "stablehlo.case"(%arg0) ({
    stablehlo.return %arg1, %arg1 : tensor<8xf32>, tensor<8xf32>
  }, {
    %3 = stablehlo.negate %arg1 : tensor<8xf32>
    stablehlo.return %3, %arg1 : tensor<8xf32>, tensor<8xf32>
  }) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}]>, <@mesh, [{"b"}]>]>} : (tensor<i32>) -> (tensor<8xf32>, tensor<8xf32>)
  %1 = sdy.manual_computation(%0#0, %0#1) in_shardings=[<@mesh, [{"a", "b"}]>, <@mesh, [{"a"}]>] out_shardings=[<@mesh, [{"a"}]>] manual_axes={"a"} (%arg2: tensor<4xf32>, %arg3: tensor<4xf32>) {
    %5 = stablehlo.add %arg2, %arg3 : tensor<4xf32>
    sdy.return %5 : tensor<4xf32>
  } : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %2:2 = sdy.named_computation<"nc">(%1, %0#1) in_shardings=[<@mesh, [{"b"}]>, <@mesh, [{}]>] (%arg4: tensor<8xf32>, %arg5: tensor<8xf32>) {
    %7 = stablehlo.add %arg4, %arg5 : tensor<8xf32>
    sdy.return %7, %arg4 : tensor<8xf32>, tensor<8xf32>
  } : (tensor<8xf32>, tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>)
  return %2#0, %2#1 : tensor<8xf32>, tensor<8xf32>
}
""",
}

_DIAMOND = """
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = call @foo(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
  %1 = call @bar(%0) : (tensor<8xf32>) -> tensor<8xf32>
  %2 = call @foo(%1) : (tensor<8xf32>) -> tensor<8xf32>
  return %2 : tensor<8xf32>
}
func.func private @baz(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = stablehlo.negate %arg0 : tensor<8xf32>
  return %0 : tensor<8xf32>
}
func.func private @foo(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = call @baz(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
func.func private @bar(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = call @baz(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
  %1 = call @baz_0(%0) : (tensor<8xf32>) -> tensor<8xf32>
  return %1 : tensor<8xf32>
}
func.func private @baz_0(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
"""

_SHARDED_CALLS = (
    MESH
    + """
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"b"}]>}) {
  %0 = call @foo(%arg0, %arg0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a"}, {}]>]>, mhlo.frontend_attributes = {x = "y"}} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %1 = call @bar(%0) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}
func.func private @foo(%arg0: tensor<8x8xf32>, %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"b"}]>}) -> tensor<8x8xf32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<8x8xf32>
  %1 = call @bar(%0) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}
func.func private @bar(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = stablehlo.negate %arg0 : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
"""
)

FLATTEN_CALL_GRAPH = {
    "diamond_with_name_clash": _DIAMOND,
    "sharded_calls": _SHARDED_CALLS,
}

IMPORT_FUNC_CALLS = {
    "sharded_calls_multiple_callers": _SHARDED_CALLS,
    "diamond": _DIAMOND,
}

PRE_ORDER_FUNCS = {
    "diamond": _DIAMOND,
    "sharded_calls": _SHARDED_CALLS,
    "declaration_and_uncalled": """
func.func private @decl(%arg0: tensor<8xf32>) -> tensor<8xf32>
func.func private @leaf(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = call @decl(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
func.func @other(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = call @leaf(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = call @mid(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
  %1 = call @leaf(%0) : (tensor<8xf32>) -> tensor<8xf32>
  return %1 : tensor<8xf32>
}
func.func private @mid(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = call @leaf(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
""",
}

ADD_FUNC_DATA_FLOW_EDGES = {
    "sharded_calls": _SHARDED_CALLS,
    "token_args_and_results": MESH
    + """
func.func @main(%arg0: tensor<8xf32>, %arg1: !stablehlo.token) -> tensor<8xf32> {
  %0:2 = call @f(%arg0, %arg1) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a"}]>, <@mesh, []>]>} : (tensor<8xf32>, !stablehlo.token) -> (tensor<8xf32>, !stablehlo.token)
  return %0#0 : tensor<8xf32>
}
func.func private @f(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b"}]>}, %arg1: !stablehlo.token) -> (tensor<8xf32>, !stablehlo.token) {
  return %arg0, %arg1 : tensor<8xf32>, !stablehlo.token
}
""",
    "single_func_not_named_main": MESH
    + """
func.func @entry(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b"}]>}) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
""",
}

APPLY_SHARDING_CONSTRAINTS = {
    "closed_open_sharded_conflicting": MESH
    + """
func.func @main(%arg0: tensor<8x8xf32>, %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) {
  %0 = stablehlo.add %arg0, %arg0 : tensor<8x8xf32>
  %1 = sdy.sharding_constraint %0 <@mesh, [{"a"}, {"b"}]> : tensor<8x8xf32>
  %2 = stablehlo.multiply %arg0, %arg0 : tensor<8x8xf32>
  %3 = sdy.sharding_constraint %2 <@mesh, [{"a", ?}, {}]> : tensor<8x8xf32>
  %4 = sdy.sharding_constraint %arg1 <@mesh, [{"a"}, {}]> : tensor<8x8xf32>
  %5 = stablehlo.subtract %arg0, %arg0 : tensor<8x8xf32>
  %6 = sdy.sharding_constraint %5 <@mesh, [{"a"}, {}]> : tensor<8x8xf32>
  %7 = sdy.sharding_constraint %5 <@mesh, [{"b"}, {}]> : tensor<8x8xf32>
  %8 = stablehlo.add %1, %3 : tensor<8x8xf32>
  %9 = stablehlo.add %4, %6 : tensor<8x8xf32>
  return %8, %9, %7 : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
}
""",
    "func_arg_and_same_sharding_twice": MESH
    + """
func.func @main(%arg0: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %0 = sdy.sharding_constraint %arg0 <@mesh, [{"a"}, {"b"}]> : tensor<8x8xf32>
  %1 = sdy.sharding_constraint %arg0 <@mesh, [{"a"}, {"b"}]> : tensor<8x8xf32>
  return %0, %1 : tensor<8x8xf32>, tensor<8x8xf32>
}
""",
    "chain_of_constraints": MESH
    + """
func.func @main(%arg0: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) {
  %0 = stablehlo.add %arg0, %arg0 : tensor<8x8xf32>
  %1 = stablehlo.negate %0 : tensor<8x8xf32>
  %2 = sdy.sharding_constraint %0 <@mesh, [{"a"}, {}]> : tensor<8x8xf32>
  %3 = sdy.sharding_constraint %2 <@mesh, [{}, {"b"}]> : tensor<8x8xf32>
  %4 = sdy.sharding_constraint %3 <@mesh, [{"a", "b"}, {}]> : tensor<8x8xf32>
  %5 = stablehlo.abs %0 : tensor<8x8xf32>
  %6 = stablehlo.multiply %4, %0 : tensor<8x8xf32>
  return %0, %5, %6 : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
}
""",
    "manual_computation_operands": MESH
    + """
func.func @main(%arg0: tensor<8xf32>, %arg1: tensor<8xf32>) -> tensor<8xf32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<8xf32>
  %1 = sdy.manual_computation(%0, %arg1) in_shardings=[<@mesh, [{"a"}]>, <@mesh, [{"a", ?}]>] out_shardings=[<@mesh, [{"a"}]>] manual_axes={"a"} (%arg2: tensor<4xf32>, %arg3: tensor<4xf32>) {
    %2 = stablehlo.add %arg2, %arg3 : tensor<4xf32>
    sdy.return %2 : tensor<4xf32>
  } : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %1 : tensor<8xf32>
}
""",
}

# Inputs that need data-flow edges first: run as "sdy-add-data-flow-edges" then the pass.
APPLY_SHARDING_CONSTRAINTS_AFTER_EDGES = {
    "while_result_and_block_arg": MESH
    + """
func.func @main(%arg0: tensor<8xf32>, %arg1: tensor<i32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %0:2 = stablehlo.while(%iterArg = %arg0, %iterArg_0 = %arg1) : tensor<8xf32>, tensor<i32>
    cond {
    %3 = stablehlo.compare LT, %iterArg_0, %iterArg_0 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %3 : tensor<i1>
  } do {
    %3 = sdy.sharding_constraint %iterArg <@mesh, [{"b"}]> : tensor<8xf32>
    %4 = stablehlo.add %3, %iterArg : tensor<8xf32>
    stablehlo.return %4, %iterArg_0 : tensor<8xf32>, tensor<i32>
  }
  %1 = stablehlo.negate %0#0 : tensor<8xf32>
  %2 = sdy.sharding_constraint %0#0 <@mesh, [{"a"}], unreduced={"b"}> : tensor<8xf32>
  return %1, %2 : tensor<8xf32>, tensor<8xf32>
}
""",
}

SHARDING_GROUP_IMPORT = {
    "leader_is_first_union_argument": """
func.func @main(%arg0: tensor<8xf32>, %arg1: tensor<8xf32>, %arg2: tensor<8xf32>) -> tensor<8xf32> {
  sdy.sharding_group %arg0 group_id=5 : tensor<8xf32>
  sdy.sharding_group %arg1 group_id=3 : tensor<8xf32>
  sdy.sharding_group %arg2 group_id=5 : tensor<8xf32>
  sdy.sharding_group %arg2 group_id=1 : tensor<8xf32>
  return %arg0 : tensor<8xf32>
}
""",
    "unify_reindex_dedup": """
func.func @main(%arg0: tensor<8xf32>, %arg1: tensor<8xf32>) -> tensor<8xf32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<8xf32>
  sdy.sharding_group %arg0 group_id=7 : tensor<8xf32>
  sdy.sharding_group %arg0 group_id=3 : tensor<8xf32>
  sdy.sharding_group %arg1 group_id=5 : tensor<8xf32>
  sdy.sharding_group %0 group_id=5 : tensor<8xf32>
  sdy.sharding_group %0 group_id=9 : tensor<8xf32>
  sdy.sharding_group %arg1 group_id=9 : tensor<8xf32>
  sdy.sharding_group %arg1 group_id=9 : tensor<8xf32>
  sdy.sharding_group %arg1 group_id=11 : tensor<8xf32>
  sdy.sharding_group %0 group_id=1 : tensor<8xf32>
  return %0 : tensor<8xf32>
}
""",
    "leader_order_differs_from_first_seen": """
func.func @main(%arg0: tensor<8xf32>, %arg1: tensor<8xf32>) -> tensor<8xf32> {
  sdy.sharding_group %arg0 group_id=4 : tensor<8xf32>
  sdy.sharding_group %arg1 group_id=6 : tensor<8xf32>
  sdy.sharding_group %arg1 group_id=2 : tensor<8xf32>
  sdy.sharding_group %arg0 group_id=0 : tensor<8xf32>
  return %arg0 : tensor<8xf32>
}
""",
}

IMPORT_PIPELINE = {
    "everything_small": """
sdy.mesh @m = <["a"=2, "b"=1, "c"=4]>
sdy.mesh @m_copy = <["a"=2, "b"=1, "c"=4]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m_copy, [{"a", "b"}, {}]>}, %arg1: tensor<i32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %c = stablehlo.constant dense<1.0> : tensor<8x8xf32>
  %0 = stablehlo.add %arg0, %c : tensor<8x8xf32>
  %1 = call @f(%0) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %2 = sdy.sharding_constraint %1 <mesh<["a"=2, "b"=1, "c"=4]>, [{"c"}, {}]> : tensor<8x8xf32>
  %3:2 = stablehlo.while(%iterArg = %2, %iterArg_0 = %arg1) : tensor<8x8xf32>, tensor<i32>
    cond {
    %5 = stablehlo.compare LT, %iterArg_0, %iterArg_0 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %5 : tensor<i1>
  } do {
    %5 = stablehlo.multiply %iterArg, %c : tensor<8x8xf32>
    stablehlo.return %5, %iterArg_0 : tensor<8x8xf32>, tensor<i32>
  }
  %4 = sdy.manual_computation(%3#0) in_shardings=[<@m, [{"c", "a"}, {}]>] out_shardings=[<@m, [{"c", "a"}, {}]>] manual_axes={"c", "a"} (%arg2: tensor<1x8xf32>) {
    sdy.return %arg2 : tensor<1x8xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  sdy.sharding_group %0 group_id=3 : tensor<8x8xf32>
  sdy.sharding_group %2 group_id=3 : tensor<8x8xf32>
  return %4, %c : tensor<8x8xf32>, tensor<8x8xf32>
}
func.func private @f(%arg0: tensor<8x8xf32>) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{"a"}, {"b"}]>}) {
  return %arg0 : tensor<8x8xf32>
}
func.func private @unused(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
  return %arg0 : tensor<8x8xf32>
}
""",
}
