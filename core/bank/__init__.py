"""The memory bank: an agent's step-by-step task memory with compression into summaries."""

from core.bank.bank import DEFAULT_BANK, AddEntryResult, BankConfig, MemoryBank, count_entries, list_banks
from core.bank.types import (SUMMARY_SKILL, BankEntryState, BankInfo, BankSnapshot, BankStats,
                             CompressionEvent, MemoryEntry, MemoryQuery, MemorySummary)

__all__ = ["DEFAULT_BANK", "SUMMARY_SKILL", "AddEntryResult", "BankConfig", "BankEntryState", "BankInfo",
           "BankSnapshot", "BankStats", "CompressionEvent", "MemoryBank", "MemoryEntry", "MemoryQuery",
           "MemorySummary", "count_entries", "list_banks"]
