"""`sdy-remove-sharding-groups`: every ``sdy.sharding_group`` erased (Shardy's
`export/remove_sharding_groups.cc`).
"""

from __future__ import annotations

from shardwise.ir import (
    Module,
    ops_in_pre_order,
)
from shardwise.passes import sdy_pass
from shardwise.sdy.sharding_groups import SHARDING_GROUP

__all__ = [
    "remove_sharding_groups",
]


@sdy_pass("sdy-remove-sharding-groups")
def remove_sharding_groups(module: Module) -> None:
    """`sdy-remove-sharding-groups`: erase every ``sdy.sharding_group``."""
    for op in ops_in_pre_order(module.op, SHARDING_GROUP):
        op.erase()
