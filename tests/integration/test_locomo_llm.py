"""`benchmarks.locomo --llm`: MemoryScope's time extraction and semantic rank answered by the local
OpenAI-compatible server, so the real SDK and the product's flow run; no real server is ever called.

The fake answers like a model would (the time parts of May 2023; scores by shared words), except for
three questions, which script the ways a model fails: a reply that is not JSON, an HTTP 503, a reply
that scores only some of the memories. Figures are not asserted: the benchmark measures, tests do not.
"""

from __future__ import annotations

import json
import re
import uuid

import pytest

from benchmarks import locomo, report
from core.retrieval.memoryscope.llm_ops import EXTRACT_TIME_SYSTEM, SEMANTIC_RANK_PROMPT
from tests.support.fake_llm import FakeLLMServer

RECALLS = {"R@1", "R@5", "R@10", "R@25"}
RANK_HEAD = SEMANTIC_RANK_PROMPT.split("\n")[0]
HOBBIES = ["pottery", "climbing", "chess", "baking", "cycling", "painting", "gardening", "surfing", "knitting",
           "running", "singing", "fishing", "hiking", "drawing", "swimming"]
PLACES = ["studio on Elm street", "gym downtown", "library", "bakery", "river path", "art school", "allotment",
          "beach", "wool shop", "park", "choir hall", "lake", "mountains", "cafe", "pool"]


def conversation(sample_id: str) -> dict:
    """30 turns in two sessions (more than the 25 semantic rank keeps, so it runs) and a question of each
    category; the last session's date is the time every question is asked at."""
    def session(n: int, verb: str) -> list[dict]:
        return [{"speaker": "Ana" if i % 2 else "Ben", "dia_id": f"D{n}:{i}",
                 "text": f"I {verb} {hobby} at the {place} with my cousin number {n * 100 + i}."}
                for i, (hobby, place) in enumerate(zip(HOBBIES, PLACES, strict=True), start=1)]

    return {
        "sample_id": sample_id,
        "conversation": {"speaker_a": "Ana", "speaker_b": "Ben", "session_1": session(1, "tried"),
                         "session_1_date_time": "1:56 pm on 8 May, 2023", "session_2": session(2, "gave up"),
                         "session_2_date_time": "10:00 am on 20 May, 2023"},
        "qa": [
            {"question": "Where did Ana try pottery?", "answer": "the studio", "evidence": ["D1:1"], "category": 4},
            {"question": "What did Ben give up last week?", "answer": "climbing", "evidence": ["D2:2"],
             "category": 2},
            {"question": "What did Ben try yesterday at the lake?", "answer": "fishing", "evidence": ["D1:12"],
             "category": 2},
            {"question": "Which hobbies did Ben try at the beach and the park?", "answer": "surfing, running",
             "evidence": ["D1:8", "D1:10"], "category": 1},
            {"question": "Would Ana enjoy a trip to the mountains?", "answer": "yes, she hikes",
             "evidence": ["D1:13"], "category": 3},
            {"question": "Where did Ana play chess?", "answer": "the library", "evidence": ["D1:3"], "category": 4},
        ],
    }


def words(text: str) -> set[str]:
    return set(re.findall(r"[a-z]+", text.lower()))


def model(body: dict) -> str | int | None:
    """The fake's answer to a MemoryScope prompt: as a model would, but for the scripted failures."""
    messages = body["messages"]
    last = messages[-1]["content"]
    if messages[0]["content"] == EXTRACT_TIME_SYSTEM:
        return "Sorry, I cannot tell." if "yesterday" in last else '{"year": 2023, "month": 5}'
    if last.startswith(RANK_HEAD):
        query = words(re.search(r"^Query: (.*)$", last, re.MULTILINE).group(1))
        if "mountains" in query:
            return 503
        listing = re.findall(r"^(\d+)\. (.*)$", last, re.MULTILINE)
        scores = [{"index": int(i), "score": len(query & words(text)) / len(query)} for i, text in listing]
        return json.dumps({"scores": scores[:10] if "chess" in query else scores})
    return None


def rank_requests(fake: FakeLLMServer) -> list[dict]:
    return [r for r in fake.chat_requests if r["body"]["messages"][-1]["content"].startswith(RANK_HEAD)]


def time_requests(fake: FakeLLMServer) -> list[dict]:
    return [r for r in fake.chat_requests if r["body"]["messages"][0]["content"] == EXTRACT_TIME_SYSTEM]


