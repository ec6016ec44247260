"""Feedback analytics over ui_remember's answers: behaviour feedback (continued, corrected, scores),
token usage and abandoned answers.

`load` reads feedback hashes with their turns' metrics into a pandas frame; `frames` keeps those rows in
a process and reads again only the answers changed since; `aggregate` holds the pure functions over the
frame (rates, score with its confidence interval, percentiles, groupings).
"""

from core.analytics.aggregate import (GROUPINGS, FeedbackFilter, FeedbackSummary, apply_filter,
                                      latency_table, lowest_scored, previous_window, summarize,
                                      summarize_by, summarize_split)
from core.analytics.load import FRAME_COLUMNS, build_frame, load_feedback, questions_for, turn_transcript

__all__ = ["FRAME_COLUMNS", "GROUPINGS", "FeedbackFilter", "FeedbackSummary", "apply_filter", "build_frame",
           "latency_table", "load_feedback", "lowest_scored", "previous_window", "questions_for", "summarize",
           "summarize_by", "summarize_split", "turn_transcript"]
