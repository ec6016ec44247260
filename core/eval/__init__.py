"""Labelled evaluation of retrieval: datasets (LoCoMo, JSONL), IR metrics, evaluate, optimise."""
