"""The propagation pipeline up to ``sdy-user-priority-propagate`` vs Shardy's same prefix.

Shardy's ``sdy-propagation-pipeline`` is run as its explicit pass list (steps 1-4 of
prop/propagation_pipeline.cc) so the comparison stops before the export steps.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shardwise.errors import VerifyError
from shardwise.io.mlir import load_text, write_text
from shardwise.io.reference import ReferenceError, run_pass
from shardwise.passes import run_pass as run_our_pass
from shardwise.propagation.driver import PropagationDriver
from shardwise.propagation.options import PropagationOptions
from shardwise.propagation.propagation_pipeline import import_and_propagate, propagation_pipeline
from shardwise.propagation.settled_op_skip import SettledOpSkip
from tests.differential import import_cases as cases
from tests.differential.import_strategies import import_modules
from tests.differential.pipeline_prefixes import PROPAGATE_PASSES, USER_PRIORITY_PROPAGATE

CORPUS = sorted((Path(__file__).parent.parent / "models" / "data").glob("*.mlir"))

_PROPAGATE = USER_PRIORITY_PROPAGATE
PREFIX = {
    False: list(PROPAGATE_PASSES),
    True: [
        "sdy-import-pipeline{dedup-functions-fully=true}",
        "sdy-add-func-data-flow-edges",
        "sdy-pre-order-funcs",
        _PROPAGATE,
    ],
}

OWN = {
    **{f"pipeline-{k}": v for k, v in cases.IMPORT_PIPELINE.items()},
    **{f"calls-{k}": v for k, v in cases.IMPORT_FUNC_CALLS.items()},
    **{f"constraints-{k}": v for k, v in cases.APPLY_SHARDING_CONSTRAINTS.items()},
    **{f"splitter-{k}": v for k, v in cases.CONSTANT_OR_SCALAR_SPLITTER.items()},
    **{f"groups-{k}": v for k, v in cases.SHARDING_GROUP_IMPORT.items()},
}
INPUTS = [pytest.param(p.read_text(), id=p.stem) for p in CORPUS] + [
    pytest.param(text, id=name) for name, text in OWN.items()
]


def _ours(text: str, dedup: bool) -> str:
    module = load_text(text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import_and_propagate(module, PropagationOptions(dedup_functions_fully=dedup))
    return write_text(module, debug_info=False)


# Inputs holding a named computation make the default mode fail in Shardy itself (edges added
# twice, see the test below), so they run in dedup mode only.
PAIRS = [
    pytest.param(param.values[0], dedup, id=f"{param.id}-{'dedup' if dedup else 'default'}")
    for param in INPUTS
    for dedup in (False, True)
    if dedup or "sdy.named_computation" not in param.values[0]
]


@pytest.mark.parametrize(("text", "dedup"), PAIRS)
def test_import_and_propagate_matches_reference(text: str, dedup: bool):
    assert _ours(text, dedup) == run_pass(text, PREFIX[dedup])


NAMED_IN_INPUT = """
sdy.mesh @mesh = <["x"=2]>
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<8xf32> {
  %0 = sdy.named_computation<"f">(%arg0) (%a: tensor<8xf32>) {
    %m = stablehlo.abs %a : tensor<8xf32>
    sdy.return %m : tensor<8xf32>
  } : (tensor<8xf32>) -> tensor<8xf32>
  %1 = stablehlo.negate %0 : tensor<8xf32>
  %2 = sdy.named_computation<"g">(%1) (%a: tensor<8xf32>) {
    %m = stablehlo.abs %a : tensor<8xf32>
    sdy.return %m : tensor<8xf32>
  } : (tensor<8xf32>) -> tensor<8xf32>
  return %2 : tensor<8xf32>
}
"""


def _reference_error_position(text: str, passes: str | list[str]) -> tuple[int, int]:
    with pytest.raises(ReferenceError, match="expected input of sdy.data_flow_edge") as e:
        run_pass(text, passes)
    found = re.search(r'"-":(\d+):(\d+): \'sdy.data_flow_edge\' op expected input', str(e.value))
    assert found is not None, str(e.value)
    return int(found.group(1)), int(found.group(2))


@pytest.mark.parametrize(
    ("text", "passes"),
    [
        (cases.CONSTANT_OR_SCALAR_SPLITTER["constant_calls_and_named_computations"], None),
        (NAMED_IN_INPUT, None),
        (NAMED_IN_INPUT, "sdy-propagation-pipeline"),
    ],
    ids=["import-prefix", "import-prefix-two", "whole-pipeline"],
)
def test_named_computation_present_before_import_gets_two_edges_in_both(text, passes):
    """Shardy adds data-flow edges to a named computation that was in the input twice.

    ``sdy-import-pipeline`` adds them, and ``sdy-import-func-calls`` adds them again to every
    named computation, so the module no longer verifies: Shardy's pass manager stops there,
    and so do we, with its message at its position (propagation used to hit an internal
    assertion on the doubled edges instead).
    """
    specs = passes or PREFIX[False][:4]
    line, col = _reference_error_position(text, specs)
    module = load_text(text, "in.mlir")
    with warnings.catch_warnings(), pytest.raises(VerifyError) as e:
        warnings.simplefilter("ignore")
        for spec in [specs] if isinstance(specs, str) else specs:
            run_our_pass(module, spec)
    assert "expected input of sdy.data_flow_edge to not be defined by an SdyDialect" in str(e.value)
    assert (e.value.location.line, e.value.location.col) == (line, col)


@settings(max_examples=20)
@given(text=import_modules(), dedup=st.booleans())
def test_random_modules_match_reference(text: str, dedup: bool):
    assert _ours(text, dedup) == run_pass(text, PREFIX[dedup])


# -- the whole pipeline, export steps included ---------------------------------------------------

_FULL = {
    False: "sdy-propagation-pipeline",
    True: "sdy-propagation-pipeline{dedup-functions-fully=true}",
}


def _full(text: str, dedup: bool) -> str:
    module = load_text(text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        propagation_pipeline(module, PropagationOptions(dedup_functions_fully=dedup))
    return write_text(module, debug_info=False)


@pytest.mark.parametrize(("text", "dedup"), PAIRS)
def test_full_pipeline_matches_reference(text: str, dedup: bool):
    assert _full(text, dedup) == run_pass(text, _FULL[dedup])


@settings(max_examples=15)
@given(text=import_modules(), dedup=st.booleans())
def test_full_pipeline_on_random_modules(text: str, dedup: bool):
    assert _full(text, dedup) == run_pass(text, _FULL[dedup])


# -- memoization off: the same output --------------------------------------------------------------

UNMEMOIZED = [
    pytest.param(path.read_text(), id=path.stem)
    for path in CORPUS
    if "sdy.named_computation" not in path.read_text()
]


@pytest.mark.parametrize("text", UNMEMOIZED)
def test_full_pipeline_unmemoized_matches_reference(text: str):
    """``memoize-steps=false`` recomputes every propagation step: the output must not change."""
    module = load_text(text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        propagation_pipeline(module, PropagationOptions(memoize_steps=False))
    assert write_text(module, debug_info=False) == run_pass(text, _FULL[False])


# -- skipped visits: each one checked to change nothing ----------------------------------------


@pytest.fixture
def checked_skips(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every visit the driver skips (`shardwise.propagation.settled_op_skip`) is computed and
    must change nothing; returns the names of the ops skipped so far."""
    skipped: list[str] = []
    check = SettledOpSkip._check_skipped

    def counting_check(self: SettledOpSkip, host, op) -> None:
        skipped.append(op.name)
        check(self, host, op)

    monkeypatch.setattr(SettledOpSkip, "check_skips", True)
    monkeypatch.setattr(SettledOpSkip, "_check_skipped", counting_check)
    return skipped


