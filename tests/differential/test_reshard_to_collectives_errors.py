"""Errors of `sdy-reshard-to-collectives` run alone, worded as the reference words them.

The reference's pass manager verifies the module right after the pass: a collective-permute
between two meshes that differ only in their names fails there, with the verifier's message
(not as an invalid module found when writing). Inputs are our own.
"""

from __future__ import annotations

import re

import pytest

from shardwise.errors import ShardwiseError
from shardwise.io.mlir import load_text
from shardwise.io.reference import ReferenceError, run_pass
from shardwise.passes import run_pass as run_ours
from tests.unit.cli_run import run_cli

PASS = "sdy-reshard-to-collectives"


def _module(meshes: str, in_sharding: str, out_sharding: str, shape: str = "8x8") -> str:
    t = f"tensor<{shape}xf32>"
    return (
        meshes
        + f"func.func @main(%x: {t} {{sdy.sharding = #sdy.sharding<{in_sharding}>}}) -> {t} {{\n"
        + f"  %0 = stablehlo.negate %x : {t}\n"
        + f"  %1 = sdy.reshard %x <{out_sharding}> : {t}\n"
        + f"  %2 = stablehlo.add %0, %1 : {t}\n"
        + f"  return %2 : {t}\n}}\n"
    )


TWINS = 'sdy.mesh @p = <["i"=2, "j"=4]>\nsdy.mesh @q = <["i"=2, "j"=4]>\n'
CASES = {
    "twin_meshes": _module(TWINS, '@p, [{"i"}, {}]', '@q, [{}, {"i"}]'),
    "twin_meshes_sub_axis": _module(TWINS, '@p, [{"j":(1)2}, {}]', '@q, [{"j"}, {}]'),
    "twin_meshes_same_dims": _module(TWINS, '@p, [{"j"}, {"i"}]', '@q, [{"i"}, {"j"}]', "4x16"),
    "twin_with_device_ids": _module(
        'sdy.mesh @p = <["i"=4], device_ids=[1, 0, 3, 2]>\n'
        'sdy.mesh @q = <["i"=4], device_ids=[1, 0, 3, 2]>\n',
        '@p, [{"i"}, {}]',
        '@q, [{}, {"i"}]',
    ),
}

# A reshard to a fully replicated sharding on another mesh becomes a collective on the
# operand's mesh; a reshard of it to that other mesh then cannot be converted: the conversion
# fails naming the op as the IR stands then (collectives inserted, old reshards kept).
TWO_MESHES = 'sdy.mesh @p = <["i"=2]>\nsdy.mesh @q = <["j"=4]>\n'
T = "tensor<8x8xf32>"
CASES["illegal_after_replicated_to_other_mesh"] = (
    TWO_MESHES
    + f"""func.func @main(%x: {T} {{sdy.sharding = #sdy.sharding<@p, [{{"i"}}, {{}}]>}}) -> {T} {{
  %0 = sdy.reshard %x <@q, [{{}}, {{}}]> : {T}
  %1 = sdy.reshard %0 <@q, [{{}}, {{"j"}}]> : {T}
  return %1 : {T}
}}
"""
)
CASES["illegal_inside_manual_computation_after_multi_result_op"] = (
    TWO_MESHES
    + f"""func.func @main(%x: {T} {{sdy.sharding = #sdy.sharding<@p, [{{"i"}}, {{}}]>}}, %y: {T}) -> ({T}, {T}) {{
  %c = stablehlo.constant dense<2.0> : {T}
  %b:2 = stablehlo.optimization_barrier %x, %y : {T}, {T}
  %m = sdy.manual_computation(%b#0) in_shardings=[<@p, [{{}}, {{}}]>] out_shardings=[<@p, [{{}}, {{}}]>] manual_axes={{}} (%l: {T}) {{
    %n = stablehlo.negate %l {{sdy.sharding = #sdy.sharding_per_value<[<@p, [{{}}, {{"i"}}]>]>}} : {T}
    %0 = sdy.reshard %n <@q, [{{}}, {{}}]> : {T}
    %1 = sdy.reshard %0 <@q, [{{"j"}}, {{}}]> {{note = "kept"}} : {T}
    sdy.return %1 : {T}
  }} : ({T}) -> {T}
  %s = stablehlo.add %m, %c : {T}
  return %s, %b#1 : {T}, {T}
}}
"""
)


def _reference_error(text: str) -> tuple[str, int, int]:
    with pytest.raises(ReferenceError) as e:
        run_pass(text, PASS)
    location, message = e.value.diagnostics[0].split(": ", 1)
    line, col = re.search(r":(\d+):(\d+)", location).groups()  # type: ignore[union-attr]
    return message, int(line), int(col)


@pytest.mark.parametrize("name", sorted(CASES))
def test_pass_error_is_the_reference_message(name: str) -> None:
    message, line, col = _reference_error(CASES[name])
    module = load_text(CASES[name])
    with pytest.raises(ShardwiseError) as ours:
        run_ours(module, PASS)
    assert ours.value.message == message
    assert (ours.value.location.line, ours.value.location.col) == (line, col)


@pytest.mark.parametrize("name", sorted(CASES))
def test_cli_prints_the_reference_message(
    name: str, tmp_path, capsys: pytest.CaptureFixture[str]
) -> None:
    message, line, col = _reference_error(CASES[name])
    path = tmp_path / "m.mlir"
    path.write_text(CASES[name])
    code, out, err = run_cli(["propagate", "--pass", PASS, str(path)], capsys)
    assert code == 1 and out == ""
    assert err.startswith(f"{path}:{line}:{col}: error: {message}\n")
