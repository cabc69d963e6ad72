"""Inputs on which Shardy 0.10.2 aborts: ours gives a result or a clear error, never a traceback.

Found by the fuzzer (`shardwise fuzz` runs our side on every module the reference crashes on).
"""

from __future__ import annotations

import pytest

from shardwise.errors import InputError, PropagationError
from shardwise.fuzz.runner import run_ours
from shardwise.io.mlir import load_text
from shardwise.passes import prepare_pass

BODYLESS_CALLEE = """module {
  sdy.mesh @mesh = <["x"=2]>
  func.func private @ext(tensor<8xf32>) -> tensor<8xf32>
  func.func @main(%a0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> (tensor<8xf32>) {
    %v0 = call @ext(%a0) : (tensor<8xf32>) -> tensor<8xf32>
    return %v0 : tensor<8xf32>
  }
}
"""
EMPTY = "module {}\n"
# A callee returning its argument, its result passed to another call of it: Shardy's
# notification of users recurses through the calls forever (fuzzer seeds 99-96, 99-642).
CALL_CYCLE = """module {
  sdy.mesh @mesh = <["x"=2]>
  func.func @main(%a0: tensor<8xf32>) -> (tensor<8xf32>) {
    %v0 = call @id(%a0) : (tensor<8xf32>) -> tensor<8xf32>
    %v1 = call @id(%v0) : (tensor<8xf32>) -> tensor<8xf32>
    return %v1 : tensor<8xf32>
  }
  func.func private @id(%b0: tensor<8xf32>) -> (tensor<8xf32>) {
    %c = sdy.sharding_constraint %b0 <@mesh, [{"x"}]> : tensor<8xf32>
    return %b0 : tensor<8xf32>
  }
}
"""


@pytest.mark.parametrize(
    ("text", "pass_name", "error", "message", "line_col"),
    [
        (
            BODYLESS_CALLEE,
            "sdy-propagation-pipeline",
            InputError,
            "cannot import the call to @ext: the function is a declaration without a body",
            (5, 11),
        ),
        (
            BODYLESS_CALLEE,
            "sdy-insert-explicit-reshards",
            InputError,
            "cannot insert reshards for the call to @ext: the function is a declaration",
            (5, 11),
        ),
        (
            EMPTY,
            "sdy-basic-propagate",
            PropagationError,
            "cannot find the main function",
            (1, 1),
        ),
    ],
    ids=["bodyless-callee-pipeline", "bodyless-callee-explicit-reshards", "empty-module-basic"],
)
def test_clear_error_where_the_reference_aborts(
    text: str, pass_name: str, error: type, message: str, line_col: tuple[int, int]
) -> None:
    module = load_text(text, "in.mlir")
    with pytest.raises(error) as info:
        prepare_pass(pass_name)(module)
    assert message in str(info.value)
    assert (info.value.location.line, info.value.location.col) == line_col


@pytest.mark.parametrize(
    ("text", "pass_name"),
    [
        (BODYLESS_CALLEE, "sdy-user-priority-propagate"),
        (EMPTY, "sdy-insert-explicit-reshards"),
        (CALL_CYCLE, "sdy-basic-propagate"),
        (CALL_CYCLE, "sdy-user-priority-propagate"),
    ],
    ids=[
        "bodyless-callee-user-priority",
        "empty-module-explicit-reshards",
        "call-cycle-basic",
        "call-cycle-user-priority",
    ],
)
def test_result_where_the_reference_aborts_or_not(text: str, pass_name: str) -> None:
    ok, out = run_ours(text, pass_name)
    assert ok, out
    assert out.startswith("module")