@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_full_pipeline_with_checked_skips_matches_reference(path: Path, checked_skips) -> None:
    text = path.read_text()
    dedup = "sdy.named_computation" in text
    assert _full(text, dedup) == run_pass(text, _FULL[dedup])


def test_skips_happen_on_a_deep_model(checked_skips) -> None:
    """The check above is not vacuous: a stack of layers skips most visits of late rounds."""
    text = (CORPUS[0].parent / "gpt_stack_4.mlir").read_text()
    _full(text, "sdy.named_computation" in text)
    assert len(checked_skips) > 500
    assert "stablehlo.dot_general" in checked_skips


def test_changed_directions_skip_steps_that_write_nothing(
    checked_skips, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An op whose directions change from one op-priority round to the next is skipped when its
    step writes nothing at the start of the round: on a stack of layers, the last two rounds
    (broadcasts forward, then every op both ways) visit no registered op, and match Shardy."""
    visits: list[int] = []
    greedy, visit = PropagationDriver._greedy, PropagationDriver._propagate_registered_op

    def counting_greedy(self: PropagationDriver) -> None:
        visits.append(0)
        greedy(self)

    def counting_visit(self: PropagationDriver, op) -> None:
        visits[-1] += 1
        visit(self, op)

    monkeypatch.setattr(PropagationDriver, "_greedy", counting_greedy)
    monkeypatch.setattr(PropagationDriver, "_propagate_registered_op", counting_visit)
    text = (CORPUS[0].parent / "gpt_stack_4.mlir").read_text()
    assert _full(text, False) == run_pass(text, _FULL[False])
    assert len(visits) == 5 and visits[3:] == [0, 0] and min(visits[:3]) > 0
    assert "stablehlo.broadcast_in_dim" in checked_skips


def test_changed_directions_compute_one_step_per_set_of_shardings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Ops of one name and rule whose directions changed read, layer after layer, the same
    sharding objects: whether their step writes nothing is computed once for each set."""
    checks: list[int] = []
    steps: list[int] = []
    positions, writes_nothing = SettledOpSkip.positions_to_visit, SettledOpSkip._step_writes_nothing
    step_updates = PropagationDriver.step_updates

    def counting_positions(self: SettledOpSkip, *args):
        checks.append(0)
        steps.append(0)
        try:
            return positions(self, *args)
        finally:
            checks.append(-1)  # outside: steps of visits are not counted

    def counting_check(self: SettledOpSkip, *args) -> bool:
        checks[-1] += 1
        return writes_nothing(self, *args)

    def counting_steps(self: PropagationDriver, *args):
        if checks and checks[-1] >= 0:
            steps[-1] += 1
        return step_updates(self, *args)

    monkeypatch.setattr(SettledOpSkip, "positions_to_visit", counting_positions)
    monkeypatch.setattr(SettledOpSkip, "_step_writes_nothing", counting_check)
    monkeypatch.setattr(PropagationDriver, "step_updates", counting_steps)
    text = (CORPUS[0].parent / "gpt_stack_4.mlir").read_text()
    assert _full(text, False) == run_pass(text, _FULL[False])
    total_checks = sum(c for c in checks if c >= 0)
    assert total_checks > 100
    assert sum(steps) * 2 < total_checks, (sum(steps), total_checks)


def test_a_func_result_step_that_wrote_nothing_is_not_repeated(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The main func's result steps start and end every driver run; one that wrote nothing is
    not computed again while the returned value and both shardings are the same objects (the
    step is a pure function of them), and the output is Shardy's."""
    quiet: list[tuple[int, int, int]] = []
    step = PropagationDriver.propagate_tensor_shardings

    def recording_step(self: PropagationDriver, op, operands, results, *args, **kwargs) -> bool:
        changed = step(self, op, operands, results, *args, **kwargs)
        if op.name == "func.func" and not changed:
            quiet.append((id(operands.values[0]), *map(id, operands.shardings + results.shardings)))
        return changed

    monkeypatch.setattr(PropagationDriver, "propagate_tensor_shardings", recording_step)
    text = (CORPUS[0].parent / "gpt_fsdp_3d.mlir").read_text()
    assert _full(text, False) == run_pass(text, _FULL[False])
    assert quiet and len(set(quiet)) == len(quiet)


# A loop whose body calls a private function, called twice more outside: the calls become
# named computations, whose operands feed their block arguments' edges without requeuing them
# (in the loop, the operand is the while's block argument, its sharding stored in an edge).
_LOOP_CALLS = """
module @loop_call {
  sdy.mesh @mesh = <["a"=2, "b"=2]>
  func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}, %arg1: tensor<8x8xf32>, %arg2: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"b"}]>}) -> tensor<8x8xf32> {
    %c0 = stablehlo.constant dense<0> : tensor<i32>
    %c1 = stablehlo.constant dense<1> : tensor<i32>
    %c4 = stablehlo.constant dense<4> : tensor<i32>
    %0:2 = stablehlo.while(%i = %c0, %x = %arg1) : tensor<i32>, tensor<8x8xf32>
      cond {
        %p = stablehlo.compare LT, %i, %c4 : (tensor<i32>, tensor<i32>) -> tensor<i1>
        stablehlo.return %p : tensor<i1>
      } do {
        %y = func.call @relu(%x) : (tensor<8x8xf32>) -> tensor<8x8xf32>
        %z = stablehlo.add %y, %arg0 : tensor<8x8xf32>
        %i1 = stablehlo.add %i, %c1 : tensor<i32>
        stablehlo.return %i1, %z : tensor<i32>, tensor<8x8xf32>
      }
    %1 = func.call @relu(%0#1) : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %2 = stablehlo.dot_general %1, %arg2, contracting_dims = [1] x [0] : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    %3 = func.call @relu(%2) : (tensor<8x8xf32>) -> tensor<8x8xf32>
    return %3 : tensor<8x8xf32>
  }
  func.func private @relu(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %c = stablehlo.constant dense<0.0> : tensor<8x8xf32>
    %m = stablehlo.maximum %x, %c : tensor<8x8xf32>
    return %m : tensor<8x8xf32>
  }
}
"""


@pytest.mark.parametrize("dedup", [False, True])
def test_data_flow_edges_are_skipped_when_checked_to_change_nothing(
    dedup: bool, checked_skips
) -> None:
    assert _full(_LOOP_CALLS, dedup) == run_pass(_LOOP_CALLS, _FULL[dedup])
    assert "sdy.data_flow_edge" in checked_skips


@settings(max_examples=15)
@given(text=import_modules(), dedup=st.booleans())
def test_random_modules_with_checked_skips_match_reference(text: str, dedup: bool) -> None:
    # A fixture cannot be used by a hypothesis test: the flag is set around the call.
    SettledOpSkip.check_skips = True
    try:
        assert _full(text, dedup) == run_pass(text, _FULL[dedup])
    finally:
        SettledOpSkip.check_skips = False
