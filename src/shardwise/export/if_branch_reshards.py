"""Beyond the reference: a reshard where a ``stablehlo.if`` branch returns a value laid out
unlike the op's result.

In jaxlib 0.10.2's Shardy, ``stablehlo.case`` is a data-flow op (each branch's returned value
is an edge source of the result, and `sdy-insert-explicit-reshards` reshards it to the
result's sharding), but ``stablehlo.if`` is not: propagation shards its results and the
values its branches return independently, and nothing reconciles the two. The reference's
global-to-local then gives the two different local types (a verifier error). `shardwise
partition` runs this step after `sdy-insert-explicit-reshards`: before each branch's return,
an ``sdy.reshard`` of each returned value to the result's sharding, which
`sdy-reshard-to-collectives` lowers like any other. Where the two already agree nothing is
inserted, so a module the reference partitions is left as it was.
"""

from __future__ import annotations

from shardwise.ir import Module, Op
from shardwise.sdy.shardings import get_sharding
from shardwise.sharding import TensorSharding

__all__ = ["insert_if_branch_reshards"]


def insert_if_branch_reshards(module: Module) -> None:
    """Each ``stablehlo.if`` branch returns its values in the result's sharding."""
    for op in [op for op in module.walk() if op.name == "stablehlo.if"]:
        for region in op.regions:
            terminator = region.entry.terminator
            assert terminator is not None, "an if branch without a return"
            for i, result in enumerate(op.results):
                _reshard_returned(terminator, i, get_sharding(result))


def _reshard_returned(terminator: Op, index: int, target: TensorSharding | None) -> None:
    value = terminator.operands[index]
    source = get_sharding(value)
    if source is None and target is None:
        return
    if source is not None and source.is_equivalent(target):
        return
    if target is None:
        assert source is not None
        target = TensorSharding.fully_closed(source.mesh_or_ref, source.rank)
    elif source is None and target.is_fully_replicated:
        return
    reshard = Op(
        "sdy.reshard",
        [value],
        [value.type],
        properties={"sharding": target},
        location=terminator.location,
        loc_text=terminator.loc_text,
    )
    block = terminator.parent
    assert block is not None
    block.insert_before(terminator, reshard)
    terminator.set_operand(index, reshard.results[0])
