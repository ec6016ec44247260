"""The text index of the memory index: what a memory's searchable text is, and BM25 over it.

A memory is searched by more than its own words. Its text vector (`memory.tsv`) holds, by weight:
  A  its content;
  B  the messages just before and after it in its conversation (`context`, distance 1);
  C  the messages at distance 2 and 3;
  D  the words of its event date ("8 may 2023"), so "what did I do on 13 October" finds that day.
A reply such as "Yes, last weekend, with the kids!" is then found by the question it answers, and a
turn by what its conversation is about. Measured on LoCoMo dev (benchmarks/README.md), R@5 / R@10:
ts_rank_cd over the memory's words 0.486 / 0.582; BM25 with the date's words 0.523 / 0.612; with the
neighbours too (and vectors made with the message before) 0.623 / 0.720.

Scoring is BM25 (Robertson–Zaragoza) with those weights folded into the term frequency:
    tf(t, d)  = Σ over t's positions in d of weight(position)          A=1, B=0.4, C=0.2, D=0.5
    dl(d)     = Σ over t of tf(t, d)
    idf(t)    = ln(1 + (N − df(t) + 0.5) / (df(t) + 0.5))
    bm25(q,d) = Σ_{t ∈ q} idf(t) · tf·(k1 + 1) / (tf + k1·(1 − b + b·dl/avgdl))      k1 = 1.2, b = 0.3
N, avgdl and df are the instance's (summed over the instances searched). Unlike `ts_rank_cd`, a word
found in every memory (a speaker's name) weighs little and a rare one much; b is low because short
turns say as much as long ones (b 0.75 was 0.03 R@5 worse).

The index is a postings table, partitioned by instance like `memory` and kept by statement triggers
on `memory` (every insert, update and delete, whoever makes it; bulk loads of a new instance build
it directly, see `core.index.bulk_load`): one row per (memory, lexeme) with tf, dl and an `impact`
(the BM25 saturation at a reference length) that orders each posting list, so a query reads only the
first `kpost` postings of each of its words instead of every memory containing them — the cost of a
common word stays bounded at 100,000 memories. `memory_lexeme` keeps df per lexeme, and under the
empty lexeme the instance's document count and total length.

Words are Postgres's English analysis (stemmed, stop words out) of the text without its accents, in
Unicode's composed form (`memory_fold`: "não" is found by "nao", and an accented name pasted from macOS is
the name typed), plus the words inside what its parser keeps whole: an address, a host, a path, a file name
('/etc/nginx/nginx.conf' is also 'etc', 'nginx', 'conf'), so notes and agent steps are found by the names
they hold (`memory_analyse`). A run of Chinese, Japanese or Korean characters, which the parser keeps as one
word, is each of its characters and each pair of neighbouring ones, as Lucene's CJKAnalyzer makes them
("我住在上海": 我 住 在 上 海 我住 住在 在上 上海); a query's longer runs are their pairs alone
(`memory_query_words`: "北京" does not find 東京 by its 京, "猫" alone finds 我的猫叫小白). The words of the
Cyrillic, Greek, Arabic and Devanagari scripts are stemmed with Postgres's configuration for Russian, Greek,
Arabic and Hindi (`memory_script_words`: "Москва" finds "Я живу в Москве", "Αθήνας" "στην Αθήνα").

The text vector is made message by message: each neighbour's words are its own text vector, and the
neighbours' vectors are concatenated (`memory_tsv_of`). So a bulk load parses each message once, where a
vector of the joined texts parsed it up to seven times (as a memory, and as the neighbour of six): Postgres's
text parser is most of what writing a conversation's memory costs (`core.index.bulk_load`). The postings
are those of the joined texts (the same words, the same weights); only the positions, which no query
reads, differ. The column is kept by a trigger (`memory_tsv_set`) rather than generated, so that a bulk
load can write the vectors it composed.

What is indexed is bounded: the first `INDEXED_CHARS` characters of the content (and of a query), the
first `NEIGHBOUR_CHARS` of each neighbour (8,000 at distance 1 and 16,000 at distances 2–3 in all).
Postgres refuses a text vector whose lexemes and positions pass 1 MB, and a text of hyphenated words of
4-byte characters makes up to 7.5 bytes of them per character (measured): (100,000 + 8,000 + 16,000) × 7.5
≈ 930 kB. Without the bound one memory-bank entry of three 99,990-character fields failed every write of
its bank's index, so every later entry stayed pending. The whole text is stored and shown; a record cut
for the text index says so in its metadata (`text_indexed`). A text holding CJK characters makes up to 28
bytes a character (random ideographs of 4 bytes, each character and pair another word; 25 over 30,000 of
them): such a content is cut into words over its first `CJK_INDEXED_CHARS` and such a neighbour over its
first `CJK_NEIGHBOUR_CHARS`: 30,000 × 25 with six neighbours of 4,000 × 7.5 (930 kB; 922 kB measured), or
100,000 × 7.5 with six of 1,000 × 28 (918 kB), stays under the limit (tests/integration/test_cjk_text.py).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import groupby
from typing import Any

from psycopg import sql

from core.index.names import LEXEMES_PREFIX, PARTITION_PREFIX, POSTINGS_PREFIX
from core.models import MemoryContext, MemoryRecord

K1 = 1.2
B = 0.3
REF_LEN = 32.0  # the length at which `impact` is taken (it only orders postings; scores use avgdl)
INDEXED_CHARS = 100_000  # of a memory's content and of a query; see the module's docstring
NEIGHBOUR_CHARS = 4_000  # of each neighbour's text (two at distance 1, four at distances 2-3)
CJK_INDEXED_CHARS = 30_000  # of a content holding CJK characters (and of such a query); see the docstring
CJK_NEIGHBOUR_CHARS = 1_000  # of a neighbour holding CJK characters
# The default parser's token types whose words `memory_analyse` adds (`ts_token_type('default')`).
TOKEN_EMAIL, TOKEN_HOST, TOKEN_URL_PATH, TOKEN_FILE = 4, 6, 18, 19
# The characters of Chinese, Japanese and Korean words, whose runs `memory_analyse` cuts into characters and
# pairs: Hangul jamo, 々〆〇, hiragana and katakana (not the dot ・ between names), Hangul compatibility jamo,
# katakana extensions, CJK ideographs (extension A, the main block, compatibility, extensions B-G), Hangul
# syllables and jamo extensions, half-width katakana. CJK punctuation (、。「」！？) separates them as before.
CJK_CHARS = ("\u1100-\u11ff\u3005-\u3007\u3040-\u30fa\u30fc-\u30ff\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf"
             "\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7af\ud7b0-\ud7ff\uf900-\ufaff\uff66-\uff9f"
             "\U00020000-\U0003134f")

# The letters of the scripts whose words `memory_analyse` stems with their language's Snowball stemmer, each
# a configuration of Postgres's (`memory_script_words`): Cyrillic (with its supplement and extensions) with
# 'russian', Greek (and its extended block) with 'greek', Arabic (with its supplement, extended-A and its
# presentation forms) with 'arabic', Devanagari (and its extended block) with 'hindi'.
SCRIPTS = {"russian": "\u0400-\u052f\u1c80-\u1c8f\u2de0-\u2dff\ua640-\ua69f",
           "greek": "\u0370-\u03ff\u1f00-\u1fff",
           "arabic": "\u0600-\u06ff\u0750-\u077f\u08a0-\u08ff\ufb50-\ufdff\ufe70-\ufefc",
           "hindi": "\u0900-\u097f\ua8e0-\ua8ff"}
SCRIPT_CHARS = "".join(SCRIPTS.values())


def _script_words() -> str:
    """The body of `memory_script_words`: each script's runs, when the text holds one, analysed with its
    language's configuration (the others' letters and every other character read as spaces)."""
    return "\n      || ".join(
        f"CASE WHEN t ~ '[{chars}]' THEN to_tsvector('{config}', regexp_replace(t, '[^{chars}]+', ' ', 'g')) "
        "ELSE '' END" for config, chars in SCRIPTS.items())


# Functions the `memory` table needs before it is created (its tsv trigger calls them).
ANALYSIS_DDL = f"""
CREATE OR REPLACE FUNCTION memory_date_words(y smallint, mo smallint, d smallint) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN y > 0 THEN concat_ws(' ', CASE WHEN d > 0 THEN d::text END,
    (ARRAY['january','february','march','april','may','june','july','august','september','october',
           'november','december'])[CASE WHEN mo BETWEEN 1 AND 12 THEN mo END], y::text) ELSE '' END
