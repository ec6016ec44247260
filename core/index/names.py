"""The names of an instance's partitions: of `memory` ("memory_p_…"), of its text postings `memory_term`
("memory_t_…") and of its words' counters `memory_lexeme` ("memory_l_…", `core.index.text`).

Retrieval names the partition tables in its SQL (planning over the parent cost about 1 ms a query), bulk
loads create them, and the schema's SQL derives the postings' and counters' names from the partition's (its
functions `memory_postings_name` and `memory_lexemes_name` are made from the prefixes below), so each name is
made here only.
"""

from __future__ import annotations

import hashlib

from core.ids import validate_id

PARTITION_PREFIX = "memory_p_"
POSTINGS_PREFIX = "memory_t_"
LEXEMES_PREFIX = "memory_l_"


def partition_name(instance: str) -> str:
    """The instance's partition of `memory`: a hash, since an id may be longer than a table name."""
    digest = hashlib.sha1(validate_id(instance, "instance").encode()).hexdigest()[:16]
    return f"{PARTITION_PREFIX}{digest}"


def postings_of(partition: str) -> str:
    """The postings partition that goes with a partition of `memory`."""
    return POSTINGS_PREFIX + partition.removeprefix(PARTITION_PREFIX)


def postings_name(instance: str) -> str:
    """The instance's partition of the text postings."""
    return postings_of(partition_name(instance))


def lexemes_of(partition: str) -> str:
    """The words' counters partition that goes with a partition of `memory`."""
    return LEXEMES_PREFIX + partition.removeprefix(PARTITION_PREFIX)


def lexemes_name(instance: str) -> str:
    """The instance's partition of the words' counters."""
    return lexemes_of(partition_name(instance))
