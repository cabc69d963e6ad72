"""Differential tests of the import passes: our pass vs Shardy's pass of the same name.

Every case runs the same MLIR text through the reference (``run_pass(text, name)``) and
through `shardwise.imports`, and compares the printed modules exactly, and the use-list order
of every value (not visible in the text, but it decides propagation order). Inputs: our own small
modules per pass (`import_cases`) and the JAX model corpus in tests/models/data/.
"""

from __future__ import annotations

import functools
import re
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shardwise.errors import VerifyError
from shardwise.io.mlir import load_text, write_text
from shardwise.io.reference import ReferenceError, run_pass
from shardwise.io.use_lists import our_use_lists, run_pass_with_use_lists
from shardwise.ir import Module, clone_op
from shardwise.passes import get_pass, pass_names
from shardwise.passes import run_pass as run_our_pass
from tests.differential import import_cases as cases
from tests.differential.import_strategies import import_modules
from tests.differential.pipeline_prefixes import IMPORT_HALF_PASSES

CORPUS = sorted((Path(__file__).parent.parent / "models" / "data").glob("*.mlir"))

# pass spec (possibly a list run in order) -> own inputs
OWN_CASES: dict[str, dict[str, str]] = {
    "symbol-dce": cases.SYMBOL_DCE,
    "sdy-lift-inlined-meshes": cases.LIFT_INLINED_MESHES,
    "sdy-remove-size-one-axes": cases.REMOVE_SIZE_ONE_AXES,
    "sdy-propagate-sharding-from-func-to-call": cases.PROPAGATE_SHARDING_FROM_FUNC_TO_CALL,
    "sdy-constant-or-scalar-splitter": cases.CONSTANT_OR_SCALAR_SPLITTER,
    "sdy-manual-axes-cleanup": cases.MANUAL_AXES_CLEANUP,
    "sdy-add-data-flow-edges": cases.ADD_DATA_FLOW_EDGES,
    "sdy-flatten-call-graph": cases.FLATTEN_CALL_GRAPH,
    "sdy-import-func-calls": cases.IMPORT_FUNC_CALLS,
    "sdy-import-func-calls{add-data-flow-edges-on-named-computations=false}": (
        cases.IMPORT_FUNC_CALLS
    ),
    "sdy-apply-sharding-constraints": cases.APPLY_SHARDING_CONSTRAINTS,
    "sdy-add-data-flow-edges,sdy-apply-sharding-constraints": (
        cases.APPLY_SHARDING_CONSTRAINTS_AFTER_EDGES
    ),
    "sdy-sharding-group-import": cases.SHARDING_GROUP_IMPORT,
    "sdy-pre-order-funcs": cases.PRE_ORDER_FUNCS,
    "sdy-add-func-data-flow-edges": cases.ADD_FUNC_DATA_FLOW_EDGES,
    "sdy-import-pipeline": cases.IMPORT_PIPELINE,
    "sdy-import-pipeline{dedup-functions-fully=true}": cases.IMPORT_PIPELINE,
}


@functools.lru_cache(maxsize=4)
def _loaded(text: str) -> Module:
    return load_text(text)


def _fresh(text: str) -> Module:
    """A private copy of the loaded module (cloning is ~8x faster than parsing again).

    A clone links uses in pre-order (as MLIR's clone does); the copy gets the parsed
    module's use order back, since that is what the reference starts from.
    """
    module = _loaded(text)
    mapping: dict = {}
    copy = Module(clone_op(module.op, mapping), filename=module.filename)
    ops = {id(a): b for a, b in zip(module.walk(), copy.walk(), strict=True)}
    for old, new in mapping.items():
        new.uses[:] = [(ops[id(op)], i) for op, i in old.uses]
    return copy


