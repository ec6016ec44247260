"""Tokens of holds kept in Redis (a lock, a claim) that say which process holds them.

A hold's value names its process (host, pid, the process's start time), so that a process of the same
host finding the hold taken can tell its holder died (SIGKILL, the OOM killer) and take it over at once,
rather than wait for its expiry. The outbox lock (`core.conversation.indexing`), a deletion's hold of it
(`core.admin.deletion`) and the claim of a new instance's first write (`core.conversation.thoughts`) use
the one format: a holder of any of them is recognised by every other. Here, beside `core.services.leases`
(whose `process_alive` and `start_time` tell a process gone), since the conversation and the admin layers
both need it and `core.conversation.thoughts` cannot import `core.conversation.indexing` (which imports it).
"""

from __future__ import annotations

import os
import socket
import uuid

from core.services.leases import process_alive, start_time


def holder_token() -> str:
    """A hold's token: unique, and saying which process holds it (host, pid, its start time)."""
    pid = os.getpid()
    return f"{uuid.uuid4().hex} {socket.gethostname()} {pid} {start_time(pid)}"


def holder_dead(token: str) -> bool:
    """Whether the token is a hold of a process of this host that is gone (its pid dead, or reused by a
    process that started later). Another host's, or a token that does not say (an older version's), is
    taken as alive: its hold is waited for until it expires."""
    parts = token.split(" ")
    if len(parts) != 4 or parts[1] != socket.gethostname() or not parts[2].isdigit():
        return False
    pid = int(parts[2])
    if pid == os.getpid():  # this process's own holds end with their work (or are released later)
        return False
    return not (process_alive(pid) and start_time(pid) == parts[3])
