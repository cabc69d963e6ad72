"""The walk a propagation pass takes once and shares (`PropagationContext.ops`): the steps that
read it see what their own walks would, and it is dropped once an op was inserted or erased."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from shardwise.io.mlir import load_file, load_text, write_text
from shardwise.ir import ops_in_pre_order, ops_named
from shardwise.passes import run_pass
from shardwise.propagation.driver import PropagationDriver

DATA = Path(__file__).resolve().parents[1] / "models" / "data"

# Two members of one group with conflicting shardings: the pass inserts an open constraint
# after each (`sync_group_member_shardings`), which the driver must visit for the arguments'
# shardings to reach the add. Shardy's output of `sdy-user-priority-propagate`.
_CONFLICTING_GROUP = """module {
  sdy.mesh @mesh = <["a"=2, "b"=2]>
  func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}, \
%arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b"}, {}]>}) -> tensor<8x8xf32> {
    sdy.sharding_group %arg0 group_id=0 : tensor<8x8xf32>
    sdy.sharding_group %arg1 group_id=0 : tensor<8x8xf32>
    %0 = stablehlo.add %arg0, %arg1 : tensor<8x8xf32>
    return %0 : tensor<8x8xf32>
  }
}
"""
_CONFLICTING_GROUP_PROPAGATED = """\
module {
  sdy.mesh @mesh = <["a"=2, "b"=2]>
  func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}, \
%arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b"}, {}]>}) -> \
(tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b", ?}, {?}]>}) {
    %0 = sdy.sharding_constraint %arg1 <@mesh, [{"b", ?}, {?}]> : tensor<8x8xf32>
    %1 = sdy.sharding_constraint %arg0 <@mesh, [{"b", ?}, {?}]> : tensor<8x8xf32>
    sdy.sharding_group %1 group_id=0 : tensor<8x8xf32>
    sdy.sharding_group %0 group_id=0 : tensor<8x8xf32>
    %2 = stablehlo.add %1, %0 \
{sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"b", ?}, {?}]>]>} : tensor<8x8xf32>
    return %2 : tensor<8x8xf32>
  }
}
"""

# A dead op (erased by the first level's driver) and a dim of priority 1 (a second level, whose
# first driver starts without a previous run to take its seed from).
_DEAD_OP_AND_PRIORITIES = """module {
  sdy.mesh @mesh = <["a"=2, "b"=2]>
  func.func @main(%arg0: tensor<8x8xf32> \
{sdy.sharding = #sdy.sharding<@mesh, [{"a"}p1, {"b"}p0]>}) -> tensor<8x8xf32> {
    %0 = stablehlo.negate %arg0 : tensor<8x8xf32>
    %1 = stablehlo.abs %arg0 : tensor<8x8xf32>
    %2 = stablehlo.negate %1 : tensor<8x8xf32>
    return %2 : tensor<8x8xf32>
  }
}
"""


@pytest.mark.parametrize("model", ["cond", "nested_calls", "scan_layers", "while_loop"])
def test_ops_named_is_the_filtered_walk(model: str) -> None:
    root = load_file(DATA / f"{model}.mlir").op
    names = frozenset({"func.call", "stablehlo.add", "stablehlo.while", "sdy.sharding_group"})
    assert ops_named(root.walk_list(), names) == ops_in_pre_order(root, names)


def test_inserted_constraints_are_visited() -> None:
    """Without dropping the shared walk after the groups' sync, the driver's seed would miss
    the inserted constraints and the add would get no sharding."""
    module = load_text(_CONFLICTING_GROUP)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the groups' conflict warning
        run_pass(module, "sdy-user-priority-propagate")
    assert write_text(module) == _CONFLICTING_GROUP_PROPAGATED


def test_no_erased_op_is_seeded(monkeypatch: pytest.MonkeyPatch) -> None:
    """A driver that erased an op drops the shared walk: the next level's driver seeds from a
    fresh walk, without the erased op."""
    seeds: list[list[bool]] = []  # per run: whether each seeded op is in a block
    original_run = PropagationDriver.run

    def run(self: PropagationDriver) -> None:
        seed = self.seed if self.seed is not None else self.module.op.walk_list()[1:]
        seeds.append([op.parent is not None for op in seed])
        original_run(self)

    monkeypatch.setattr(PropagationDriver, "run", run)
    module = load_text(_DEAD_OP_AND_PRIORITIES)
    run_pass(module, "sdy-user-priority-propagate")
    assert len(seeds) > 1
    assert len(seeds[0]) == 6  # the mesh, the func, its four ops
    assert all(len(seed) == 5 for seed in seeds[1:])
    assert all(all(seed) for seed in seeds)
