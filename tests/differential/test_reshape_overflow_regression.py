"""Fuzz finding 1813-1912-0: explicit reshards (full version) on a reshape with overflow axes
stopped with an internal KeyError in the inverse projection.

The reference aborts on this module in most runs (it reads memory it did not set: in a child
process, one run in four or five gives a module). Where it gives one, ours equals it; where it
aborts, ours must still give a module that MLIR verifies, never an internal error. Kept
outside `regressions/`, whose files the reference must handle under every default pass.
"""

from __future__ import annotations

from pathlib import Path

from shardwise.io.mlir import load_text, write_text
from shardwise.io.reference import run_pass_isolated
from shardwise.passes import run_pass

MODULE = Path(__file__).with_name("reshape_overflow_full_explicit_reshards.mlir")
CHAIN = ["sdy-propagation-pipeline", "sdy-insert-explicit-reshards{enable-full-version=true}"]


def test_reshape_with_overflow_axes_gives_a_valid_module() -> None:
    text = MODULE.read_text()
    reference = run_pass_isolated(text, CHAIN, allow_unregistered_dialect=True)
    module = load_text(text, allow_unregistered_dialect=True)
    run_pass(module, ",".join(CHAIN))  # was KeyError: 2
    written = write_text(module)  # parsed back and verified by MLIR on the way out
    assert "sdy.reshard" in written
    if not reference.crashed:
        assert reference.ok and written == reference.text
