"""A smoke run of the import benchmark on the session's servers: it imports end to end and reports the
figures it promises. Figures are not asserted: benchmarks measure, tests do not time."""

from __future__ import annotations

from benchmarks import import_speed


def test_import_benchmark_runs_and_reports(settings, workbench):
    result = import_speed.run(300, str(settings.data_dir))
    assert result["written"] == result["indexed"] == 300
    assert {"messages_per_s", "peak_rss_mb", "rss_before_import_mb", "validation_traced_peak_mb",
            "file_mb", "machine"} <= set(result)
