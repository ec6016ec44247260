"""Property tests over the files a user hands the product: labelled query sets (LoCoMo JSON, JSONL) and
uploaded Markdown or text files. Whatever the bytes, the result is a dataset / a text, or an InvalidInput
(or ValidationError) that says what is wrong — never another exception."""

from __future__ import annotations

import codecs
import json

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from pydantic import ValidationError

from core.errors import InvalidInput
from core.past_tasks.store import ProducedTextInput, text_from_file
from core.tuning.datasets import EvalDataset, load_dataset
from tests.support.hostile import FAST, check_rejection, texts

leaves = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), texts(40, big=False))
json_values = st.recursive(leaves, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(texts(12, big=False), inner, max_size=4), max_leaves=12)
dates = st.one_of(st.sampled_from(["1:56 pm on 8 May, 2023", "10:00 am on 31 December, 9999", "yesterday",
                                   "8 May 2023", "", "not a date", "25:99 pm on 40 May, 2023"]), texts(30),
                  json_values)
dia_ids = st.one_of(st.sampled_from(["D1:1", "D1:2", "D 2 : 3", "D:11:26", "D1", "D1:", ":", ""]), json_values)
turns = st.fixed_dictionaries({}, optional={"dia_id": dia_ids, "speaker": json_values, "text": json_values,
                                            "blip_caption": json_values, "query": json_values})
qas = st.fixed_dictionaries({}, optional={
    "question": json_values, "category": st.one_of(st.sampled_from([1, 2, 5, "5"]), json_values),
    "evidence": st.one_of(st.lists(dia_ids, max_size=3), json_values), "answer": json_values})
conversations = st.fixed_dictionaries({}, optional={
    "session_1": st.one_of(st.lists(st.one_of(turns, json_values), max_size=4), json_values),
    "session_1_date_time": dates, "session_2": st.lists(turns, max_size=3), "session_2_date_time": dates,
    "speaker_a": json_values})
samples = st.fixed_dictionaries({"conversation": st.one_of(conversations, json_values)}, optional={
    "sample_id": json_values, "qa": st.one_of(st.lists(st.one_of(qas, json_values), max_size=4), json_values)})
locomo_files = st.lists(st.one_of(samples, json_values), min_size=1, max_size=3)
jsonl_lines = st.one_of(
    st.fixed_dictionaries({"query": json_values, "relevant": st.one_of(st.lists(texts(20, big=False), max_size=3),
                                                                       json_values)},
                          optional={"category": json_values, "extra": json_values}),
    json_values)


def load(raw: bytes, samples: list[str] | None = None) -> EvalDataset | None:
    try:
        return load_dataset(raw, instance="eval-target", samples=samples)
    except InvalidInput as e:
        check_rejection(e)
        return None


@FAST
@given(locomo_files, st.sampled_from([None, ["s1"]]))
def test_locomo_shaped_files(data, samples):
    raw = json.dumps(data).encode()
    dataset = load(raw, samples)  # `eval --sample s1` on a sample that is not an object was AttributeError
    if dataset is not None:
        assert dataset.queries and all(q.relevant for q in dataset.queries)
        known = {(c.instance, r.id) for c in dataset.corpora for r in c.records}
        assert all((q.instance, rel) in known for q in dataset.queries for rel in q.relevant)


@st.composite
def wellformed_locomo(draw):
    """A LoCoMo file of the right shape whose texts are hostile: the loader must keep every turn."""
    n = draw(st.integers(1, 4))
    turns_ = [{"dia_id": f"D1:{i}", "speaker": draw(texts(20, big=False)),
               "text": draw(texts(200, big=False).filter(str.strip))} for i in range(1, n + 1)]
    qa = [{"question": draw(texts(100, big=False)), "category": draw(st.sampled_from([1, 2, 3, 4, 5])),
           "evidence": draw(st.lists(st.sampled_from([t["dia_id"] for t in turns_] + ["D9:9", "x"]),
                                     min_size=1, max_size=3))} for _ in range(draw(st.integers(1, 3)))]
    date = draw(st.sampled_from(["1:56 pm on 8 May, 2023", "10:04 am on 29 February, 2024", "8 May 2023"]))
    return [{"sample_id": draw(texts(30, big=False)), "qa": qa,
             "conversation": {"speaker_a": "A", "session_1": turns_, "session_1_date_time": date}}]


@FAST
@given(wellformed_locomo())
def test_wellformed_locomo_with_hostile_texts(data):
    dataset = load(json.dumps(data).encode())
    usable = [q for q in data[0]["qa"] if q["category"] != 5 and str(q["question"]).strip()
              and {f"D1:{i}" for i in range(1, 5)} & set(q["evidence"])]
    assert (dataset is None) == (not usable)
    if dataset is not None:
        (corpus,) = dataset.corpora
        assert len(corpus.records) == len(data[0]["conversation"]["session_1"])
        for record, turn in zip(corpus.records, data[0]["conversation"]["session_1"], strict=True):
            assert turn["text"].replace("\x00", "\ufffd") in record.content
        assert len(dataset.queries) == len(usable)


@FAST
@given(st.lists(jsonl_lines, max_size=5), st.sampled_from(["\n", "\r\n", "\n\n"]))
def test_jsonl_files(lines, newline):
    dataset = load(newline.join(json.dumps(line) for line in lines).encode())
    if dataset is not None:
        assert all(q.query and q.relevant for q in dataset.queries)


@FAST
@given(st.one_of(st.binary(max_size=400), texts().map(str.encode),
                 st.sampled_from([b"", b"[", b"[]", b"[1]", b"[{}]", b"{}", b"\xff\xfe", b"\x00" * 10,
                                  b'[{"conversation": 1}]', b'[{"conversation": {}, "qa": 5}]'])))
def test_any_bytes_as_a_labelled_set(raw):
    load(raw)


@FAST
@given(st.binary(min_size=1, max_size=400), st.sampled_from([b"", codecs.BOM_UTF8]))
def test_bytes_that_are_not_utf8_are_refused_at_their_offset(raw, bom):
    """They were replaced by U+FFFD without a word, changing the texts and ids evaluated."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as e:
        with pytest.raises(InvalidInput, match=rf"not UTF-8 text: byte {len(bom) + e.start} "):
            load_dataset(bom + raw, instance="eval-target")
    else:
        assume(False)


@FAST
@given(st.integers(1, 200_000), st.sampled_from([b"[", b'[{"conversation": ', b'{"query": [']))
def test_deeply_nested_json(depth, opening):
    """`[[[…]]]` 100,000 deep was an unexpected RecursionError."""
    load(opening + b"[" * depth + b"]" * depth + b"}" * opening.count(b"{") + b"]" * opening.startswith(b"[{"))


@FAST
@given(texts(120), st.one_of(st.binary(max_size=600).map(lambda b: b.decode("utf-8", errors="replace")),
                             texts()))
def test_uploaded_text_files(name, content):
    """What the Past tasks page does with an upload: title and text from the file, then the input model."""
    title, production = text_from_file(name, content)
    try:
        item = ProducedTextInput(instance="i", user_id="u", task="note", title=title, production=production,
                                 source_key=name)
    except ValidationError as e:
        check_rejection(e, ProducedTextInput)
        return
    assert "\x00" not in item.title + item.production
