"""The README's goals table says, beside each goal not met, what would reach it, computed from the run's
own figures (`benchmarks.report`)."""

from benchmarks import report


def test_a_rate_bound_by_cpu_time_says_the_cores_or_the_cpu_time_it_needs():
    text = report.cpu_reach({"per_memory_ms": 0.5, "cores": 2}, 5000, "a memory")
    assert text == ("5,000/s at this CPU time is 2.5 cores' work: 3 cores kept busy, or on this machine's 2, "
                    "0.40 ms of CPU a memory (1.2× less than now)")
    assert report.cpu_reach(None, 5000, "a memory") == ""


def test_the_dashboard_names_streamlits_floor_when_above_the_goal_and_the_slowest_pages_part_when_not():
    dash = {"goal_ms": 1000, "floor": {"median_ms": 1157.3}, "in_app": {"within_goal": True}}
    assert report.dashboard_reach(dash).startswith("a front end other than Streamlit's: its empty page alone "
                                                   "takes 1.16 s")
    assert report.dashboard_reach(dash).endswith("(reached by a click, every page is within the goal)")
    within = {**dash, "floor": {"median_ms": 900, "script_median_ms": 100}, "slowest": {"page": "Feedback"},
              "pages": {"Feedback": {"median_ms": 2300, "script_median_ms": 1400}}}
    assert report.dashboard_reach(within).startswith(
        "a page drawn within the 0.10 s that Streamlit's empty page (0.90 s) leaves: Feedback adds 1.40 s, most "
        "of it after its script starts (1.40 s against the empty page's 0.10 s)")


def test_the_machine_line_names_the_results_of_each_machine():
    a = {"cpu": "A", "cores": 2, "ram_gb": 1, "python": "3", "os": "L", "date": "d1"}
    b = {**a, "cpu": "B"}
    line = report.machine_line({"speed-100": {"machine": a}, "locomo": {"machine": b}, "floors": {"machine": a}})
    assert line == ("Measured on A, 2 cores, 1 GB RAM, Python 3, L (d1): `speed-100`, `floors`; "
                    "B, 2 cores, 1 GB RAM, Python 3, L (d1): `locomo`.")


def test_the_dashboard_says_what_streamlits_sidebar_and_one_table_or_chart_add_when_measured():
    dash = {"goal_ms": 1000, "floor": {"median_ms": 900, "script_median_ms": 100}, "slowest": {"page": "Feedback"},
            "pages": {"Feedback": {"median_ms": 2300, "script_median_ms": 1400}}}
    elements = {"variants": {"floor": {"median_ms": 815.9, "added_ms": 0},
                             "sidebar and navigation": {"median_ms": 1027.7, "added_ms": 211.8},
                             "table of two rows": {"median_ms": 1195.4, "added_ms": 379.5},
                             "chart of three points": {"median_ms": 1283.7, "added_ms": 467.8}}}
    assert report.dashboard_reach(dash, elements).endswith(
        "; Streamlit alone, in a run of its own (`python -m benchmarks.dashboard_elements`): the empty page 0.82 s, "
        "with the sidebar and navigation 1.03 s, and one table adds 0.38 s, one chart 0.47 s")
    assert "benchmarks.dashboard_elements" not in report.dashboard_reach(dash)


def test_the_long_goals_are_judged_at_the_timed_top_k_with_the_top_10_beside_them():
    long = {"top_k": 5, "hybrid_ms": {"p50": 6.0, "p95": 8.0, "p99": 9.0},
            "hybrid_top10_ms": {"p50": 7.7, "p95": 10.1, "p99": 11.0}}
    assert report.long_beside(long, "p50") == "the top 10, asked in turn: 7.70 ms"
    assert report.long_beside(long, "p95") == "the top 10, asked in turn: 10.10 ms"
    assert report.long_beside({"hybrid_ms": long["hybrid_ms"]}, "p50") == ""  # a run that timed the top 10 only
