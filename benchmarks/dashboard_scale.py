"""The dashboard at scale: `python -m benchmarks.dashboard_scale [--memories N] [--answers M]
[--data-dir DIR] [--json OUT] [--small]`.

Issue 20's goal: at 1,000,000 memories and 100,000 answers with feedback, every page of the dashboard is
idle within 1 s of navigation in headless Chromium (median of 3).

Data, on embedded Redis and Postgres of its own (`bench_workbench`): N synthetic conversation memories
over five instances as `benchmarks.speed` loads them (`MemoryIndex.bulk_load`, the first instance
holding half), then VACUUM (ANALYZE); and M answers with feedback written as ui_remember writes them
(`benchmarks.feedback_load.write`) into that largest instance, which the dashboard opens on (INSTANCE):
every page sees the most memories and all the answers. With `--data-dir` a data set built before is
reused when its counts are these (building 1,000,000 took 25 minutes here); other counts are refused.

Measured: the dashboard served by `streamlit run` on those servers (`benchmarks.browser`, as the
browser tests serve it), one navigation to its root first (the server's first session starts the
workbench and loads the embedder: reported as `first_load_ms`, not counted), then each page of the
sidebar opened three times in a new tab of one browser (a new Streamlit session, the app's scripts in
the browser's cache, as a returning user opens it) and once in a browser profile of its own (an empty
cache: `empty_cache_ms`), each timed from the navigation's start (`performance.now()`'s origin) until
the app is idle: Streamlit's script state is `notRunning`, its status widget is gone, the main block
holds the page and every element in view is drawn (no skeleton waiting for its code, each chart drawn,
each table's grid on its canvas). Openings of the same page are 31 s apart, so none finds the data a
page caches for 30 s at most. Per page the three times, their median and maximum, the median part from
the script's state `running` reaching the browser until idle (close to what a click in the sidebar
costs, which loads no app), and whether the page showed an exception. The floor: an empty Streamlit
page served and opened the same way.
Then the navigation a user makes most: in one tab, each page reached by a click on its link in the
sidebar (the app and its session already open), `runs` times, 31 s apart as above, timed from the click
until the app is idle again (`in_app`, per page as above; its floor: a click between the two empty pages
of a Streamlit app of two). The machine's load average before and after is recorded: other
work shows in every figure.
`--small` is the smoke run (2,000 memories, 200 answers, each page once, no waits).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from benchmarks import synth
from benchmarks.browser import APP, RECORD_STATES, launch, served_dashboard
from benchmarks.common import RESULTS, bench_workbench, machine, write_json
from benchmarks.feedback_load import write as write_answers
from benchmarks.speed import INSTANCES, vacuum

PREFIX = "dash"
RUNS = 3
GOAL_MS = 1000
PAGE_TIMEOUT_MS = 120_000
CACHE_TTL_S = 31  # the longest `st.cache_data` ttl of the pages and sidebar (30 s), and a second
# Each part of idle, by name: the script has run to its end (not merely not started: `initial` before the
# first run), no status widget, the main block has rendered something, and every element in view is drawn.
# Streamlit loads an element's code when the page first uses it and shows a skeleton until then, and a
# chart or a table draws after it is mounted: without the last four checks a page counted as idle while its
# widgets were skeletons and its chart was not there (the Feedback page's chart came 0.3-1.4 s later).
# Elements in a tab not shown are not waited for: they are drawn when their tab is.
IDLE_CHECKS = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  const main = document.querySelector('[data-testid="stMainBlockContainer"]');
  const shown = (selector) => Array.from(document.querySelectorAll(selector))
    .filter(e => e.checkVisibility());
  const drawn = (selector, inner) => shown(selector).every(e => e.querySelector(inner));
  return {script_ended: app?.dataset.testScriptState === 'notRunning',
          no_status_widget: !document.querySelector('[data-testid="stStatusWidget"]'),
          main_shown: (main?.innerText.trim().length ?? 0) > 0,
          no_skeletons: shown('[data-testid="stSkeleton"]').length === 0,
          plotly_drawn: drawn('[data-testid="stPlotlyChart"]', '.main-svg'),
          vega_drawn: drawn('[data-testid="stVegaLiteChart"]', 'svg.marks, canvas.marks'),
          tables_drawn: drawn('[data-testid="stDataFrame"]', 'canvas')};
}"""
# The time since the navigation started once every part of IDLE_CHECKS holds, else false.
IDLE = "() => Object.values((" + IDLE_CHECKS + ")()).every(Boolean) && performance.now()"
# When the first run of the script from `t0` (performance.now()) on started: the change into `running` is the
# one before the change out of it. None when no run showed the state `running` (a run of tens of ms).
SCRIPT_STARTED = """(t0) => {
  const changes = window.__stateChanges;
  const out = changes.findIndex(([left, t], i) => i > 0 && t >= t0 && left === 'running');
  return out > 0 && changes[out - 1][1] >= t0 ? changes[out - 1][1] : null;
}"""
# Streamlit alone, served and measured the same way: the part of every page's time that is not the page's.
FLOOR_APP = 'import streamlit as st\n\nst.title("Floor")\nst.write("Streamlit alone, no workbench.")\n'
# Its in-app counterpart: two such pages, and a click in the sidebar from one to the other.
FLOOR_NAV_APP = """import streamlit as st


def one():
    st.title("Floor")
    st.write("Streamlit alone, no workbench.")


def two():
    st.title("Floor, page two")
    st.write("Streamlit alone, no workbench.")


st.navigation([st.Page(one, title="One", default=True), st.Page(two, title="Two", url_path="two")]).run()
"""
# The main block's text, as a page shows it.
MAIN_TEXT = "() => document.querySelector('[data-testid=\"stMainBlockContainer\"]')?.innerText ?? ''"
# After a click at `t0` (performance.now()) on a page showing `before`: whether a run of the script ended
# since (a change away from `running`) and whether the page shows something else, with IDLE_CHECKS. A run of
# a few tens of milliseconds (an empty page's) can start and end within one render of Streamlit's frontend,
# which then never sets the state `running` at all: either one says the click was answered.
CLICK_CHECKS = ("([t0, before]) => ({"
                "ran: window.__stateChanges.some(([left, t]) => left === 'running' && t >= t0), "
                "main_changed: (" + MAIN_TEXT + ")() !== before, ...(" + IDLE_CHECKS + ")()})")
