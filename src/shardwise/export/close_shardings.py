"""`sdy-close-shardings`: every open dim of every sharding closed (Shardy's
`export/close_shardings.cc`).
"""

from __future__ import annotations

from shardwise.ir import (
    Module,
    Op,
)
from shardwise.passes import sdy_pass
from shardwise.sdy.sharding_walker import memoized_transform, transform_shardings
from shardwise.sharding import TensorSharding

__all__ = [
    "close_shardings",
]


@sdy_pass("sdy-close-shardings")
def close_shardings(module: Module, ops: list[Op] | None = None) -> None:
    """`sdy-close-shardings`: every sharding closed, its replicated axes dropped.

    `ops`: `module.op.walk_list()`, if the caller has it."""
    transform_shardings(module.op, memoized_transform(TensorSharding.closed_like), ops)
