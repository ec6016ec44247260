"""Retake the README's screenshots: the demo data in a fresh data directory, the dashboard served on a
free port, each page opened in headless Chromium (Debian's, through Playwright) once it has settled.

    .venv/bin/python docs/screenshots/retake.py

Takes about a minute; the servers it started are stopped at the end.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-background-networking"]
PAGES = {"overview": "", "chat": "chat", "past_tasks": "past_tasks", "explorer": "explorer", "tune": "tune",
         "feedback": "feedback"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def settle(page) -> None:
    """Wait until Streamlit has finished its rerun."""
    time.sleep(0.5)
    page.wait_for_selector('[data-testid="stStatusWidget"]', state="detached", timeout=60_000)
    time.sleep(1.0)


def main() -> None:
    data = Path(tempfile.mkdtemp(prefix="wb-shots-"))
    env = {**os.environ, "DATA_DIR": str(data)}
    subprocess.run([BIN / "workbench", "demo", "load"], env=env, check=True, cwd=ROOT)
    port = free_port()
    server = subprocess.Popen([BIN / "streamlit", "run", "dashboard/app.py", "--server.port", str(port),
                               "--server.headless", "true"], env=env, cwd=ROOT,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1440, "height": 1000})
            deadline = time.monotonic() + 60
            while True:
                try:
                    page.goto(f"http://localhost:{port}/")
                    break
                except Exception:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.5)
            for name, path in PAGES.items():
                page.goto(f"http://localhost:{port}/{path}")
                settle(page)
                if name == "chat":  # an answer with its context, as a user sees it after asking
                    page.get_by_placeholder("Ask something").first.fill("When is my Lisbon trip?")
                    page.keyboard.press("Enter")
                    settle(page)
                page.screenshot(path=str(OUT / f"{name}.png"))
                print(f"{name}.png")
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
        subprocess.run([BIN / "workbench", "services", "stop"], env=env, cwd=ROOT, capture_output=True)


if __name__ == "__main__":
    main()
