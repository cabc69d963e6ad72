"""`sdy-populate-op-sharding-rules`: put every op's sharding rule on the op; and the inverse,
`drop_sharding_rules`, which propagation and ``sdy-drop-sharding-rules`` run afterwards.

Shardy's pass (anchored on ``func.func``) walks each function post-order and calls
`get_or_create_sharding_rule` on every op, so a rule already on an op is kept and ops without a
rule are left alone. Propagation does the same lazily; this pass is for tests and debugging.
"""

from __future__ import annotations

from shardwise.ir import SHARDING_RULE_ATTR, Module, Op
from shardwise.passes import sdy_pass
from shardwise.rules.registry import get_or_create_sharding_rule
from shardwise.rules.rule import OpShardingRule

__all__ = ["populate_op_sharding_rules", "drop_sharding_rules"]


@sdy_pass("sdy-populate-op-sharding-rules", nests_in_func=True)
def populate_op_sharding_rules(module: Module, conservative_propagation: bool = False) -> Module:
    """Set ``sdy.sharding_rule`` on every op of every function that has a rule; returns `module`."""
    for func in module.funcs:
        for op in func.walk_post_order():
            get_or_create_sharding_rule(op, conservative_propagation)
    return module


def drop_sharding_rules(root: Op) -> None:
    """Remove every ``sdy.sharding_rule`` under `root` (included) that is not a custom rule."""
    ops = [root]
    for op in ops:  # every op once, in no particular order: a list that grows as it goes
        if op.regions:
            for region in op.regions:
                for block in region.blocks:
                    ops += block.ops
        rule = op.attributes.get(SHARDING_RULE_ATTR)
        if isinstance(rule, OpShardingRule) and not rule.is_custom_rule:
            del op.attributes[SHARDING_RULE_ATTR]
