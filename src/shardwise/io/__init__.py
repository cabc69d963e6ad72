"""shardwise.io."""
