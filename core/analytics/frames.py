"""The feedback frame kept between loads: read once, then brought up to date from the change log.

Reading every answer of a period costs a hash read and a metrics read per answer (1.5 s for 46,000
answers), and the Feedback page loads its period each time it is opened. A process that loads again and
again (the dashboard, the HTTP API) keeps each instance's rows instead and, on the next load, reads again
only the answers the change log (`feedback:changes:<instance>`, written with every write or deletion of
an answer's feedback hash or metrics thought, in any process) names since its last look.

Two checks keep what it shows what is stored:
- the log is read from OVERLAP_S before the last look, so a write stamped by a clock a little behind, or
  still in flight then, is read too; rows read twice are simply read again;
- the rows kept must number the answers the feedback index holds from the kept period's start; when they
  do not (an instance wiped, a write the log missed), or the log no longer reaches back to the last look
  (CHANGES_KEPT_S), or a longer period is asked for, the rows are read whole again.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime

import pandas as pd

from core.analytics.load import in_window, read_answers, sort_answers
from core.conversation.thoughts import CHANGES_KEPT_S, ThoughtStore
from core.ids import validate_id

OVERLAP_S = 120.0  # the change log is read from this long before the last look
KEPT_INSTANCES = 8  # instances whose rows one process keeps (the least recently loaded goes first)


@dataclass
class _Kept:
    rows: pd.DataFrame  # `read_answers` rows, oldest first
    since: float  # every answer from this time on (epoch seconds; -inf: all) is in `rows`
    looked: float  # wall-clock time of the last look at the change log


class FeedbackFrames:
    """Each instance's answers as `load_feedback` gives them, kept between loads (thread-safe)."""

    def __init__(self, store: ThoughtStore):
        self.store = store
        self._kept: OrderedDict[str, _Kept] = OrderedDict()
        self._lock = threading.Lock()

    def load(self, instance: str, since: datetime | None = None, until: datetime | None = None, *,
             include_imported: bool = False, now: float | None = None) -> pd.DataFrame:
        """`load_feedback(store, instance, since, until, include_imported=...)`, after the same sweep."""
        validate_id(instance, "instance")
        self.store.sweep_abandoned(instance, now)
        lo = since.timestamp() if since else float("-inf")
        with self._lock:
            kept = self._refreshed(instance, lo)
            self._kept[instance] = kept
            self._kept.move_to_end(instance)
            while len(self._kept) > KEPT_INSTANCES:
                self._kept.popitem(last=False)
        return in_window(kept.rows, since, until, include_imported)

    def _refreshed(self, instance: str, lo: float) -> _Kept:
        store, looked = self.store, time.time()
        kept = self._kept.pop(instance, None)
        if kept is None or lo < kept.since or looked - kept.looked > CHANGES_KEPT_S - OVERLAP_S:
            return _Kept(read_answers(store, instance, store.feedback_ids(instance, lo)), lo, looked)
        if changed := store.feedback_changed_since(instance, kept.looked - OVERLAP_S):
            fresh = read_answers(store, instance, changed)
            if kept.since > float("-inf"):  # an answer older than the kept period stays out of it
                fresh = fresh[fresh["answered_at"] >= pd.Timestamp(kept.since, unit="s", tz="UTC")]
            others = kept.rows[~kept.rows["answer_id"].isin(changed)]
            kept.rows = sort_answers(pd.concat([others, fresh], ignore_index=True) if len(fresh) else others)
        kept.looked = looked
        if len(kept.rows) != store.feedback_count(instance, kept.since):
            return _Kept(read_answers(store, instance, store.feedback_ids(instance, kept.since)), kept.since,
                         looked)
        return kept
