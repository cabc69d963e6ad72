"""Differential test of our export passes against the same-named Shardy passes.

For every case in `export_pass_cases.CASES` the reference runs the pass on the input text and
prints the module; we load the same text, run our pass on our IR and print it through MLIR
(`write_text`). The two texts must be equal. A case whose reference run fails must make ours
fail with the same message.
"""

from __future__ import annotations

import pytest

from shardwise.export.passes import PASSES
from shardwise.io.mlir import load_text, write_text
from shardwise.io.reference import ReferenceError, run_pass
from tests.differential.export_pass_cases import CASES, Case


def _options_text(options: dict[str, bool | str]) -> str:
    if not options:
        return ""
    return "{" + " ".join(f"{k}={str(v).lower()}" for k, v in options.items()) + "}"


def _input_text(case: Case) -> str:
    if case.pre is None:
        return case.text
    return run_pass(case.text, case.pre.split(","))


def _ours(text: str, case: Case) -> str:
    module = load_text(text)
    options = {k.replace("-", "_"): v for k, v in case.options.items()}
    PASSES[case.pass_name](module, **options)
    return write_text(module)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_export_pass_matches_reference(case: Case) -> None:
    text = _input_text(case)
    try:
        expected = run_pass(text, case.pass_name + _options_text(case.options))
    except ReferenceError as e:
        assert case.expect_error, f"the reference rejected the case: {e.diagnostics}"
        with pytest.raises(Exception) as ours:
            _ours(text, case)
        assert e.diagnostics[0].split(": ", 1)[1] in str(ours.value)
        return
    assert not case.expect_error, "the reference accepted a case meant to fail"
    assert _ours(text, case) == expected


def test_every_pass_has_cases() -> None:
    assert {c.pass_name for c in CASES} == set(PASSES)
