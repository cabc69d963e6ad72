"""shardwise.propagation."""
