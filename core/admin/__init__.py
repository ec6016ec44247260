"""Administration: the explorer, deletion, the overview counts and upkeep."""
