"""`sdy-convert-global-to-local` on the JAX-lowered programs of `tests/models/data`.

The reference runs its own export on each program first (propagation pipeline, full explicit
reshards, reshard-to-collectives, the `sdy-collective` canonicalization); both conversions
then start from that text. Where the reference converts the program, the printed modules must
be equal; where it rejects it (calls of sharded funcs, while loops carrying sharded values,
partial slices of sharded dims, chlo ops) or aborts, ours must raise a `ShardwiseError`.
The reference runs in a persistent worker, so an abort costs one fork.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from shardwise.errors import ShardwiseError
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
_DATA = Path(__file__).parent.parent / "models" / "data"
MODELS = sorted(p.name for p in _DATA.glob("*.mlir"))

# Programs the reference converts (the rest it rejects); a change on either side shows here.
CONVERTED = {
    "cond.mlir",
    "mlp_fwd_dp.mlir",
    "mlp_fwd_tp.mlir",
    "mlp_train.mlir",
    "shard_alike.mlir",
    "shard_map_collectives.mlir",
    "with_sharding_constraint.mlir",
}


@pytest.fixture(scope="module")
def worker() -> Iterator[ReferenceWorker]:
    with ReferenceWorker(timeout=300) as w:
        yield w


def _reference(worker: ReferenceWorker, text: str, spec: str) -> tuple[bool, str]:
    outcome = worker.run(text, [spec])
    assert outcome.parsed, outcome.error
    if outcome.crashed or not outcome.outputs:
        return False, "reference crashed"
    return outcome.outputs[0]


@pytest.mark.parametrize("name", MODELS)
def test_model_matches_reference(worker: ReferenceWorker, name: str) -> None:
    ok, exported = _reference(worker, (_DATA / name).read_text(), _EXPORT)
    assert ok, exported
    ok, expected = _reference(worker, exported, PASS)
    assert ok == (name in CONVERTED), expected[:500]
    module = load_text(exported)
    if not ok:
        with pytest.raises(ShardwiseError):
            run_ours(module, PASS)
        return
    run_ours(module, PASS)
    assert write_text(module) == expected
