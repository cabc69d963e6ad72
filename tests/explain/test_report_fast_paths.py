"""The report's speed seams change nothing: the explanations (every word) are the same with
the driver's settled-op skip and memoized observed steps as without them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shardwise.explain.report import build_report
from shardwise.propagation import driver as driver_module
from shardwise.propagation.settled_op_skip import SettledOpSkip

DATA = Path(__file__).parents[1] / "models" / "data"
MODELS = [
    "gpt_block.mlir",
    "while_loop.mlir",
    "cond.mlir",
    "nested_calls.mlir",
    "shard_map_collectives.mlir",
    "moe.mlir",
    "scan_layers.mlir",
    "with_sharding_constraint.mlir",
]


def _report(name: str) -> str:
    report = build_report((DATA / name).read_text(), name)
    return json.dumps(report.to_json(), sort_keys=True)


class _NoSkip(SettledOpSkip):
    """A skip that never vouches: every op is visited, as in Shardy's loop."""

    def __init__(self, previous, previous_memo, vouched: bool, per_op: bool) -> None:
        super().__init__(previous, previous_memo, False, False)


class _NoMemo(dict):
    """An observed-step memo that remembers nothing."""

    def __setitem__(self, key, value) -> None:
        pass


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name", MODELS, ids=[m.removesuffix(".mlir") for m in MODELS])
def test_explanations_equal_without_the_fast_paths(name: str, monkeypatch) -> None:
    monkeypatch.setattr(SettledOpSkip, "check_skips", True)  # a skipped visit changes nothing
    fast = _report(name)
    monkeypatch.setattr(driver_module, "SettledOpSkip", _NoSkip)
    original_init = driver_module.PropagationDriver.__init__

    def init(self, *args, **kwargs) -> None:
        original_init(self, *args, **kwargs)
        self.observed_steps = _NoMemo()

    monkeypatch.setattr(driver_module.PropagationDriver, "__init__", init)
    assert _report(name) == fast
