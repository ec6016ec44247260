"""The LoCoMo benchmark's peers (`--small` data): each writes its recalls and latency beside ours, and one
that cannot run is reported with its reason while the benchmark finishes. The peers' packages come with the
`bench` extra, which `make test` does not install: a peer whose package is missing is skipped."""

from __future__ import annotations

import importlib.util
import json
import sys

import pytest

from benchmarks import locomo
from tests.integration.test_benchmarks_smoke import locomo_file  # noqa: F401 — a fixture

RECALLS = {"R@1", "R@5", "R@10", "R@25"}


@pytest.mark.parametrize("peer", locomo.PEERS)  # each the name of its package
def test_a_peer_is_scored_beside_ours(peer, locomo_file, data_dir):  # noqa: F811
    if importlib.util.find_spec(peer) is None:  # not imported here: mem0 reads its telemetry switch then
        pytest.skip(f"{peer} is not installed; it comes with the bench extra: pip install -e '.[bench]'")
    result = locomo.run(locomo_file, smoke=True, data_dir=str(data_dir), peer_names=(peer,))
    figures = result["peers"][peer]
    assert "error" not in figures, figures.get("error")
    assert all(0 <= figures["overall"][k] <= 1 for k in RECALLS)
    assert set(figures["by_category"]) == {"1", "2", "3", "4"}
    assert all(0 <= row[k] <= 1 for row in figures["by_category"].values() for k in RECALLS)
    assert figures["overall"]["R@25"] == 1.0  # 10 turns a conversation: all are in the top 25
    assert figures["latency_ms"]["p50"] > 0 and figures["latency_ms"]["p95"] >= figures["latency_ms"]["p50"]


def test_a_peer_that_cannot_run_says_why(locomo_file, data_dir, tmp_path, monkeypatch):  # noqa: F811
    monkeypatch.setitem(sys.modules, "lancedb", None)  # as if not installed: importing it raises ImportError
    out = tmp_path / "locomo.json"
    assert locomo.main(["--data", str(locomo_file), "--small", "--json", str(out),
                        "--data-dir", str(data_dir)]) == 0
    peers = json.loads(out.read_text())["peers"]
    assert set(peers) == {"mem0", "lancedb"}
    assert "pip install 'memory-workbench[bench]'" in peers["lancedb"]["error"]
    assert "error" in peers["mem0"] or RECALLS <= set(peers["mem0"]["overall"])


def test_no_peers_skips_them(locomo_file, data_dir, tmp_path):  # noqa: F811
    out = tmp_path / "locomo.json"
    assert locomo.main(["--data", str(locomo_file), "--small", "--json", str(out),
                        "--data-dir", str(data_dir), "--no-peers"]) == 0
    assert json.loads(out.read_text())["peers"] == {}
