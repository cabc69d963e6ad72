"""`sdy-populate-op-sharding-rules`: put every op's sharding rule on the op.

Shardy's pass (anchored on ``func.func``) walks each function post-order and calls
`get_or_create_sharding_rule` on every op, so a rule already on an op is kept and ops without a
rule are left alone. Propagation does the same lazily; this pass is for tests and debugging.
"""

from __future__ import annotations

from shardwise.ir import Module
from shardwise.passes import sdy_pass
from shardwise.rules.registry import get_or_create_sharding_rule

__all__ = ["populate_op_sharding_rules"]


@sdy_pass("sdy-populate-op-sharding-rules")
def populate_op_sharding_rules(module: Module, conservative_propagation: bool = False) -> Module:
    """Set ``sdy.sharding_rule`` on every op of every function that has a rule; returns `module`."""
    for func in module.funcs:
        for op in func.walk_post_order():
            get_or_create_sharding_rule(op, conservative_propagation)
    return module