@pytest.fixture(scope="module")
def runs(data_dir, tmp_path_factory):
    """The benchmark on one file, without and then with `--llm`, the LLM pointed at the fake both times:
    (offline result, LLM result, the fake's requests during the offline run, the fake)."""
    path = tmp_path_factory.mktemp("locomo-llm")
    data = path / "tiny.json"
    data.write_text(json.dumps([conversation(f"tiny-llm-{uuid.uuid4().hex[:8]}")]))
    args = ["--data", str(data), "--no-peers", "--data-dir", str(data_dir)]
    with FakeLLMServer() as fake, pytest.MonkeyPatch.context() as env:
        fake.answer_with(model)
        env.setenv("LLM_BASE_URL", fake.url + "/v1")
        env.setenv("LLM_API_KEY", "sk-test-secret")
        env.setenv("LLM_MAX_RETRIES", "0")  # a failure is one request: the counts below are exact
        assert locomo.main([*args, "--json", str(path / "offline.json")]) == 0
        offline_requests = len(fake.requests)
        assert locomo.main([*args, "--llm", "--json", str(path / "locomo.json")]) == 0
        yield (json.loads((path / "offline.json").read_text()), json.loads((path / "locomo.json").read_text()),
               offline_requests, fake)


def test_llm_section_has_recalls_per_category_latency_and_the_model(runs):
    _, result, _, fake = runs
    llm = result["llm"]
    assert llm["provider"] == "openai-compatible" and llm["model"] == "llama3-8b-8192"
    assert llm["base_url"] == fake.url + "/v1" and "sk-test-secret" not in json.dumps(result)
    assert RECALLS <= set(llm["overall"]) and llm["overall"]["questions"] == 6
    assert set(llm["by_category"]) == {"1", "2", "3", "4"}
    assert all(RECALLS <= set(row) and all(0 <= row[k] <= 1 for k in RECALLS)
               for row in llm["by_category"].values())
    assert {"p50", "p95"} <= set(llm["latency_ms"]) and llm["latency_ms"]["queries"] == 6
    assert llm["params"]["op.semantic_rank_op.params.output_memory_max_count"] == 25


def test_semantic_rank_and_time_extraction_ask_the_fake_and_their_failures_are_counted(runs):
    _, result, _, fake = runs
    calls = result["llm"]["llm_calls"]
    # Every question is ranked by the model; the one answered 503 kept its retrieval order.
    assert len(rank_requests(fake)) == 6
    assert calls["semantic_rank"] == {"calls": 6, "failed": 1, "partial": 1}
    # Only questions with a time word ask for their time ("last week", "yesterday"); "yesterday" got no JSON.
    assert len(time_requests(fake)) == 2
    assert calls["extract_time"] == {"calls": 2, "failed": 1, "partial": 0}


def test_each_question_is_asked_at_its_own_time_not_the_clock(runs):
    _, _, _, fake = runs
    # The last session's date, 10:00 am on 20 May 2023, a Saturday.
    stamps = {r["body"]["messages"][-1]["content"].split("Sentence timestamp: ")[1] for r in time_requests(fake)}
    assert stamps == {"2023-05-20 10:00:00 Saturday"}


def test_the_offline_figures_are_unchanged_by_the_flag(runs):
    offline, result, offline_requests, _ = runs
    assert offline["llm"] is None and offline_requests == 0  # without the flag, the fake is never asked
    for key in ("overall", "by_category", "baselines"):
        assert result[key] == offline[key]


def test_the_report_shows_the_llm_row_beside_the_offline_one(runs, tmp_path):
    _, result, _, _ = runs
    results = tmp_path / "results"
    results.mkdir()
    (results / "locomo.json").write_text(json.dumps(result))
    readme = tmp_path / "README.md"
    readme.write_text("# T\n\n## Benchmarks\n\n<!-- bench:start --><!-- bench:end -->\n")
    assert report.main(["--readme", str(readme), "--results", str(results)]) == 0
    lines = readme.read_text().splitlines()
    ours = next(i for i, line in enumerate(lines) if line.startswith("| **Memory Workbench**"))
    assert lines[ours + 1].startswith("| Memory Workbench + LLM (MemoryScope: time extraction and semantic "
                                      "rank by `llama3-8b-8192`) |")
    assert any(line.startswith("With the LLM (") and "semantic rank 6 LLM calls, 1 failed" in line
               for line in lines)


def test_llm_flag_without_an_llm_says_what_to_set(tmp_path, monkeypatch, capsys):
    for name in ("LLM_BASE_URL", "GROQ_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    data = tmp_path / "tiny.json"
    data.write_text(json.dumps([conversation("tiny-no-llm")]))
    assert locomo.main(["--data", str(data), "--llm"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "LLM_BASE_URL" in err and "GROQ_API_KEY" in err
