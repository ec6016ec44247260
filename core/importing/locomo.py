"""LoCoMo (`snap-research/LoCoMo`): a JSON list of samples, each a long conversation between two people
in dated sessions. Each session becomes a chain: the first speaker's turns are user thoughts, the
second's assistant thoughts, each written "Name: text" (with the photo's caption when one is shared,
never the image search `query`), at the session's date. Questions and annotations are not imported.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from core.importing.chats import RawMessage, build_conversation
from core.importing.records import InvalidRecord, Item, checked
from core.importing.source import json_items
from core.tuning.datasets import _session_numbers, parse_session_date

FORMAT = "locomo"


def read(path: Path, **_: Any) -> Iterator[Item | InvalidRecord]:
    for where, value in json_items(path, "item", "sample"):
        if isinstance(value, InvalidRecord):
            yield value
            continue
        conv = value.get("conversation") if isinstance(value, dict) else None
        if not isinstance(conv, dict):
            yield InvalidRecord(where=where, problem='a LoCoMo sample needs a "conversation" object')
            continue
        sample_id = str(value.get("sample_id") or where)
        for n in _session_numbers(conv):
            yield checked(f"{where} ({sample_id}) session {n}",
                          lambda s=sample_id, c=conv, n=n: session(s, c, n))


def session(sample_id: str, conv: dict, n: int):
    date = conv.get(f"session_{n}_date_time")
    if not isinstance(date, str) or not date.strip():
        raise ValueError(f"session_{n}_date_time is missing: give a date like '1:56 pm on 8 May, 2023'")
    at = parse_session_date(date)
    users = {conv.get("speaker_a"): "user", conv.get("speaker_b"): "assistant"}
    raw = []
    for i, turn in enumerate(conv[f"session_{n}"]):
        if not isinstance(turn, dict) or not isinstance(turn.get("text"), str):
            raise TypeError(f"session_{n}[{i}] must be a turn object with speaker and text")
        speaker = str(turn.get("speaker", "?"))
        text = f"{speaker}: {turn['text']}" if turn["text"].strip() else ""
        if text and turn.get("blip_caption"):
            text += f" [shares a photo: {turn['blip_caption']}]"
        raw.append(RawMessage(role=users.get(speaker, "user"), text=text, at=at,
                              source_id=str(turn.get("dia_id") or i)))
    return build_conversation(FORMAT, f"{sample_id}-session-{n}", f"{sample_id} · session {n}", raw,
                              started=at, include_system=False, tags=[f"locomo:{sample_id}"[:64]])
