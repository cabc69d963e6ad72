"""Which results a manual or named computation reaches (`programs.computation_results`) and
the program that gives the others unsharded (`programs.without_results`)."""

from __future__ import annotations

from shardwise.check import programs
from shardwise.io.mlir import load_text

# Result 0: a call whose callee holds a manual computation; result 1: an add that reads a
# computation's result inside a case branch; result 2: nothing but arguments; result 3: an
# argument returned as it is.
REACHED = """sdy.mesh @mesh = <["x"=2]>
func.func private @inner(%b: tensor<8xf32>) -> tensor<8xf32> {
  %m = sdy.manual_computation(%b) in_shardings=[<@mesh, [{"x"}]>] out_shardings=[<@mesh, [{"x"}]>] manual_axes={"x"} (%c: tensor<4xf32>) {
    sdy.return %c : tensor<4xf32>
  } : (tensor<8xf32>) -> tensor<8xf32>
  return %m : tensor<8xf32>
}
func.func private @outer(%b: tensor<8xf32>) -> tensor<8xf32> {
  %0 = call @inner(%b) : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
func.func @main(%a: tensor<8xf32>, %i: tensor<i32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %0 = call @outer(%a) : (tensor<8xf32>) -> tensor<8xf32>
  %m = sdy.manual_computation(%a) in_shardings=[<@mesh, [{"x"}]>] out_shardings=[<@mesh, [{"x"}]>] manual_axes={"x"} (%c: tensor<4xf32>) {
    sdy.return %c : tensor<4xf32>
  } : (tensor<8xf32>) -> tensor<8xf32>
  %1 = "stablehlo.case"(%i) ({
    %2 = stablehlo.add %m, %a : tensor<8xf32>
    stablehlo.return %2 : tensor<8xf32>
  }, {
    stablehlo.return %a : tensor<8xf32>
  }) : (tensor<i32>) -> tensor<8xf32>
  %3 = stablehlo.negate %a : tensor<8xf32>
  return %0, %1, %3, %a : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}
"""


def test_results_reached_through_calls_and_regions() -> None:
    module = load_text(REACHED, "reached.mlir")
    assert programs.computation_results(module) == frozenset({0, 1})


def test_the_program_without_them_has_no_computation_and_the_same_signature() -> None:
    text = programs.without_results(REACHED, "reached.mlir", frozenset({0, 1}))
    assert text is not None
    module = load_text(text, "without.mlir")
    main = programs.find_main(module)
    inner_ops = [op.name for op in programs.main_ops(main)]
    assert "sdy.manual_computation" not in inner_ops and "stablehlo.case" not in inner_ops
    assert inner_ops.count("stablehlo.constant") == 2  # the two zeroed results
    assert len(main.regions[0].entry.terminator.operands) == 4
    # The call to a function holding a computation is dead code too (no effect), and the
    # functions stay: only main's top level is pruned. XLA runs what is left unsharded.
    assert "func.call" not in inner_ops


def test_a_computation_an_effect_reads_is_kept_and_no_program_is_made() -> None:
    effect = REACHED.replace(
        "  %3 = stablehlo.negate %a : tensor<8xf32>\n",
        "  %3 = stablehlo.negate %a : tensor<8xf32>\n"
        "  stablehlo.custom_call @log(%m) {has_side_effect = true} : (tensor<8xf32>) -> ()\n",
    )
    assert effect != REACHED
    assert programs.without_results(effect, "effect.mlir", frozenset({0, 1})) is None


def test_the_program_cut_at_the_computations_reads_their_results_as_arguments() -> None:
    cut = programs.cut_at_computations(REACHED, "reached.mlir")
    assert cut is not None
    text, added = cut
    assert added == 2  # the call of @outer, the manual computation
    main = programs.find_main(load_text(text, "cut.mlir"))
    names = [op.name for op in main.walk()]
    assert "sdy.manual_computation" not in names and "func.call" not in names
    assert "stablehlo.case" in names and len(main.regions[0].entry.args) == 4


def test_a_computation_in_a_loop_body_cannot_be_cut_out() -> None:
    looped = """sdy.mesh @mesh = <["x"=2]>
func.func @main(%a: tensor<8xf32>, %n: tensor<i32>) -> tensor<8xf32> {
  %0:2 = stablehlo.while(%i = %n, %v = %a) : tensor<i32>, tensor<8xf32>
   cond {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %p = stablehlo.compare GT, %i, %c : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %m = sdy.manual_computation(%v) in_shardings=[<@mesh, [{"x"}]>] out_shardings=[<@mesh, [{"x"}]>] manual_axes={"x"} (%c: tensor<4xf32>) {
      sdy.return %c : tensor<4xf32>
    } : (tensor<8xf32>) -> tensor<8xf32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %j = stablehlo.subtract %i, %one : tensor<i32>
    stablehlo.return %j, %m : tensor<i32>, tensor<8xf32>
  }
  return %0#1 : tensor<8xf32>
}
"""
    assert programs.cut_at_computations(looped, "looped.mlir") is None
