"""Differential test of ``sdy-insert-explicit-reshards`` (both versions) against Shardy.

Inputs are propagated modules, as the pass sees them in the pipeline: every corpus model run
through the reference's propagation and export prefix (`PREFIX`), and our own cases
(`explicit_reshards_cases`), some hand-sharded and some propagated the same way. For each
input and each version the reference's printout must equal ours exactly; a subset is also
compared with locations printed (new ops get the location of the value they consume).
"""

from __future__ import annotations

import functools
import warnings
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from shardwise.errors import InternalError, VerifyError
from shardwise.export.explicit_reshards.insert_explicit_reshards import insert_explicit_reshards
from shardwise.io.mlir import load_text, write_text
from shardwise.io.reference import ReferenceError, run_pass
from tests.differential.explicit_reshards_cases import CASES as BASIC_CASES
from tests.differential.explicit_reshards_cases import Case
from tests.differential.explicit_reshards_more_cases import CASES as MORE_CASES
from tests.differential.explicit_reshards_strategies import single_op_modules
from tests.differential.pipeline_prefixes import PROPAGATE_PASSES

CASES = BASIC_CASES + MORE_CASES
CORPUS = sorted((Path(__file__).parent.parent / "models" / "data").glob("*.mlir"))

# Shardy's propagation pipeline up to (not including) the partitioner steps of the export.
PREFIX = [
    *PROPAGATE_PASSES,
    "sdy-export-named-computations",
    "sdy-propagate-to-func-results",
    "sdy-unflatten-call-graph",
    "symbol-dce",
    "sdy-insert-func-call-reshards",
    "sdy-constant-or-scalar-merger",
    "sdy-sink-data-flow-edges",
    "sdy-remove-sharding-groups",
    "sdy-sharding-constraint-to-reshard",
    "sdy-update-non-divisible-input-output-shardings",
    "sdy-remove-sub-axes-in-input-output-shardings",
    "sdy-close-shardings",
]
VERSIONS = {"default": False, "full": True}
_PASS = "sdy-insert-explicit-reshards"


@functools.cache
def _corpus_input(stem: str) -> str:
    return run_pass((Path(CORPUS[0]).parent / f"{stem}.mlir").read_text(), PREFIX)


@functools.cache
def _case_input(case: Case) -> str:
    return run_pass(case.text, PREFIX) if case.propagate else case.text


@functools.cache
def _reference(text: str, full: bool, debug_info: bool = False) -> str:
    option = "{enable-full-version=true}" if full else ""
    return run_pass(text, _PASS + option, debug_info=debug_info)


def _ours(text: str, full: bool) -> str:
    module = load_text(text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # unknown-op warnings of the rule registry
        insert_explicit_reshards(module, full)
    return write_text(module)


@pytest.mark.parametrize("version", list(VERSIONS))
@pytest.mark.parametrize("stem", [p.stem for p in CORPUS])
def test_corpus_model_matches_reference(stem: str, version: str) -> None:
    text = _corpus_input(stem)
    assert _ours(text, VERSIONS[version]) == _reference(text, VERSIONS[version])


@pytest.mark.parametrize("version", list(VERSIONS))
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_own_case_matches_reference(case: Case, version: str) -> None:
    text = _case_input(case)
    assert _ours(text, VERSIONS[version]) == _reference(text, VERSIONS[version])


_LOCATED = [
    c for c in CASES if c.id.split("/")[0] in {"add", "reshape", "while", "call", "unreduced"}
]


@pytest.mark.parametrize("case", _LOCATED, ids=[c.id for c in _LOCATED])
def test_new_ops_get_the_reference_locations(case: Case) -> None:
    text = run_pass(_case_input(case), None, debug_info=True)
    expected = _reference(text, True, debug_info=True)
    assert "loc(" in expected
    assert _ours(text, True) == expected


def test_own_cases_insert_something() -> None:
    """The cases are not vacuous: most of them make the full version insert ops."""
    changed = sum(
        _reference(_case_input(c), True).count("sdy.") > _case_input(c).count("sdy.") for c in CASES
    )
    assert changed >= 0.8 * len(CASES)


@settings(max_examples=40)
@given(text=single_op_modules(), full=st.booleans())
def test_random_single_op_modules_match_reference(text: str, full: bool) -> None:
    """Random shardings around one op. Where ours finds the shardings inconsistent (the
    reference aborts the process there, so it is not run) or the output does not verify
    (then the reference rejects it too), both must fail."""
    module = load_text(text)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            insert_explicit_reshards(module, full)
    except InternalError:
        assume(False)
    try:
        ours = write_text(module)
    except VerifyError:
        with pytest.raises(ReferenceError):
            _reference(text, full)
        return
    assert ours == _reference(text, full)
