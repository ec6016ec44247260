"""MemoryScope personal-memory retrieval: small ops composed into one traced flow."""

from core.retrieval.memoryscope.params import ScopeParams
from core.retrieval.memoryscope.pipeline import read_recent_messages, run_memoryscope
from core.retrieval.memoryscope.types import ChatMessage, OpTrace, ScopeMemory, ScopeResult

__all__ = ["ChatMessage", "OpTrace", "ScopeMemory", "ScopeParams", "ScopeResult", "read_recent_messages",
           "run_memoryscope"]
