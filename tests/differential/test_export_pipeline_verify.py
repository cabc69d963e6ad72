"""The export pipeline fails where Shardy's pass manager, verifying after every pass, fails.

We verify once, on write; in between, a later pass can rewrite an invalid sharding away and
hide the failure. Found by ``shardwise fuzz --seed 31`` through
``sdy-aggressive-propagate,sdy-export-pipeline{...}``: ``sdy-close-shardings`` turns an open
dim with a priority ``{?}p1`` into ``{}p1``, which does not verify. (The collective-permute
check after ``sdy-reshard-to-collectives`` is in `test_reshard_to_collectives.py`.)
"""

from __future__ import annotations

import pytest

from shardwise.errors import ShardwiseError
from shardwise.io.mlir import load_text, write_text
from shardwise.io.reference import ReferenceError, run_pass
from shardwise.passes import run_pass as run_ours

CLOSED_WITH_PRIORITY = {
    "reshard": """
sdy.mesh @mesh = <["x"=2]>
func.func @main(%arg0: tensor<48x6x12xf32>) -> tensor<48x6x12xf32> {
  %0 = sdy.reshard %arg0 <@mesh, [{"x"}, {}, {?}p1]> : tensor<48x6x12xf32>
  return %0 : tensor<48x6x12xf32>
}
""",
    "constraint-and-op-result": """
sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = stablehlo.add %arg0, %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {?}p0]>]>} : tensor<8x8xf32>
  %1 = sdy.sharding_constraint %0 <@mesh, [{"x", ?}, {?}p2]> : tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}
""",
    "dead-constraint": """
sdy.mesh @mesh = <["x"=2]>
func.func @main(%arg0: tensor<2x4x4xf32>, %arg1: tensor<4xf32>) -> tensor<4xf32> {
  %0 = sdy.sharding_constraint %arg0 <@mesh, [{?}p1, {?}, {"x"}]> : tensor<2x4x4xf32>
  return %arg1 : tensor<4xf32>
}
""",
}
PIPELINES = ["sdy-export-pipeline", "sdy-export-pipeline{enable-insert-explicit-collectives=true}"]


@pytest.mark.parametrize("spec", PIPELINES, ids=["default", "explicit-collectives"])
@pytest.mark.parametrize("name", sorted(CLOSED_WITH_PRIORITY))
def test_export_pipeline_fails_like_reference(name: str, spec: str) -> None:
    text = CLOSED_WITH_PRIORITY[name]
    with pytest.raises(ReferenceError) as reference:
        run_pass(text, spec)
    message = reference.value.diagnostics[0].split(": ", 1)[1]
    with pytest.raises(ShardwiseError) as ours:
        write_text(run_ours(load_text(text), spec))
    assert message in str(ours.value)
    assert "empty and closed but has a priority" in message
