"""What the offline rules keep as a message's facts (`core.formation.observations.rules_formation`),
measured on tests/data/told_facts.jsonl: messages that tell a fact inside a question ("Inês turns 7 on
October 10, ideas for …?") or hand it over as a request ("Remind me: my dentist appointment is …"), and
messages whose words before a question tell nothing ("If I move to Porto, what should I pack?", "Quick
question, …"); statements whose stored fact must not keep a fragment, an emoji of a dropped sentence, or
stop at an abbreviation ("with Dr."). Labelled before the rules that read them were written; printed:
the precision and recall of "keeps a fact" and how many facts are kept word for word."""

import json
from pathlib import Path

from core.formation.observations import rules_formation

MESSAGES = [json.loads(line) for line in
            (Path(__file__).parents[1] / "data" / "told_facts.jsonl").read_text(encoding="utf-8").splitlines()]


def test_what_the_rules_keep_of_a_message():
    formed = [rules_formation(m["text"]).facts for m in MESSAGES]
    kept = [bool(f) for f in formed]
    wanted = [bool(m["facts"]) for m in MESSAGES]
    hits = sum(k and w for k, w in zip(kept, wanted, strict=True))
    precision, recall = hits / max(1, sum(kept)), hits / max(1, sum(wanted))
    exact = sum(f == m["facts"] for f, m in zip(formed, MESSAGES, strict=True)) / len(MESSAGES)
    wrong = [f"{m['text']!r}: {f} (labelled {m['facts']})" for f, m in zip(formed, MESSAGES, strict=True)
             if f != m["facts"]]
    print(f"\ntold facts over {len(MESSAGES)} messages ({sum(wanted)} tell one): keeps a fact: precision "
          f"{precision:.3f}, recall {recall:.3f}; the labelled fact word for word: {exact:.3f}\nwrong on:\n  "
          + "\n  ".join(wrong))
    assert precision >= 0.95 and recall >= 0.9 and exact >= 0.9
