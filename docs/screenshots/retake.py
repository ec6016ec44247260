"""Retake the README's screenshots: the demo data in a fresh data directory, the dashboard served on a
free port, each page opened in headless Chromium (Debian's, through Playwright) once it has settled.

    .venv/bin/python docs/screenshots/retake.py

Takes about a minute; the servers it started are stopped at the end.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # run as a script: the project's own helpers
from benchmarks.browser import launch, served_dashboard

OUT = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent
PAGES = {"overview": "", "chat": "chat", "past_tasks": "past_tasks", "explorer": "explorer", "tune": "tune",
         "feedback": "feedback"}


def settle(page) -> None:
    """Wait until the page's title is drawn and Streamlit has finished its rerun, and a second more for the
    tables to draw (the first page of a fresh server drew nothing within the half second waited before)."""
    time.sleep(0.5)
    page.wait_for_selector("h1", timeout=60_000)
    page.wait_for_selector('[data-testid="stStatusWidget"]', state="detached", timeout=60_000)
    time.sleep(1.0)


def main() -> None:
    data = Path(tempfile.mkdtemp(prefix="wb-shots-"))
    env = {"DATA_DIR": str(data)}
    subprocess.run([BIN / "workbench", "demo", "load"], env={**os.environ, **env}, check=True, cwd=ROOT)
    try:
        with served_dashboard(env, ready_within_s=60) as url, sync_playwright() as p:
            browser = launch(p)
            page = browser.new_page(viewport={"width": 1440, "height": 1000})
            page.goto(url)  # a fresh server's first page draws its elements seconds after its title
            settle(page)
            time.sleep(3.0)
            for name, path in PAGES.items():
                page.goto(f"{url}/{path}")
                settle(page)
                if name == "chat":  # an answer with its context, as a user sees it after asking
                    page.get_by_placeholder("Ask something").first.fill("When is my Lisbon trip?")
                    page.keyboard.press("Enter")
                    settle(page)
                page.screenshot(path=str(OUT / f"{name}.png"))
                print(f"{name}.png")
            browser.close()
    finally:
        subprocess.run([BIN / "workbench", "services", "stop"], env={**os.environ, **env}, cwd=ROOT,
                       capture_output=True, check=False)  # stopping is best effort


if __name__ == "__main__":
    main()
