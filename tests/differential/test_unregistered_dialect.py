"""Ops of unregistered dialects, accepted behind ``allow_unregistered_dialect``, against the
reference run with unregistered dialects allowed (``sdy_opt -allow-unregistered-dialect``).

Such an op has no sharding rule: no sharding crosses it, yet a sharding written on its result
flows on to its users; passes keep it (MLIR assumes it has side effects). Inputs are our own.
"""

from __future__ import annotations

import re

import pytest

import shardwise
from shardwise.errors import ParseError, ShardwiseError
from shardwise.io.mlir import load_text, write_text
from shardwise.io.reference import ReferenceError, run_pass
from shardwise.passes import run_pass as run_ours

MESH = 'sdy.mesh @m = <["a"=2, "b"=2]>\n'
T = "tensor<8x8xf32>"
SHARDED = f'{T} {{sdy.sharding = #sdy.sharding<@m, [{{"a"}}, {{"b"}}]>}}'

CASES = {
    "between_elementwise_ops": MESH
    + f"""func.func @main(%x: {SHARDED}) -> {T} {{
  %0 = stablehlo.abs %x : {T}
  %1 = "vendor.fused"(%0) {{level = 3 : i64}} : ({T}) -> {T}
  %2 = stablehlo.negate %1 : {T}
  %3 = "vendor.source"() : () -> {T}
  %4 = stablehlo.add %2, %3 : {T}
  return %4 : {T}
}}
""",
    "sharding_on_its_result": MESH
    + f"""func.func @main(%x: {T}, %y: {T}) -> ({T}, {T}) {{
  %0:2 = "vendor.pair"(%x, %y) {{sdy.sharding = #sdy.sharding_per_value<[<@m, [{{}}, {{"a"}}]>, <@m, [{{"b"}}, {{}}]>]>}} : ({T}, {T}) -> ({T}, {T})
  %1 = stablehlo.multiply %0#0, %x : {T}
  %2 = stablehlo.exponential %0#1 : {T}
  return %1, %2 : {T}, {T}
}}
""",
    "with_a_region": MESH
    + f"""func.func @main(%x: {SHARDED}) -> {T} {{
  %0 = "vendor.loop"(%x) ({{
  ^bb0(%a: {T}):
    %1 = stablehlo.sine %a : {T}
    "vendor.yield"(%1) : ({T}) -> ()
  }}) : ({T}) -> {T}
  %2 = stablehlo.cosine %0 : {T}
  return %2 : {T}
}}
""",
    # two regions: not a potential symbol table, so symbol-dce can look inside
    "with_two_regions": MESH
    + f"""func.func @main(%x: {SHARDED}) -> {T} {{
  %0 = "vendor.branch"(%x) ({{
    "vendor.yield"(%x) : ({T}) -> ()
  }}, {{
    %1 = stablehlo.sine %x : {T}
    "vendor.yield"(%1) : ({T}) -> ()
  }}) : ({T}) -> {T}
  %2 = stablehlo.cosine %0 : {T}
  return %2 : {T}
}}
""",
    # the region op sits in a private func: symbol-dce fails there (visited from the call)
    "region_op_in_a_callee": MESH
    + f"""func.func @main(%x: {SHARDED}) -> {T} {{
  %0 = call @inner(%x) : ({T}) -> {T}
  return %0 : {T}
}}
func.func @other(%x: {T}) -> {T} {{
  return %x : {T}
}}
func.func private @inner(%x: {T}) -> {T} {{
  %0 = "vendor.scope"() ({{
    %1 = stablehlo.sine %x : {T}
    "vendor.yield"(%1) : ({T}) -> ()
  }}) : () -> {T}
  return %0 : {T}
}}
""",
    "in_a_callee_and_unused": MESH
    + f"""func.func @main(%x: {SHARDED}) -> {T} {{
  %0 = call @helper(%x) : ({T}) -> {T}
  return %0 : {T}
}}
func.func private @helper(%x: {T}) -> {T} {{
  %0 = "vendor.note"(%x) : ({T}) -> {T}
  %1 = stablehlo.tanh %x : {T}
  return %1 : {T}
}}
""",
}

PASSES = [
    "sdy-propagation-pipeline",
    "sdy-basic-propagate",
    "sdy-aggressive-propagate",
    "canonicalize",
    "sdy-propagation-pipeline,sdy-export-pipeline",
]


def _ours(text: str, specs: str, debug_info: bool = False) -> str:
    module = load_text(text, allow_unregistered_dialect=True)
    for spec in specs.split(","):
        run_ours(module, spec)
    return write_text(module, debug_info=debug_info)


def _reference(text: str, specs: str, debug_info: bool = False) -> str:
    return run_pass(text, specs.split(","), debug_info=debug_info, allow_unregistered_dialect=True)


def _compare(text: str, specs: str, debug_info: bool) -> None:
    try:
        expected = _reference(text, specs, debug_info)
    except ReferenceError as e:
        location, message = e.diagnostics[0].split(": ", 1)
        with pytest.raises(ShardwiseError) as ours:
            _ours(text, specs, debug_info)
        assert ours.value.message == message
        if not debug_info:  # else the reference reports the loc(...) of the text
            line, col = re.search(r":(\d+):(\d+)", location).groups()  # type: ignore[union-attr]
            assert (ours.value.location.line, ours.value.location.col) == (int(line), int(col))
        return
    assert _ours(text, specs, debug_info) == expected


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("specs", PASSES)
def test_matches_reference(name: str, specs: str) -> None:
    _compare(CASES[name], specs, False)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_reference_with_locations(name: str) -> None:
    text = run_pass(CASES[name], None, debug_info=True, allow_unregistered_dialect=True)
    _compare(text, "sdy-propagation-pipeline", True)


def test_rejected_without_the_flag_as_by_the_reference() -> None:
    text = CASES["between_elementwise_ops"]
    with pytest.raises(ReferenceError) as theirs:
        run_pass(text, None)
    with pytest.raises(ParseError, match="--allow-unregistered-dialect") as e:
        load_text(text, "m.mlir")
    line, col = re.search(r":(\d+):(\d+)", theirs.value.diagnostics[0]).groups()  # type: ignore[union-attr]
    assert (e.value.location.line, e.value.location.col) == (int(line), int(col))


def test_api_load_keyword() -> None:
    text = CASES["sharding_on_its_result"]
    module = shardwise.load(text, allow_unregistered_dialect=True).propagate()
    assert module.ir.allow_unregistered_dialect
    assert write_text(module.ir) == _reference(text, "sdy-propagation-pipeline")
    with pytest.raises(ParseError):
        shardwise.load(text)
