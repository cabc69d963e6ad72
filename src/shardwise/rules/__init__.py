"""shardwise.rules: op sharding rules (Shardy's `OpShardingRuleAttr` and its registry).

- `rule`: `OpShardingRule`, `FactorType` and their Shardy text;
- `builder`: `OpShardingRuleBuilder`, the fluent way every rule is written;
- `registry`: `create_op_sharding_rule`, `get_or_create_sharding_rule`, `@register`,
  `NO_RULE_OPS`;
- `ops/<family>`: the rule of every op Shardy knows;
- `populate`: `populate_op_sharding_rules` (``sdy-populate-op-sharding-rules``);
- `stablehlo_attrs`: reading the StableHLO attributes the rules need.

Nothing is imported here so that the algebra layer can import `rules.rule` cheaply.
"""
