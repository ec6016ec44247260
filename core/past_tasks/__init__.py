"""Past tasks (internal memory): produced texts per user, their search and key points."""
