"""`--executor dask://HOST:PORT` on a real Dask `distributed` cluster over loopback TCP: the
candidates travel to the scheduler and a worker (pickled), and the plan equals the one found
in this process."""

from __future__ import annotations

import distributed  # the `dask` extra; the `test` extra installs it
import pytest

import shardwise
from shardwise.plan.search import evaluate_candidate

# Two model dims and a batch dim: several candidates, evaluated in batches through the executor.
MLP = """
func.func @main(%x: tensor<32x64xf32>, %w1: tensor<64x256xf32>, %w2: tensor<256x64xf32>)
    -> tensor<32x64xf32> {
  %0 = stablehlo.dot_general %x, %w1, contracting_dims = [1] x [0] : (tensor<32x64xf32>, tensor<64x256xf32>) -> tensor<32x256xf32>
  %1 = stablehlo.tanh %0 : tensor<32x256xf32>
  %2 = stablehlo.dot_general %1, %w2, contracting_dims = [1] x [0] : (tensor<32x256xf32>, tensor<256x64xf32>) -> tensor<32x64xf32>
  return %2 : tensor<32x64xf32>
}
"""


@pytest.fixture(scope="module")
def cluster():
    # In-process workers, but a TCP scheduler on loopback: every task is serialized as it
    # would be for a remote machine.
    with distributed.LocalCluster(
        n_workers=1,
        threads_per_worker=1,
        processes=False,
        protocol="tcp",
        host="127.0.0.1",
        dashboard_address=None,
    ) as cluster:
        yield cluster


def test_a_plan_on_a_dask_cluster_equals_the_plan_found_in_process(cluster):
    address = cluster.scheduler_address.removeprefix("tcp://")
    local = shardwise.plan(MLP, mesh="data=2,model=4", executor="inline")
    remote = shardwise.plan(MLP, mesh="data=2,model=4", executor=f"dask://{address}")
    assert remote.text == local.text
    assert remote.to_json()["args"] == local.to_json()["args"]
    assert remote.summary == local.summary
    # The candidates were evaluated by the cluster's worker, not in this process.
    keys = {str(entry[0]) for entry in cluster.scheduler.transition_log}
    assert any(k.startswith(evaluate_candidate.__name__) for k in keys), keys
