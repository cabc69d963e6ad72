"""Explain: one small hand-built module per reason an axis stops, provenance chains, invariance.

The expected reasons are read off each op's rule in Shardy notation (the table in
`shardwise.explain.provenance`), not from our output.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from shardwise.explain.run import all_keys, explain_module, find_keys, key_name
from shardwise.explain.text import format_explanation
from shardwise.io.mlir import load_text, write_text
from shardwise.io.reference import run_pass
from shardwise.propagation.options import PropagationOptions
from shardwise.propagation.propagation_pipeline import propagation_pipeline

MESH = 'sdy.mesh @mesh = <["x"=2, "y"=4]>'
PIPELINE = "sdy-propagation-pipeline"


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
        "reduction",
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
        "not-in-tensor",
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
        "closed",
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
        "replicated",
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
        "conflict-tensor",
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
        "different-meshes",
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
        "no-rule",
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
        "blocked",
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
        'priority not yet reached: "y" comes from a dim with priority p1, which propagates after '
        'p0; conflict: factor i here already has ["x"] since stablehlo.add in aggressive strategy, '
        "user-priority round 0",
        "priority",
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
        "non-divisible",
        id="non-divisible",
    ),
    # sort along dim 1: ([i, j])->([i, j]) need_replication={j}. The add (elementwise, op-priority
    # round 0) puts "y" on dim 0 of %0 before the sort may move its need-replication factor j
    # (op-priority round 3, after the pass-through-only rounds): "y" of %arg0's dim 1 loses.
    pytest.param(
        module(
            "%arg0: tensor<8x16xf32> "
            + sharded("[{?}, {'y', ?}]")
            + ", %arg1: tensor<8x16xf32> "
            + sharded("[{'y', ?}, {?}]"),
            [
                '%0 = "stablehlo.sort"(%arg0) <{dimension = 1 : i64, is_stable = false}> ({',
                "^bb0(%a: tensor<f32>, %b: tensor<f32>):",
                "  %c = stablehlo.compare GT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>",
                "  stablehlo.return %c : tensor<i1>",
                "}) : (tensor<8x16xf32>) -> tensor<8x16xf32>",
                "%1 = stablehlo.add %0, %arg1 : tensor<8x16xf32>",
                "return %1 : tensor<8x16xf32>",
            ],
            "tensor<8x16xf32>",
        ),
        "%0",
        '"y"',
        "need-replication factor j: stablehlo.sort propagates it only from op-priority round 3"
        " (not a pass-through factor); by then, conflict: lost to factor i, which already uses"
        ' "y" here since stablehlo.add',
        "need-replication",
        id="need-replication",
    ),
    # slice of dim 1: ([i, j])->([i, j]) permutation={j}; the same race as above.
    pytest.param(
        module(
            "%arg0: tensor<8x16xf32> "
            + sharded("[{?}, {'y', ?}]")
            + ", %arg1: tensor<8x8xf32> "
            + sharded("[{'y', ?}, {?}]"),
            [
                "%0 = stablehlo.slice %arg0 [0:8, 0:8] : (tensor<8x16xf32>) -> tensor<8x8xf32>",
                "%1 = stablehlo.add %0, %arg1 : tensor<8x8xf32>",
                "return %1 : tensor<8x8xf32>",
            ],
            "tensor<8x8xf32>",
        ),
        "%0",
        '"y"',
        "permutation factor j: stablehlo.slice propagates it only from op-priority round 3",
        "permutation",
        id="permutation",
    ),
    # add ([i, j], [i, j])->([i, j]): "x" on i of %arg0 and "x" on j of %arg1 (both closed)
    # meet on the result; an axis shards one dim only and factor i (the first) takes it.
    pytest.param(
        module(
            "%arg0: tensor<8x8xf32> "
            + sharded("[{'x'}, {}]")
            + ", %arg1: tensor<8x8xf32> "
            + sharded("[{}, {'x'}]"),
            [
                "%0 = stablehlo.add %arg0, %arg1 : tensor<8x8xf32>",
                "return %0 : tensor<8x8xf32>",
            ],
            "tensor<8x8xf32>",
        ),
        "%0",
        '"x"',
        "conflict: lost to factor",
        "conflict",
        id="conflict-lost-to-factor",
    ),
    # shard_map: "x" is manual in the body; the body's tensors hold their local shard and never
    # carry "x" ("y", a free axis, crosses the body's edges).
    pytest.param(
        module(
            "%arg0: tensor<8x8xf32> " + sharded("[{'x'}, {'y'}]"),
            [
                '%0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {?}]>]'
                ' out_shardings=[<@mesh, [{"x"}, {?}]>] manual_axes={"x"}'
                " (%arg1: tensor<4x8xf32>) {",
                "  %1 = stablehlo.negate %arg1 : tensor<4x8xf32>",
                "  sdy.return %1 : tensor<4x8xf32>",
                "} : (tensor<8x8xf32>) -> tensor<8x8xf32>",
                "return %0 : tensor<8x8xf32>",
            ],
            "tensor<8x8xf32>",
        ),
        "%1",
        '"x"',
        'manual axis: "x" is manual in the sdy.manual_computation',
        "manual",
        id="manual",
    ),
]


def _explain(text: str, name: str, **options):
    mod = load_text(text, "case.mlir")
    ex = explain_module(mod, PropagationOptions(**options))
    (key,) = find_keys(mod, name, None)
    return ex, ex.explain(key)


@pytest.mark.parametrize(("text", "name", "axis", "reason", "kind"), CASES)
def test_reason_for_a_missing_axis(
    text: str, name: str, axis: str | None, reason: str, kind: str
) -> None:
    ex, exp = _explain(text, name)
    found = [b for b in exp.blocked if axis is None or b.axis == axis]
    assert any(reason in b.reason and b.kind == kind for b in found), format_explanation(ex, exp)


@pytest.mark.parametrize(("text", "name", "axis", "reason", "kind"), CASES)
def test_the_cases_propagate_as_shardy_does(text, name, axis, reason, kind) -> None:
    """Each hand-built case is real: our pipeline prints what Shardy's prints."""
    ours = load_text(text, "case.mlir")
    propagation_pipeline(ours)
    assert write_text(ours) == write_text(load_text(run_pass(text, PIPELINE), "ref.mlir"))


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