$$;
-- A text's words: Postgres's English analysis, which keeps an address, a host, a path or a file name whole
-- ('/etc/nginx/nginx.conf', 'docs.python.org'), plus the words inside those (of two characters or more,
-- a letter among them: 'etc', 'nginx', 'conf'), so "nginx config" finds a note that only names the file.
-- Only a text with a dot, slash or @ between two letters or digits is parsed a second time for them, by a
-- function of its own: `memory_analyse` itself has no subquery, so Postgres inlines it (a call of an SQL
-- function that it cannot inline costs ~5 us, a quarter of parsing a chat message).
CREATE OR REPLACE FUNCTION memory_analyse_parts(t text) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT to_tsvector('english', t) || to_tsvector('english', coalesce((
           SELECT string_agg(w, ' ') FROM ts_parse('default', t) p,
                  regexp_split_to_table(p.token, '[^[:alnum:]]+') w
           WHERE p.tokid IN ({TOKEN_EMAIL}, {TOKEN_HOST}, {TOKEN_URL_PATH}, {TOKEN_FILE})
             AND length(w) > 1 AND w ~ '[[:alpha:]]'), ''))
$$;
CREATE OR REPLACE FUNCTION memory_may_hold_address(t text) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT t ~ '[[:alnum:]][./@][[:alnum:]]' $$;
-- The words of a text already folded and in NFC (`memory_analyse` makes it so).
CREATE OR REPLACE FUNCTION memory_analyse_nfc(t text) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN memory_may_hold_address(t) THEN memory_analyse_parts(t)
              ELSE to_tsvector('english', t) END
