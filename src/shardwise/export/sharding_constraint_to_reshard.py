"""`sdy-sharding-constraint-to-reshard`: each ``sdy.sharding_constraint`` becomes an
``sdy.reshard`` (Shardy's `export/sharding_constraint_to_reshard.cc`).
"""

from __future__ import annotations

from shardwise.ir import (
    Op,
    ops_in_pre_order,
)
from shardwise.passes import FUNC, sdy_pass

__all__ = [
    "SHARDING_CONSTRAINT",
    "constraints_to_reshards",
    "sharding_constraint_to_reshard",
]


SHARDING_CONSTRAINT = frozenset({"sdy.sharding_constraint"})


def _constraint_to_reshard(op: Op, index: int) -> None:
    """Replace `op`, which is ``block.ops[index]``, by a reshard (in place: no list scans)."""
    block = op.parent
    assert block is not None and block.ops[index] is op
    reshard = Op(
        "sdy.reshard",
        [op.operands[0]],
        [op.results[0].type],
        properties={"sharding": op.properties["sharding"]},
        attributes=dict(op.attributes),
        location=op.location,
        loc_text=op.loc_text,
        result_names=[op.results[0].name],
    )
    reshard.parent = block
    block.ops[index] = reshard
    op.results[0].replace_all_uses_with(reshard.results[0])
    op._release()  # `erase` without its list scan: the reshard has taken the slot
    op.parent = None


@sdy_pass("sdy-sharding-constraint-to-reshard", anchor=FUNC)
def sharding_constraint_to_reshard(func: Op) -> None:
    """`sdy-sharding-constraint-to-reshard`: each constraint becomes a reshard (same attrs).

    Constraints are replaced in walk order (use lists depend on it), each at its index in its
    block: replacing in place moves no other op, so indexes taken once stay valid (inserting
    and erasing with list scans was quadratic in the block size).
    """
    constraints_to_reshards(ops_in_pre_order(func, SHARDING_CONSTRAINT))


def constraints_to_reshards(constraints: list[Op]) -> None:
    """`sharding_constraint_to_reshard` on its constraints, collected in pre-order."""
    index: dict[int, int] = {}
    for op in constraints:
        block = op.parent
        assert block is not None
        if id(op) not in index:
            index.update({id(other): i for i, other in enumerate(block.ops)})
        _constraint_to_reshard(op, index[id(op)])
