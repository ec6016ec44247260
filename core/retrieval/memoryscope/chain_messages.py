"""read_message over a stored chain: the chain's user and assistant thoughts as MemoryScope's chat
messages, each `memorized` once the memory index holds it (`core.conversation.indexing`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.conversation.indexing import MEMORIZED
from core.conversation.thoughts import CATEGORY_USER, Thought
from core.errors import NotFound
from core.retrieval.memoryscope.params import ReadMessageParams, ScopeParams
from core.retrieval.memoryscope.pipeline import read_recent_messages
from core.retrieval.memoryscope.types import ChatMessage, OpTrace

if TYPE_CHECKING:
    from core.runtime import Workbench


def chat_message(t: Thought) -> ChatMessage:
    role = "user" if t.category == CATEGORY_USER else "assistant"
    return ChatMessage(role=role, role_name=role, content=t.thought, time_created=t.timestamp,
                       memorized=bool(t.extra.get(MEMORIZED)))


def read_chain_messages(wb: Workbench, instance: str, chain_id: str, params: ReadMessageParams
                        ) -> tuple[list[ChatMessage], OpTrace]:
    """The chain's last `contextual_msg_max_count` unmemorized messages, with read_message's trace. The
    chain is read from its newest message back, only as far as that many unmemorized ones."""
    if not wb.thoughts.chain_meta(instance, chain_id):
        raise NotFound(f"chain {chain_id!r} not found in instance {instance!r}; "
                       "`workbench chains list` shows the chains")
    wanted = params.contextual_msg_max_count
    thoughts, _ = wb.thoughts.recent_messages(
        instance, chain_id, lambda read: sum(not t.extra.get(MEMORIZED) for t in read) >= wanted)
    return read_recent_messages([chat_message(t) for t in thoughts], ScopeParams(read_message_op=params))
