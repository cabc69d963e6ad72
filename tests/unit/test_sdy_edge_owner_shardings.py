"""`get_sharding` of data-flow edge owners and targets: the sharding their edge keeps."""

from __future__ import annotations

import pytest

from shardwise.api import parse_sharding
from shardwise.imports.add_data_flow_edges import add_data_flow_edges
from shardwise.io.mlir import load_text
from shardwise.ir import Module, Value
from shardwise.sdy.shardings import get_sharding

TEXT = """
sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%arg0: tensor<8x4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>) {
  %0 = sdy.named_computation<"f">(%arg0) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{}, {"y"}]>] (%a: tensor<8x4xf32>) {
    %1 = stablehlo.abs %a : tensor<8x4xf32>
    sdy.return %1 : tensor<8x4xf32>
  } : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %2 = stablehlo.while(%it = %arg0) : tensor<8x4xf32> attributes {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y"}, {"x"}]>]>}
  cond {
    %c = stablehlo.constant dense<true> : tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %3 = stablehlo.abs %it : tensor<8x4xf32>
    stablehlo.return %3 : tensor<8x4xf32>
  }
  return %0, %2 : tensor<8x4xf32>, tensor<8x4xf32>
}
"""


def _module() -> Module:
    module = load_text(TEXT)
    add_data_flow_edges(module)
    return module


def _values(module: Module) -> dict[str, tuple[Value, Value]]:
    """Each value by name, with the edge owner whose edge keeps its sharding."""
    main = module.funcs[0]
    named, while_ = (op for op in main.regions[0].entry.ops if op.regions)
    result = while_.results[0]
    return {
        "named_block_arg": (named.regions[0].entry.args[0],) * 2,
        "named_result": (named.results[0],) * 2,
        "while_result": (result, result),
        "while_cond_arg": (while_.regions[0].entry.args[0], result),
        "while_body_arg": (while_.regions[1].entry.args[0], result),
    }


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("named_block_arg", '#sdy.sharding<@mesh, [{"x"}, {}]>'),
        ("named_result", '#sdy.sharding<@mesh, [{}, {"y"}]>'),
        ("while_result", '#sdy.sharding<@mesh, [{"y"}, {"x"}]>'),
        # Targets that own no edge: their sharding is the while result's (its edge's).
        ("while_cond_arg", '#sdy.sharding<@mesh, [{"y"}, {"x"}]>'),
        ("while_body_arg", '#sdy.sharding<@mesh, [{"y"}, {"x"}]>'),
    ],
)
def test_an_edge_owner_or_target_reads_its_edges_sharding(name: str, expected: str) -> None:
    module = _module()
    value, owner = _values(module)[name]
    assert get_sharding(value) == parse_sharding(expected)
    # The edge keeps it: a sharding set on the edge is what the value reads then.
    [(edge, _)] = owner.uses
    assert edge.name == "sdy.data_flow_edge"
    other = parse_sharding('#sdy.sharding<@mesh, [{"x", "y"}, {}]>')
    edge.properties["sharding"] = other
    assert get_sharding(value) == other
