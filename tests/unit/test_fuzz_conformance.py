"""The fuzzer's extras (`fuzz.conformance`): quoted callee names, ops of an unregistered
dialect, reshard chains, mesh-axes replica groups; the modules stay valid for the reference."""

from __future__ import annotations

import pytest

from shardwise.fuzz.generator import generate_module, generate_program
from shardwise.fuzz.program import symbol
from shardwise.io.reference import run_pass

SEEDS = [f"extras-{i}" for i in range(40)]


@pytest.mark.parametrize(
    ("name", "text"), [("main", "@main"), ("my-fn0", '@"my-fn0"'), ("a.b$c", "@a.b$c")]
)
def test_symbol_quotes_when_needed(name: str, text: str) -> None:
    assert symbol(name) == text


@pytest.fixture(scope="module")
def modules() -> list[str]:
    return [generate_module(s) for s in SEEDS]


@pytest.mark.parametrize(
    "marker",
    [
        'func.call @"my-fn',
        '"fuzz.opaque"(',
        '"vendor.fused_kernel"(',
        "sdy.reshard %r0 ",
        "replica_group_mesh_axes<mesh = #stablehlo.mesh<axes = [",
        "replica_group_mesh_axes<mesh = @",
        " loc(",
    ],
)
def test_extras_are_generated(modules: list[str], marker: str) -> None:
    assert any(marker in m for m in modules)


def test_duplicate_reshards_and_reshaped_reshards_are_generated(modules: list[str]) -> None:
    programs = [generate_program(s) for s in SEEDS]
    reshards_of_one_value = 0
    for prog in programs:
        sources = [op.operands[0] for op in prog.ops if op.kind == "reshard"]
        reshards_of_one_value += len(sources) != len(set(sources))
    assert reshards_of_one_value > 0


def test_generation_is_deterministic() -> None:
    assert generate_module("extras-3") == generate_module("extras-3")


def test_every_module_parses_in_the_reference(modules: list[str]) -> None:
    for text in modules:
        run_pass(text, None, allow_unregistered_dialect=True)


def test_located_modules_compare_with_locations() -> None:
    """A module with explicit locations is printed with them on both sides (positions named
    "-" as the reference names its input)."""
    from shardwise.fuzz.runner import run_ours

    text = next(m for m in (generate_module(f"extras-{i}") for i in range(40)) if " loc(" in m)
    expected = run_pass(
        text, "sdy-propagation-pipeline", debug_info=True, allow_unregistered_dialect=True
    )
    assert run_ours(text, "sdy-propagation-pipeline") == (True, expected)