$$;
-- A text without its accents, in Unicode's composed form (NFC): its letters apart from their combining marks
-- (NFD), the marks of Latin, Greek and Cyrillic letters (U+0300-U+036F) dropped, "ß" written "ss", and what
-- is left composed again. "não" is then "nao", "Führerschein" "Fuhrerschein", "heißt" "heisst", "Hélène"
-- "Helene" whether it was typed or pasted from macOS (an e and a combining accent, NFD). Letters Unicode
-- does not split into a letter and a mark (ø, ł, đ, æ) stay as they are. A list of the letters for
-- `translate` instead (its 497 of U+00C0-U+024F and U+1E00-U+1EFF) made the analysis of short Portuguese
-- and German notes 17 -> 480 us: it searches the list for each character of the text.
CREATE OR REPLACE FUNCTION memory_fold(t text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT normalize(replace(regexp_replace(normalize(t, NFD), '[\u0300-\u036f]', '', 'g'), 'ß', 'ss'), NFC)
$$;
-- Memories and queries alike are analysed without their accents (`memory_fold`), so a word is found whether
-- or not it was typed with them: a Portuguese or German user on a phone or an English keyboard asks for
-- "Sao Joao", "inspecao", "Zahnarztin". A word of another sense that only its accents tell apart (pais /
-- país, schon / schön) is then the same word, as in any search engine's ASCII folding; the other words, the
-- ranking and the vector leg tell them apart. On tests/data/multilingual_labelled's 12 questions typed
-- without accents, the text leg's R@5 0.833 -> 1.000, the hybrid's 0.917 -> 1.000; LoCoMo dev, no change
-- (benchmarks/README.md, "Documents that are not dialogue"). The stored text is left as given. An ASCII text
-- (as many bytes as characters) has nothing to fold and is analysed as it is: `normalize` rebuilds every
-- text it is given, and on LoCoMo's 4,840 turns (nearly all ASCII) the analysis took 37.0 us a memory with
-- it against 23.5 without. A text with any other character pays for its folding: short notes in Portuguese
-- and German, 17 -> 28 us (as NFD text paid for its normalisation before, +10 us).
--
-- Chinese and Japanese put no space between words and Korean attaches its particles to them, so the parser
-- keeps a whole run of such characters as one word ('我住在上海', '東京の会社でエンジニアとして働いています'),
-- and only the same run typed again found it: "上海" found nothing. As Lucene's CJKAnalyzer does, a run is
-- searched by its overlapping pairs of characters instead (上海 of 我住在上海, 東京, 서울 of 서울에서), and by each
-- character alone, so a one-character question ("猫") finds its word inside a sentence. Queries are analysed
-- by the same function: the pairs of "上海" are those of the sentence. Only a text holding such a character
-- pays (`memory_may_hold_cjk`, ~1 us on other non-ASCII text; an ASCII text is not tested): short notes in
-- Chinese, Japanese and Korean, 10 -> 54 us, mostly the three passes that cut the runs and the parsing of
-- their pieces (CPU time of the server, 24 notes, tests/data/cjk_labelled).
CREATE OR REPLACE FUNCTION memory_may_hold_cjk(t text) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT t ~ '[{CJK_CHARS}]' $$;
-- The words of `s`, runs of CJK characters separated by spaces: with `singles`, each character (else only a
-- run of one), then the pairs starting at a run's even offsets ('([^ ]{{2}})|[^ ]' keeps a pair and drops a
-- last lone character), then those at its odd offsets (the same after each run's first character is dropped).
CREATE OR REPLACE FUNCTION memory_cjk_words(s text, singles boolean) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT to_tsvector('simple', CASE WHEN singles THEN regexp_replace(s, '([^ ])', '\\1 ', 'g')
                                    ELSE regexp_replace(s, '[^ ]{{2,}}', ' ', 'g') END
      || regexp_replace(s, '([^ ]{{2}})|[^ ]', ' \\1 ', 'g')
      || regexp_replace(regexp_replace(s, '(^| )[^ ]', '\\1', 'g'), '([^ ]{{2}})|[^ ]', ' \\1 ', 'g'))
$$;
-- The words of a folded text in NFC that holds CJK characters: those of its other words, and its runs'.
CREATE OR REPLACE FUNCTION memory_analyse_cjk(t text, singles boolean) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT memory_analyse_nfc(regexp_replace(t, '[{CJK_CHARS}]+', ' ', 'g'))
      || memory_cjk_words(regexp_replace(t, '[^{CJK_CHARS}]+', ' ', 'g'), singles)
$$;
-- A text that is not ASCII and holds no letter of `memory_may_hold_script`'s scripts. One holding CJK
-- characters is analysed over its first `cjk_chars` characters only (see the module's docstring: its words
-- take up to 28 bytes of text vector a character).
CREATE OR REPLACE FUNCTION memory_analyse_folded(t text, cjk_chars int, singles boolean) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN memory_may_hold_cjk(t) THEN memory_analyse_cjk(memory_fold(left(t, cjk_chars)), singles)
              ELSE memory_analyse_nfc(memory_fold(t)) END
$$;
-- English's configuration leaves a Russian, Greek, Arabic or Hindi word as it is written, so each of its
-- forms was a word of its own: "Москва" found nothing in "Я живу в Москве", nor "Αθήνας" in "στην Αθήνα",
-- "جامعة" in "في الجامعة", "कुत्ता" in "कुत्ते का नाम". The runs of those scripts' letters are now analysed by
-- their language's Snowball stemmer, in Postgres's configuration for it ('москв' for Москва, Москве and
-- Москву; 'russian' drops its stop words, the others have none), and the rest of the text as before. They
-- are read in NFC without the accents of `memory_fold`, which would make 'й' an 'и' and 'новый' a word the
-- stemmer leaves whole ('новы'), but without a stray combining mark (a stress, 'моя́'), which the parser
-- reads as a space; 'ё' and 'е', and Greek's accents, are one letter to their stemmers. Only a text holding
-- one of those letters pays (`memory_may_hold_script`, under 1 us on other non-ASCII text; an ASCII text is
-- not tested): short notes in those languages, 12 -> 33 us (CPU time of the server, the 27 notes of
-- tests/data/other_scripts_labelled). Ukrainian and Bulgarian are read as Russian: 8 of 15 pairs of a word's
-- forms are one word (none before); a form with a letter or ending Russian lacks is not ('Києві', 'кучето').
CREATE OR REPLACE FUNCTION memory_may_hold_script(t text) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT t ~ '[{SCRIPT_CHARS}]' $$;
-- The words of `t`, in NFC without combining marks: each script's runs by its language's configuration.
CREATE OR REPLACE FUNCTION memory_script_words(t text) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT {_script_words()}
$$;
-- The words of a text holding letters of those scripts: its runs', and those of the rest as before (one
-- holding CJK characters too is cut at `cjk_chars` as a whole, as `core.index.text.indexed_chars` says).
CREATE OR REPLACE FUNCTION memory_analyse_script(t text, cjk_chars int, singles boolean) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT memory_analyse_folded(regexp_replace(t, '[{SCRIPT_CHARS}]+', ' ', 'g'), cjk_chars, singles)
      || memory_script_words(regexp_replace(normalize(t, NFC), '[\u0300-\u036f]', '', 'g'))
$$;
CREATE OR REPLACE FUNCTION memory_analyse_cut(t text, cjk_chars int, singles boolean) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN octet_length(t) = length(t) THEN memory_analyse_nfc(t)
              WHEN memory_may_hold_script(t) THEN memory_analyse_script(
                CASE WHEN memory_may_hold_cjk(t) THEN left(t, cjk_chars) ELSE t END, cjk_chars, singles)
              ELSE memory_analyse_folded(t, cjk_chars, singles) END
$$;
CREATE OR REPLACE FUNCTION memory_analyse(t text) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT memory_analyse_cut(t, {CJK_INDEXED_CHARS}, true) $$;
-- A query's words: a memory's, but a character of a longer CJK run is searched in its pairs only, so "北京"
-- finds no note about 東京 by its 京; "猫" alone is still a word. PL/pgSQL, so that the planner does not
-- inline the analysis's nested SQL functions into the search statement at each of its four calls: planning
-- the statement took 4.3 ms against 2.2 (one instance of 20,000 memories), its plan 2.0 MB against 1.5 in
-- each connection that keeps it prepared, and a search whose statement is not prepared plans it (the first
-- on a connection, or one of more instances than a connection keeps, `core.retrieval.hybrid`). The prepared
-- statement runs as fast: 2.49 against 2.56 ms p50, 200 searches each way in turn.
CREATE OR REPLACE FUNCTION memory_query_words(t text) RETURNS tsvector
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
  RETURN memory_analyse_cut(t, {CJK_INDEXED_CHARS}, false);
END $$;
-- A neighbour's words: the text vector of its first NEIGHBOUR_CHARS characters (CJK_NEIGHBOUR_CHARS when it
-- holds CJK characters; NULL when it is missing).
CREATE OR REPLACE FUNCTION memory_words(t text) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT memory_analyse_cut(left(t, {NEIGHBOUR_CHARS}), {CJK_NEIGHBOUR_CHARS}, true)
$$;
-- A memory's text vector from its parts' own: its content's, its neighbours' (before and after at distance
-- 1, then before 2 and 3, after 2 and 3; NULL for a missing one) and its date's. `memory_tsv` parses the
-- parts of one row; `core.index.bulk_load` each distinct text of a batch once.
CREATE OR REPLACE FUNCTION memory_tsv_of(content tsvector, b1 tsvector, a1 tsvector, b2 tsvector, b3 tsvector,
                                         a2 tsvector, a3 tsvector, date tsvector)
