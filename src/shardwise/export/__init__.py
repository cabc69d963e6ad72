"""shardwise.export."""
