"""The memory index: one Postgres table (partitioned by instance) of everything searched."""