NAMED_REASONS = {
    "reduction",
    "need-replication",
    "permutation",
    "blocked",
    "not-in-tensor",
    "replicated",
    "conflict",
    "conflict-tensor",
    "closed",
    "priority",
    "non-divisible",
    "conservative",
    "manual",
    "no-rule",
    "different-meshes",
}
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
        # Every axis that stops has a named reason (not the strategy's catch-all).
        for b in exp.blocked:
            assert b.kind in NAMED_REASONS and b.reason, (path.name, exp.name, b)


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
    reasons = {b.axis: (b.kind, b.reason) for b in exp.blocked}
    kind, reason = reasons['"y":(1)2']
    assert kind == "conservative", format_explanation(ex, exp)
    assert reason.startswith("conservative mode"), format_explanation(ex, exp)


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


# x @ w1 -> tanh -> @ w2 -> + b: "model" shards the hidden dim (w1's columns, w2's rows), a
# reduction factor of the second dot, so it never reaches %2, %3 or the result.
MLP = module(
    "%arg0: tensor<8x16xf32> "
    + sharded("[{'x'}, {}]")
    + ", %arg1: tensor<16x32xf32> "
    + sharded("[{}, {'y'}]")
    + ", %arg2: tensor<32x16xf32> "
    + sharded("[{'y'}, {}]")
    + ", %arg3: tensor<8x16xf32>",
    [
        "%0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0]"
        " : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>",
        "%1 = stablehlo.tanh %0 : tensor<8x32xf32>",
        "%2 = stablehlo.dot_general %1, %arg2, contracting_dims = [1] x [0]"
        " : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>",
        "%3 = stablehlo.add %2, %arg3 : tensor<8x16xf32>",
        "return %3 : tensor<8x16xf32>",
    ],
    "tensor<8x16xf32>",
)


