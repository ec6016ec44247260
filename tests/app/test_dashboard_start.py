"""The dashboard's start: upkeep's quick part before the first page, the quiet chains' summaries after it.

With an LLM configured a summary is a call, and the first page of a new dashboard process waited for every
instance's quiet chains to be summarised (up to ten calls an instance, each up to LLM_TIMEOUT_S)."""

import json
import threading
import time
from datetime import UTC, datetime, timedelta

from core.formation.important import derived_id
from tests.integration.test_summaries import TRIP, talk
from tests.support.clock import Clock

SUMMARY = '{"summary": "The user flies to Lisbon for a conference.", "important": [1]}'


def test_the_first_page_does_not_wait_for_the_summaries_of_quiet_chains(app_env, workbench, fake_llm, instance,
                                                                        monkeypatch):
    talk(workbench, instance, "trip", TRIP, clock=Clock(datetime.now(UTC) - timedelta(hours=2)))
    asked, release = threading.Event(), threading.Event()

    def held_summary(body: dict) -> str | None:
        """This instance's summary waits for the test; any other chain's (other tests') is echoed."""
        if TRIP[0] not in json.dumps(body):
            return None
        asked.set()
        release.wait(60)
        return SUMMARY

    fake_llm.answer_with(held_summary)
    monkeypatch.setenv("LLM_BASE_URL", fake_llm.url + "/v1")
    from dashboard.resources import get_workbench

    get_workbench.clear()
    try:
        get_workbench()  # what the first page waits for
        assert not release.is_set()
        assert asked.wait(60), "the quiet chain was never summarised"  # by the start's own thread
        release.set()
        summary_id = derived_id("summary", "trip")
        deadline = time.monotonic() + 60
        while not (summary := next(iter(workbench.index.get(instance, [summary_id])), None)):
            assert time.monotonic() < deadline, "the summary was never written"
            time.sleep(0.2)
        assert summary.metadata["method"] == "llm"
    finally:
        release.set()
        for thread in threading.enumerate():  # the start's thread, done before its workbench closes
            if thread.name == "dashboard-warm-up":
                thread.join(120)
        get_workbench().close()
        get_workbench.clear()
