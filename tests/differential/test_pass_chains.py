"""A chain of passes is verified between passes, as MLIR's pass manager does.

`sdy-close-shardings` turns an open dim with a priority (`{?}p1`) into a closed empty one
that keeps its priority, which the verifier rejects. Run alone, the module fails when it is
written; in a chain, the reference stops right after that pass even when the next pass would
have written a valid module. Ours must stop too, naming the pass (found by the fuzzer, seed
1900). Inputs are ours.
"""

from __future__ import annotations

import re

import pytest

from shardwise.errors import VerifyError
from shardwise.io.mlir import load_text, write_text
from shardwise.io.reference import ReferenceError, run_pass
from shardwise.passes import run_pass as run_ours

T = "tensor<4x6xf32>"
PRIORITY_ON_OPEN_DIM = f"""sdy.mesh @m = <["y"=1]>
func.func @main(%a: {T}) -> {T} {{
  %0 = sdy.reshard %a <@m, [{{?}}p1, {{}}], replicated={{"y"}}> : {T}
  return %0 : {T}
}}
"""
VALID = f"""sdy.mesh @m = <["x"=2]>
func.func @main(%a: {T} {{sdy.sharding = #sdy.sharding<@m, [{{"x", ?}}, {{?}}]>}}) -> {T} {{
  %0 = stablehlo.negate %a : {T}
  return %0 : {T}
}}
"""
CHAIN = "sdy-close-shardings,sdy-remove-size-one-axes"


def test_chain_stops_after_the_pass_that_writes_an_invalid_module() -> None:
    with pytest.raises(ReferenceError, match="empty and closed but has a priority"):
        run_pass(PRIORITY_ON_OPEN_DIM, CHAIN.split(","))
    module = load_text(PRIORITY_ON_OPEN_DIM, "chain.mlir")
    with pytest.raises(VerifyError) as info:
        run_ours(module, CHAIN)
    message = str(info.value)
    assert "after pass 'sdy-close-shardings'" in message
    assert "dim 0 is empty and closed but has a priority" in message
    assert message.startswith("chain.mlir:3:8:")


def test_valid_chain_matches_the_reference() -> None:
    module = load_text(VALID)
    run_ours(module, CHAIN)
    assert write_text(module) == run_pass(VALID, CHAIN.split(","))


# The partition chain changes value types, and ours must stop where the reference's verifier
# does (campaign of 2026-12-02, seeds 2111-322-0 and 2102-490-0: ours wrote both modules
# invalid). Only MLIR's verifier has every op's own type checks: a module left with a result
# type its operands no longer give is an error when it is written; padding checks the shapes
# of the ops it rewrites itself.
PARTITION_CHAIN = (
    "sdy-propagation-pipeline,sdy-insert-explicit-reshards{enable-full-version=true},"
    "sdy-reshard-to-collectives,sdy-pad-for-divisibility,sdy-convert-global-to-local"
)
# A dot_general of operands on two meshes: no common mesh, no reshard, then local operand
# types under a global result type.
DOT_ON_TWO_MESHES = """sdy.mesh @mesh = <["y"=1, "x"=1]>
sdy.mesh @mesh2 = <["z"=3]>
func.func @main(%a: tensor<6x3xf32> {sdy.sharding = #sdy.sharding<@mesh2, [{"z"}, {}]>},
                %b: tensor<3x12xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>})
    -> tensor<3x6x12xf32> {
  %0 = stablehlo.dot_general %a, %b, batching_dims = [1] x [0], contracting_dims = [] x [] : (tensor<6x3xf32>, tensor<3x12xf32>) -> tensor<3x6x12xf32>
  return %0 : tensor<3x6x12xf32>
}
"""
# A size-1 update sharded on a 3-device axis, padded to 3 elements, into a 2-element operand.
PADDED_UPDATE = """sdy.mesh @mesh = <["y"=3]>
func.func @main(%a: tensor<2xf32>, %b: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}]>}) -> tensor<2xf32> {
  %0 = stablehlo.slice %b [4:7:3] : (tensor<8xf32>) -> tensor<1xf32>
  %1 = stablehlo.constant dense<0> : tensor<i32>
  %2 = stablehlo.dynamic_update_slice %a, %0, %1 : (tensor<2xf32>, tensor<1xf32>, tensor<i32>) -> tensor<2xf32>
  return %2 : tensor<2xf32>
}
"""
# A transpose from a 1-device mesh to a result sharded on a 4-device axis: its padded result
# (1 -> 4) is not what its unpadded operand gives; g2l would make it valid again (2117-494-0).
PADDED_TRANSPOSE = """sdy.mesh @mesh = <["z"=1, "x"=1]>
sdy.mesh @mesh2 = <["w"=4]>
func.func @main(%a: tensor<1x2x6xf32>) -> (tensor<1x6x2xf32> {sdy.sharding = #sdy.sharding<@mesh2, [{"w"}, {?}, {?}]>}) {
  %0 = stablehlo.sqrt %a {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}, {?}]>]>} : tensor<1x2x6xf32>
  %1 = stablehlo.transpose %0, dims = [0, 2, 1] : (tensor<1x2x6xf32>) -> tensor<1x6x2xf32>
  return %1 : tensor<1x6x2xf32>
}
"""


@pytest.mark.parametrize(
    ("text", "chain", "message"),
    [
        (DOT_ON_TWO_MESHES, PARTITION_CHAIN, "inferred shape '[3, 2, 12]' is incompatible"),
        (PADDED_UPDATE, PARTITION_CHAIN, "update to be in range [0, 2]. Got: 3"),
        (PADDED_UPDATE, PARTITION_CHAIN.rsplit(",", 1)[0], "update to be in range [0, 2]"),
        (PADDED_TRANSPOSE, PARTITION_CHAIN, "inferred type(s) 'tensor<1x6x2xf32>' are incompat"),
    ],
    ids=["dot-two-meshes", "padded-update", "padded-update-without-g2l", "padded-transpose"],
)
def test_a_chain_that_leaves_invalid_types_stops(text, chain, message) -> None:
    with pytest.raises(ReferenceError) as ref:
        run_pass(text, chain.split(","))
    assert any(message in d for d in ref.value.diagnostics), ref.value.diagnostics
    module = load_text(text, "chain.mlir")
    with pytest.raises(VerifyError, match=re.escape(message)) as info:
        run_ours(module, chain)
        write_text(module)
    assert str(info.value).startswith("chain.mlir:")


def test_mlir_verifies_the_types_between_the_passes_of_a_chain(monkeypatch) -> None:
    # The net under padding's own shape checks: without the transpose check, the module the
    # pass leaves still stops the chain there, as the reference's pass manager stops it.
    from shardwise.export import pad_for_divisibility_patterns as patterns

    checked = patterns._CHECKED_INFERENCE - {"stablehlo.transpose"}
    monkeypatch.setattr(patterns, "_CHECKED_INFERENCE", checked)
    module = load_text(PADDED_TRANSPOSE, "chain.mlir")
    with pytest.raises(VerifyError) as info:
        run_ours(module, PARTITION_CHAIN)
    message = str(info.value)
    assert message.startswith("chain.mlir:5:8: error: after pass 'sdy-pad-for-divisibility'")
    assert "inferred type(s) 'tensor<1x6x2xf32>' are incompatible" in message
