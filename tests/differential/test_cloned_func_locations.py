"""Locations of a function's block arguments when a pass clones the function (``@f_0``).

A private function called with different shardings is cloned; MLIR's clone keeps each block
argument's location (``loc("p")``, ``loc(unknown)``, a fused one, or where it sits in the
file). Compared exactly with the reference, printed with locations. Inputs are our own.
"""

from __future__ import annotations

import pytest

from shardwise.io.mlir import load_text, write_text
from shardwise.io.reference import run_pass
from shardwise.passes import run_pass as run_ours

T = "tensor<8x8xf32>"


def _module(arg_locs: tuple[str, str], callee_loc: str = "") -> str:
    first, second = arg_locs
    return f"""sdy.mesh @m = <["x"=2, "y"=2]>
func.func @main(%a: {T} {{sdy.sharding = #sdy.sharding<@m, [{{"x"}}, {{}}]>}} loc("a"), %b: {T} {{sdy.sharding = #sdy.sharding<@m, [{{}}, {{"y"}}]>}}) -> ({T}, {T}) {{
  %0 = call @f(%a, %a) : ({T}, {T}) -> {T} loc("first call")
  %1 = call @f(%b, %b) : ({T}, {T}) -> {T}
  return %0, %1 : {T}, {T}
}}
func.func private @f(%p: {T} {first}, %q: {T} {second}) -> {T} {{
  %0 = stablehlo.add %p, %q : {T} loc("add")
  return %0 : {T}
}} {callee_loc}
"""


CASES = {
    "named_and_file_position": _module(('loc("p")', "")),
    "unknown_and_named": _module(("loc(unknown)", 'loc("q")')),
    "fused_and_callsite": _module(
        ('loc(fused["p", "x.py":3:4])', 'loc(callsite("q" at "y.py":1:2))'), 'loc("f")'
    ),
    "both_unknown": _module(("loc(unknown)", "loc(unknown)")),
}
PIPELINES = [
    "sdy-propagation-pipeline",
    "sdy-propagation-pipeline{dedup-functions-fully=true}",
    "sdy-import-pipeline",
]


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("spec", PIPELINES)
def test_clone_keeps_argument_locations(name: str, spec: str) -> None:
    text = CASES[name]
    expected = run_pass(text, spec, debug_info=True)
    module = load_text(text)
    run_ours(module, spec)
    assert write_text(module, debug_info=True) == expected


def test_cases_do_clone() -> None:
    for name, text in CASES.items():
        assert "@f_0" in run_pass(text, "sdy-propagation-pipeline"), name
