"""The dashboard's start-up thread imports the pages' modules ahead (`import_page_modules`), so the first
opening of a page does not pay for its charting library; it must never run the app's own script."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import sys
from dashboard.resources import import_page_modules
names = import_page_modules()
print(",".join(names))
print("altair" in sys.modules, "plotly.express" in sys.modules, "dashboard.app" in sys.modules)
"""


def test_every_page_module_but_the_app_script_is_imported():
    # In a process of its own: this one may have imported any of them already.
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, check=True)
    names, loaded = out.stdout.strip().splitlines()
    expected = {f"dashboard.{p.stem}" for p in (ROOT / "dashboard").glob("*.py") if p.stem not in ("__init__", "app")}
    assert set(names.split(",")) == expected
    assert loaded == "True True False"  # the Feedback page's altair, Tune's plotly; never the app script
