"""`import_flattened_calls` (three import passes in one go) leaves what the passes leave one by
one: ``sdy-flatten-call-graph``, ``symbol-dce``, ``sdy-import-func-calls``."""

from __future__ import annotations

import pytest

from shardwise.imports.flatten_call_graph import flatten_call_graph
from shardwise.imports.import_func_calls import import_flattened_calls, import_func_calls
from shardwise.imports.symbol_dce import symbol_dce
from shardwise.io.mlir import load_text, write_text

# A dead private func calls @f as main does: symbol-dce erases it (and its call) before the
# import, so @f has one call left and its body moves into main's named computation.
_DEAD_CALLER = """module {
  sdy.mesh @mesh = <["x"=2]>
  func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    %0 = func.call @f(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
    return %0 : tensor<8xf32>
  }
  func.func private @dead(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    %0 = func.call @f(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
    %1 = func.call @f(%0) : (tensor<8xf32>) -> tensor<8xf32>
    return %1 : tensor<8xf32>
  }
  func.func private @f(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    %0 = stablehlo.abs %arg0 : tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}
"""


@pytest.mark.parametrize("rules_conservative", [None, False])
def test_dead_callers_calls_are_not_imported(rules_conservative: bool | None) -> None:
    one_go = load_text(_DEAD_CALLER)
    assert import_flattened_calls(one_go, rules_conservative)
    by_pass = load_text(_DEAD_CALLER)
    flatten_call_graph(by_pass)
    symbol_dce(by_pass)
    import_func_calls(by_pass)
    assert write_text(one_go) == write_text(by_pass)
    assert "@dead" not in write_text(one_go)
    # The one live call's named computation has the callee's body, no clone was made for
    # the dead calls, and no rule was attached for a callee called more than once.
    assert write_text(one_go).count("stablehlo.abs") == 1
    assert "sdy.sharding_rule" not in write_text(one_go)
