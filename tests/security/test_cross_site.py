"""A web page of another site cannot use the keyless loopback API (the local user, every instance) from a
visitor's browser. In headless Chromium, a page of another origin sends every kind of request a browser
allows without a CORS preflight (fetch in no-cors mode with a text, form or type-less body, a beacon) and
one that needs a preflight (JSON), to the JSON endpoints and to /mcp; a DNS-rebinding request names
evil.test as its Host: nothing is stored, and the page reads nothing. The page is served on another port
of this machine, so that Chromium's private network checks (which stop a public site's requests to
loopback) do not stand in for the server's own refusals: the no-cors requests do reach it."""

from __future__ import annotations

import shutil
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from benchmarks.browser import CHROMIUM
from core.services import EmbeddedPostgres, EmbeddedRedis
from tests.e2e.conftest import launch
from tests.support.api import process_server

PAGE = b"<html><body>cat pictures</body></html>"
ATTACK = """
async (api) => {
  const memory = JSON.stringify({content: "planted by another site"});
  const turn = JSON.stringify({thought: "planted by another site"});
  const call = JSON.stringify({jsonrpc: "2.0", id: 1, method: "tools/call",
    params: {name: "add_memory", arguments: {content: "planted by another site", instance: "victim"}}});
  const sent = [];
  const go = async (what, url, init) => {
    try { const r = await fetch(url, init); sent.push([what, r.type, r.status, r.type === "opaque" ? "" : await r.text()]); }
    catch (e) { sent.push([what, "error", 0, String(e)]); }
  };
  const mem = api + "/v1/instances/victim/memories", rem = api + "/v1/instances/victim/remember";
  await go("text", mem, {method: "POST", mode: "no-cors", body: memory});
  await go("typeless", mem, {method: "POST", mode: "no-cors", body: new Blob([memory])});
  await go("form", mem, {method: "POST", mode: "no-cors", body: new URLSearchParams({content: "planted"})});
  await go("turn", rem, {method: "POST", mode: "no-cors", body: new Blob([turn])});
  await go("json", mem, {method: "POST", headers: {"Content-Type": "application/json"}, body: memory});
  await go("read", api + "/v1/instances", {});
  await go("mcp", api + "/mcp", {method: "POST", mode: "no-cors", body: new Blob([call])});
  navigator.sendBeacon(mem, new Blob([memory]));
  return sent;
}"""


@contextmanager
def other_site() -> Iterator[str]:
    """A page of another origin, served on a loopback port of its own."""
    class Page(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(PAGE)

        def log_message(self, *_: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://localhost:{server.server_address[1]}/"
    finally:
        server.shutdown()


@pytest.fixture(scope="module")
def keyless_dir() -> Path:
    path = Path(tempfile.mkdtemp(prefix="wb-xs-"))  # servers of its own: keys are global to a database
    yield path
    EmbeddedRedis(path).stop()
    EmbeddedPostgres(path).stop()
    shutil.rmtree(path, ignore_errors=True)


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} is missing")
def test_another_site_cannot_write_or_read_through_the_keyless_api(keyless_dir):
    from playwright.sync_api import sync_playwright

    with process_server(keyless_dir) as api, other_site() as site, sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page()
        page.goto(site)
        sent = {what: (kind, status, text) for what, kind, status, text in page.evaluate(ATTACK, api)}
        assert sent["text"][0] == "opaque" and sent["mcp"][0] == "opaque", sent  # they reached the server
        page.wait_for_timeout(1000)  # the beacon
        browser.close()
        assert sent["json"][0] == "error" and sent["read"][0] == "error", sent  # no CORS: nothing readable
        rebound = httpx.get(f"{api}/v1/instances", headers={"Host": "evil.test"})
        assert rebound.status_code == 400
        assert httpx.get(f"{api}/v1/instances").json() == {"instances": []}, sent
        found = httpx.post(f"{api}/v1/instances/victim/memories/search", json={"query": "planted"}).json()
        assert found["hits"] == [], sent
