"""`sdy-remove-all-gather-reduce-scatter-for-cmv1` where the reference cannot be asked.

The reference (jaxlib 0.10.2) segfaults on a dot without a sharding followed by a
reduce-scatter: it reads the unreduced axes of the missing sharding. We treat the missing
sharding as one without unreduced axes, so the usual row of the pass applies (the
reduce-scatter goes, the dot takes its out sharding). Expected text derived by hand from that
row; these inputs must never be sent to the reference.
"""

from __future__ import annotations

import pytest

from shardwise.errors import ShardwiseError
from shardwise.io.mlir import load_text, write_text
from shardwise.passes import prepare_pass, run_pass

MESH = 'sdy.mesh @mesh = <["x"=2, "y"=4]>'

UNSHARDED_DOT = (
    MESH
    + """
func.func @main(%arg0: tensor<8x16xf32>, %arg1: tensor<16x8xf32>) -> tensor<8x8xf32> {
  %0 = stablehlo.dot %arg0, %arg1 : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
  %1 = sdy.reduce_scatter [{}, {"y"}] %0 out_sharding=<@mesh, [{}, {"y"}]> : tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}
"""
)
UNSHARDED_DOT_EXPECTED = """module {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func @main(%arg0: tensor<8x16xf32>, %arg1: tensor<16x8xf32>) -> tensor<8x8xf32> {
    %0 = stablehlo.dot %arg0, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>} : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
    return %0 : tensor<8x8xf32>
  }
}
"""


def test_dot_without_sharding_loses_its_reduce_scatter() -> None:
    module = run_pass(load_text(UNSHARDED_DOT), "sdy-remove-all-gather-reduce-scatter-for-cmv1")
    assert write_text(module) == UNSHARDED_DOT_EXPECTED


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("sdy-export-pipeline{remove-all-gather-reduce-scatter-for-cmv1=maybe}", "true or false"),
        ("sdy-export-pipeline{dump-directory=/tmp}", "unknown option 'dump-directory'"),
        ("sdy-remove-all-gather-reduce-scatter-for-cmv1{x=true}", "takes no options"),
    ],
    ids=["bad-bool", "dump-directory", "cmv1-takes-no-options"],
)
def test_pass_specs_rejected(spec: str, message: str) -> None:
    with pytest.raises(ShardwiseError) as info:
        prepare_pass(spec)(load_text(UNSHARDED_DOT))
    assert message in info.value.message