# The time since the navigation started once the click is answered and the app is idle, else false.
IDLE_AFTER = """(args) => {
  const {ran, main_changed, ...idle} = (""" + CLICK_CHECKS + """)(args);
  return (ran || main_changed) && Object.values(idle).every(Boolean) && performance.now();
}"""


class DataMismatch(SystemExit):
    """The data directory holds another data set than the one asked for."""


def build(wb, sizes: list[tuple[str, int]], answers: int) -> dict:
    """The memories and answers in place: loaded when the servers are empty, reused when they hold exactly
    these counts (so a measurement can be repeated without the 25 minutes of loading)."""
    shown = sizes[0][0]
    held = {name: wb.index.count(name) for name, _ in sizes}
    held_answers = wb.thoughts.feedback_count(shown)
    if held == dict(sizes) and held_answers == answers:
        return {"reused": True}
    if any(held.values()) or held_answers:
        raise DataMismatch(f"the data directory holds {held} memories and {held_answers:,} answers in {shown}, "
                           f"not {dict(sizes)} and {answers:,}: name another --data-dir")
    t0 = time.perf_counter()
    wb.index.bulk_load(synth.records(synth.conversations(sum(s for _, s in sizes), instances=INSTANCES,
                                                         prefix=PREFIX)))
    vacuum(wb)
    t1 = time.perf_counter()
    write_answers(wb, answers, instance=shown)
    return {"reused": False, "load_memories_s": round(t1 - t0, 1),
            "write_answers_s": round(time.perf_counter() - t1, 1)}


@dataclass(frozen=True)
class Load:
    idle_ms: float  # from the navigation's start until the app is idle
    script_ms: float | None  # of which from the script's start (state `running` in the browser) on
    exception: bool  # the page shows an exception
    stuck: dict | None = None  # not idle within PAGE_TIMEOUT_MS (which idle_ms then is): what was missing


@contextmanager
def browser_context(browser) -> Iterator:
    """A browser profile of its own (an empty HTTP cache) that records Streamlit's script states."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.add_init_script(RECORD_STATES)
    try:
        yield context
    finally:
        context.close()


def open_fresh(context, url: str) -> Load:
    """`url` opened in a new tab of `context` (a new Streamlit session), timed until the app is idle."""
    page = context.new_page()
    try:
        page.goto(url, wait_until="commit")
        idle = page.wait_for_function(IDLE, polling=20, timeout=PAGE_TIMEOUT_MS).json_value()
        started = page.evaluate(SCRIPT_STARTED, 0)
        return Load(round(idle, 1), None if started is None else round(idle - started, 1),
                    page.get_by_test_id("stException").count() > 0)
    finally:
        page.close()


def open_in_empty_cache(browser, url: str) -> Load:
    """`url` opened in a browser profile of its own, as at a first visit: the app's scripts fetched too."""
    with browser_context(browser) as context:
        return open_fresh(context, url)


