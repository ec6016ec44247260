"""How memory-bank rows are named in the memory index, where they sit beside every other memory.

An entry is the row "be-<entry id>" of kind `bank_entry`, a summary the row "bs-<summary id>" of kind
`bank_summary`: the prefix keeps an entry and a summary with the same id apart, and lets a row be
traced back to its bank item from its id alone (deletion does, even when the row is gone).
"""

from __future__ import annotations

from typing import Literal

BankKind = Literal["bank_entry", "bank_summary"]
ENTRY_KIND: BankKind = "bank_entry"
SUMMARY_KIND: BankKind = "bank_summary"
BANK_KINDS: tuple[BankKind, BankKind] = (ENTRY_KIND, SUMMARY_KIND)
_PREFIXES: dict[BankKind, str] = {ENTRY_KIND: "be-", SUMMARY_KIND: "bs-"}


def entry_index_id(entry_id: str) -> str:
    return _PREFIXES[ENTRY_KIND] + entry_id


def summary_index_id(summary_id: str) -> str:
    return _PREFIXES[SUMMARY_KIND] + summary_id


def bank_item_of(index_id: str) -> tuple[BankKind, str] | None:
    """(kind, entry or summary id) of a bank row's index id; None for any other memory."""
    for kind, prefix in _PREFIXES.items():
        if index_id.startswith(prefix):
            return kind, index_id.removeprefix(prefix)
    return None