def _check(text: str, spec: str) -> None:
    """Same printed module and same use-list order (it steers later propagation)."""
    specs = spec.split(",")
    expected_text, expected_uses = run_pass_with_use_lists(text, specs)
    module = _fresh(text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for one in specs:
            run_our_pass(module, one)
    assert write_text(module, debug_info=False) == expected_text
    assert our_use_lists(module) == expected_uses


# Every import pass in the catalogue (declared in a module of shardwise.imports).
PASSES = sorted(
    n for n in pass_names() if get_pass(n).function.__module__.startswith("shardwise.imports.")
)


def test_every_pass_has_own_cases():
    covered = {s.split("{")[0] for spec in OWN_CASES for s in spec.split(",")}
    assert covered == set(PASSES)


@pytest.mark.parametrize(
    ("spec", "text"),
    [
        pytest.param(spec, text, id=f"{spec}-{case_id}")
        for spec, table in OWN_CASES.items()
        for case_id, text in table.items()
    ],
)
def test_own_inputs(spec: str, text: str):
    _check(text, spec)


@pytest.mark.parametrize("spec", [*PASSES, "IMPORT_HALF", "DEDUP_IMPORT_HALF"])
@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_model_corpus(spec: str, path: Path):
    spec = {"IMPORT_HALF": IMPORT_HALF, "DEDUP_IMPORT_HALF": DEDUP_IMPORT_HALF}.get(spec, spec)
    _check(path.read_text(), spec)


# -- errors: same failure, same wording ---------------------------------------------------------

ERROR_CASES = {
    "manual-axes-without-shardings": (
        "sdy-manual-axes-cleanup",
        """
sdy.mesh @mesh = <["a"=2]>
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  sdy.manual_computation() in_shardings=[] out_shardings=[] manual_axes={"a"} () {
    %1 = stablehlo.constant dense<1.0> : tensor<8xf32>
    sdy.return
  } : () -> ()
  return %arg0 : tensor<8xf32>
}
""",
        "op has manual_axes when there are no in/out shardings",
    ),
    "group-shapes-differ": (
        "sdy-sharding-group-import",
        """
func.func @main(%arg0: tensor<8xf32>, %arg1: tensor<4xf32>) -> tensor<8xf32> {
  sdy.sharding_group %arg0 group_id=0 : tensor<8xf32>
  sdy.sharding_group %arg1 group_id=0 : tensor<4xf32>
  return %arg0 : tensor<8xf32>
}
""",
        "ShardingGroupOps values must have the same shape for groupId: 0",
    ),
    "group-crosses-manual-computation": (
        "sdy-sharding-group-import",
        """
sdy.mesh @mesh = <["a"=2]>
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  sdy.sharding_group %arg0 group_id=1 : tensor<8xf32>
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{}]>] out_shardings=[<@mesh, [{}]>] manual_axes={} (%arg1: tensor<8xf32>) {
    sdy.sharding_group %arg1 group_id=1 : tensor<8xf32>
    sdy.return %arg1 : tensor<8xf32>
  } : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
""",
        "ShardingGroupOps values cannot cross ManualComputationOp boundaries for groupId: 1",
    ),
}


@pytest.mark.parametrize(
    ("spec", "text", "message"), list(ERROR_CASES.values()), ids=list(ERROR_CASES)
)
def test_errors_match_reference(spec: str, text: str, message: str):
    with pytest.raises(ReferenceError) as reference:
        run_pass(text, spec)
    assert any(message in d for d in reference.value.diagnostics)
    module = load_text(text)
    with pytest.raises(VerifyError, match=re.escape(message)) as ours:
        run_our_pass(module, spec)
    line = int(reference.value.diagnostics[0].split(":")[1])
    assert ours.value.location.line == line


# -- random modules -------------------------------------------------------------------------------

# The propagation pipeline's import half (steps 1-3 of propagation_pipeline.cc), in one go.
IMPORT_HALF = ",".join(IMPORT_HALF_PASSES)

# The same in dedup mode.
DEDUP_IMPORT_HALF = "sdy-import-pipeline{dedup-functions-fully=true},sdy-add-func-data-flow-edges,sdy-pre-order-funcs"

RANDOM_SPECS = [
    IMPORT_HALF,
    DEDUP_IMPORT_HALF,
    "sdy-import-pipeline",
    "sdy-import-pipeline{dedup-functions-fully=true}",
    "sdy-constant-or-scalar-splitter",
    "sdy-lift-inlined-meshes,sdy-add-data-flow-edges,sdy-apply-sharding-constraints",
    "sdy-flatten-call-graph,sdy-import-func-calls",
    "sdy-sharding-group-import",
]


@settings(max_examples=25)
@given(text=import_modules(), spec=st.sampled_from(RANDOM_SPECS))
def test_random_modules(text: str, spec: str):
    _check(text, spec)


def test_loader_use_order_for_values_used_by_a_region_op_and_inside_it():
    """MLIR's parser creates an op after its regions, so the region's uses come first."""
    text = """
func.func @main(%a: tensor<8xf32>, %n: tensor<i32>) -> tensor<8xf32> {
  %0 = stablehlo.negate %a : tensor<8xf32>
  %1:2 = stablehlo.while(%it = %0, %k = %n) : tensor<8xf32>, tensor<i32>
    cond {
    %c = stablehlo.compare LT, %k, %k : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %b = stablehlo.add %it, %0 : tensor<8xf32>
    stablehlo.return %b, %k : tensor<8xf32>, tensor<i32>
  }
  return %1#0 : tensor<8xf32>
}
"""
    _, expected = run_pass_with_use_lists(text, [])
    assert our_use_lists(load_text(text)) == expected
