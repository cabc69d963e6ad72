"""The planner: which shardings to write (`shardwise plan`), and the IOPDDL solver core."""
