"""The fuzzer's own machinery: deterministic generation, printing, shrinking, the CLI."""

from __future__ import annotations

import pytest

from shardwise.fuzz import cli
from shardwise.fuzz.generator import OP_KINDS, generate_module, generate_program
from shardwise.fuzz.program import AxisSpec, DimSpec, ShardingSpec, print_program
from shardwise.fuzz.runner import _split_pass
from shardwise.fuzz.shrink import shrink_program


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


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("sdy-basic-propagate", ("sdy-basic-propagate", {})),
        (
            "sdy-aggressive-propagate{propagation-strategy=basic conservative-propagation=true}",
            (
                "sdy-aggressive-propagate",
                {"propagation-strategy": "basic", "conservative-propagation": "true"},
            ),
        ),
    ],
    ids=["plain", "options"],
)
def test_pass_spelling(name: str, expected) -> None:
    assert _split_pass(name) == expected


def test_cli_zero_modules_prints_a_summary(capsys) -> None:
    assert cli.main(["--seed", "1", "--count", "0"]) == 0
    out = capsys.readouterr().out
    assert "modules: 0" in out
    assert "reference crashes" in out


def test_cli_rejects_bad_counts(capsys) -> None:
    assert cli.main(["--count", "-1"]) == 2
    assert "--count" in capsys.readouterr().err
