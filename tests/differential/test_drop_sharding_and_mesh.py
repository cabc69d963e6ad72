"""`sdy-drop-sharding-and-mesh` against the reference: exact text, or the same error.

The reference erases every mesh; a module whose inherent shardings still name one fails the
verifier after the pass, and ours must fail with the same message.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from shardwise.errors import ShardwiseError
from shardwise.io.mlir import load_text, write_text
from shardwise.io.reference import ReferenceError, run_pass
from shardwise.passes import run_pass as run_ours
from tests.differential.export_strategies import sharded_module

PASS = "sdy-drop-sharding-and-mesh"

MESHES = """
sdy.mesh @mesh = <["x"=2, "y"=4]>
sdy.mesh @other = <["a"=3]>
sdy.mesh @maximal = <[], device_ids=[3]>
"""

CASES = {
    # A collective's replica groups name the mesh by symbol: erasing it breaks the module.
    "error/replica-groups-name-the-mesh": """sdy.mesh @m = <["w"=2, "x"=2]>
func.func @main(%a: tensor<8xf32>) -> tensor<8xf32> {
  %0 = "stablehlo.all_reduce"(%a) ({
  ^bb0(%l: tensor<f32>, %r: tensor<f32>):
    %s = stablehlo.add %l, %r : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {replica_groups = #stablehlo.replica_group_mesh_axes<mesh = @m, axes = [#stablehlo.axis_ref<name = "x">]>} : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
""",
    "func-io-and-ops": MESHES
    + """
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y":(1)2}]>, foo.bar = 1 : i32},
                %arg1: tensor<8xf32> {sdy.sharding = #sdy.sharding<@other, [{}]>})
    -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}, {}], replicated={"y"}>}, tensor<8xf32>) {
  %0 = stablehlo.add %arg0, %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>} : tensor<8x8xf32>
  %1 = stablehlo.negate %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@maximal, []>]>, other.attr = "kept"} : tensor<8xf32>
  return %0, %1 : tensor<8x8xf32>, tensor<8xf32>
}
""",
    "module-attrs-kept": """
module attributes {mhlo.frontend_attributes = {xla.sdy.meshes = "{mesh = #sdy.mesh<[\\"x\\"=2]>}"}, mhlo.num_partitions = 2 : i64} {
sdy.mesh @mesh = <["x"=2]>
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
}
""",
    "unused-meshes-only": MESHES
    + """
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
""",
    "no-mesh": """
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
""",
    "inline-mesh-and-unreduced": """
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<mesh<["x"=2, "y"=2]>, [{"x"}], unreduced={"y"}>}) -> tensor<8xf32> {
  %0 = stablehlo.abs %arg0 {sdy.sharding = #sdy.sharding_per_value<[<mesh<["x"=2]>, [{"x"}]>]>} : tensor<8xf32>
  return %0 : tensor<8xf32>
}
""",
    "nested-regions-and-rules": MESHES
    + """
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}, %arg1: tensor<i32>) -> tensor<8xf32> {
  %0:2 = stablehlo.while(%iterArg = %arg0, %iterArg_0 = %arg1) : tensor<8xf32>, tensor<i32>
    attributes {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}]>, <@mesh, []>]>}
    cond {
    %1 = stablehlo.compare LT, %iterArg_0, %iterArg_0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, []>]>} : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  } do {
    %1 = stablehlo.add %iterArg, %iterArg {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([i], [i])->([i]) {i=8}>} : tensor<8xf32>
    stablehlo.return %1, %iterArg_0 : tensor<8xf32>, tensor<i32>
  }
  return %0#0 : tensor<8xf32>
}
""",
    "declaration-and-callee": MESHES
    + """
