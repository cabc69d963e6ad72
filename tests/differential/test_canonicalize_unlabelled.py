"""A plain ``canonicalize`` (every pattern, labelled or not) against Shardy's, on our own
modules: reshard folding and common-subexpression elimination through reshapes and
transposes, duplicate reshards, manual computations with unused inputs, and the labelled
collective patterns, which a plain run enables too. Compared as text, without and with
locations."""

from __future__ import annotations

import pytest

from shardwise.io.mlir import load_text, write_text
from shardwise.io.reference import run_pass
from shardwise.passes import run_pass as run_ours

MESH = 'sdy.mesh @m = <["a"=2, "b"=2, "c"=4]>\n'


def _func(args: str, results: str, body: str, ret: str) -> str:
    return MESH + f"func.func @main({args}) -> ({results}) {{\n{body}\n  return {ret}\n}}\n"


T88 = "tensor<8x8xf32>"
T64 = "tensor<64xf32>"

CASES = {
    "reshard_chain_of_three": _func(
        f"%x: {T88}",
        T88,
        f"""  %0 = sdy.reshard %x <@m, [{{"a"}}, {{}}]> : {T88}
  %1 = sdy.reshard %0 <@m, [{{}}, {{"b"}}]> : {T88}
  %2 = sdy.reshard %1 <@m, [{{"c"}}, {{}}]> : {T88}""",
        f"%2 : {T88}",
    ),
    "inner_reshard_used_twice": _func(
        f"%x: {T88}",
        f"{T88}, {T88}",
        f"""  %0 = sdy.reshard %x <@m, [{{"a"}}, {{}}]> : {T88}
  %1 = sdy.reshard %0 <@m, [{{}}, {{"b"}}]> : {T88}""",
        f"%0, %1 : {T88}, {T88}",
    ),
    "three_equal_reshards": _func(
        f"%x: {T88}",
        T88,
        f"""  %0 = sdy.reshard %x <@m, [{{"c"}}, {{"a"}}]> : {T88}
  %1 = sdy.reshard %x <@m, [{{"c"}}, {{"a"}}]> : {T88}
  %2 = sdy.reshard %x <@m, [{{"c"}}, {{"a"}}]> : {T88}
  %3 = stablehlo.multiply %0, %1 : {T88}
  %4 = stablehlo.subtract %3, %2 : {T88}""",
        f"%4 : {T88}",
    ),
    "equivalent_but_open_and_prioritized": _func(
        f"%x: {T88}",
        f"{T88}, {T88}",
        f"""  %0 = sdy.reshard %x <@m, [{{"b", ?}}, {{}}]> : {T88}
  %1 = sdy.reshard %x <@m, [{{"b"}}p2, {{}}]> : {T88}""",
        f"%0, %1 : {T88}, {T88}",
    ),
    "different_replicated_axes_kept": _func(
        f"%x: {T88}",
        f"{T88}, {T88}",
        f"""  %0 = sdy.reshard %x <@m, [{{"b"}}, {{}}], replicated={{"a"}}> : {T88}
  %1 = sdy.reshard %x <@m, [{{"b"}}, {{}}]> : {T88}""",
        f"%0, %1 : {T88}, {T88}",
    ),
    "flattened_reshard_reuses_2d_reshard": _func(
        f"%x: {T88}",
        f"{T88}, {T64}",
        f"""  %0 = sdy.reshard %x <@m, [{{"c"}}, {{}}]> : {T88}
  %1 = stablehlo.reshape %x : ({T88}) -> {T64}
  %2 = sdy.reshard %1 <@m, [{{"c"}}]> : {T64}""",
        f"%0, %2 : {T88}, {T64}",
    ),
    "2d_reshard_reuses_flattened_reshard": _func(
        f"%x: {T88}",
        f"{T64}, {T88}",
        f"""  %1 = stablehlo.reshape %x : ({T88}) -> {T64}
  %2 = sdy.reshard %1 <@m, [{{"a"}}]> : {T64}
  %0 = sdy.reshard %x <@m, [{{"a"}}, {{}}]> : {T88}""",
        f"%2, %0 : {T64}, {T88}",
    ),
    "minor_dim_not_equivalent_to_flat": _func(
        f"%x: {T88}",
        f"{T88}, {T64}",
        f"""  %0 = sdy.reshard %x <@m, [{{}}, {{"a"}}]> : {T88}
  %1 = stablehlo.reshape %x : ({T88}) -> {T64}
  %2 = sdy.reshard %1 <@m, [{{"a"}}]> : {T64}""",
        f"%0, %2 : {T88}, {T64}",
    ),
    "through_reshapes": _func(
        "%x: tensor<4x16xf32>",
        "tensor<4x16xf32>, tensor<2x32xf32>, tensor<2x32xf32>",
        """  %0 = sdy.reshard %x <@m, [{"b"}, {}]> : tensor<4x16xf32>
  %3 = stablehlo.reshape %x : (tensor<4x16xf32>) -> tensor<2x32xf32>
  %4 = stablehlo.reshape %3 : (tensor<2x32xf32>) -> tensor<2x32xf32>
  %5 = sdy.reshard %4 <@m, [{"b"}, {}]> : tensor<2x32xf32>
  %6 = stablehlo.negate %5 : tensor<2x32xf32>""",
        "%0, %5, %6 : tensor<4x16xf32>, tensor<2x32xf32>, tensor<2x32xf32>",
    ),
    "through_transposes": _func(
        f"%x: {T88}",
        f"{T88}, {T88}, {T88}",
        f"""  %0 = sdy.reshard %x <@m, [{{}}, {{"c"}}]> : {T88}
  %1 = stablehlo.transpose %x, dims = [1, 0] : ({T88}) -> {T88}
  %2 = stablehlo.transpose %1, dims = [1, 0] : ({T88}) -> {T88}
  %3 = sdy.reshard %2 <@m, [{{}}, {{"c"}}]> : {T88}
  %4 = sdy.reshard %1 <@m, [{{"c"}}, {{}}]> : {T88}""",
        f"%0, %3, %4 : {T88}, {T88}, {T88}",
    ),
    "transpose_does_not_lead_to_a_reshard": _func(
        f"%x: {T88}",
        f"{T88}, {T88}",
        f"""  %1 = stablehlo.transpose %x, dims = [1, 0] : ({T88}) -> {T88}
  %2 = sdy.reshard %1 <@m, [{{"a"}}, {{}}]> : {T88}
  %3 = sdy.reshard %x <@m, [{{}}, {{"a"}}]> : {T88}""",
        f"%2, %3 : {T88}, {T88}",
    ),
    "transposed_4x16_type_quirk": _func(
        "%x: tensor<4x16xf32>",
        "tensor<4x16xf32>, tensor<16x4xf32>",
        """  %0 = sdy.reshard %x <@m, [{}, {"b"}]> : tensor<4x16xf32>
  %1 = stablehlo.transpose %x, dims = [1, 0] : (tensor<4x16xf32>) -> tensor<16x4xf32>
  %2 = sdy.reshard %1 <@m, [{"b"}, {}]> : tensor<16x4xf32>""",
        "%0, %2 : tensor<4x16xf32>, tensor<16x4xf32>",
    ),
    "other_block_not_reused": MESH
    + f"""func.func @main(%x: {T88}) -> ({T88}, {T88}) {{
  %0 = sdy.manual_computation(%x) in_shardings=[<@m, [{{}}, {{}}]>] out_shardings=[<@m, [{{}}, {{}}]>] manual_axes={{}} (%y: {T88}) {{
    %1 = sdy.reshard %y <@m, [{{"a"}}, {{}}]> : {T88}
    sdy.return %1 : {T88}
  }} : ({T88}) -> {T88}
  %2 = sdy.reshard %x <@m, [{{"a"}}, {{}}]> : {T88}
  %3 = sdy.reshard %x <@m, [{{"a"}}, {{}}]> : {T88}
  return %0, %3 : {T88}, {T88}
}}
""",
    "inline_mesh_reshards": _func(
        f"%x: {T88}",
        f"{T88}, {T88}",
        f"""  %0 = sdy.reshard %x <mesh<["p"=2]>, [{{"p"}}, {{}}]> : {T88}
  %1 = sdy.reshard %x <mesh<["p"=2]>, [{{"p"}}, {{}}]> : {T88}""",
        f"%0, %1 : {T88}, {T88}",
    ),
    "manual_computation_unused_inputs": MESH
    + f"""func.func @main(%x: {T88}, %y: {T88}, %z: {T88}) -> ({T88}, {T88}) {{
  %n = stablehlo.negate %y : {T88}
  %0:2 = sdy.manual_computation(%x, %n, %z, %x) in_shardings=[<@m, [{{"a"}}, {{}}]>, <@m, [{{}}, {{}}]>, <@m, [{{"b"}}, {{}}]>, <@m, [{{}}, {{"a"}}]>] out_shardings=[<@m, [{{"a"}}, {{}}]>, <@m, [{{}}, {{"a"}}]>] manual_axes={{"a", "b"}} (%p: tensor<4x8xf32>, %q: {T88}, %r: tensor<4x8xf32>, %s: tensor<8x4xf32>) {{
    sdy.return %p, %s : tensor<4x8xf32>, tensor<8x4xf32>
  }} : ({T88}, {T88}, {T88}, {T88}) -> ({T88}, {T88})
  %1 = sdy.manual_computation(%0#1) in_shardings=[<@m, [{{"c"}}, {{}}]>] out_shardings=[<@m, [{{"c"}}, {{}}]>] manual_axes={{}} (%p: {T88}) {{
    %2 = stablehlo.abs %p : {T88}
    sdy.return %2 : {T88}
  }} : ({T88}) -> {T88}
  return %0#0, %1 : {T88}, {T88}
}}
""",
    "manual_computation_no_use_at_all": MESH
    + f"""func.func @main(%x: {T88}) -> {T88} {{
  %0 = sdy.manual_computation(%x) in_shardings=[<@m, [{{"a"}}, {{}}]>] out_shardings=[<@m, [{{"a"}}, {{}}]>] manual_axes={{"a"}} (%p: tensor<4x8xf32>) {{
    %c = stablehlo.constant dense<2.0> : tensor<4x8xf32>
    sdy.return %c : tensor<4x8xf32>
  }} : ({T88}) -> {T88}
  return %0 : {T88}
}}
""",
    "collectives_enabled_too": _func(
        f'%x: {T88} {{sdy.sharding = #sdy.sharding<@m, [{{"a"}}, {{}}]>}}',
        T88,
        f"""  %0 = sdy.all_gather [{{"a"}}, {{}}] %x out_sharding=<@m, [{{}}, {{}}]> : {T88}
  %1 = sdy.all_slice [{{"a"}}, {{}}] %0 out_sharding=<@m, [{{"a"}}, {{}}]> : {T88}
  %2 = sdy.reshard %1 <@m, [{{}}, {{"b"}}]> : {T88}
  %3 = sdy.reshard %2 <@m, [{{"c"}}, {{}}]> : {T88}""",
        f"%3 : {T88}",
    ),
}