RETURNS tsvector LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT setweight(content, 'A')
      || setweight(coalesce(b1, '') || coalesce(a1, ''), 'B')
      || setweight(coalesce(b2, '') || coalesce(b3, '') || coalesce(a2, '') || coalesce(a3, ''), 'C')
      || setweight(date, 'D')
$$;
CREATE OR REPLACE FUNCTION memory_tsv(content text, context jsonb, y smallint, mo smallint, d smallint)
RETURNS tsvector LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT memory_tsv_of(memory_analyse(left(content, {INDEXED_CHARS})),
                       memory_words(context->'before'->>0), memory_words(context->'after'->>0),
                       memory_words(context->'before'->>1), memory_words(context->'before'->>2),
                       memory_words(context->'after'->>1), memory_words(context->'after'->>2),
                       to_tsvector('english', memory_date_words(y, mo, d)))
$$;
-- `memory.tsv`, set on every insert and on an update that changes what it is made of (or sets it to NULL:
-- made again, as when the analysis changed).
CREATE OR REPLACE FUNCTION memory_tsv_set() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND NEW.tsv IS NOT NULL THEN
    IF (NEW.content, NEW.context, NEW.ev_year, NEW.ev_month, NEW.ev_day)
       IS NOT DISTINCT FROM (OLD.content, OLD.context, OLD.ev_year, OLD.ev_month, OLD.ev_day) THEN
      NEW.tsv := OLD.tsv;
      RETURN NEW;
    END IF;
  END IF;
  NEW.tsv := memory_tsv(NEW.content, NEW.context, NEW.ev_year, NEW.ev_month, NEW.ev_day);
  RETURN NEW;
END $$;
-- Most lexemes occur once in a memory: their weight is read directly, which made building the postings
-- of 100,000 memories 1.7 times faster than counting each weight's positions for every lexeme.
CREATE OR REPLACE FUNCTION memory_terms_of(doc tsvector) RETURNS TABLE (lexeme text, tf real)
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT u.lexeme,
         (CASE WHEN cardinality(u.weights) = 1
               THEN CASE u.weights[1] WHEN 'A' THEN 1.0 WHEN 'B' THEN 0.4 WHEN 'C' THEN 0.2 ELSE 0.5 END
               ELSE cardinality(array_positions(u.weights, 'A')) * 1.0
                  + cardinality(array_positions(u.weights, 'B')) * 0.4
                  + cardinality(array_positions(u.weights, 'C')) * 0.2
                  + cardinality(array_positions(u.weights, 'D')) * 0.5 END)::real
  FROM unnest(doc) u
$$;

-- BM25's saturation at a reference length: the order each posting list is read in (scores use avgdl).
CREATE OR REPLACE FUNCTION memory_impact(tf real, dl real) RETURNS real
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT tf / (tf + {K1} * (1 - {B} + {B} * dl / {REF_LEN})) $$;
-- The postings partition of a partition of `memory`, named as `core.index.names` names it.
CREATE OR REPLACE FUNCTION memory_postings_name(memory_rel text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT '{POSTINGS_PREFIX}' || substr(memory_rel, length('{PARTITION_PREFIX}') + 1)
$$;
-- The words' counters partition of a partition of `memory`.
CREATE OR REPLACE FUNCTION memory_lexemes_name(memory_rel text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT '{LEXEMES_PREFIX}' || substr(memory_rel, length('{PARTITION_PREFIX}') + 1)
$$;
"""

# Run after the `memory` table exists: upgrade an older table, then the postings and their triggers.
TEXT_INDEX_DDL = """
DO $$
BEGIN
  -- Tables made before contexts and dates were searched get the column and a tsv of the new kind.
  -- (Checked first: ALTER TABLE would lock every partition at each start even with IF NOT EXISTS.)
  IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'memory'::regclass AND attname = 'context'
                 AND NOT attisdropped) THEN
    ALTER TABLE memory ADD COLUMN context jsonb NOT NULL DEFAULT '{}';
  END IF;
  -- A tsv of an older kind (or none) is made again, by the table's rewrite as a generated column.
  IF NOT EXISTS (SELECT 1 FROM pg_attribute a
                 LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
                 WHERE a.attrelid = 'memory'::regclass AND a.attname = 'tsv' AND NOT a.attisdropped
                   AND (a.attgenerated = '' OR pg_get_expr(d.adbin, d.adrelid) LIKE 'memory_tsv(%')) THEN
    ALTER TABLE memory DROP COLUMN IF EXISTS tsv;
    ALTER TABLE memory ADD COLUMN tsv tsvector
      GENERATED ALWAYS AS (memory_tsv(content, context, ev_year, ev_month, ev_day)) STORED;
    DROP TABLE IF EXISTS memory_term, memory_lexeme;
  END IF;
  -- A generated tsv (databases made before 2026-12-05) keeps its values and is set by the trigger from now on:
  -- its postings are those the trigger's vectors make.
  IF EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'memory'::regclass AND attname = 'tsv'
             AND attgenerated <> '') THEN
    ALTER TABLE memory ALTER COLUMN tsv DROP EXPRESSION;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = 'memory_tsv_set' AND tgrelid = 'memory'::regclass) THEN
    CREATE TRIGGER memory_tsv_set BEFORE INSERT OR UPDATE ON memory
      FOR EACH ROW EXECUTE FUNCTION memory_tsv_set();
  END IF;
  -- Postings kept in one table before they were partitioned like `memory`: rebuilt below.
  IF EXISTS (SELECT 1 FROM pg_class WHERE relname = 'memory_term' AND relkind = 'r') THEN
    DROP TABLE memory_term, memory_lexeme;
  END IF;
END $$;
-- The text leg reads postings, not a GIN index over tsv: drop it (it only cost ingest time).
DROP INDEX IF EXISTS memory_tsv;
-- Partitioned by instance like `memory`, so a new instance's postings are built in a table of their
-- own and indexed once (bulk loads), and an instance's posting lists are read without the others'.
CREATE TABLE IF NOT EXISTS memory_term (
    instance text NOT NULL,
    lexeme   text COLLATE "C" NOT NULL,
    id       text NOT NULL,
    tf       real NOT NULL,
    dl       real NOT NULL,
    impact   real NOT NULL
) PARTITION BY LIST (instance);
CREATE INDEX IF NOT EXISTS memory_term_read ON memory_term (instance, lexeme, impact DESC)
  INCLUDE (id, tf, dl);
