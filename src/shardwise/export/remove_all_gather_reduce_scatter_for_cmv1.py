"""`sdy-remove-all-gather-reduce-scatter-for-cmv1` (``exp/remove_ag_rs_for_cmv1.cc``).

XLA's collective matmul V1 (CMV1) wants a dot's gathered operand and scattered result left to
itself, so for it the explicit collectives the partitioner put right around a dot are taken out
again. Per ``stablehlo.dot`` / ``stablehlo.dot_general``, anywhere in the func:

| pattern                                                        | removed                        |
| -------------------------------------------------------------- | ------------------------------ |
| ``all_gather`` with the dot as its only use -> dot             | that all_gather (each operand) |
| dot with one use, no unreduced axes -> ``reduce_scatter``      | the reduce_scatter; the dot    |
|                                                                | takes its out sharding         |
| single-use ``all_gather`` -> dot -> ``reduce_scatter``         | only the all_gather            |
| all_gather with another use (or used twice by the dot)         | nothing                        |
| dot with another use, or unreduced axes, -> ``reduce_scatter`` | nothing                        |
| collectives around any other op                                | nothing                        |

A removed collective's uses take its operand. Every decision reads the func as it was before
the pass (collect first, rewrite after), as Shardy does.
"""

from __future__ import annotations

from shardwise.ir import SHARDING_ATTR, Op
from shardwise.passes import FUNC, sdy_pass
from shardwise.sdy.shardings import get_sharding
from shardwise.sharding import TensorSharding, TensorShardingPerValue

__all__ = ["remove_all_gather_reduce_scatter_for_cmv1", "DOT_OPS"]

DOT_OPS = frozenset({"stablehlo.dot", "stablehlo.dot_general"})


def _use_count(op: Op) -> int:
    return sum(len(result.uses) for result in op.results)


def _single_use_all_gathers(dot: Op) -> list[Op]:
    """The dot's operands defined by an ``sdy.all_gather`` that the dot alone uses, once."""
    gathers = []
    for operand in dot.operands:
        op = operand.defining_op
        if op is not None and op.name == "sdy.all_gather" and _use_count(op) == 1:
            gathers.append(op)
    return gathers


def _removable_reduce_scatter(dot: Op) -> Op | None:
    """The dot's only user when it is an ``sdy.reduce_scatter`` and the dot has no unreduced axes.

    A dot without a sharding counts as having none (the reference dereferences the missing
    sharding and crashes there; see docs/conformance.md).
    """
    if _use_count(dot) != 1:
        return None
    user = dot.results[0].uses[0][0]
    if user.name != "sdy.reduce_scatter":
        return None
    sharding = get_sharding(dot.results[0])
    if sharding is not None and sharding.unreduced_axes:
        return None
    return user


@sdy_pass("sdy-remove-all-gather-reduce-scatter-for-cmv1", anchor=FUNC)
def remove_all_gather_reduce_scatter_for_cmv1(func: Op) -> None:
    """`sdy-remove-all-gather-reduce-scatter-for-cmv1` on one ``func.func``, in place."""
    to_remove: list[Op] = []
    for op in func.walk_post_order():
        if op.name not in DOT_OPS:
            continue
        gathers = _single_use_all_gathers(op)
        if gathers:
            # The gathered operand is CMV1's to handle; a reduce-scatter after it stays.
            to_remove += gathers
            continue
        scatter = _removable_reduce_scatter(op)
        if scatter is None:
            continue
        out_sharding = scatter.get_attr("out_sharding")
        assert isinstance(out_sharding, TensorSharding), "sdy.reduce_scatter without out_sharding"
        op.attributes[SHARDING_ATTR] = TensorShardingPerValue((out_sharding,))
        to_remove.append(scatter)
    for collective in to_remove:
        collective.results[0].replace_all_uses_with(collective.operands[0])
        collective.erase()