def sidebar_pages(context, url: str) -> list[tuple[str, str]]:
    """(title, URL) of every page in the sidebar's navigation, as the dashboard lists them."""
    page = context.new_page()
    try:
        page.goto(url)
        page.wait_for_function(IDLE, polling=50, timeout=PAGE_TIMEOUT_MS)
        links = page.get_by_test_id("stSidebarNavLink").all()
        # A link's text is its icon's name, then its title.
        return [(link.inner_text().strip().splitlines()[-1], link.get_attribute("href")) for link in links]
    finally:
        page.close()


def click_in_sidebar(page, title: str) -> Load:
    """The sidebar link `title` clicked in `page`, an open tab of the app: timed from just before the click
    until the page's script has run again and the app is idle."""
    from playwright.sync_api import TimeoutError as NotIdle

    before = page.evaluate(MAIN_TEXT)
    t0 = page.evaluate("performance.now()")
    page.get_by_test_id("stSidebarNavLink").filter(has_text=title).click()
    try:
        idle = page.wait_for_function(IDLE_AFTER, arg=[t0, before], polling=20,
                                      timeout=PAGE_TIMEOUT_MS).json_value()
    except NotIdle:  # said in the figures, and the tab opened again so the next click starts from a page
        stuck = {"path": page.evaluate("location.pathname"), **page.evaluate(CLICK_CHECKS, [t0, before])}
        page.reload()
        page.wait_for_function(IDLE, polling=50, timeout=PAGE_TIMEOUT_MS)
        return Load(float(PAGE_TIMEOUT_MS), None, False, stuck)
    started = page.evaluate(SCRIPT_STARTED, t0)
    return Load(round(idle - t0, 1), None if started is None else round(idle - started, 1),
                page.get_by_test_id("stException").count() > 0)


def measure_in_app(url: str, floor_nav_url: str, runs: int, apart_s: float) -> dict:
    """Each sidebar page reached `runs` times by a click in one open tab, 31 s after its last visit (so
    none finds the data a page caches); and the floor: a click between the two pages of FLOOR_NAV_APP."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = launch(p)
        with browser_context(browser) as context:
            links = sidebar_pages(context, url)
            tab = context.new_page()
            tab.goto(links[-1][1])  # on the last page, so that the first click navigates
            tab.wait_for_function(IDLE, polling=50, timeout=PAGE_TIMEOUT_MS)
            titles = [title for title, _ in links]
            loads = in_rounds([partial(click_in_sidebar, tab)] * runs, titles, apart_s)
            floor_tab = context.new_page()
            floor_tab.goto(floor_nav_url)
            floor_tab.wait_for_function(IDLE, polling=50, timeout=PAGE_TIMEOUT_MS)
            floor = [click_in_sidebar(floor_tab, title) for _ in range(runs) for title in ("Two", "One")]
        browser.close()
    pages = {title: summary(seen) for title, seen in zip(titles, loads, strict=True)}
    slowest = max(pages, key=lambda t: pages[t]["median_ms"])
    return {"pages": pages, "floor": summary(floor),
            "slowest": {"page": slowest, "median_ms": pages[slowest]["median_ms"]},
            "goal_ms": GOAL_MS, "within_goal": pages[slowest]["median_ms"] <= GOAL_MS}


def summary(loads: list[Load]) -> dict:
    """A page's openings: each time in order, their median and maximum, the script's median part."""
    times = [load.idle_ms for load in loads]
    scripts = [load.script_ms for load in loads if load.script_ms is not None]
    return {"runs_ms": times, "median_ms": round(statistics.median(times), 1), "max_ms": max(times),
            "script_median_ms": round(statistics.median(scripts), 1) if scripts else None,
            "exception": any(load.exception for load in loads)} | (
        {"not_idle": [load.stuck for load in loads if load.stuck]} if any(load.stuck for load in loads) else {})


def in_rounds(openers: list[Callable[[str], Load]], urls: list[str], apart_s: float) -> list[list[Load]]:
    """Each of `urls` opened once by each opener in turn (a round each); an opening waits until `apart_s`
    after the same page's last opening ended: with CACHE_TTL_S it never finds the data a page caches
    (`st.cache_data`, 30 s at most) from the opening before, as a user coming to the page does not."""
    loads: list[list[Load]] = [[] for _ in urls]
    ended: dict[str, float] = {}
    for open_ in openers:
        for url, seen in zip(urls, loads, strict=True):
            time.sleep(max(0.0, ended.get(url, float("-inf")) + apart_s - time.monotonic()))
            seen.append(open_(url))
            ended[url] = time.monotonic()
    return loads


def measure_pages(url: str, floor_url: str, runs: int, apart_s: float) -> dict:
    """Each sidebar page opened `runs` times in new tabs of one browser (its cache filled by the server's
    first load), then once in a browser of its own (an empty cache, as at a first visit); the floor."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = launch(p)
        with browser_context(browser) as context:
            first = open_fresh(context, url)
            links = sidebar_pages(context, url)
            openers = [partial(open_fresh, context)] * runs + [partial(open_in_empty_cache, browser)]
            *loads, floor = in_rounds(openers, [href for _, href in links] + [floor_url], apart_s)
        browser.close()
    pages = {title: {"url": href.removeprefix(url) or "/", **summary(seen[:-1]),
                     "empty_cache_ms": seen[-1].idle_ms}
             for (title, href), seen in zip(links, loads, strict=True)}
    slowest = max(pages, key=lambda t: pages[t]["median_ms"])
    return {"first_load_ms": first.idle_ms, "pages": pages,
            "floor": summary(floor[:-1]) | {"empty_cache_ms": floor[-1].idle_ms},
            "slowest": {"page": slowest, "median_ms": pages[slowest]["median_ms"]},
            "goal_ms": GOAL_MS, "within_goal": pages[slowest]["median_ms"] <= GOAL_MS}


