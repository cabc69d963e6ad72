"""Real models lowered from JAX: the rule of every op equals Shardy's (both modes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from shardwise.io.mlir import load_text, write_text
from shardwise.io.reference import run_pass
from shardwise.rules.populate import populate_op_sharding_rules

CORPUS = sorted((Path(__file__).parents[1] / "models" / "data").glob("*.mlir"))


@pytest.mark.parametrize("conservative", [False, True], ids=["default", "conservative"])
@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.stem)
def test_corpus_rules_match_reference(path, conservative):
    text = path.read_text()
    option = "{conservative-propagation=true}" if conservative else ""
    module = load_text(text)
    populate_op_sharding_rules(module, conservative_propagation=conservative)
    assert write_text(module) == run_pass(text, "sdy-populate-op-sharding-rules" + option)
