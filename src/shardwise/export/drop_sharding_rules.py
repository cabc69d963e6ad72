"""`sdy-drop-sharding-rules`: every ``sdy.sharding_rule`` that is not a custom rule dropped
(Shardy's `export/drop_sharding_rules.cc`).
"""

from __future__ import annotations

from shardwise.ir import (
    Op,
)
from shardwise.passes import FUNC, sdy_pass
from shardwise.rules.populate import drop_sharding_rules as drop_rules_under

__all__ = [
    "drop_sharding_rules",
]


@sdy_pass("sdy-drop-sharding-rules", anchor=FUNC)
def drop_sharding_rules(func: Op) -> None:
    """`sdy-drop-sharding-rules`: remove every ``sdy.sharding_rule`` that is not custom."""
    drop_rules_under(func)
