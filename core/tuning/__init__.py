"""Tuning retrieval: labelled datasets, metrics, evaluation, the optimiser, live comparison."""