@contextmanager
def served_floor(source: str = FLOOR_APP) -> Iterator[str]:
    """A floor app (FLOOR_APP, FLOOR_NAV_APP) served as the dashboard is, with its Streamlit settings."""
    with tempfile.TemporaryDirectory(prefix="wb-floor-") as folder:
        app = Path(folder) / "floor.py"
        app.write_text(source)
        (Path(folder) / ".streamlit").mkdir()
        shutil.copy(APP.parent / ".streamlit" / "config.toml", Path(folder) / ".streamlit" / "config.toml")
        with served_dashboard({}, app=app) as url:
            yield url


def dashboard_env(wb, instance: str) -> dict[str, str]:
    """The dashboard's settings: the benchmark's servers and embedder, no LLM, `instance` shown. An empty
    value is an unset setting, whatever this process's environment says."""
    s = wb.settings
    return {"DATA_DIR": str(s.data_dir), "INSTANCE": instance, "EMBEDDER": s.embedder,
            "REDIS_URL": "", "DATABASE_URL": "", "GROQ_API_KEY": "", "LLM_BASE_URL": "", "OPENAI_API_KEY": "",
            "LLM_API_KEY": ""}


def run(n: int, answers: int, data_dir: str | None = None, runs: int = RUNS,
        apart_s: float = CACHE_TTL_S) -> dict:
    sizes = [(f"{PREFIX}-{i}", s) for i, s in enumerate(synth.instance_sizes(n, INSTANCES))]
    result: dict = {"memories": n, "answers": answers, "instances": dict(sizes), "instance_shown": sizes[0][0],
                    "runs": runs, "machine": machine()}
    with bench_workbench(data_dir) as wb:
        wb.index.ensure_vector_index()
        result["data"] = build(wb, sizes, answers)
        load_before = os.getloadavg()  # other work on the machine shows in every figure: said beside them
        with served_dashboard(dashboard_env(wb, sizes[0][0]), ready_within_s=60) as url, served_floor() as floor:
            result |= measure_pages(url, floor, runs, apart_s)
            with served_floor(FLOOR_NAV_APP) as floor_nav:
                result["in_app"] = measure_in_app(url, floor_nav, runs, apart_s)
        result["load_average_1_5_15"] = {"before": load_before, "after": os.getloadavg()}
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.dashboard_scale", description=__doc__.split("\n")[0])
    ap.add_argument("--memories", type=int, default=None, help="how many memories (default 1,000,000)")
    ap.add_argument("--answers", type=int, default=None, help="answers with feedback (default 100,000)")
    ap.add_argument("--data-dir", help="servers' directory, reused when it holds these counts "
                                       "(default: a fresh temporary one, removed after)")
    ap.add_argument("--json", metavar="OUT", help="default: benchmarks/results/dashboard-<memories>.json")
    ap.add_argument("--small", action="store_true",
                    help="smoke run: 2,000 memories, 200 answers, each page once, no waits between openings")
    args = ap.parse_args(argv)
    n = args.memories or (2_000 if args.small else 1_000_000)
    m = args.answers or (200 if args.small else 100_000)
    timing = (1, 0.0) if args.small else (RUNS, CACHE_TTL_S)  # the smoke run checks the path, not the figures
    write_json(run(n, m, args.data_dir, *timing), args.json or str(RESULTS / f"dashboard-{n}.json"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
