"""The fuzzer's own machinery: deterministic generation, printing, shrinking, the CLI."""

from __future__ import annotations

import pytest

from shardwise.fuzz import cli
from shardwise.fuzz.constructs import CONSTRUCT_KINDS
from shardwise.fuzz.generator import OP_KINDS, generate_module, generate_program
from shardwise.fuzz.program import AxisSpec, DimSpec, ShardingSpec, print_program
from shardwise.fuzz.runner import run_ours
from shardwise.fuzz.shrink import shrink_program
from shardwise.fuzz.worker import split_passes
from shardwise.io.reference import run_pass


def test_generation_is_deterministic() -> None:
    assert generate_module("seed-1") == generate_module("seed-1")
    assert generate_module("seed-1") != generate_module("seed-2")


def test_generator_covers_every_op_kind() -> None:
    kinds = {op.kind for i in range(150) for op in generate_program(f"cover-{i}").ops}
    assert set(OP_KINDS) <= kinds


@pytest.mark.parametrize(
    ("spec", "text"),
    [
        (ShardingSpec("mesh", (DimSpec(),)), "#sdy.sharding<@mesh, [{}]>"),
        (
            ShardingSpec(
                "m",
                (DimSpec((AxisSpec("x", 2, 2), AxisSpec("y")), False, 1), DimSpec(closed=False)),
                (AxisSpec("z"),),
            ),
            '#sdy.sharding<@m, [{"x":(2)2, "y", ?}p1, {?}], replicated={"z"}>',
        ),
    ],
    ids=["closed-empty", "sub-axis-open-priority-replicated"],
)
def test_sharding_text(spec: ShardingSpec, text: str) -> None:
    assert str(spec) == text


def test_shrink_keeps_the_property_and_gets_small() -> None:
    prog = next(
        p
        for p in (generate_program(f"shrink-{i}") for i in range(50))
        if len(p.ops) > 8 and any(op.kind == "dot_general" for op in p.ops)
    )

    def has_dot(candidate) -> bool:
        return any(op.kind == "dot_general" for op in candidate.ops)

    small = shrink_program(prog, has_dot)
    assert has_dot(small)
    assert [op.kind for op in small.ops if op.kind != "constant"] == ["dot_general"]
    assert all(a.sharding is None for a in small.args)
    assert "dot_general" in print_program(small)


SMALL = """sdy.mesh @mesh = <["x"=2]>
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<8xf32> {
  %0 = stablehlo.negate %arg0 : tensor<8xf32>
  return %0 : tensor<8xf32>
}
"""


@pytest.mark.parametrize(
    "name",
    [
        "sdy-basic-propagate",
        "sdy-aggressive-propagate{propagation-strategy=basic conservative-propagation=true}",
        "sdy-propagation-pipeline",
        "sdy-insert-explicit-reshards{enable-full-version=true}",
    ],
    ids=["plain", "options", "pipeline", "reshards"],
)
def test_any_registered_pass_runs_on_our_side(name: str) -> None:
    ok, text = run_ours(SMALL, name)
    assert ok, text
    assert text == run_pass(SMALL, name)


def test_unknown_pass_is_reported_not_raised() -> None:
    ok, text = run_ours(SMALL, "sdy-no-such-pass")
    assert not ok and "unknown pass" in text


def test_cli_zero_modules_prints_a_summary(capsys) -> None:
    assert cli.main(["--seed", "1", "--count", "0"]) == 0
    out = capsys.readouterr().out
    assert "modules: 0" in out
    assert "reference crashes" in out


def test_cli_rejects_bad_counts(capsys) -> None:
    assert cli.main(["--count", "-1"]) == 2
    assert "--count" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("spec", "passes"),
    [
        ("sdy-basic-propagate", ["sdy-basic-propagate"]),
        (
            "sdy-propagation-pipeline,sdy-reshard-to-collectives",
            ["sdy-propagation-pipeline", "sdy-reshard-to-collectives"],
        ),
        (
            "sdy-aggressive-propagate{propagation-strategy=basic,conservative-propagation=true}, "
            "sdy-insert-explicit-reshards",
            [
                "sdy-aggressive-propagate{propagation-strategy=basic,conservative-propagation=true}",
                "sdy-insert-explicit-reshards",
            ],
        ),
    ],
    ids=["one", "chain", "commas-in-options"],
)
def test_split_passes(spec: str, passes: list[str]) -> None:
    assert split_passes(spec) == passes


CONSTRUCT_TEXT = {
    "case": '"stablehlo.case"(',
    "optimization_barrier": "stablehlo.optimization_barrier",
    "call": "call @callee",
    "sharding_group": "group_id=",
    "manual_computation": "manual_axes={",
    "reshard": "sdy.reshard %",
}


@pytest.mark.parametrize("kind", CONSTRUCT_KINDS)
def test_each_construct_is_generated_and_printed(kind: str) -> None:
    prog = next(p for p in (generate_program(f"construct-{i}") for i in range(60)) if _has(p, kind))
    text = print_program(prog)
    assert CONSTRUCT_TEXT[kind] in text
    run_pass(text, None)  # the reference parses and verifies it


def _has(prog, kind: str) -> bool:
    return any(op.kind == kind for op in prog.ops)


def test_shrinking_rewires_values_a_case_branch_captures() -> None:
    prog = next(
        p
        for p in (generate_program(f"shrink-case-{i}") for i in range(80))
        if _has(p, "case") and len(p.ops) > 6
    )

    def has_case(candidate) -> bool:
        return _has(candidate, "case")

    small = shrink_program(prog, has_case)
    assert [op.kind for op in small.ops if op.kind != "constant"] == ["case"]
    assert not small.funcs
    run_pass(print_program(small), None)  # every captured value is still defined
