"""Propagation on small hand-written modules, ours vs Shardy's (`sdy-basic-propagate`,
`sdy-aggressive-propagate`).

Each module is a short chain of elementwise / dot_general / reshape / transpose /
broadcast_in_dim ops with shardings on some arguments or results, chosen to exercise one part
of the projection and factor-propagation algebra (sub-axis splits and merges, overflow,
divisibility, conflicts, closed dims, replicated axes, priorities, backward propagation).
The whole printed module must match, so every value's sharding is compared; on a mismatch
the assertion shows the differing lines.
"""

from __future__ import annotations

import difflib

import pytest

from shardwise.io.mlir import load_text, write_text
from shardwise.io.reference import run_pass
from shardwise.propagation.aggressive_propagation import aggressive_propagate
from shardwise.propagation.basic_propagation import basic_propagate
from shardwise.propagation.options import PropagationOptions

MESH = 'sdy.mesh @mesh = <["x"=2, "y"=4, "z"=2]>'
T = "tensor<8x16xf32>"


def module(body: str) -> str:
    """The mesh, then `body` with ``S<...>`` short for ``{sdy.sharding = #sdy.sharding<@mesh, ...>}``
    and ``T`` for an 8x16 f32 tensor type."""
    body = body.replace("S<", "{sdy.sharding = #sdy.sharding<@mesh, ").replace(">S", ">}")
    return MESH + "\n" + body.replace("T8", T) + "\n"


