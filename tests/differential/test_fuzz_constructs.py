"""The fuzzer's region constructs against the reference: accepted as input, and equal output.

* every construct kind (case, optimization_barrier, call, sharding_group, manual_computation,
  reshard) appears in a fixed batch of generated modules, and the reference parses and
  verifies every module of the batch (a rejected module is a generator bug);
* a small fixed-seed campaign of the propagation pipeline, the explicit-reshard pass and
  pipeline + explicit reshards + reshard-to-collectives, without a divergence.
"""

from __future__ import annotations

import pytest

from shardwise.fuzz.constructs import CONSTRUCT_KINDS
from shardwise.fuzz.generator import generate_program
from shardwise.fuzz.program import print_program
from shardwise.fuzz.runner import run_campaign
from shardwise.fuzz.worker import ReferenceWorker

pytest.importorskip("jax")

SEEDS = [f"constructs-{i}" for i in range(40)]
CAMPAIGN_SEED = 31
CAMPAIGN_COUNT = 30
CAMPAIGN_PASSES = (
    "sdy-propagation-pipeline",
    "sdy-insert-explicit-reshards",
    "sdy-propagation-pipeline,sdy-insert-explicit-reshards,sdy-reshard-to-collectives",
)


@pytest.fixture(scope="module")
def programs():
    return [generate_program(s) for s in SEEDS]


def _kinds(prog) -> set[str]:
    kinds = {op.kind for op in prog.ops}
    for f in prog.funcs:
        kinds |= {op.kind for op in f.ops}
    return kinds


def test_every_construct_is_generated(programs) -> None:
    seen = set().union(*(_kinds(p) for p in programs))
    assert set(CONSTRUCT_KINDS) <= seen
    assert any(p.funcs for p in programs), "no module with a private callee"
    assert any(len(p.funcs) > 0 and _calls_twice(p) for p in programs), "no callee called twice"


def _calls_twice(prog) -> bool:
    callees = [op.attrs["callee"] for op in prog.ops if op.kind == "call"]
    return len(callees) > len(set(callees))


def test_reference_accepts_every_generated_module(programs) -> None:
    with ReferenceWorker(timeout=300) as worker:
        rejected = []
        for seed, prog in zip(SEEDS, programs, strict=True):
            outcome = worker.run(print_program(prog), [])
            if not outcome.parsed:
                rejected.append(f"{seed}: {outcome.error[:300]}")
    assert not rejected, "the reference rejected generated modules:\n" + "\n".join(rejected)


@pytest.fixture(scope="module")
def campaign():
    return run_campaign(CAMPAIGN_SEED, CAMPAIGN_COUNT, CAMPAIGN_PASSES, shrink=False)


@pytest.mark.parametrize("pass_name", CAMPAIGN_PASSES, ids=["pipeline", "reshards", "chain"])
def test_fixed_seed_construct_campaign(campaign, pass_name: str) -> None:
    assert campaign.modules == CAMPAIGN_COUNT
    assert campaign.rejects == 0
    found = [d for d in campaign.divergences if d.pass_name == pass_name]
    assert not found, ", ".join(f"{d.seed} ({d.reason})" for d in found)
    assert not campaign.ours_bugs_on_crashes
    crashed = sum(1 for c in campaign.crash_seeds if c.endswith(" " + pass_name))
    assert campaign.matches.get(pass_name, 0) + crashed == CAMPAIGN_COUNT
