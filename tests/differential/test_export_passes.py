"""Differential test of our export passes against the same-named Shardy passes.

For every case in `export_pass_cases.CASES` the reference runs the pass on the input text and
prints the module; we load the same text, run our pass on our IR and print it through MLIR
(`write_text`). The two texts must be equal. A case whose reference run fails must make ours
fail with the same message.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings

from shardwise.errors import ShardwiseError
from shardwise.io.mlir import load_text, write_text
from shardwise.io.reference import ReferenceError, run_pass
from shardwise.passes import get_pass, pass_names
from tests.differential.export_pass_cases_cmv1 import CASES, Case
from tests.differential.export_strategies import sharded_module
from tests.differential.pipeline_prefixes import PROPAGATE_PASSES


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
    info = get_pass(case.pass_name)
    info.run(module, info.options_type(**options))
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


_LOCATED = [c for c in CASES if not c.expect_error]


@pytest.mark.parametrize("case", _LOCATED, ids=[c.id for c in _LOCATED])
def test_export_pass_locations_match_reference(case: Case) -> None:
    """The same cases with every op located: new ops get the reference's locations."""
    text = run_pass(_input_text(case), None, debug_info=True)
    expected = run_pass(text, case.pass_name + _options_text(case.options), debug_info=True)
    assert "loc(" in expected
    assert _ours(text, case) == expected


# Passes the reference (jaxlib 0.10.2) does not have; tested by hand-derived unit tests.
NOT_IN_REFERENCE = frozenset({"sdy-verify-unreduced-axes"})
# Export passes with differential tests of their own (test_<pass name>.py, and
# test_export_pipeline_verify.py for the pipeline).
_PARTITIONER_PASSES = frozenset(
    {
        "sdy-insert-explicit-reshards",
        "sdy-reshard-to-collectives",
        "sdy-export-pipeline",
        "sdy-drop-sharding-and-mesh",
        "sdy-explicit-gather-scatter-batching",
        "sdy-pad-for-divisibility",
        "sdy-resolve-permutation-factors",
        "sdy-convert-global-to-local",
    }
)


def test_every_pass_has_cases() -> None:
    passes = {
        name
        for name in pass_names()
        if get_pass(name).function.__module__.startswith("shardwise.export.")
        and name not in _PARTITIONER_PASSES
    }
    assert {c.pass_name for c in CASES} == passes - NOT_IN_REFERENCE


# -- pipelines ------------------------------------------------------------------------------


def _has_partitioner() -> bool:
    try:
        import shardwise.export.explicit_reshards.insert_explicit_reshards  # noqa: F401
    except ImportError:
        return False
    return True


_PIPELINE_INPUTS = {
    c.id: c
    for c in CASES
    if c.id
    in {
        "close-shardings/regions",
        "sink-data-flow-edges/after-propagation",
        "sink-data-flow-edges/debug-info",
        "constant-or-scalar-merger/after-splitter-and-propagation",
        "sharding-constraint-to-reshard/attrs-and-uses",
        "update-non-divisible-input-output-shardings/func-table",
        "remove-sharding-groups/flat-and-nested",
        "drop-sharding-rules/custom-kept",
    }
}
_EXPORT_OPTION_SETS = {
    "avoid-export": {"avoid-export-for-partitioning": True},
    "avoid-export-keep-rules-no-divisible": {
        "avoid-export-for-partitioning": True,
        "keep-sharding-rules": True,
        "update-non-divisible-input-output-shardings": False,
    },
    "avoid-export-debug": {
        "avoid-export-for-partitioning": True,
        "dump-sharding-origins": True,
        "dump-propagation-edges": True,
    },
    "default": {},
    "explicit-collectives": {"enable-insert-explicit-collectives": True},
}


@pytest.mark.parametrize("options_id", list(_EXPORT_OPTION_SETS))
@pytest.mark.parametrize("case_id", sorted(_PIPELINE_INPUTS))
def test_export_pipeline_matches_reference(case_id: str, options_id: str) -> None:
    from shardwise.export.export_pipeline import ExportOptions, export_pipeline

    options = _EXPORT_OPTION_SETS[options_id]
    if not options.get("avoid-export-for-partitioning") and not _has_partitioner():
        pytest.skip("insert_explicit_reshards is not available yet")
    text = _input_text(_PIPELINE_INPUTS[case_id])
    expected = run_pass(text, "sdy-export-pipeline" + _options_text(options))
    module = load_text(text)
    export_pipeline(module, ExportOptions(**{k.replace("-", "_"): v for k, v in options.items()}))
    assert write_text(module) == expected