def _ours(text: str, debug_info: bool) -> str:
    module = load_text(text)
    run_ours(module, "canonicalize")
    return write_text(module, debug_info=debug_info)


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("debug_info", [False, True], ids=["plain", "located"])
def test_plain_canonicalize_matches_reference(name: str, debug_info: bool) -> None:
    text = CASES[name]
    if debug_info:
        text = run_pass(text, None, debug_info=True)
    expected = run_pass(text, "canonicalize", debug_info=debug_info)
    assert _ours(text, debug_info) == expected


def test_cases_change_something() -> None:
    """Each case but the negative ones is rewritten by the reference (no case is vacuous)."""
    kept = {
        "different_replicated_axes_kept",
        "inner_reshard_used_twice",
        "minor_dim_not_equivalent_to_flat",
        "transpose_does_not_lead_to_a_reshard",
        "transposed_4x16_type_quirk",
    }
    for name, text in CASES.items():
        unchanged = run_pass(text, None) == run_pass(text, "canonicalize")
        assert unchanged == (name in kept), name


def test_labelled_run_leaves_unlabelled_patterns_off() -> None:
    text = CASES["three_equal_reshards"]
    spec = "canonicalize{enable-patterns=sdy-reshard}"
    module = load_text(text)
    run_ours(module, spec)
    assert write_text(module) == run_pass(text, spec)
