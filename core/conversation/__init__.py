"""The ui_remember turn: thoughts in Redis, feedback rules, prompt, indexing of thoughts."""
