"""`sdy-convert-global-to-local` on the fuzz generator's random programs.

`shardwise.fuzz.generator` builds random DAGs of many op kinds (dots, reduces, gathers,
scatters, pads, slices, calls, while loops, manual computations, ...); the reference runs its
export on each (propagation pipeline, full explicit reshards, reshard-to-collectives, the
`sdy-collective` canonicalization), then the conversion. Most random programs have a dim that
a sharding does not divide, which the reference rejects or aborts on: there ours must raise a
`ShardwiseError`. The seeds below include the ones (of the first 300) that the reference
converted when they were chosen (programs without the generator's conformance extras); on those
the printed modules must be equal. Which seeds convert is counted, not fixed, so that the
generator may grow: at least half of them must, or the test would compare nothing.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from shardwise.errors import ShardwiseError
from shardwise.fuzz.generator import generate_module
from shardwise.fuzz.worker import ReferenceWorker
from shardwise.io.mlir import load_text, write_text
from shardwise.passes import run_pass as run_ours

PASS = "sdy-convert-global-to-local"
_EXPORT = (
    "sdy-propagation-pipeline,"
    "func.func(sdy-insert-explicit-reshards{enable-full-version=true}),"
    "func.func(sdy-reshard-to-collectives),"
    "canonicalize{enable-patterns=sdy-collective}"
)
CONVERTED = (14, 21, 39, 46, 60, 66, 86, 89, 116, 132, 156, 160, 174, 183, 239, 265, 292)
REJECTED = tuple(range(8))


@pytest.fixture(scope="module")
def worker() -> Iterator[ReferenceWorker]:
    with ReferenceWorker(timeout=120) as w:
        yield w


def _reference(worker: ReferenceWorker, text: str, spec: str) -> tuple[bool, str]:
    outcome = worker.run(text, [spec])
    assert outcome.parsed, outcome.error
    if outcome.crashed or not outcome.outputs:
        return False, "reference crashed"
    return outcome.outputs[0]


_CONVERTED_NOW: set[int] = set()


@pytest.mark.parametrize("seed", CONVERTED + REJECTED)
def test_fuzz_program_matches_reference(worker: ReferenceWorker, seed: int) -> None:
    ok, exported = _reference(worker, generate_module(seed, conformance_extras=False), _EXPORT)
    assert ok, exported
    ok, expected = _reference(worker, exported, PASS)
    if ok:
        _CONVERTED_NOW.add(seed)
    module = load_text(exported)
    if not ok:
        with pytest.raises(ShardwiseError):
            run_ours(module, PASS)
        return
    run_ours(module, PASS)
    assert write_text(module) == expected


def test_most_chosen_seeds_convert() -> None:
    """Runs after the seeds above (pytest keeps file order): they compared real output."""
    assert len(_CONVERTED_NOW & set(CONVERTED)) >= len(CONVERTED) // 2, sorted(_CONVERTED_NOW)
