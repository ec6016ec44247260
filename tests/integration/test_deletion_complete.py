"""Deleted text is gone from everywhere: every Redis key, every text column of every Postgres table, and
the files on disk after the rewrite the deletion starts (DESIGN.md §10, docs/ARCHITECTURE.md §6).

A unique marker is written through real turns (offline and with an LLM), a memory add and a correction;
other chains retrieve it, quote it in answers, prompts, served results and neighbours' context. Then a
chain, a memory and one thought are deleted, and everything stored is searched for the marker.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from core.admin.deletion import delete_chain, delete_memory
from core.admin.explorer import ExplorerSearch, search_memory
from core.conversation.turn import Remember, UiRememberParams
from core.runtime import Workbench
from core.tuning.labels import LabelStore
from core.usecases.memories import AddMemory, add_memory

MARKER = "qzvmarker7781"  # one lexeme, stemmed to itself, found nowhere else
LOCKER = f"My locker code at the climbing gym is {MARKER}, the one next to the sauna."
SPARE_KEY = f"The spare key of the bike lock is taped under the desk, tagged {MARKER}."
CORRECTION = f"No, actually the dentist booking reference is {MARKER}, not the old one."


@pytest.fixture
def llm_wb(llm_settings):
    wb = Workbench(llm_settings)
    yield wb
    wb.close()


@pytest.fixture
def wal_dropped(workbench):
    """Postgres removes old write-ahead segments instead of renaming them for reuse (text inside)."""
    with workbench.pool().connection() as conn:
        conn.execute("ALTER SYSTEM SET wal_recycle = off")
        conn.execute("SELECT pg_reload_conf()")
        deadline = time.monotonic() + 10
        while conn.execute("SHOW wal_recycle").fetchone()[0] != "off" and time.monotonic() < deadline:
            time.sleep(0.05)
    yield
    with workbench.pool().connection() as conn:
        conn.execute("ALTER SYSTEM RESET wal_recycle")
        conn.execute("SELECT pg_reload_conf()")


@pytest.fixture
def greppable_redis(workbench):
    """Redis writes its files uncompressed and as commands while the test runs, so a deleted text left
    in them would show to a byte search (compressed, it would hide even when present)."""
    r = workbench.redis()
    before = r.config_get("rdbcompression") | r.config_get("aof-use-rdb-preamble")
    r.config_set("rdbcompression", "no")
    r.config_set("aof-use-rdb-preamble", "no")
    yield r
    for name, value in before.items():
        r.config_set(name, value)


def turn(wb, instance, chain, text):
    return Remember(wb).run(UiRememberParams(thought=text, chain_id=chain), instance=instance)


def redis_values(r) -> dict[str, str]:
    """Every key of the server with everything it holds, read by its type."""
    out = {}
    read = {"string": r.get, "hash": r.hgetall, "list": lambda k: r.lrange(k, 0, -1), "set": r.smembers,
            "zset": lambda k: r.zrange(k, 0, -1, withscores=True), "stream": r.xrange}
    for key in r.scan_iter(count=1000):
        kind = r.type(key)
        out[key] = f"{key} {read[kind](key) if kind in read else kind}"
    return out


def postgres_hits(wb, needle: str) -> list[str]:
    """Every text, jsonb, tsvector or text[] column of every table of the schema holding the needle."""
    hits = []
    with wb.pool().connection() as conn:
        columns = conn.execute(
            "SELECT c.table_name, c.column_name FROM information_schema.columns c "
            "JOIN information_schema.tables t USING (table_schema, table_name) "
            "WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE' "
            "AND (c.data_type IN ('text', 'character varying', 'jsonb', 'json', 'tsvector', 'ARRAY'))"
        ).fetchall()
        for table, column in columns:
            n = conn.execute(f'SELECT count(*) FROM "{table}" WHERE "{column}"::text ILIKE %s',
                             (f"%{needle}%",)).fetchone()[0]
            if n:
                hits.append(f"{table}.{column}: {n}")
    assert len(columns) > 20, "the search no longer sees the schema's columns"
    return hits


def statistics_holding(wb, needle: str) -> list[str]:
    """The columns whose planner statistics (sampled values) hold the needle."""
    with wb.pool().connection() as conn:
        rows = conn.execute("SELECT tablename || '.' || attname FROM pg_stats WHERE schemaname = 'public' AND "
                            "concat(most_common_vals::text, histogram_bounds::text, most_common_elems::text) "
                            "ILIKE %s", (f"%{needle}%",)).fetchall()
    return sorted(r[0] for r in rows)


def files_holding(root: Path, needle: str) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")
                  if p.is_file() and not p.is_symlink() and needle.encode() in _read(p))


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:  # a file removed while the walk went on (a WAL segment recycled, a temp file)
        return b""


def wait_for_redis_files(r, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        info = r.info("persistence")
        if not (info["aof_rewrite_in_progress"] or info["aof_rewrite_scheduled"]
                or info["rdb_bgsave_in_progress"]):
            return
        time.sleep(0.05)
    raise AssertionError("Redis did not finish rewriting its files")


def test_deleted_text_is_in_no_key_no_table_and_no_file(workbench, llm_wb, fake_llm, instance, data_dir,
                                                        greppable_redis, wal_dropped):
    r = greppable_redis
    # What is deleted: a chain said with an LLM, a memory added directly, one correction in a chain.
    fake_llm.reply("Noted.")
    turn(llm_wb, instance, "locker", LOCKER)
    memory = add_memory(workbench, AddMemory(instance=instance, content=SPARE_KEY))
    turn(workbench, instance, "dentist", "Book the dentist for Friday morning, please.")
    correction = turn(workbench, instance, "dentist", CORRECTION)
    after = turn(workbench, instance, "dentist", "Thanks, and remind me on Thursday.")
    # What quotes it: an LLM answer quoting the chain word for word (indexed, then in the next prompt's
    # history), extractive answers, prompts, context items and served results of other chains.
    fake_llm.reply(f'You told me: "{LOCKER}"')
    quoted = turn(llm_wb, instance, "asks", "What is my locker code at the climbing gym?")
    fake_llm.reply("Glad to help.")
    turn(llm_wb, instance, "asks", "Thanks! Where is the spare key of the bike lock?")
    offline = turn(workbench, instance, "asks-offline", "Where is the spare key of the bike lock taped?")
    assert LOCKER in quoted.answer and SPARE_KEY in offline.answer  # the copies exist before
    assert any(MARKER in v for k, v in redis_values(r).items() if "{asks" in k)
    assert {"memory_lexeme.lexeme: 1"} <= set(postgres_hits(workbench, MARKER))
    # The message after the correction is found by the marker through its context (its neighbour).
    found = search_memory(workbench, ExplorerSearch(query=MARKER, instance=instance, mode="text")).hits
    assert after.thought1_id in {h.id for h in found}

    # The planner's statistics sample the tables (autovacuum analyses them as they grow), and a labelled
    # set marks the memory relevant for a query typed to find it.
    with workbench.pool().connection() as conn:
        conn.execute("ANALYZE")
    assert statistics_holding(workbench, MARKER)
    LabelStore(workbench.pool()).mark(instance, f"where is the {MARKER} key", memory.id, True)

    started = time.perf_counter()
    reports = [delete_chain(workbench, instance, "locker"),
               delete_memory(workbench, instance, memory.id),
               delete_memory(workbench, instance, correction.thought1_id)]
    print(f"\n3 deletions in {time.perf_counter() - started:.2f} s; copies replaced: "
          f"{[rep.copies for rep in reports]}; keys searched: {len(redis_values(r))}; notes: "
          f"{[n for rep in reports for n in rep.notes]}")

    assert sum(rep.copies for rep in reports) >= 6  # answers, metrics, results, feedback, index rows
    leftovers = {k: v for k, v in redis_values(r).items() if MARKER.lower() in v.lower()}
    assert leftovers == {}
    assert postgres_hits(workbench, MARKER) == []
    assert statistics_holding(workbench, MARKER) == [], statistics_holding(workbench, MARKER)
    assert reports[1].marks == 1 and LabelStore(workbench.pool()).labelled_set(instance).queries == []
    # Found no more by its words: neither the deleted rows nor their neighbours or quoters.
    assert search_memory(workbench, ExplorerSearch(query=MARKER, instance=instance, mode="text")).hits == []
    with workbench.pool().connection() as conn:  # the instance's totals count the rows left
        docs, rows = conn.execute(
            "SELECT (SELECT df FROM memory_lexeme WHERE instance = %(i)s AND lexeme = ''), "
            "(SELECT count(*) FROM memory WHERE instance = %(i)s)", {"i": instance}).fetchone()
    assert docs == rows
    [neighbour] = workbench.index.records(instance, ids=[after.thought1_id])
    assert CORRECTION not in neighbour.context.before and "[deleted]" not in neighbour.context.before
    # What remains of the quoting chains says so.
    answers = [t.thought for t in workbench.thoughts.chain_thoughts(instance, "asks")]
    assert 'You told me: "[deleted]"' in answers
    served = [r.get(k) for k in r.scan_iter(match=f"request:{instance}:{{asks}}:*")]
    assert served and all("[deleted]" in s for s in served)

    # The files: Redis rewrote its append-only file and snapshot; Postgres rewrote the touched tables
    # and dropped the write-ahead segments holding the text.
    wait_for_redis_files(r)
    assert files_holding(data_dir / "redis", MARKER) == []
    assert files_holding(data_dir / "pg", MARKER) == []


def test_the_last_memory_of_an_instance_leaves_no_statistics(workbench, instance):
    """ANALYZE leaves an empty table's statistics as they were: deleting an instance's only memory kept its
    text in pg_statistic."""
    memory = add_memory(workbench, AddMemory(instance=instance, content=f"My pet's name is {MARKER}, alone"))
    with workbench.pool().connection() as conn:
        conn.execute("ANALYZE")
    assert statistics_holding(workbench, MARKER)
    delete_memory(workbench, instance, memory.id)
    assert statistics_holding(workbench, MARKER) == []


def test_clearing_a_bank_is_deleting_its_text(workbench, instance):
    """`bank clear` removed the rows alone: the text stayed in the copies a retrieval made of it and, until
    Postgres reused the space, in the files. It goes through the deletion now; the bank stays."""
    from core import usecases as uc

    uc.bank_add(workbench, uc.BankAdd(instance=instance, bank="steps", max_entries=10, compression_threshold=10,
                                      entry=uc.MemoryEntry(result=f"The vault code is {MARKER}")))
    asked = uc.remember(workbench, uc.UiRememberParams(thought="What is the vault code?", chain_id="vault",
                                                       instance=instance))
    assert any(MARKER in c.content for c in asked.context)
    report = uc.bank_clear(workbench, uc.BankRef(instance=instance, bank="steps"))
    assert (report.bank_rows, report.index_rows) == (1, 1) and report.copies >= 1
    assert postgres_hits(workbench, MARKER) == []
    assert not any(MARKER in t.thought for t in workbench.thoughts.chain_thoughts(instance, "vault"))
    stats = uc.bank_stats(workbench, uc.BankRef(instance=instance, bank="steps"))
    assert (stats.max_entries, stats.live_entries) == (10, 0)  # the bank and its settings stay
