"""Sharding groups on the IR: ``sdy.sharding_group`` ops and their ids."""

from __future__ import annotations

from shardwise.ir import Op

__all__ = ["SHARDING_GROUP", "group_id_of"]

SHARDING_GROUP = frozenset({"sdy.sharding_group"})


def group_id_of(op: Op) -> int:
    """The ``group_id`` of an ``sdy.sharding_group`` op (printed ``3 : i64``)."""
    return int(str(op.get_attr("group_id")).split(":")[0].strip())