CASES = {
    # Elementwise chain: the argument's sharding flows to every op and the func result.
    "elementwise_chain": module(
        """func.func @main(%arg0: T8 S<[{"x"}, {"y"}]>S, %arg1: T8) -> T8 {
  %0 = stablehlo.add %arg0, %arg1 : T8
  %1 = stablehlo.multiply %0, %0 : T8
  %2 = stablehlo.negate %1 : T8
  return %2 : T8
}"""
    ),
    # Backward: only the func result is sharded (open), shardings flow to the arguments.
    "backward_from_result": module(
        """func.func @main(%arg0: T8, %arg1: T8) -> (T8 S<[{"y", ?}, {"x", ?}]>S) {
  %0 = stablehlo.add %arg0, %arg1 : T8
  %1 = stablehlo.exponential %0 : T8
  return %1 : T8
}"""
    ),
    # Conflicting operand shardings: basic takes only the common prefix.
    "elementwise_conflict": module(
        """func.func @main(%arg0: T8 S<[{"x", "y"}, {}]>S, %arg1: T8 S<[{"x", "z"}, {?}]>S) -> T8 {
  %0 = stablehlo.add %arg0, %arg1 : T8
  return %0 : T8
}"""
    ),
    # dot_general: contracting dim sharded on both sides; result gets the free dims.
    "dot_general": module(
        """func.func @main(%arg0: tensor<8x16xf32> S<[{"x"}, {"y"}]>S,
                %arg1: tensor<16x32xf32> S<[{"y"}, {"z", ?}]>S) -> tensor<8x32xf32> {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}"""
    ),
    # dot_general where the same axis sits on two factors (aggressive picks one).
    "dot_general_axis_conflict": module(
        """func.func @main(%arg0: tensor<8x16xf32> S<[{"y", ?}, {?}]>S,
                %arg1: tensor<16x32xf32> S<[{?}, {"y", ?}]>S) -> tensor<8x32xf32> {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %1 = stablehlo.negate %0 : tensor<8x32xf32>
  return %1 : tensor<8x32xf32>
}"""
    ),
    # Reshape split: "y"=4 on a dim of 8 -> 2x4 gives "y":(1)2 major, "y":(2)2 minor.
    "reshape_split_sub_axes": module(
        """func.func @main(%arg0: tensor<8x4xf32> S<[{"y"}, {}]>S) -> tensor<2x4x4xf32> {
  %0 = stablehlo.reshape %arg0 : (tensor<8x4xf32>) -> tensor<2x4x4xf32>
  %1 = stablehlo.abs %0 : tensor<2x4x4xf32>
  return %1 : tensor<2x4x4xf32>
}"""
    ),
    # Reshape merge 4x4 -> 16 with both dims sharded, then back.
    "reshape_merge_and_back": module(
        """func.func @main(%arg0: tensor<4x4xf32> S<[{"x"}, {"z"}]>S) -> tensor<4x4xf32> {
  %0 = stablehlo.reshape %arg0 : (tensor<4x4xf32>) -> tensor<16xf32>
  %1 = stablehlo.negate %0 : tensor<16xf32>
  %2 = stablehlo.reshape %1 : (tensor<16xf32>) -> tensor<4x4xf32>
  return %2 : tensor<4x4xf32>
}"""
    ),
    # Reshape whose major factor (size 3) cannot take "x"=2: overflow, nothing moves.
    "reshape_overflow": module(
        """func.func @main(%arg0: tensor<12xf32> S<[{"x", ?}]>S) -> tensor<3x4xf32> {
  %0 = stablehlo.reshape %arg0 : (tensor<12xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}"""
    ),
    # Backward through a reshape into a non-minor-most factor (size 4 of ["y", "x"]).
    "reshape_backward_non_minor_most": module(
        """func.func @main(%arg0: tensor<4x8xf32>) -> (tensor<32xf32> S<[{"y", "x", ?}]>S) {
  %0 = stablehlo.reshape %arg0 : (tensor<4x8xf32>) -> tensor<32xf32>
  return %0 : tensor<32xf32>
}"""
    ),
    # Backward into a non-minor-most factor of size 2 from "y"=4: gcd gives "y":(1)2.
    "reshape_backward_gcd_sub_axis": module(
        """func.func @main(%arg0: tensor<2x8xf32>) -> (tensor<16xf32> S<[{"y", ?}]>S) {
  %0 = stablehlo.reshape %arg0 : (tensor<2x8xf32>) -> tensor<16xf32>
  return %0 : tensor<16xf32>
}"""
    ),
    # The gcd rule of propagation: "y"=4 sits on a size-2 dim (minor-most there); in the
    # result the factor is non-minor-most, so only the sub-axis "y":(1)2 can go there.
    "reshape_forward_gcd_sub_axis": module(
        """func.func @main(%arg0: tensor<2x16xf32> S<[{"y"}, {}]>S) -> tensor<32xf32> {
  %0 = stablehlo.reshape %arg0 : (tensor<2x16xf32>) -> tensor<32xf32>
  return %0 : tensor<32xf32>
}"""
    ),
    # Transpose then broadcast_in_dim.
    "transpose_broadcast": module(
        """func.func @main(%arg0: T8 S<[{"x"}, {"y", ?}]>S) -> tensor<2x16x8xf32> {
  %0 = stablehlo.transpose %arg0, dims = [1, 0] : (T8) -> tensor<16x8xf32>
  %1 = stablehlo.broadcast_in_dim %0, dims = [1, 2] : (tensor<16x8xf32>) -> tensor<2x16x8xf32>
  return %1 : tensor<2x16x8xf32>
}"""
    ),
    # Broadcast backward: the result is sharded, the operand gets its mapped dim only.
    "broadcast_backward": module(
        """func.func @main(%arg0: tensor<16xf32>) -> (T8 S<[{"x", ?}, {"y", ?}]>S) {
  %0 = stablehlo.broadcast_in_dim %arg0, dims = [1] : (tensor<16xf32>) -> T8
  %1 = stablehlo.negate %0 : T8
  return %1 : T8
}"""
    ),
    # Non-divisible: "y"=4 on a dim of 6 (minor-most, so it still propagates).
    "non_divisible_dim": module(
        """func.func @main(%arg0: tensor<6x16xf32> S<[{"y"}, {?}]>S) -> tensor<6x16xf32> {
  %0 = stablehlo.negate %arg0 : tensor<6x16xf32>
  return %0 : tensor<6x16xf32>
}"""
    ),
    # Replicated axes and a closed dim on the second operand block parts of the sharding.
    "replicated_and_closed": module(
        """func.func @main(%arg0: T8 S<[{"x", "y"}, {"z"}]>S, %arg1: T8 S<[{?}, {}], replicated={"y"}>S) -> T8 {
  %0 = stablehlo.add %arg0, %arg1 : T8
  %1 = stablehlo.add %0, %arg1 : T8
  return %1 : T8
}"""
    ),
    # Priorities on the input are not copied: propagated shardings carry none.
    "priorities_dropped": module(
        """func.func @main(%arg0: T8 S<[{"x", ?}p1, {"y", ?}]>S, %arg1: T8) -> T8 {
  %0 = stablehlo.subtract %arg0, %arg1 : T8
  return %0 : T8
}"""
    ),
    # Unreduced axes of an operand keep that axis off the operand's factors (basic: off every
    # tensor; aggressive: only off that operand).
    "unreduced_blocks_axis": module(
        """func.func @main(%arg0: T8 S<[{"x", ?}, {?}], unreduced={"y"}>S, %arg1: T8 S<[{?}, {"y", ?}]>S) -> T8 {
  %0 = stablehlo.add %arg0, %arg1 : T8
  return %0 : T8
}"""
    ),
    # Sub-axes on the input flow through an elementwise op unchanged.
    "sub_axis_input": module(
        """func.func @main(%arg0: T8 S<[{"y":(1)2, ?}, {"y":(2)2}]>S) -> T8 {
  %0 = stablehlo.cosine %arg0 : T8
  return %0 : T8
}"""
    ),
}

PASSES = {
    "sdy-basic-propagate": basic_propagate,
    "sdy-aggressive-propagate": aggressive_propagate,
}


def _ours(text: str, pass_name: str) -> str:
    module = load_text(text, "case.mlir")
    PASSES[pass_name](module, PropagationOptions())
    return write_text(module)


@pytest.mark.parametrize("pass_name", PASSES)
@pytest.mark.parametrize("text", CASES.values(), ids=CASES.keys())
def test_matches_reference(text: str, pass_name: str) -> None:
    want = run_pass(text, pass_name)
    got = _ours(text, pass_name)
    if got != want:
        diff = "\n".join(
            difflib.unified_diff(
                want.splitlines(), got.splitlines(), "reference", "ours", lineterm=""
            )
        )
        pytest.fail(f"{pass_name} differs from the reference:\n{diff}")


def test_cases_propagate_something() -> None:
    """Guard against vacuous cases: every module changes under at least one reference pass
    (except the overflow case, whose point is that nothing can move)."""
    unchanged = [
        name
        for name, text in CASES.items()
        if all(run_pass(text, p) == run_pass(text, None) for p in PASSES)
    ]
    assert unchanged == ["reshape_overflow"]
