"""The four propagation passes against Shardy, printed module for printed module.

* every corpus model (tests/models/data/*.mlir) x the four passes;
* every shrunk fuzzer finding kept in tests/differential/regressions/ (each file names the pass
  it diverged on in a ``// pass:`` line; all four default passes run on it too);
* hand-written cases, one per behaviour (propagation_reference_cases.py);
* a small fixed-seed fuzz campaign.

One persistent reference worker (a child process that forks per module) serves the whole
module, and all passes of one input go in one request.
"""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest

from shardwise.fuzz.runner import PASS_NAMES, run_campaign, run_ours
from shardwise.fuzz.worker import ReferenceWorker
from tests.differential.propagation_reference_cases import CASES

pytest.importorskip("jax")

HERE = Path(__file__).parent
MODELS = sorted((HERE.parent / "models" / "data").glob("*.mlir"))
REGRESSIONS = sorted((HERE / "regressions").glob("*.mlir"))
FUZZ_SEED = 2026
FUZZ_COUNT = 40


@pytest.fixture(scope="module")
def reference():
    """(text, passes) -> per pass (ok, printed module); cached, one worker for the module."""
    cache: dict[tuple[str, tuple[str, ...]], tuple[tuple[bool, str], ...]] = {}
    with ReferenceWorker(timeout=300) as worker:

        def run(text: str, passes: tuple[str, ...]) -> tuple[tuple[bool, str], ...]:
            key = (text, passes)
            if key not in cache:
                outcome = worker.run(text, list(passes))
                assert outcome.parsed, f"the reference rejected the input: {outcome.error}"
                if outcome.crashed or any(outcome.pass_crashed):
                    pytest.skip("the reference crashed on this input")
                cache[key] = outcome.outputs
            return cache[key]

        yield run


def _assert_same(ref: tuple[bool, str], text: str, pass_name: str) -> None:
    ok, ours = run_ours(text, pass_name)
    assert ref[0], f"the reference failed: {ref[1][:500]}"
    assert ok, f"ours failed: {ours}"
    if ours != ref[1]:
        diff = difflib.unified_diff(
            ref[1].splitlines(), ours.splitlines(), "reference", "shardwise", lineterm="", n=1
        )
        pytest.fail(f"{pass_name} differs:\n" + "\n".join(diff))


@pytest.mark.parametrize("pass_name", PASS_NAMES)
@pytest.mark.parametrize("model", MODELS, ids=lambda p: p.stem)
def test_corpus_model(reference, model: Path, pass_name: str) -> None:
    text = model.read_text()
    outputs = reference(text, PASS_NAMES)
    _assert_same(outputs[PASS_NAMES.index(pass_name)], text, pass_name)


def _regression_passes(text: str) -> tuple[str, ...]:
    named = [
        line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("// pass:")
    ]
    return tuple(dict.fromkeys(named + list(PASS_NAMES)))


def _regression_ids() -> list:
    return [
        pytest.param(path, p, id=f"{path.stem}-{p}")
        for path in REGRESSIONS
        for p in _regression_passes(path.read_text())
    ]


@pytest.mark.parametrize(("path", "pass_name"), _regression_ids())
def test_regression(reference, path: Path, pass_name: str) -> None:
    text = path.read_text()
    passes = _regression_passes(text)
    outputs = reference(text, passes)
    _assert_same(outputs[passes.index(pass_name)], text, pass_name)


def _case_ids() -> list:
    return [
        pytest.param(name, p, id=f"{name}-{p}")
        for name, (_, passes) in CASES.items()
        for p in passes
    ]


@pytest.mark.parametrize(("case", "pass_name"), _case_ids())
def test_behaviour_case(reference, case: str, pass_name: str) -> None:
    text, passes = CASES[case]
    outputs = reference(text, passes)
    _assert_same(outputs[passes.index(pass_name)], text, pass_name)


@pytest.fixture(scope="module")
def fuzz_report():
    return run_campaign(FUZZ_SEED, FUZZ_COUNT, PASS_NAMES, shrink=False)


@pytest.mark.parametrize("pass_name", PASS_NAMES)
def test_fixed_seed_fuzz_campaign(fuzz_report, pass_name: str) -> None:
    assert fuzz_report.modules == FUZZ_COUNT
    found = [d for d in fuzz_report.divergences if d.pass_name == pass_name]
    assert not found, (
        "diverging modules (rerun `shardwise fuzz --seed {} --count {} --pass {}` "
        "to shrink them): {}".format(
            FUZZ_SEED, FUZZ_COUNT, pass_name, ", ".join(f"{d.seed} ({d.reason})" for d in found)
        )
    )
    crashed = fuzz_report.crashes
    assert fuzz_report.matches.get(pass_name, 0) + crashed >= FUZZ_COUNT