_POST_PROPAGATION = [
    "sdy-export-named-computations",
    "sdy-propagate-to-func-results",
    "sdy-unflatten-call-graph",
    "symbol-dce",
    "sdy-insert-func-call-reshards",
    "sdy-export-pipeline{avoid-export-for-partitioning=true}",
]
_POST_PROPAGATION_INPUTS = {
    "named-computations": (
        "export-named-computations/after-propagation",
        "sdy-add-data-flow-edges,sdy-aggressive-propagate",
    ),
    "calls": ("propagate-to-func-results/main-and-private", "sdy-aggressive-propagate"),
}


_POST_PROPAGATION_DEDUP = [
    "sdy-propagate-to-func-results",
    "sdy-sink-func-data-flow-edges",
    *_POST_PROPAGATION[2:],
]
_POST_PROPAGATION_DEDUP_INPUTS = {
    "func-edges": (
        "sink-func-data-flow-edges/edges-only",
        "sdy-add-func-data-flow-edges,sdy-aggressive-propagate",
    ),
}


@pytest.mark.parametrize(
    ("input_id", "dedup"),
    [(i, False) for i in _POST_PROPAGATION_INPUTS]
    + [(i, True) for i in _POST_PROPAGATION_DEDUP_INPUTS],
)
def test_post_propagation_pipeline_matches_reference(input_id: str, dedup: bool) -> None:
    from shardwise.export.export_pipeline import ExportOptions, post_propagation_pipeline

    pytest.importorskip("shardwise.imports.symbol_dce")
    inputs = _POST_PROPAGATION_DEDUP_INPUTS if dedup else _POST_PROPAGATION_INPUTS
    case_id, pre = inputs[input_id]
    case = next(c for c in CASES if c.id == case_id)
    text = run_pass(case.text, pre.split(","))
    expected = run_pass(text, _POST_PROPAGATION_DEDUP if dedup else _POST_PROPAGATION)
    module = load_text(text)
    options = ExportOptions(avoid_export_for_partitioning=True)
    post_propagation_pipeline(module, dedup_functions_fully=dedup, options=options)
    assert write_text(module) == expected


# -- random signatures --------------------------------------------------------------------

_SIGNATURE_PASSES = [
    "sdy-update-non-divisible-input-output-shardings",
    "sdy-remove-sub-axes-in-input-output-shardings",
    "sdy-close-shardings",
    "sdy-inline-meshes",
]


@settings(max_examples=40)
@given(text=sharded_module())
def test_random_signatures_match_reference(text: str) -> None:
    for name in _SIGNATURE_PASSES:
        module = load_text(text)
        try:
            expected = run_pass(text, name)
        except ReferenceError as e:
            # e.g. sdy-close-shardings turns `{?}p0` into `{}p0`, which does not verify.
            get_pass(name).run(module)
            with pytest.raises(ShardwiseError) as ours:
                write_text(module)
            assert e.diagnostics[0].split(": ", 1)[1] in str(ours.value)
            continue
        get_pass(name).run(module)
        assert write_text(module) == expected, name


# -- model corpus -------------------------------------------------------------------------

_MODELS_DIR = Path(__file__).parent.parent / "models" / "data"
_MODELS = sorted(p.name for p in _MODELS_DIR.glob("*.mlir"))
# Shardy's propagation pipeline up to and including propagation (default mode).
_PROPAGATE = list(PROPAGATE_PASSES)


_MODEL_EXPORT_MODES = {
    "avoid-export": {"avoid-export-for-partitioning": True},
    "default": {},
    "explicit-collectives": {"enable-insert-explicit-collectives": True},
    "explicit-collectives-cmv1": {
        "enable-insert-explicit-collectives": True,
        "remove-all-gather-reduce-scatter-for-cmv1": True,
    },
}


@pytest.mark.parametrize("model", _MODELS)
def test_models_post_propagation_matches_reference(model: str) -> None:
    """Real JAX programs, propagated by the reference, then exported by both (four modes)."""
    from shardwise.export.export_pipeline import ExportOptions, post_propagation_pipeline

    pytest.importorskip("shardwise.imports.symbol_dce")
    text = run_pass((_MODELS_DIR / model).read_text(), _PROPAGATE)
    for mode, options in _MODEL_EXPORT_MODES.items():
        if not options.get("avoid-export-for-partitioning") and not _has_partitioner():
            continue
        export = "sdy-export-pipeline" + _options_text(options)
        expected = run_pass(text, [*_POST_PROPAGATION[:-1], export])
        module = load_text(text)
        export_options = ExportOptions(**{k.replace("-", "_"): v for k, v in options.items()})
        post_propagation_pipeline(module, options=export_options)
        assert write_text(module) == expected, mode
