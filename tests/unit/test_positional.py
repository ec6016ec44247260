"""The search's statement with Postgres's own placeholders, for a raw cursor (`hybrid_sql.positional`)."""

from core.retrieval.hybrid_sql import Statement, positional


def test_each_name_is_one_numbered_placeholder_in_order_of_first_use():
    named = b"SELECT %(q)s::vector <=> e, %(text)s FROM m WHERE i = ANY(%(instances)s) AND q = %(q)s LIMIT %(k)s"
    assert positional(named) == Statement(
        b"SELECT $1::vector <=> e, $2 FROM m WHERE i = ANY($3) AND q = $1 LIMIT $4", ("q", "text", "instances", "k"))


def test_a_doubled_percent_is_one_and_a_statement_without_values_has_no_names():
    assert positional(b"SELECT 7 %% 3, '%%(x)s'") == Statement(b"SELECT 7 % 3, '%(x)s'", ())
