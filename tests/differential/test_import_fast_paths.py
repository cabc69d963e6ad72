"""The fast paths of `symbol-dce` and `sdy-lift-inlined-meshes` against Shardy's passes.

`symbol-dce` does not read the properties of common StableHLO ops (their inherent attributes
cannot name a symbol) and `sdy-lift-inlined-meshes` skips its walk when no sharding has an
inlined mesh and no mesh is a duplicate. Each case puts the one thing that matters where a
wrong fast path would miss it; the expected module is Shardy's output for the same text.
"""

from __future__ import annotations

import pytest

from shardwise.io.mlir import load_text, write_text
from shardwise.io.use_lists import our_use_lists, run_pass_with_use_lists
from shardwise.passes import run_pass as run_our_pass

_F = """
func.func private @{name}(%arg0: tensor<8xf32>) -> tensor<8xf32> {{
  return %arg0 : tensor<8xf32>
}}
"""

SYMBOL_DCE = {
    # A discardable attribute of an op whose properties are not read still keeps @kept alive.
    "ref_in_discardable_attr_of_skipped_op": """
func.func @main(%arg0: tensor<8xf32>) -> tensor<8x8xf32> {
  %0 = stablehlo.broadcast_in_dim %arg0, dims = [0] {my.fn = @kept} : (tensor<8xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
"""
    + _F.format(name="kept")
    + _F.format(name="dead"),
    # A call nested in the body of an op whose properties are not read (reduce).
    "call_in_region_of_skipped_op": """
func.func @main(%arg0: tensor<8xf32>, %arg1: tensor<f32>) -> tensor<f32> {
  %0 = stablehlo.reduce(%arg0 init: %arg1) across dimensions = [0] : (tensor<8xf32>, tensor<f32>) -> tensor<f32>
   reducer(%a: tensor<f32>, %b: tensor<f32>) {
    %1 = func.call @add(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    stablehlo.return %1 : tensor<f32>
  }
  return %0 : tensor<f32>
}
func.func private @add(%a: tensor<f32>, %b: tensor<f32>) -> tensor<f32> {
  %0 = stablehlo.add %a, %b : tensor<f32>
  return %0 : tensor<f32>
}
"""
    + _F.format(name="dead"),
    # A reference in a func's argument attributes (an array of dictionaries) and in a nested
    # dictionary of a discardable attribute; the string "@dead" is no reference.
    "refs_in_arg_attrs_and_nested_dict": """
func.func @main(%arg0: tensor<8xf32> {my.fn = @in_arg_attrs}) -> tensor<8xf32> {
  %0 = stablehlo.negate %arg0 {my.dict = {inner = [@in_dict], note = "@dead"}} : tensor<8xf32>
  return %0 : tensor<8xf32>
}
"""
    + _F.format(name="in_arg_attrs")
    + _F.format(name="in_dict")
    + _F.format(name="dead"),
    # Private funcs kept only through a chain that starts in a custom call's properties-free
    # discardable list and goes through a private func's own call.
    "chain_through_called_computations": """
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = stablehlo.constant {my.fn = @first} dense<1.0> : tensor<8xf32>
  %1 = stablehlo.custom_call @target(%arg0, %0) {called_computations = [@second]} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %1 : tensor<8xf32>
}
func.func private @first(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = call @third(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
"""
    + _F.format(name="second")
    + _F.format(name="third")
    + _F.format(name="dead"),
}

_MESH = 'sdy.mesh @mesh = <["a"=2, "b"=4]>\n'

LIFT_INLINED_MESHES = {
    # Nothing to lift: the walk is skipped, the mesh still gets its ``stablehlo.mesh``.
    "nothing_to_lift": _MESH
    + """
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}]>}) -> tensor<8xf32> {
  %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"b"}]>]>} : tensor<8xf32>
  return %0 : tensor<8xf32>
}
""",
    # The only inlined mesh is on a func result (``res_attrs``).
    "inlined_only_in_result_attrs": _MESH
    + """
func.func @main(%arg0: tensor<8xf32>) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<mesh<["x"=8]>, [{"x"}]>}) {
  return %arg0 : tensor<8xf32>
}
""",
    # The only inlined mesh is a property (a sharding constraint) inside a while body.
    "inlined_only_in_nested_constraint": _MESH
    + """
func.func @main(%arg0: tensor<8xf32>, %arg1: tensor<i32>) -> tensor<8xf32> {
  %0:2 = stablehlo.while(%iterArg = %arg0, %iterArg_0 = %arg1) : tensor<8xf32>, tensor<i32>
    cond {
    %1 = stablehlo.compare LT, %iterArg_0, %iterArg_0 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  } do {
    %1 = sdy.sharding_constraint %iterArg <mesh<["a"=2, "b"=4]>, [{"b"}]> : tensor<8xf32>
    stablehlo.return %1, %iterArg_0 : tensor<8xf32>, tensor<i32>
  }
  return %0#0 : tensor<8xf32>
}
""",
    # The only inlined mesh is the second of an op's per-value shardings.
    "inlined_only_in_second_result": _MESH
    + """
func.func @main(%arg0: tensor<8xf32>, %arg1: tensor<i32>) -> tensor<8xf32> {
  %0:2 = stablehlo.while(%iterArg = %arg0, %iterArg_0 = %arg1) : tensor<8xf32>, tensor<i32> attributes {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a"}]>, <mesh<[], device_ids=[3]>, []>]>}
    cond {
    %1 = stablehlo.compare LT, %iterArg_0, %iterArg_0 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  } do {
    stablehlo.return %iterArg, %iterArg_0 : tensor<8xf32>, tensor<i32>
  }
  return %0#0 : tensor<8xf32>
}
""",
    # The only inlined mesh is on an op whose (plain) properties are not read.
    "inlined_only_on_plain_property_op": _MESH
    + """
func.func @main(%arg0: tensor<8xf32>) -> tensor<8x8xf32> {
  %0 = stablehlo.broadcast_in_dim %arg0, dims = [0] {sdy.sharding = #sdy.sharding_per_value<[<mesh<["x"=8]>, [{"x"}, {}]>]>} : (tensor<8xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
""",
    # No inlined mesh, but a duplicate mesh: references to it are renamed by the walk.
    "duplicate_mesh_only": _MESH
    + """
sdy.mesh @copy = <["a"=2, "b"=4]>
func.func @main(%arg0: tensor<8xf32>) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@copy, [{"a"}]>}) {
  return %arg0 : tensor<8xf32>
}
""",
}

CASES = [
    pytest.param(spec, text, id=f"{spec}-{case_id}")
    for spec, table in (
        ("symbol-dce", SYMBOL_DCE),
        ("sdy-lift-inlined-meshes", LIFT_INLINED_MESHES),
    )
    for case_id, text in table.items()
]


@pytest.mark.parametrize(("spec", "text"), CASES)
def test_same_as_reference(spec: str, text: str):
    expected_text, expected_uses = run_pass_with_use_lists(text, [spec])
    module = load_text(text)
    run_our_pass(module, spec)
    assert write_text(module, debug_info=False) == expected_text
    assert our_use_lists(module) == expected_uses
