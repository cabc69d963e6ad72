"""shardwise.rules.ops."""
