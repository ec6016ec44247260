"""The ui_remember turn: thoughts in Redis (every key built in `keys`), feedback rules, prompt,
indexing of thoughts."""
