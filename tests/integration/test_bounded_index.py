"""No single record blocks the text index: what becomes a text vector is bounded (`core.index.text`), so a
memory-bank entry or a LoCoMo turn past Postgres's 1 MB text-vector limit is stored whole, searched by the
start of its text, says so, and lets every later record through; a value Postgres refuses is reported as
bad input, not as Postgres being down. Real embedded Postgres throughout."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta

import psycopg
import pytest

from core.bank import MemoryBank, MemoryEntry
from core.errors import describe, outage
from core.index.text import CJK_INDEXED_CHARS
from core.models import MemoryContext, MemoryRecord
from core.retrieval.hybrid import SearchRequest, hybrid_search
from tests.support.cli import in_process_cli

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)


def cjk_words(chars: int, seed: int) -> str:
    """`chars` characters of two-ideograph words (CJK Extension B, 4 bytes each in UTF-8) between spaces:
    about 4 bytes of text vector per character, so three fields of 99,990 pass the 1 MB limit."""
    rng = random.Random(seed)
    words = ("".join(chr(rng.randint(0x20000, 0x2A6DF)) for _ in range(2)) for _ in range(chars // 3 + 1))
    return " ".join(words)[:chars]


def densest(chars: int, seed: int) -> str:
    """The text with the most text vector per character found: hyphenated pairs of 4-byte letters, each
    pair indexed as itself and as its two halves (about 7.5 bytes a character)."""
    rng = random.Random(seed)
    pairs = (f"{chr(rng.randint(0x20000, 0x2A6DF))}-{chr(rng.randint(0x20000, 0x2A6DF))}"
             for _ in range(chars // 4 + 1))
    return " ".join(pairs)[:chars]


def text_hits(wb, instance: str, query: str) -> list[str]:
    found = hybrid_search(wb.pool(), wb.embedder, SearchRequest(query=query, instance=instance,
                                                                 search_type="text", top_k=10))
    return [h.memory.id for h in found.results]


def test_a_bank_entry_past_the_text_vector_limit_no_longer_blocks_its_bank(keyword_workbench, instance):
    wb = keyword_workbench
    bank = MemoryBank(wb, instance, "big", max_entries=100, compression_threshold=100)
    fields = {name: cjk_words(99_990, seed) for seed, name in enumerate(("thinking", "command", "result"))}
    big = bank.add_entry(MemoryEntry(timestamp=T0, **fields))
    later = bank.add_entry(MemoryEntry(timestamp=T0 + timedelta(minutes=1), thinking="rotate the nginx logs"))

    assert "indexing deferred" not in " ".join(big.notes + later.notes)
    [note] = big.notes  # ideographs: searched by their first CJK_INDEXED_CHARS (`memory_analyse`)
    assert note.startswith(f"entry {big.entry.id}: searched by words in its first {CJK_INDEXED_CHARS:,} of ")
    with wb.pool().connection() as conn:
        pending = conn.execute("SELECT count(*) FROM bank_entry WHERE instance = %s AND NOT indexed",
                               (instance,)).fetchone()[0]
        stored = dict(conn.execute("SELECT id, content FROM memory WHERE instance = %s", (instance,)).fetchall())
    assert pending == 0
    content = stored[f"be-{big.entry.id}"]
    assert len(content) > 3 * 99_990 and all(text in content for text in fields.values())  # stored whole
    [row] = wb.index.get(instance, [f"be-{big.entry.id}"])
    assert row.metadata["text_indexed"].startswith(f"searched by words in its first {CJK_INDEXED_CHARS:,} of")
    assert bank.get_all_memories()[0].thinking == fields["thinking"]
    # The start of the big entry and every later entry are found by their words.
    assert text_hits(wb, instance, fields["thinking"][:2]) == [f"be-{big.entry.id}"]
    assert text_hits(wb, instance, "nginx") == [f"be-{later.entry.id}"]


def test_the_densest_text_with_the_widest_context_fits(keyword_workbench, instance):
    """The bound holds for the worst text measured, at every weight at once, and for a query too."""
    neighbours = [densest(5_000, seed) for seed in range(6)]  # each cut to 4,000 by MemoryContext
    record = MemoryRecord(instance=instance, id="dense", kind="observation", content=densest(250_000, 9),
                          created_at=T0, context=MemoryContext(before=neighbours[:3], after=neighbours[3:]))
    assert keyword_workbench.index.add([record]) == 1
    with keyword_workbench.pool().connection() as conn:
        size = conn.execute("SELECT pg_column_size(tsv) FROM memory WHERE instance = %s", (instance,)).fetchone()[0]
    assert size < 2 * 1_048_576  # stored whole; its lexemes and positions stayed under the 1 MB limit
    assert text_hits(keyword_workbench, instance, record.content[:3]) == ["dense"]


def locomo_with_a_long_turn(sample_id: str, long_text: str) -> list[dict]:
    turns = [("Ann", long_text), ("Bob", "I had sushi for lunch today."), ("Ann", "My dog loves the park.")]
    return [{"sample_id": sample_id, "conversation": {
        "speaker_a": "Ann", "speaker_b": "Bob", "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [{"speaker": s, "dia_id": f"D1:{i}", "text": t} for i, (s, t) in enumerate(turns, 1)]},
        "qa": [{"question": "What did Bob eat?", "evidence": ["D1:2"], "category": 4},
               {"question": "Where does the dog go?", "evidence": ["D1:3"], "category": 4}]}]


def test_eval_with_a_turn_of_300000_characters(settings, workbench, instance, tmp_path, monkeypatch):
    """It exited 1 with "Postgres is unavailable": the turn's text vector passed the limit while loading."""
    cli = in_process_cli(settings, workbench, monkeypatch)
    path = tmp_path / "long.json"
    path.write_text(json.dumps(locomo_with_a_long_turn(instance, cjk_words(300_000, 3))), encoding="utf-8")
    code, out, err = cli("eval", "--data", str(path), "--k", "1,5")
    assert code == 0, err
    assert "overall" in out and "2 queries" in out
    [evaluated] = [i for i in workbench.index.instances() if i.startswith(f"eval-locomo-{instance}")]
    [turn] = workbench.index.get(evaluated, ["D1_1"])
    assert len(turn.content) == len("Ann: ") + 300_000
    assert f"first {CJK_INDEXED_CHARS:,} of 300,005 characters" in turn.metadata["text_indexed"]


@pytest.mark.parametrize("statement, value, reason", [
    ("SELECT to_tsvector('simple', %s)", cjk_words(300_000, 4), "string is too long for tsvector"),
    ("SELECT %s::int", "twelve", "invalid input syntax for type integer"),
])
def test_a_value_postgres_refuses_is_bad_input_not_an_outage(workbench, statement, value, reason):
    with pytest.raises(psycopg.Error) as caught, workbench.pool().connection() as conn:
        conn.execute(statement, (value,))
    info = describe(caught.value)
    assert (info.code, info.retryable) == ("invalid_input", False)
    assert info.message.startswith(f"Postgres refused the data: {reason}") and "unavailable" not in info.message
    assert len(info.message) < 400
    assert outage(caught.value, "Postgres").startswith(f"Postgres refused the data ({reason}")  # turn notes
