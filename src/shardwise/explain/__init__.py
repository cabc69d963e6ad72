"""Explain and report: why a tensor is (not) sharded, what the sharding costs, pictures."""
