"""Random differential test of `sdy-convert-global-to-local` (hypothesis).

`global_to_local_strategies` draws programs whose every dim is a multiple of the mesh size
(1-3 reshards, elementwise ops, explicit all-reduces of unreduced values), run with each
option of the pass; it also draws rank-2 global programs (dots, reduces, concatenates, slices,
iotas, constants) that the reference's whole export shards first. `reshard_strategies` draws
functions that reshard a value through random shardings (meshes of
1-3 axes of sizes 2-16, sub-axes, device-order permutations, unreduced axes, ranks 1-3). The
reference turns each function's reshards into sdy collectives (`sdy-reshard-to-collectives`,
then the `sdy-collective` canonicalization, as the partitioner does); that text is the input
of both conversions. The reference runs in a persistent worker (`shardwise.fuzz.worker`), so a
module on which it aborts (a dimension its sharding does not divide) costs one fork: there
ours must raise a `ShardwiseError`, elsewhere both outputs must be equal (or, for collectives
that would reshape a dynamically shaped tensor, ours raises `UnsupportedError`).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shardwise.errors import ShardwiseError, UnsupportedError
from shardwise.fuzz.worker import ReferenceWorker
from shardwise.io.mlir import load_text, write_text
from shardwise.passes import run_pass as run_ours
from tests.differential.global_to_local_strategies import divisible_modules, global_programs
from tests.differential.reshard_strategies import random_modules

PASS = "sdy-convert-global-to-local"
_COLLECTIVES = "sdy-reshard-to-collectives,canonicalize{enable-patterns=sdy-collective}"
_EXPORT = (
    "sdy-propagation-pipeline,"
    "func.func(sdy-insert-explicit-reshards{enable-full-version=true}),"
    "func.func(sdy-reshard-to-collectives),"
    "canonicalize{enable-patterns=sdy-collective}"
)


@pytest.fixture(scope="module")
def worker() -> Iterator[ReferenceWorker]:
    with ReferenceWorker(timeout=120) as w:
        yield w


def _reference(worker: ReferenceWorker, text: str, spec: str) -> tuple[bool, bool, str]:
    """(succeeded, crashed, printed module or error) of `spec` on `text`."""
    outcome = worker.run(text, [spec])
    assert outcome.parsed, outcome.error
    if outcome.crashed or not outcome.outputs:
        return False, True, outcome.error
    ok, out = outcome.outputs[0]
    crashed = bool(outcome.pass_crashed and outcome.pass_crashed[0])
    return ok, crashed, out


def _check_one(
    worker: ReferenceWorker, text: str, spec: str = PASS, prefix: str = _COLLECTIVES
) -> str:
    """Compare one module; returns the outcome (for campaigns run by hand)."""
    ok, _, collectives = _reference(worker, text, prefix)
    if not ok:
        return "no collectives"
    ok, crashed, expected = _reference(worker, collectives, spec)
    module = load_text(collectives)
    if not ok:
        with pytest.raises(ShardwiseError):
            run_ours(module, spec)
        return "crashed" if crashed else "rejected"
    try:
        run_ours(module, spec)
    except UnsupportedError:
        # Documented limitation: collectives that reshape a dynamically shaped tensor.
        assert "?x" in collectives or "<?" in collectives, collectives
        return "unsupported"
    ours = write_text(module)
    assert ours == expected, _first_difference(ours, expected) + "\n" + collectives
    return "equal"


def _first_difference(ours: str, expected: str) -> str:
    for a, b in zip(ours.splitlines(), expected.splitlines(), strict=False):
        if a != b:
            return f"\nours:      {a.strip()}\nreference: {b.strip()}"
    return "\n(lengths differ)"


_OPTIONS = (
    PASS,
    PASS + "{per-dim-all-gather=true}",
    PASS + "{combine-multi-dimension-reduce-scatter=true}",
    PASS + "{enable-rgv3=true}",
)


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.large_base_example, HealthCheck.function_scoped_fixture],
)
@given(text=divisible_modules(), option=st.sampled_from(_OPTIONS))
def test_random_divisible_programs_match_reference(
    worker: ReferenceWorker, text: str, option: str
) -> None:
    assert _check_one(worker, text, option) in ("equal", "no collectives")


@settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[HealthCheck.large_base_example, HealthCheck.function_scoped_fixture],
)
@given(case=random_modules())
def test_random_collectives_match_reference(worker: ReferenceWorker, case) -> None:
    (header, funcs), _ = case
    for func in funcs:
        _check_one(worker, "module {\n" + header + func + "}\n")


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.large_base_example, HealthCheck.function_scoped_fixture],
)
@given(text=global_programs())
def test_random_global_programs_after_reference_export(worker: ReferenceWorker, text: str) -> None:
    """Rank-2 programs (dots, reduces, transposes, concatenates, slices, iotas, constants,
    pads, gathers, scatters) through the reference's whole export, then both conversions."""
    _check_one(worker, text, PASS, _EXPORT)
