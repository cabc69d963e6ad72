"""Quoted symbol names (``@"my-fn"``, ``@"my mesh"``) through the pipelines, against the
reference. Regression: with ``dedup-functions-fully=true`` the driver looked a callee up by its
quoted text (``KeyError: '"my-fn"'``). Inputs are our own."""

from __future__ import annotations

import pytest

from shardwise.io.mlir import load_text, write_text
from shardwise.io.reference import run_pass
from shardwise.passes import run_pass as run_ours

T = "tensor<8x4xf32>"
CASES = {
    "callee_called_twice": f"""sdy.mesh @m = <["x"=2, "y"=2]>
func.func @main(%a: {T} {{sdy.sharding = #sdy.sharding<@m, [{{"x"}}, {{}}]>}}) -> {T} {{
  %0 = call @"my-fn"(%a) : ({T}) -> {T}
  %1 = call @"my-fn"(%0) : ({T}) -> {T}
  return %1 : {T}
}}
func.func private @"my-fn"(%a: {T}) -> {T} {{
  %0 = stablehlo.abs %a : {T}
  return %0 : {T}
}}
""",
    "quoted_mesh_and_callees": f"""sdy.mesh @"my mesh" = <["x"=2, "y"=2]>
func.func @main(%a: {T} {{sdy.sharding = #sdy.sharding<@"my mesh", [{{}}, {{"y"}}]>}}) -> ({T}, {T}) {{
  %0 = call @"f.1"(%a) : ({T}) -> {T}
  %1 = call @"g\\"h"(%0) : ({T}) -> {T}
  return %0, %1 : {T}, {T}
}}
func.func private @"f.1"(%a: {T}) -> {T} {{
  %0 = stablehlo.negate %a {{sdy.sharding = #sdy.sharding_per_value<[<@"my mesh", [{{"x"}}, {{}}]>]>}} : {T}
  return %0 : {T}
}}
func.func private @"g\\"h"(%a: {T}) -> {T} {{
  %0 = call @"f.1"(%a) : ({T}) -> {T}
  return %0 : {T}
}}
""",
}
PIPELINES = [
    "sdy-propagation-pipeline",
    "sdy-propagation-pipeline{dedup-functions-fully=true}",
    "sdy-import-pipeline",
]


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("spec", PIPELINES)
def test_quoted_symbols_match_reference(name: str, spec: str) -> None:
    expected = run_pass(CASES[name], spec)
    module = load_text(CASES[name])
    run_ours(module, spec)
    assert write_text(module) == expected


def test_export_after_dedup_matches_reference() -> None:
    specs = ["sdy-propagation-pipeline{dedup-functions-fully=true}", "sdy-export-pipeline"]
    expected = run_pass(CASES["quoted_mesh_and_callees"], specs)
    module = load_text(CASES["quoted_mesh_and_callees"])
    for spec in specs:
        run_ours(module, spec)
    assert write_text(module) == expected
