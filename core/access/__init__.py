"""Who may do what: API keys (stored hashed), each scoped to the instances it may read and write."""