func.func private @decl(tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>})
func.func private @callee(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}]>}) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}]>}) {
  return %arg0 : tensor<8xf32>
}
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = call @callee(%arg0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y"}]>]>} : (tensor<8xf32>) -> tensor<8xf32>
  %1 = call @decl(%0) : (tensor<8xf32>) -> tensor<8xf32>
  return %1 : tensor<8xf32>
}
""",
    "inline-constraint-kept": """
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = sdy.sharding_constraint %arg0 <mesh<["x"=2]>, [{"x"}]> : tensor<8xf32>
  return %0 : tensor<8xf32>
}
""",
    "error/constraint": MESHES
    + """
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<8xf32> {
  %0 = sdy.sharding_constraint %arg0 <@mesh, [{"x"}]> : tensor<8xf32>
  return %0 : tensor<8xf32>
}
""",
    "error/reshard": MESHES
    + """
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = stablehlo.abs %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>} : tensor<8xf32>
  %1 = sdy.reshard %0 <@other, [{}]> : tensor<8xf32>
  return %1 : tensor<8xf32>
}
""",
    "error/manual-computation": MESHES
    + """
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}]>] out_shardings=[<@mesh, [{"x"}]>] manual_axes={"x"} (%arg1: tensor<4xf32>) {
    %1 = stablehlo.abs %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}]>]>} : tensor<4xf32>
    sdy.return %1 : tensor<4xf32>
  } : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
""",
}


def _ours(text: str) -> str:
    module = load_text(text)
    run_ours(module, PASS)
    return write_text(module)


def _check(text: str) -> None:
    try:
        expected = run_pass(text, PASS)
    except ReferenceError as e:
        message = e.diagnostics[0].split(": ", 1)[1]
        with pytest.raises(ShardwiseError) as ours:
            _ours(text)
        assert message in str(ours.value)
        return
    assert _ours(text) == expected


@pytest.mark.parametrize("name", list(CASES))
def test_drop_sharding_and_mesh_matches_reference(name: str) -> None:
    text = CASES[name]
    if name.startswith("error/"):
        with pytest.raises(ReferenceError):
            run_pass(text, PASS)
    _check(text)


def test_after_propagation_pipeline() -> None:
    """The pass's real input: a propagated module (shardings everywhere, meshes used)."""
    text = run_pass(CASES["nested-regions-and-rules"], "sdy-propagation-pipeline")
    _check(text)


@settings(max_examples=40, deadline=None)
@given(sharded_module())
def test_random_signatures_match_reference(text: str) -> None:
    _check(text)


def test_options_are_rejected_like_the_reference() -> None:
    """The 0.10.2 build of this pass takes no options."""
    from shardwise.passes import prepare_pass

    with pytest.raises(ValueError, match="no such option"):
        run_pass("module {}", PASS + "{bogus=1}")
    with pytest.raises(ShardwiseError, match="takes no options"):
        prepare_pass(PASS + "{bogus=1}")


INLINE_MESH_IN_REPLICA_GROUPS = """sdy.mesh @mesh = <[]>
func.func @main(%a: tensor<2x12xf32>) -> tensor<2x12xf32> {
  %0 = "stablehlo.all_reduce"(%a) ({
  ^bb0(%l: tensor<f32>, %r: tensor<f32>):
    %s = stablehlo.add %l, %r : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {replica_groups = #stablehlo.replica_group_mesh_axes<mesh = #stablehlo.mesh<axes = [#stablehlo.mesh_axis<name = "w", size = 2>]>, axes = [#stablehlo.axis_ref<name = "w">]>} : (tensor<2x12xf32>) -> tensor<2x12xf32>
  return %0 : tensor<2x12xf32>
}
"""


def test_replica_groups_naming_a_lifted_mesh() -> None:
    """The pipeline lifts the inline mesh to ``@mesh_0``, which the pass then erases: the
    dangling symbol is an error on both sides, never a written module (fuzz seed 1901-52)."""
    chain = "sdy-propagation-pipeline," + PASS
    with pytest.raises(ReferenceError, match="mesh symbol 'mesh_0' not found"):
        run_pass(INLINE_MESH_IN_REPLICA_GROUPS, chain.split(","))
    module = load_text(INLINE_MESH_IN_REPLICA_GROUPS)
    with pytest.raises(ShardwiseError, match="mesh symbol 'mesh_0' not found"):
        run_ours(module, chain)
