"""shardwise.rules."""
