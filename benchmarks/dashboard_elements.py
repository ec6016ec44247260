"""What one Streamlit element adds to a new tab: `python -m benchmarks.dashboard_elements [--rounds N]
[--json OUT] [--small]`.

Issue 20 asks every page of the dashboard to be idle within 1 s of navigation in a new tab. An empty
Streamlit page (`dashboard_scale.FLOOR_APP`: a title and a line) is the floor; this benchmark serves that
page beside copies of it that add one kind of element each (a select box, six lines of markdown, a table of
two rows, a chart of three points, four metrics), and the sidebar navigation of eight pages with the
elements of the dashboard's sidebar (captions, status lines, the instance's select box), each as the
dashboard is served (`dashboard_scale.served_floor`: `streamlit run`, the dashboard's Streamlit
settings), no workbench. Each is opened in a new tab of one browser, the app's scripts in its cache, and
timed from the navigation's start until the app is idle (`dashboard_scale.open_fresh`), in rounds that
open every variant once, so the machine's drift touches each alike. Reported per variant: the times, their
median, and what the median adds to the floor's.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from contextlib import ExitStack

from benchmarks.browser import launch
from benchmarks.common import RESULTS, machine, write_json
from benchmarks.dashboard_scale import FLOOR_APP, GOAL_MS, browser_context, open_fresh, served_floor

ROUNDS = 5
SIDEBAR_NAV = '''import streamlit as st


def blank():
    st.title("Floor")
    st.write("Streamlit alone, no workbench.")


with st.sidebar:
    st.caption("SERVICES")
    for name in ("Redis", "Postgres", "pgvector"):
        st.markdown(f":green[●] **{name}** 8.0 — embedded")
    st.caption("MODELS")
    st.markdown("Embedder: `wordllama`")
    st.caption("INSTANCE")
    st.selectbox("Instance", ["default", "demo"], label_visibility="collapsed")
pages = [st.Page(blank, title=f"Page {i}", url_path=f"p{i}", default=i == 0) for i in range(8)]
st.navigation({"Memory": pages}).run()
'''
# Each variant: the floor page and what it adds (appended to its source).
VARIANTS = {
    "floor": "",
    "select box": 'st.selectbox("Instance", ["default", "demo"], label_visibility="collapsed")\n',
    "six lines of markdown": 'for i in range(6):\n    st.markdown(f":green[●] **Service {i}** 8.0 — embedded")\n',
    "table of two rows": 'st.dataframe([{"a": 1, "b": "x"}, {"a": 2, "b": "y"}], hide_index=True)\n',
    "chart of three points": ('import altair as alt\nimport pandas as pd\n'
                              'st.altair_chart(alt.Chart(pd.DataFrame({"x": [1, 2, 3], "y": [3, 1, 2]}))'
                              '.mark_line().encode(x="x", y="y"))\n'),
    "four metrics": 'for i, column in enumerate(st.columns(4)):\n    column.metric(f"M{i}", i)\n',
}


def sources() -> dict[str, str]:
    return {name: FLOOR_APP + added for name, added in VARIANTS.items()} | {"sidebar and navigation": SIDEBAR_NAV}


def run(rounds: int) -> dict:
    from playwright.sync_api import sync_playwright

    with ExitStack() as stack:
        urls = {name: stack.enter_context(served_floor(src)) for name, src in sources().items()}
        with sync_playwright() as p:
            browser = launch(p)
            try:
                with browser_context(browser) as context:
                    for url in urls.values():  # each app's scripts into the browser's cache
                        open_fresh(context, url)
                    times: dict[str, list[float]] = {name: [] for name in urls}
                    for _ in range(rounds):
                        for name, url in urls.items():
                            times[name].append(open_fresh(context, url).idle_ms)
            finally:
                browser.close()
    floor = statistics.median(times["floor"])
    return {"machine": machine(), "rounds": rounds, "goal_ms": GOAL_MS,
            "variants": {name: {"times_ms": t, "median_ms": round(statistics.median(t), 1),
                                "added_ms": round(statistics.median(t) - floor, 1)} for name, t in times.items()}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.dashboard_elements", description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=ROUNDS, help=f"openings of each variant [{ROUNDS}]")
    ap.add_argument("--json", default=str(RESULTS / "dashboard-elements.json"), help="where to write the result")
    ap.add_argument("--small", action="store_true", help="smoke run: one round")
    args = ap.parse_args(argv)
    if args.rounds < 1:
        ap.error("--rounds must be 1 or more")
    write_json(run(1 if args.small else args.rounds), args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