@pytest.mark.parametrize(
    ("name", "path"),
    [
        ("%2", ["%1", "%2"]),  # adjacent: the second dot itself
        ("%3", ["%1", "%2", "%3"]),
        ("main:result0", ["%1", "%2", "%3", "main:result0"]),
        ("main:arg3", ["%1", "%2", "main:arg3"]),  # the bias, through the add
    ],
    ids=["adjacent", "after-the-add", "func-result", "bias"],
)
def test_an_axis_further_away_stops_at_the_reduction(name: str, path: list[str]) -> None:
    ex, exp = _explain(MLP, name)
    (model,) = [b for b in exp.blocked if b.axis == '"y"']
    text = format_explanation(ex, exp)
    assert model.kind == "reduction", text
    assert (model.op.name, model.op.location.line, model.factor) == (
        "stablehlo.dot_general",
        6,
        "k",
    )
    names = [key_name(ex.module, k) for k in (model.other, *model.path)]
    assert names == (path if len(path) > 2 else [path[0]]), text
    if len(path) > 2:
        assert f"(on %1, {len(path) - 1} ops away)" in text and "path: " + " -> ".join(path) in text


SORT = next(c.values[0] for c in CASES if c.id == "need-replication")
# sort along dim 1 alone: its pass-through factor i crosses in round 2, need-replication j in 3.
SORT_ALONE = module(
    "%arg0: tensor<8x16xf32> " + sharded("[{'x', ?}, {'y', ?}]"),
    [
        '%0 = "stablehlo.sort"(%arg0) <{dimension = 1 : i64, is_stable = false}> ({',
        "^bb0(%a: tensor<f32>, %b: tensor<f32>):",
        "  %c = stablehlo.compare GT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>",
        "  stablehlo.return %c : tensor<i1>",
        "}) : (tensor<8x16xf32>) -> tensor<8x16xf32>",
        "return %0 : tensor<8x16xf32>",
    ],
    "tensor<8x16xf32>",
)
USER_ROUNDS = module(
    "%arg0: tensor<8x8xf32> "
    + sharded("[{'x', ?}p0, {?}]")
    + ", %arg1: tensor<8x8xf32> "
    + sharded("[{?}, {'y', ?}p1]"),
    ["%0 = stablehlo.add %arg0, %arg1 : tensor<8x8xf32>", "return %0 : tensor<8x8xf32>"],
    "tensor<8x8xf32>",
)


def _round(ex, exp, axis: str) -> str:
    return exp.chains[axis][0].round


@pytest.mark.parametrize(
    ("text", "name", "axis", "expected"),
    [
        # The op schedule: rounds 0-1 move elementwise ops only, round 2 the pass-through
        # factors of any op (the dot's batch-like i), round 3 the rest (sort's j).
        (MLP, "%0", '"x"', "op-priority round 2"),
        # tanh moves it in the run that put it on %0
        (MLP, "%1", '"y"', "op-priority round 2"),
        (SORT, "%0", '"y"', "op-priority round 0"),  # from the add
        (SORT_ALONE, "%0", '"x"', "op-priority round 2"),
        (SORT_ALONE, "%0", '"y"', "op-priority round 3"),
        # A dim with priority p1 waits for the second user-priority round.
        (USER_ROUNDS, "%0", '"x"', "user-priority round 0, op-priority round 0"),
        (USER_ROUNDS, "%0", '"y"', "user-priority round 1, op-priority round 0"),
    ],
    ids=[
        "dot-round-2",
        "tanh-same-run",
        "add-round-0",
        "sort-pass-through-round-2",
        "sort-need-replication-round-3",
        "p0-first",
        "p1-second",
    ],
)
def test_the_round_of_a_step(text, name, axis, expected) -> None:
    ex, exp = _explain(text, name)
    assert expected in _round(ex, exp, axis), format_explanation(ex, exp)


@pytest.mark.parametrize(
    "text", [MLP, USER_ROUNDS, SORT_ALONE], ids=["mlp", "user-rounds", "sort-alone"]
)
def test_these_modules_propagate_as_shardy_does(text: str) -> None:
    ours = load_text(text, "case.mlir")
    propagation_pipeline(ours)
    assert write_text(ours) == write_text(load_text(run_pass(text, PIPELINE), "ref.mlir"))
