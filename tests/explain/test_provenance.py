"""Explain: one small hand-built module per reason an axis stops, provenance chains, invariance.

The expected reasons are read off each op's rule in Shardy notation (the table in
`shardwise.explain.provenance`), not from our output.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from shardwise.explain.run import all_keys, explain_module, find_keys
from shardwise.explain.text import format_explanation
from shardwise.io.mlir import load_text, write_text
from shardwise.propagation.options import PropagationOptions
from shardwise.propagation.pipeline import propagation_pipeline

MESH = 'sdy.mesh @mesh = <["x"=2, "y"=4]>'


def sharded(spec: str) -> str:
    return "{sdy.sharding = #sdy.sharding<@mesh, " + spec.replace("'", '"') + ">}"


def module(args: str, body: list[str], result: str, mesh: str = MESH) -> str:
    lines = ["module {", "  " + mesh, "  func.func @main(" + args + ") -> " + result + " {"]
    lines += ["    " + line for line in body] + ["  }", "}", ""]
    return "\n".join(lines)


T8 = "tensor<8xf32>"
CASES = [
    # ([i, k], [k, j]) -> ([i, j]) reduction={k}: "y" on k cannot reach the result.
    pytest.param(
        module(
            "%arg0: tensor<8x16xf32> " + sharded("[{'x'}, {'y'}]") + ", %arg1: tensor<16x8xf32>",
            [
                "%0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0]"
                " : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>",
                "return %0 : tensor<8x8xf32>",
            ],
            "tensor<8x8xf32>",
        ),
        "%0",
        '"y"',
        "reduction factor k",
        id="reduction",
    ),
    # broadcast_in_dim ([j]) -> ([i, j]): factor i is not in the operand.
    pytest.param(
        module(
            "%arg0: tensor<8xf32>, %arg1: tensor<16x8xf32> " + sharded("[{'y'}, {'x'}]"),
            [
                "%0 = stablehlo.broadcast_in_dim %arg0, dims = [1]"
                " : (tensor<8xf32>) -> tensor<16x8xf32>",
                "%1 = stablehlo.add %0, %arg1 : tensor<16x8xf32>",
                "return %1 : tensor<16x8xf32>",
            ],
            "tensor<16x8xf32>",
        ),
        "main:arg0",
        '"y"',
        "factor i is not in this tensor",
        id="not-in-tensor",
    ),
    # add ([i], [i]) -> ([i]): the second operand's only dim is closed and empty.
    pytest.param(
        module(
            "%arg0: tensor<8xf32> "
            + sharded("[{'x'}]")
            + ", %arg1: tensor<8xf32> "
            + sharded("[{}]"),
            ["%0 = stablehlo.add %arg0, %arg1 : tensor<8xf32>", "return %0 : tensor<8xf32>"],
            T8,
        ),
        "main:arg1",
        '"x"',
        "closed dimension",
        id="closed",
    ),
    pytest.param(
        module(
            "%arg0: tensor<8xf32> "
            + sharded("[{'x'}]")
            + ", %arg1: tensor<8xf32> "
            + sharded("[{?}], replicated={'x'}"),
            ["%0 = stablehlo.add %arg0, %arg1 : tensor<8xf32>", "return %0 : tensor<8xf32>"],
            T8,
        ),
        "main:arg1",
        '"x"',
        "explicitly replicated",
        id="replicated",
    ),
    # add: both operands shard factor i, with "x" and with "y"; the result keeps one.
    pytest.param(
        module(
            "%arg0: tensor<8xf32> "
            + sharded("[{'x', ?}]")
            + ", %arg1: tensor<8xf32> "
            + sharded("[{'y', ?}]"),
            ["%0 = stablehlo.add %arg0, %arg1 : tensor<8xf32>", "return %0 : tensor<8xf32>"],
            T8,
        ),
        "%0",
        None,
        "conflict: another tensor shards factor i with",
        id="conflict",
    ),
    pytest.param(
        module(
            '%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}, '
            '%arg1: tensor<8xf32> {sdy.sharding = #sdy.sharding<@other, [{"z"}]>}',
            ["%0 = stablehlo.add %arg0, %arg1 : tensor<8xf32>", "return %0 : tensor<8xf32>"],
            T8,
            mesh='sdy.mesh @mesh = <["x"=2]>\n  sdy.mesh @other = <["z"=2]>',
        ),
        "main:arg0",
        '"z"',
        "different meshes",
        id="different-meshes",
    ),
    pytest.param(
        module(
            "%arg0: tensor<8xf32> " + sharded("[{'x'}]"),
            [
                "%0 = stablehlo.custom_call @some_unknown_target(%arg0)"
                " : (tensor<8xf32>) -> tensor<8xf32>",
                "return %0 : tensor<8xf32>",
            ],
            T8,
        ),
        "%0",
        '"x"',
        "no rule",
        id="no-rule",
    ),
    # mhlo.topk ([i, j])->([i, k], [i, k]) blocked_propagation={k}: the sorted dim stays.
    pytest.param(
        module(
            "%arg0: tensor<8x16xf32> " + sharded("[{'x'}, {'y'}]"),
            [
                "%0:2 = stablehlo.custom_call @mhlo.topk(%arg0) {mhlo.attributes = {k = 4 : i64,"
                " largest = true}} : (tensor<8x16xf32>) -> (tensor<8x4xf32>, tensor<8x4xi32>)",
                "return %0#0 : tensor<8x4xf32>",
            ],
            "tensor<8x4xf32>",
        ),
        "%0#0",
        '"y"',
        "blocked factor",
        id="blocked",
    ),
    # add: "x" (priority 0) reaches the result in user-priority round 0; "y" (priority 1) comes
    # later and cannot extend it.
    pytest.param(
        module(
            "%arg0: tensor<8xf32> "
            + sharded("[{'x', ?}p0]")
            + ", %arg1: tensor<8xf32> "
            + sharded("[{'y', ?}p1]"),
            ["%0 = stablehlo.add %arg0, %arg1 : tensor<8xf32>", "return %0 : tensor<8xf32>"],
            T8,
        ),
        "%0",
        '"y"',
        'conflict: factor i here already has ["x"] since stablehlo.add in aggressive strategy, '
        "user-priority round 0",
        id="priority-won",
    ),
    # reshape ([i, j])->([ij]) {i=6, j=4}: "y"=4 does not divide factor i (6); only the
    # sub-axis "y":(1)2 reaches the result.
    pytest.param(
        module(
            "%arg0: tensor<6x4xf32> " + sharded("[{'y'}, {}]"),
            [
                "%0 = stablehlo.reshape %arg0 : (tensor<6x4xf32>) -> tensor<24xf32>",
                "return %0 : tensor<24xf32>",
            ],
            "tensor<24xf32>",
        ),
        "%0",
        '"y"',
        "non-divisible: factor i has size 6",
        id="non-divisible",
    ),
]


def _explain(text: str, name: str, **options):
    mod = load_text(text, "case.mlir")
    ex = explain_module(mod, PropagationOptions(**options))
    (key,) = find_keys(mod, name, None)
    return ex, ex.explain(key)


@pytest.mark.parametrize(("text", "name", "axis", "reason"), CASES)
def test_reason_for_a_missing_axis(text: str, name: str, axis: str | None, reason: str) -> None:
    ex, exp = _explain(text, name)
    found = [b for b in exp.blocked if axis is None or b.axis == axis]
    assert any(reason in b.reason for b in found), format_explanation(ex, exp)


def test_the_chain_goes_back_to_the_annotation() -> None:
    text = module(
        "%arg0: tensor<8xf32> " + sharded("[{'x'}]"),
        [
            "%0 = stablehlo.negate %arg0 : tensor<8xf32>",
            "%1 = stablehlo.abs %0 : tensor<8xf32>",
            "return %1 : tensor<8xf32>",
        ],
        T8,
    )
    ex, exp = _explain(text, "%1")
    chain = exp.chains['"x"']
    assert [o.op.name if o.op is not None else None for o in chain] == [
        "stablehlo.abs",
        "stablehlo.negate",
        None,
    ]
    # The first run (user-priority round 0, op-priority round 0: elementwise ops forward) moves it.
    assert chain[0].round == "aggressive strategy, user-priority round 0, op-priority round 0"
    text_out = format_explanation(ex, exp)
    assert "user annotation/constraint on main:arg0" in text_out
    assert "case.mlir:5:" in text_out  # the abs op's location


CORPUS = sorted((Path(__file__).parents[1] / "models" / "data").glob("*.mlir"))


@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_corpus_every_value_is_explained_and_output_is_unchanged(path: Path) -> None:
    text = path.read_text()
    plain = load_text(text, str(path))
    propagation_pipeline(plain)
    observed = load_text(text, str(path))
    ex = explain_module(observed)
    assert write_text(observed) == write_text(plain)
    keys = all_keys(observed)
    assert keys
    for key in keys:
        exp = ex.explain(key)
        axes = set(exp.chains)
        assert all(exp.chains[a] for a in axes), (path.name, exp.name)
        assert format_explanation(ex, exp).startswith(exp.name)


RESHAPE_2X16 = module(
    "%arg0: tensor<2x16xf32>, %arg1: tensor<32xf32> " + sharded("[{'y'}]"),
    [
        "%0 = stablehlo.reshape %arg0 : (tensor<2x16xf32>) -> tensor<32xf32>",
        "%1 = stablehlo.add %0, %arg1 : tensor<32xf32>",
        "return %1 : tensor<32xf32>",
    ],
    "tensor<32xf32>",
)


def test_conservative_mode_does_not_split_axes() -> None:
    # ([i, j])->([ij]) {i=2, j=16}: "y"=4 must split into "y":(1)2 and "y":(2)2.
    ex, exp = _explain(RESHAPE_2X16, "main:arg0", conservative_propagation=True)
    reasons = {b.axis: b.reason for b in exp.blocked}
    assert reasons['"y":(1)2'].startswith("conservative mode"), format_explanation(ex, exp)


def test_sub_axes_chain_back_to_the_whole_axis() -> None:
    ex, exp = _explain(RESHAPE_2X16, "main:arg0")
    assert exp.propagated is not None  # the export steps drop it; propagation had it
    chain = exp.chains['"y":(1)2']
    assert [o.op.name if o.op is not None else None for o in chain] == [
        "stablehlo.reshape",
        "stablehlo.add",
        None,
    ], format_explanation(ex, exp)
    assert ex.observer.origins  # recorded during the real pipeline
