"""Meshes in StableHLO collectives' mesh-axes replica groups, against the reference.

`sdy-lift-inlined-meshes` lifts an inline ``#stablehlo.mesh`` into an ``sdy.mesh`` symbol and
renames references to a deduplicated mesh; `sdy-inline-meshes` fails as the reference's
verifier does when a replica group still names an erased mesh. Inputs are our own.
"""

from __future__ import annotations

import re

import pytest

from shardwise.errors import ShardwiseError
from shardwise.io.mlir import load_text, write_text
from shardwise.io.reference import ReferenceError, run_pass
from shardwise.passes import run_pass as run_ours


def _stablehlo_mesh(*axes: tuple[str, int]) -> str:
    body = ", ".join(f'#stablehlo.mesh_axis<name = "{n}", size = {s}>' for n, s in axes)
    return f"#stablehlo.mesh<axes = [{body}]>"


def _groups(mesh: str, *axes: str) -> str:
    refs = ", ".join(f'#stablehlo.axis_ref<name = "{a}">' for a in axes)
    return f"#stablehlo.replica_group_mesh_axes<mesh = {mesh}, axes = [{refs}]>"


def _gather(result: str, operand: str, groups: str, out: str = "tensor<16x8xf32>") -> str:
    return (
        f'  {result} = "stablehlo.all_gather"({operand}) {{all_gather_dim = 0 : i64, '
        f"replica_groups = {groups}}} : (tensor<8x8xf32>) -> {out}\n"
    )


def _reduce(result: str, operand: str, groups: str) -> str:
    return (
        f'  {result} = "stablehlo.all_reduce"({operand}) ({{\n'
        "  ^bb0(%l: tensor<f32>, %r: tensor<f32>):\n"
        "    %s = stablehlo.maximum %l, %r : tensor<f32>\n"
        "    stablehlo.return %s : tensor<f32>\n"
        f"  }}) {{replica_groups = {groups}}} : (tensor<8x8xf32>) -> tensor<8x8xf32>\n"
    )


def _module(meshes: str, body: str, ret: str = "%x : tensor<8x8xf32>") -> str:
    return (
        meshes
        + 'func.func @main(%x: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@a, [{"p"}, {}]>})'
        + f" -> tensor<8x8xf32> {{\n{body}  return {ret}\n}}\n"
    )


MESH_A = 'sdy.mesh @a = <["p"=2, "q"=2]>\n'
PQ = _stablehlo_mesh(("p", 2), ("q", 2))
R4 = _stablehlo_mesh(("r", 4))

CASES = {
    # reduce first in the text, gathers lifted first (one walk per op kind)
    "walk_order_by_op_kind": _module(
        MESH_A,
        _reduce("%0", "%x", _groups(R4, "r"))
        + _gather("%1", "%0", _groups(PQ, "q"))
        + _gather("%2", "%0", _groups(R4, "r"), "tensor<32x8xf32>"),
        "%0 : tensor<8x8xf32>",
    ),
    # an inline mesh equal to @a still gets its own symbol, named after the collective's loc
    "equal_to_a_named_mesh": _module(MESH_A, _gather("%0", "%x", _groups(PQ, "p"))),
    "device_ids_dropped": _module(
        MESH_A,
        _gather(
            "%0",
            "%x",
            _groups(PQ[:-1] + ", device_ids = dense<[3, 1, 2, 0]> : tensor<4xi64>>", "p", "q"),
            "tensor<32x8xf32>",
        ),
    ),
    "reference_to_a_duplicate_mesh": _module(
        MESH_A + 'sdy.mesh @b = <["p"=2, "q"=2]>\n',
        _gather("%0", "%x", _groups("@b", "q")) + _gather("%1", "%x", _groups("@a", "p")),
    ),
    "no_mesh_symbol_at_all": (
        "func.func @main(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {\n"
        + _reduce("%0", "%x", _groups(R4, "r"))
        + "  return %0 : tensor<8x8xf32>\n}\n"
    ),
    "quoted_axis_name": _module(
        MESH_A,
        _gather("%0", "%x", _groups(_stablehlo_mesh(("my axis", 2)), "my axis")),
    ),
}

PASSES = ["sdy-lift-inlined-meshes", "sdy-inline-meshes", "sdy-propagation-pipeline"]


def _ours(text: str, spec: str, debug_info: bool) -> str:
    module = load_text(text)
    run_ours(module, spec)
    return write_text(module, debug_info=debug_info)


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("spec", PASSES)
@pytest.mark.parametrize("debug_info", [False, True], ids=["plain", "located"])
def test_matches_reference(name: str, spec: str, debug_info: bool) -> None:
    text = CASES[name]
    if debug_info:
        text = run_pass(text, None, debug_info=True)
    try:
        expected = run_pass(text, spec, debug_info=debug_info)
    except ReferenceError as e:
        with pytest.raises(ShardwiseError) as ours:
            _ours(text, spec, debug_info)
        location, message = e.diagnostics[0].split(": ", 1)
        assert message == ours.value.message
        if not debug_info:  # positions in the file read, as the reference's for unlocated input
            line, col = re.search(r":(\d+):(\d+)", location).groups()  # type: ignore[union-attr]
            assert (ours.value.location.line, ours.value.location.col) == (int(line), int(col))
        return
    assert _ours(text, spec, debug_info) == expected


def test_inline_meshes_fails_like_the_reference() -> None:
    """A replica group naming a mesh: the reference erases it and its verifier rejects it."""
    text = CASES["reference_to_a_duplicate_mesh"]
    with pytest.raises(ReferenceError):
        run_pass(text, "sdy-inline-meshes")
    with pytest.raises(ShardwiseError, match="mesh symbol 'b' not found"):
        _ours(text, "sdy-inline-meshes", False)


def test_lift_changes_every_case() -> None:
    for name, text in CASES.items():
        assert (
            run_pass(text, "sdy-lift-inlined-meshes").count("replica_group_mesh_axes<mesh = #") == 0
        ), name