-- The words' counters kept in one table for every instance (databases made before 2026-12-07) are moved
-- into an instance's own partition below: a deletion rewrites the files of the instance's counters only,
-- where the one table (36 MB beside the test suite's instances) passed the size a deletion rewrites
-- (`core.admin.compaction`) and kept a deleted word in its files.
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_class WHERE relname = 'memory_lexeme' AND relkind = 'r') THEN
    ALTER TABLE memory_lexeme RENAME TO memory_lexeme_flat;
    ALTER INDEX memory_lexeme_pkey RENAME TO memory_lexeme_flat_pkey;
  END IF;
END $$;
CREATE TABLE IF NOT EXISTS memory_lexeme (
    instance text NOT NULL,
    lexeme   text COLLATE "C" NOT NULL,   -- '' holds the instance's totals: df = documents, len = Σ dl
    df       bigint NOT NULL,
    len      double precision NOT NULL DEFAULT 0,
    PRIMARY KEY (instance, lexeme)
) PARTITION BY LIST (instance);
-- An instance's partition `rel` of `parent` (`memory`, `memory_term`, `memory_lexeme`), made beside it and
-- attached, rather than created as PARTITION OF the parent: that takes the parent's ACCESS EXCLUSIVE lock,
-- so a new instance's first memory waited for every transaction still reading or writing the parent (an
-- archive's export, a bulk load), and every other instance's reads and writes queued behind it (an add of
-- another instance waited 4.1 s behind a 4.5 s read). ATTACH takes SHARE UPDATE EXCLUSIVE, which reads and
-- writes do not wait for; it gives the empty table the parent's indexes and row triggers.
CREATE OR REPLACE FUNCTION memory_attach_partition(parent text, rel text, inst text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('CREATE TABLE IF NOT EXISTS %I (LIKE %I INCLUDING DEFAULTS)', rel, parent);
  IF NOT EXISTS (SELECT 1 FROM pg_inherits WHERE inhrelid = format('%I', rel)::regclass) THEN
    EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I FOR VALUES IN (%L)', parent, rel, inst);
  END IF;
END $$;
-- An instance's postings and counters partitions, beside its partition of `memory`.
DROP FUNCTION IF EXISTS memory_term_partition(text, text);
CREATE OR REPLACE FUNCTION memory_text_partitions(inst text, memory_rel text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM memory_attach_partition('memory_term', memory_postings_name(memory_rel), inst);
  PERFORM memory_attach_partition('memory_lexeme', memory_lexemes_name(memory_rel), inst);
END $$;
-- PL/pgSQL rather than SQL: it keeps its statements' plans for the session, where an SQL function's are
-- made again at every call. Planning the statement below took about 1 ms, more than running it for
-- one memory (0.7 ms), and a live add fires this once (benchmarks/README.md, "Live adds").
CREATE OR REPLACE FUNCTION memory_text_apply(insts text[], ids text[], docs tsvector[], signs int[])
RETURNS void LANGUAGE plpgsql AS $$
DECLARE one text; postings text; lexemes text;
BEGIN
  -- The removed postings go instance by instance, from its own postings partition named in the statement:
  -- through the `memory_term` parent, joined on a column, Postgres pruned no partition and locked every
  -- instance's postings and their index (a chain's deletion held 1,626 locks among 800 instances, and
  -- ~1,000 instances ran its lock table out: "out of shared memory"). Each removed posting is looked up
  -- by its lexeme and, within that list, by its impact (recomputed from the removed text, with a margin
  -- for float rounding), so the read index finds it: by lexeme alone a common word's whole list was
  -- scanned (deleting a 60-message chain from 50,000 memories took 1.7 s). The id still decides.
  IF -1 = ANY(signs) THEN
    FOR one IN SELECT DISTINCT u.i FROM unnest(insts, signs) AS u(i, s) WHERE u.s < 0 LOOP
      SELECT memory_postings_name(p.relname) INTO postings FROM memory_partition p WHERE p.instance = one;
      EXECUTE format($q$
        WITH t AS MATERIALIZED (
          SELECT x.id, w.lexeme, w.tf FROM unnest($1, $2, $3, $4) AS x(instance, id, tsv, sign),
                 memory_terms_of(x.tsv) w
          WHERE x.sign < 0 AND x.instance = $5
        ), d AS (
          SELECT id, sum(tf) AS dl FROM t GROUP BY id
        )
        DELETE FROM %I m USING t JOIN d USING (id)
        WHERE m.instance = $5 AND m.lexeme = t.lexeme AND m.id = t.id
          AND m.impact BETWEEN memory_impact(t.tf, d.dl) - 1e-4 AND memory_impact(t.tf, d.dl) + 1e-4
      $q$, coalesce(postings, 'memory_term')) USING insts, ids, docs, signs, one;
    END LOOP;
  END IF;
  WITH x AS (
    SELECT * FROM unnest(insts, ids, docs, signs) AS x(instance, id, tsv, sign)
  ), t AS MATERIALIZED (
    SELECT x.instance, x.id, x.sign, w.lexeme, w.tf FROM x, memory_terms_of(x.tsv) w
  ), d AS (
    SELECT instance, id, sign, sum(tf) AS dl FROM t GROUP BY instance, id, sign
  ), added AS (
    INSERT INTO memory_term (instance, lexeme, id, tf, dl, impact)
    SELECT t.instance, t.lexeme, t.id, t.tf, d.dl, memory_impact(t.tf, d.dl) AS impact
    FROM t JOIN d USING (instance, id, sign) WHERE t.sign > 0
    ORDER BY 1, 2, impact DESC  -- in index order: many postings go in several times faster
  ), counts AS (
    SELECT instance, lexeme, sum(sign) AS df, 0::double precision AS len FROM t GROUP BY instance, lexeme
    UNION ALL
    SELECT x.instance, '', sum(x.sign), coalesce(sum(x.sign * d.dl), 0)
    FROM x LEFT JOIN d USING (instance, id, sign) GROUP BY x.instance
  )
  -- Sorted, so concurrent writers take the counters' row locks in one order: no deadlock on them.
  INSERT INTO memory_lexeme (instance, lexeme, df, len)
  SELECT instance, lexeme, df, len FROM counts ORDER BY instance, lexeme
  ON CONFLICT (instance, lexeme) DO UPDATE
    SET df = memory_lexeme.df + EXCLUDED.df, len = memory_lexeme.len + EXCLUDED.len;
  -- A word no memory holds any more leaves the counters too, so deleted text leaves no lexeme behind
  -- (the instance's totals, under '', stay). The upsert above holds these rows' locks: a concurrent
  -- writer of the same word waits, then inserts it afresh. Only when text went, and from the instance's
  -- own partition, named (as the postings above): the planner read every counter of every instance.
  IF -1 = ANY(signs) THEN
    FOR one IN SELECT DISTINCT u.i FROM unnest(insts, signs) AS u(i, s) WHERE u.s < 0 LOOP
      SELECT memory_lexemes_name(p.relname) INTO lexemes FROM memory_partition p WHERE p.instance = one;
      EXECUTE format($q$
        DELETE FROM %I l
        USING (SELECT DISTINCT w.lexeme
               FROM unnest($1, $2, $3) AS x(instance, tsv, sign), memory_terms_of(x.tsv) w
               WHERE x.sign < 0 AND x.instance = $4) gone
        WHERE l.instance = $4 AND l.lexeme = gone.lexeme AND l.lexeme <> '' AND l.df <= 0
      $q$, coalesce(lexemes, 'memory_lexeme')) USING insts, docs, signs, one;
    END LOOP;
  END IF;
END $$;
CREATE OR REPLACE FUNCTION memory_text_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM memory_text_apply(array_agg(n.instance), array_agg(n.id), array_agg(n.tsv), array_agg(1))
    FROM newrows n;
  ELSIF TG_OP = 'DELETE' THEN
    PERFORM memory_text_apply(array_agg(o.instance), array_agg(o.id), array_agg(o.tsv), array_agg(-1))
    FROM oldrows o;
  ELSE  -- rows whose text did not change (a re-embedding, a tag edit) leave the text index alone
    PERFORM memory_text_apply(array_agg(c.instance), array_agg(c.id), array_agg(c.tsv), array_agg(c.sign))
    FROM (SELECT o.instance, o.id, o.tsv, -1 AS sign FROM oldrows o JOIN newrows n USING (instance, id)
          WHERE o.tsv IS DISTINCT FROM n.tsv
          UNION ALL
          SELECT n.instance, n.id, n.tsv, 1 FROM oldrows o JOIN newrows n USING (instance, id)
          WHERE o.tsv IS DISTINCT FROM n.tsv) c;
  END IF;
  RETURN NULL;
END $$;
CREATE OR REPLACE FUNCTION memory_text_rebuild(inst text) RETURNS void LANGUAGE sql AS $$
  DELETE FROM memory_term WHERE instance = inst;
  DELETE FROM memory_lexeme WHERE instance = inst;
  SELECT memory_text_apply(array_agg(m.instance), array_agg(m.id), array_agg(m.tsv), array_agg(1))
  FROM memory m WHERE m.instance = inst;
$$;
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_trigger
                 WHERE tgname = 'memory_text_ins' AND tgrelid = 'memory'::regclass) THEN
    CREATE TRIGGER memory_text_ins AFTER INSERT ON memory REFERENCING NEW TABLE AS newrows
      FOR EACH STATEMENT EXECUTE FUNCTION memory_text_changed();
    CREATE TRIGGER memory_text_upd AFTER UPDATE ON memory
      REFERENCING OLD TABLE AS oldrows NEW TABLE AS newrows
      FOR EACH STATEMENT EXECUTE FUNCTION memory_text_changed();
    CREATE TRIGGER memory_text_del AFTER DELETE ON memory REFERENCING OLD TABLE AS oldrows
      FOR EACH STATEMENT EXECUTE FUNCTION memory_text_changed();
  END IF;
END $$;
DO $$
DECLARE p record;
BEGIN
  -- Instances without a postings partition (an older database) get it and their postings, once.
  FOR p IN SELECT instance, relname FROM memory_partition
           WHERE to_regclass(memory_postings_name(relname)) IS NULL LOOP
    PERFORM memory_text_partitions(p.instance, p.relname);
    PERFORM memory_text_rebuild(p.instance);
  END LOOP;
  -- Counters kept in one table (see above) move into their instances' partitions, once; a word counted
  -- at zero (kept by databases from before deleted words left the counters) stays behind.
  IF to_regclass('memory_lexeme_flat') IS NOT NULL THEN
    FOR p IN SELECT instance, relname FROM memory_partition LOOP
      PERFORM memory_text_partitions(p.instance, p.relname);
    END LOOP;
    INSERT INTO memory_lexeme (instance, lexeme, df, len)
    SELECT f.instance, f.lexeme, f.df, f.len FROM memory_lexeme_flat f JOIN memory_partition USING (instance)
    WHERE f.df > 0 OR f.lexeme = ''
    ON CONFLICT (instance, lexeme) DO NOTHING;
    DROP TABLE memory_lexeme_flat;
  END IF;
END $$;
-- The analysis the text vectors were made with. Version 2 (2026-12-06) added the words inside addresses,
-- hosts and paths (`memory_analyse`): a vector made before that the new analysis changes is made again
-- (its postings follow, by the update's trigger), once. Only those rows are written: a decimal or "e.g."
-- passes the cheap test too, and rewriting a row can cost a graph insertion.
CREATE TABLE IF NOT EXISTS memory_analysis (version int PRIMARY KEY);
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM memory_analysis WHERE version >= 2) THEN
    UPDATE memory SET tsv = NULL
    WHERE (memory_may_hold_address(content) OR memory_may_hold_address(context::text))
      AND tsv IS DISTINCT FROM memory_tsv(content, context, ev_year, ev_month, ev_day);
    INSERT INTO memory_analysis VALUES (2);
  END IF;
  -- Version 3 (2026-12-06) analyses text in NFC (`memory_analyse`): only a text not already in NFC changes.
  IF NOT EXISTS (SELECT 1 FROM memory_analysis WHERE version >= 3) THEN
    UPDATE memory SET tsv = NULL
    WHERE (content IS NOT NFC NORMALIZED OR context::text IS NOT NFC NORMALIZED)
      AND tsv IS DISTINCT FROM memory_tsv(content, context, ev_year, ev_month, ev_day);
    INSERT INTO memory_analysis VALUES (3);
  END IF;
  -- Version 4 (2026-12-06) folds accents (`memory_fold`): only a text that is not ASCII may change.
  IF NOT EXISTS (SELECT 1 FROM memory_analysis WHERE version >= 4) THEN
    UPDATE memory SET tsv = NULL
    WHERE (octet_length(content) <> length(content) OR octet_length(context::text) <> length(context::text))
      AND tsv IS DISTINCT FROM memory_tsv(content, context, ev_year, ev_month, ev_day);
    INSERT INTO memory_analysis VALUES (4);
  END IF;
  -- Version 5 (2026-12-07) cuts runs of CJK characters into characters and pairs: only a text holding one.
  IF NOT EXISTS (SELECT 1 FROM memory_analysis WHERE version >= 5) THEN
    UPDATE memory SET tsv = NULL
    WHERE (memory_may_hold_cjk(content) OR memory_may_hold_cjk(context::text))
      AND tsv IS DISTINCT FROM memory_tsv(content, context, ev_year, ev_month, ev_day);
    INSERT INTO memory_analysis VALUES (5);
  END IF;
  -- Version 6 (2026-12-07) stems Cyrillic, Greek, Arabic and Devanagari words: only a text holding one.
  IF NOT EXISTS (SELECT 1 FROM memory_analysis WHERE version >= 6) THEN
    UPDATE memory SET tsv = NULL
    WHERE (memory_may_hold_script(content) OR memory_may_hold_script(context::text))
      AND tsv IS DISTINCT FROM memory_tsv(content, context, ev_year, ev_month, ev_day);
    INSERT INTO memory_analysis VALUES (6);
  END IF;
END $$;
"""


# BM25's idf of a lexeme found in `{df}` memories, among the `st.n` memories of the searched instances.
# A word's BM25 idf among `n` memories, `df` of which hold it (the text leg's `n` is `st.n`).
BM25_IDF = sql.SQL("ln(1 + ({n} - {df} + 0.5) / ({df} + 0.5))")
ST_N = sql.SQL("st.n")


def text_leg(filtered: bool, where: sql.Composable, exclude: bool, table: sql.Composable,
             postings: sql.Composable, lexemes: sql.Composable, keep: sql.Composable | None = None,
             added: sql.Composable | None = None) -> sql.Composed:
    """CTEs with `t (instance, id, tr)`: the `%(tpool)s` memories of `%(instances)s` with the best BM25
    score for `%(text)s`; and `ti (ideal)`: the score of an ideal match, a memory of average length holding
    each of the query's words once, which `core.retrieval.fusion` measures a match's coverage of the query
    against. A word no memory holds has no idf to read, and the formula's value for it (df 0) dwarfs the
    others' in a small instance (7 memories: 2.7 against 0.7 for a word in 3 of them), so it counts as
    much as the query's other words do on average: the ideal is the number of query words times the mean
    idf of those some memory holds.

    Unfiltered, each query word's posting list is read in impact order, `%(kpost)s` postings at most
    (on LoCoMo, 100 per word rank exactly as reading them all). `table`, `postings` and `lexemes` are the
    instance's partitions of `memory`, `memory_term` and `memory_lexeme` (or the parents). With filters on other columns
    (`filtered`: `where` over `m`), every posting is read and checked against its memory, since the
    filter may reject the first postings.

    `keep`, a condition on the memory `m`, leaves out the memories it rejects (`hybrid_sql.RETRIEVABLE`):
    filtered, with the other conditions; unfiltered, the first `%(kpost)s` scored memories are probed by
    key in their order until `%(tpool)s` pass, so a memory is read only when it may be among them, and
    `tc (cut)` says whether reading further may find more that pass: a query word's list was cut at
    `%(kpost)s`, or the lists held more than `%(kpost)s` postings together (so more memories may have been
    scored than were probed). Only the best `%(kpost)s` are sorted (a bounded heap) instead of every scored
    memory: over 100,000 long memories (~1,400 scored a question) the statement took 0.19 ms less, the
    same candidates (500 questions, old and new asked in turn on one connection, twice). The cut is read
    off the words' counters (`memory_lexeme.df`, a list's length), not by counting the postings read: a
    second reader of `p` made Postgres keep its rows (~1,700 for a question of 17 words), and the statement
    over 20,000 long memories took 6.0 ms against 5.0 ms now.

    `added`, a query of (word, stands, w) rows, adds words to search: each stands for the query's word
    `stands` and weighs `w` times that word's idf, or its own when that is lower (the names a role in the
    query stands for, the role of a name it holds: `core.retrieval.relations`; the other ways of naming an
    attribute: `core.retrieval.attributes`); a word the query holds adds nothing, and an ideal match still
    holds the query's own words only. Capped at its own idf since a stored question was often the one
    memory holding the word it stands for: asked again, "Where do I live?" weighed "moved" (in 32 of the
    demo's memories) at half of "live" found once, and "Dana moved to billing…" was handed (coverage 0.25 ->
    0.60).
    """
    if filtered:
        read = sql.SQL("""
    SELECT lx.idf, pt.instance, pt.id, pt.tf, pt.dl
    FROM lx JOIN {postings} pt ON pt.lexeme = lx.lexeme AND pt.instance = ANY(%(instances)s)
    JOIN {table} m ON m.instance = pt.instance AND m.id = pt.id
    WHERE {where}{keep}""").format(where=where, table=table, postings=postings,
                                  keep=sql.SQL(" AND {}").format(keep) if keep is not None else sql.SQL(""))
    else:
        read = sql.SQL("""
    SELECT lx.idf, pt.instance, pt.id, pt.tf, pt.dl, lx.lexeme
    FROM unnest(%(instances)s::text[]) AS i(instance) CROSS JOIN lx
    CROSS JOIN LATERAL (SELECT x.instance, x.id, x.tf, x.dl FROM {postings} x
                        WHERE x.instance = i.instance AND x.lexeme = lx.lexeme
                        ORDER BY x.impact DESC LIMIT %(kpost)s) pt""").format(postings=postings)
    scored = sql.SQL("""
    SELECT p.instance, p.id,
           sum(p.idf * p.tf * ({k1} + 1) / (p.tf + {k1} * (1 - {b} + {b} * p.dl / st.avgdl))) AS tr
    FROM p, st {exclude}
    GROUP BY p.instance, p.id
    ORDER BY tr DESC, p.id""").format(
        k1=sql.Literal(K1), b=sql.Literal(B),
        exclude=sql.SQL("WHERE p.id <> ALL(%(exclude)s)") if exclude and not filtered else sql.SQL(""))
    if keep is not None and not filtered:  # `probed`
        scored = sql.SQL("""
    SELECT g.instance, g.id, g.tr FROM ({scored}
    LIMIT %(kpost)s) g
    CROSS JOIN LATERAL (SELECT 1 FROM {table} m WHERE m.instance = g.instance AND m.id = g.id
                        AND {keep} LIMIT 1) kept
    ORDER BY g.tr DESC, g.id""").format(scored=scored, table=table, keep=keep)
    scored = sql.SQL("{}\n    LIMIT %(tpool)s").format(scored)
    probed = keep is not None and not filtered
    idf = BM25_IDF.format(n=ST_N, df=sql.SQL("l.df"))
    cut = (sql.SQL("coalesce((SELECT bool_or(cut) OR sum(got) > %(kpost)s FROM lx), false)") if probed
           else sql.SQL("false"))
    # Each word's counter looked up by key, instance by instance (`LIMIT 1`: the key is unique): as a filter
    # `lexeme = ANY(…)`, the generic plan read an instance's small counters partition whole (500 words:
    # 0.22 ms against 0.14 ms looked up, and a search 0.2-0.3 ms slower than over one table of every instance).
    counted = sql.SQL("""SELECT w.lexeme, sum(x.df)::float8 AS df, bool_or(x.df > %(kpost)s) AS cut,
                 sum(least(x.df, %(kpost)s)) AS got
          FROM (SELECT DISTINCT lexeme FROM {words}) w CROSS JOIN unnest(%(instances)s::text[]) AS i(instance)
          CROSS JOIN LATERAL (SELECT x.df FROM {lexemes} x WHERE x.instance = i.instance AND x.lexeme = w.lexeme
                              LIMIT 1) x
          GROUP BY w.lexeme HAVING sum(x.df) > 0""")
    own = sql.SQL("""
), {name} AS MATERIALIZED (  -- once per query word, not per posting; `cut`: a list longer than %(kpost)s, `got`: read
    SELECT l.lexeme, {idf} AS idf, l.cut, l.got{mark}
    FROM ({counted}) l, st""")
    if added is None:
        weights, ideal = own.format(name=sql.SQL("lx"), idf=idf, mark=sql.SQL(""),
                                    counted=counted.format(words=sql.SQL("ql"), lexemes=lexemes)), sql.SQL("")
    else:  # the added words weigh as the query's words they stand for; an ideal match holds the own only
        weights = sql.SQL("""{own}
), qa AS (  -- the added words' lexemes, each with its weight and the lexeme of the word it stands for
    SELECT u.lexeme, x.w, s.lexeme AS stands
    FROM ({added}) AS x(word, stands, w)
    CROSS JOIN LATERAL unnest(memory_query_words(x.word)) u
    CROSS JOIN LATERAL unnest(memory_query_words(x.stands)) s
    WHERE u.lexeme NOT IN (SELECT lexeme FROM ql)
), lx AS MATERIALIZED (
    SELECT * FROM lo
    UNION ALL
    SELECT l.lexeme, max(q.w * least(o.idf, {idf})), l.cut, l.got, false
    FROM ({counted}) l JOIN qa q USING (lexeme) LEFT JOIN lo o ON o.lexeme = q.stands, st
    GROUP BY l.lexeme, l.df, l.cut, l.got""").format(
            own=own.format(name=sql.SQL("lo"), idf=idf, mark=sql.SQL(", true AS own"),
                           counted=counted.format(words=sql.SQL("ql"), lexemes=lexemes)),
            added=added, idf=idf, counted=counted.format(words=sql.SQL("qa"), lexemes=lexemes))
        ideal = sql.SQL(" WHERE own")
    return sql.SQL("""
ql AS (
    SELECT DISTINCT u.lexeme FROM unnest(memory_query_words(left(%(text)s, {chars}))) u
), st AS MATERIALIZED (
    SELECT sum(df)::float8 AS n, sum(len) / nullif(sum(df), 0)::float8 AS avgdl
    FROM {lexemes} WHERE instance = ANY(%(instances)s) AND lexeme = ''{weights}
), p AS ({read}
), t AS ({scored}
), ti AS (  -- an ideal match's score: each query word once at the average length adds its idf
    SELECT (SELECT count(*) FROM ql) * coalesce((SELECT avg(idf) FROM lx{ideal}), {idf0}) AS ideal FROM st
), tc AS (  -- whether a query word's postings were cut at %(kpost)s: reading further may find more
    SELECT {cut} AS cut
)""").format(read=read, scored=scored, cut=cut, chars=sql.Literal(INDEXED_CHARS), weights=weights, ideal=ideal,
             idf0=BM25_IDF.format(n=ST_N, df=sql.Literal(0)), lexemes=lexemes)


_CJK = re.compile(f"[{CJK_CHARS}]")


def holds_cjk(text: str) -> bool:
    """Whether `memory_analyse` cuts the text's runs of CJK characters into pieces (`memory_may_hold_cjk`)."""
    return not text.isascii() and _CJK.search(text) is not None


def indexed_chars(content: str) -> int:
    """How many of a content's first characters its text vector is made of (`memory_tsv`)."""
    return CJK_INDEXED_CHARS if holds_cjk(content[:INDEXED_CHARS]) else INDEXED_CHARS


def neighbour_text(text: str) -> str:
    """The part of a neighbour's text its words are made of (`memory_words`)."""
    text = text[:NEIGHBOUR_CHARS]
    return text[:CJK_NEIGHBOUR_CHARS] if holds_cjk(text) else text


def indexed_metadata(record: MemoryRecord) -> dict[str, Any]:
    """The record's metadata as stored: with a `text_indexed` note when the text index reads only the start
    of its content (the whole content is stored, shown and embedded as ever)."""
    if len(record.content) <= (indexed := indexed_chars(record.content)):
        return record.metadata
    return {**record.metadata, "text_indexed": text_cut_note(len(record.content), indexed)}


def text_cut_note(length: int, indexed: int = INDEXED_CHARS) -> str:
    return f"searched by words in its first {indexed:,} of {length:,} characters; all of it is stored"


def conversation_context(texts: Sequence[str], i: int, span: int = 3, *, after: bool = True) -> MemoryContext:
    """The context of the `i`-th of one conversation's messages (`texts`, in order): up to `span` messages
    before it and, with `after`, after it, nearest first."""
    return MemoryContext(before=list(texts[max(0, i - span):i][::-1]),
                         after=list(texts[i + 1:i + 1 + span]) if after else [])


def with_conversation_context(records: list[MemoryRecord], span: int = 3) -> list[MemoryRecord]:
    """The records (in conversation order) with each one's neighbours in its chain as its context
    (`conversation_context`): a run of records of one chain is one conversation."""
    out: list[MemoryRecord] = []
    for _, run in groupby(records, key=lambda r: r.chain_id):
        run = list(run)
        texts = [r.content for r in run]
        out += [r.model_copy(update={"context": conversation_context(texts, i, span)}) for i, r in enumerate(run)]
    return out
