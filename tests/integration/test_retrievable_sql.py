"""The statement's filter of what a profile retrieves (`hybrid_sql.RETRIEVABLE`) decides as
`ranking.retrievable` does, for any metadata, evaluated by Postgres itself."""

from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st
from psycopg.types.json import Jsonb

from core.models import PRESET_PROFILES, MemoryRow
from core.retrieval.hybrid_sql import RETRIEVABLE, shown_by
from core.retrieval.ranking import retrievable

KINDS = ["statement", "question", "acknowledgement", "plan", "7", ""]
# What formation writes, and what other writers or a hand-edited import might: every JSON type where
# formation writes a list, a timestamp or a kind.
JSON = st.recursive(st.none() | st.booleans() | st.integers(-2, 2) | st.floats(-1, 1, allow_nan=False)
                    | st.sampled_from(["", "x", "2026-01-01T00:00:00+00:00", *KINDS]),
                    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.sampled_from("ab"), inner,
                                                                                  max_size=2),
                    max_leaves=4)
METADATA = st.dictionaries(st.sampled_from(["observations", "superseded_at", "message_kind", "formed_by"]),
                           JSON | st.sampled_from(KINDS), max_size=4)
PROFILES = st.builds(lambda kinds, superseded: PRESET_PROFILES["balanced-default"].model_copy(
    update={"retrieve_kinds": kinds, "include_superseded": superseded}),
    st.none() | st.lists(st.sampled_from(["statement", "question", "acknowledgement", "plan"]), unique=True),
    st.booleans())


def test_the_statement_keeps_what_ranking_keeps(keyword_workbench):
    with keyword_workbench.pool().connection() as conn:
        query = RETRIEVABLE.as_string(conn)

        @settings(max_examples=400, deadline=None)
        @given(METADATA, PROFILES)
        def same(metadata, profile):
            row = MemoryRow(instance="i", id="m", kind="user", content="x", created_at=datetime.now(UTC),
                            metadata=metadata)
            shown = shown_by(profile)
            if shown is None:  # the statement does not filter
                assert retrievable(row, profile)
                return
            kinds, superseded = shown
            (in_sql,) = conn.execute(f"SELECT {query} FROM (SELECT %(m)s::jsonb AS metadata) m",
                                     {"m": Jsonb(metadata), "shown": kinds, "superseded": superseded}).fetchone()
            assert in_sql is retrievable(row, profile), metadata

        same()
