"""How long the feedback analytics take to load and aggregate N answers (the Feedback page is sized for
10,000 answers in its window).

    DATA_DIR=/tmp/wb-bench .venv/bin/python benchmarks/feedback_load.py --records 10000

Writes N turns through the thought store (user thought, answer and metrics thought shaped as
ui_remember writes them, with their source and key, follow-up feedback for most and an explicit rating
for about a tenth), then times `load_feedback` and `summarize` and removes what it wrote. Synthetic
timings stand in for real turns: only the read path is measured.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
import uuid
from datetime import UTC, datetime, timedelta

from core.analytics import load_feedback, summarize, summarize_by
from core.conversation.feedback import feedback_score
from core.conversation.thoughts import CATEGORY_ASSISTANT, CATEGORY_METRICS, CATEGORY_USER, Thought
from core.runtime import Workbench

INSTANCE = "bench-feedback"


def write(wb: Workbench, n: int, turns_per_chain: int = 4, instance: str = INSTANCE) -> None:
    """`n` answers with feedback in `instance`, in chains of `turns_per_chain` turns over the past 30 days."""
    store, rng = wb.thoughts, random.Random(7)
    start = datetime.now(UTC) - timedelta(days=30)
    for c in range(0, n, turns_per_chain):
        chain = f"bench-{c:06d}"
        at = start + timedelta(seconds=c * 30 * 86400 / n)
        previous = None
        for k in range(min(turns_per_chain, n - c)):
            user_id, answer_id, metrics_id = (str(uuid.uuid4()) for _ in range(3))
            common = {"instance": instance, "chain_id": chain, "tags": [rng.choice(["work", "travel", "home"])]}
            model = rng.choice(["llama3-8b-8192", "llama3-70b-8192"])
            source, key = rng.choice([("dashboard", None), ("mcp", "claude-desktop"), ("http", "ci-bot")])
            extra = {"model": model, "model_selected": model, "synthesis": "llm",
                     "profile": "balanced-default", "source": source, **({"key": key} if key else {})}
            user = Thought(id=user_id, thought=f"question {k}", timestamp=at, category=CATEGORY_USER, **common)
            answer = Thought(id=answer_id, thought=f"answer {k}", timestamp=at, category=CATEGORY_ASSISTANT,
                             extra=extra, **common)
            # The turn scores the previous answer of its chain itself, from the time since it.
            store.append_turn(user, answer, request_id=f"r-{user_id}", result_json="{}",
                              score=lambda gap: feedback_score(gap, "thanks"), metrics_id=metrics_id,
                              index_answer=False)
            if previous and rng.random() < 0.1:  # some answers rated explicitly too
                store.record_rating(instance, previous, rng.choice(["up", "down"]), "", at)
            store.append(Thought(id=metrics_id, thought="metrics", timestamp=at, category=CATEGORY_METRICS,
                                 seq=3 * k + 3, extra={**extra, "tokens": rng.randint(50, 900),
                                                       "context_items": 5, "answer_id": answer_id,
                                                       "latency": {"embed_ms": 3.0, "search_ms": 4.0,
                                                                   "synthesis_ms": 700.0, "store_ms": 2.0,
                                                                   "total_ms": 710.0}}, **common))
            previous = answer_id
            at += timedelta(seconds=rng.expovariate(1 / 60))
    wb.thoughts.r.delete("index:outbox")  # nothing of this is meant for the memory index


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    wb = Workbench()
    store = wb.thoughts
    for chain in store.r.zrange(f"chains:{INSTANCE}", 0, -1):
        store.delete_chain(INSTANCE, chain)
    t0 = time.perf_counter()
    write(wb, args.records)
    print(f"wrote {args.records} turns in {time.perf_counter() - t0:.1f} s")
    loads, aggs = [], []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        frame = load_feedback(store, INSTANCE)
        loads.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        summarize(frame)
        for by in ("day", "model", "tag"):
            summarize_by(frame, by)
        aggs.append(time.perf_counter() - t0)
    print(f"load_feedback: {len(frame)} rows, median {statistics.median(loads) * 1000:.0f} ms "
          f"(min {min(loads) * 1000:.0f}, max {max(loads) * 1000:.0f})")
    print(f"summarize + 3 groupings: median {statistics.median(aggs) * 1000:.0f} ms")
    for chain in store.r.zrange(f"chains:{INSTANCE}", 0, -1):
        store.delete_chain(INSTANCE, chain)


if __name__ == "__main__":
    main()
