"""An e-mail address as a past task's user id, through every way it enters: the CLI (`tasks ingest`,
`tasks search`, `tasks list`, `import --user`), an import file's `user_id`, the HTTP API and the MCP tool
on a real uvicorn. A user id is only ever an SQL parameter, so '@' and '+' reach Postgres as typed."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import httpx
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from core import usecases as uc
from core.ids import USER_ID_RULE
from core.mcp.server import MCP_PATH
from tests.support.api import thread_server
from tests.support.cli import in_process_cli
from tests.support.mcp_client import ok, text

MARIA = "maria+work@acme.com"
MINUTES = "# Forklift contract\n\nLiftPro repairs forklifts within 24 hours, for 310 EUR a month.\n"


@pytest.fixture
def cli(settings, workbench, monkeypatch):
    """`workbench ARGS` through the real entry point: (exit code, stdout, stderr)."""
    return in_process_cli(settings, workbench, monkeypatch)


def test_the_cli_takes_an_e_mail_address_as_the_user(cli, workbench, instance, tmp_path):
    (tmp_path / "minutes.md").write_text(MINUTES)
    code, out, err = cli("--instance", instance, "tasks", "ingest", str(tmp_path / "minutes.md"), "--user", MARIA,
                         "--task", "meeting minutes")
    assert code == 0, err
    code, out, err = cli("--instance", instance, "tasks", "search", "forklift repairs", "--user", MARIA)
    assert code == 0, err
    assert [r["produced_text_title"] for r in json.loads(out)] == ["Forklift contract"]
    code, out, err = cli("--instance", instance, "tasks", "list", "--user", MARIA)
    assert code == 0 and [t["title"] for t in json.loads(out)] == ["Forklift contract"]
    # The same address without "+work" is another user.
    assert workbench.past_tasks.users(instance) == [MARIA]
    assert workbench.past_tasks.list_texts(instance, "maria@acme.com") == []


def test_the_cli_refuses_a_user_that_could_break_a_path_with_the_rule(cli, instance, tmp_path):
    (tmp_path / "minutes.md").write_text(MINUTES)
    for args in (["tasks", "search", "forklift", "--user", "maria acme"],
                 ["tasks", "ingest", str(tmp_path / "minutes.md"), "--user", "acme/maria", "--task", "note"],
                 ["import", str(tmp_path), "--user", "maria:acme"]):
        code, _, err = cli("--instance", instance, *args)
        assert code == 2, (args, err)
        [line] = err.strip().splitlines()
        assert USER_ID_RULE in line and "Traceback" not in line, args


def test_an_import_file_and_a_folder_for_an_e_mail_user(cli, workbench, instance, tmp_path):
    lines = tmp_path / "tasks.jsonl"
    lines.write_text("\n".join(json.dumps(line) for line in [
        {"user_id": "maria@acme.com", "task": "email", "production": "Kartonwerk delivered the pallets late."},
        {"user_id": "tom.k+ops@acme.com", "task": "note", "production": "Order more pallets for March."},
    ]) + "\n")
    result = uc.import_file(workbench, uc.ImportFile(path=lines, instance=instance, format="past-tasks"))
    assert result.outcome.created.past_tasks == 2
    folder = tmp_path / "maria"
    folder.mkdir()
    (folder / "minutes.md").write_text(MINUTES)
    code, _, err = cli("--instance", instance, "import", str(folder), "--user", "maria@acme.com", "--task",
                         "meeting minutes")
    assert code == 0, err
    assert workbench.past_tasks.users(instance) == ["maria@acme.com", "tom.k+ops@acme.com"]
    assert sorted(t.title for t in workbench.past_tasks.list_texts(instance, "maria@acme.com")) == [
        "Forklift contract", "Kartonwerk delivered the pallets late."]
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"user_id": "maria acme", "production": "x", "task": "note"}) + "\n")
    code, _, err = cli("--instance", instance, "import", str(bad), "--format", "past-tasks")
    assert code == 2 and f"line 1: user_id: user_id must be {USER_ID_RULE}" in err


@asynccontextmanager
async def mcp_session(url: str, headers: dict[str, str]) -> AsyncIterator[ClientSession]:
    async with (httpx2.AsyncClient(timeout=httpx2.Timeout(60.0), headers=headers) as client,
                streamable_http_client(url, http_client=client) as (read, write),
                ClientSession(read, write) as session):
        await session.initialize()
        yield session


def test_the_http_api_and_the_mcp_tool_find_an_e_mail_users_texts(workbench, instance):
    """The user id travels in the JSON body (no route takes it in a path or a query string), so '+' and '@'
    arrive as sent; a client that put it in a form-encoded query would have to encode '+', but none has to."""
    uc.ingest_texts(workbench, uc.IngestTexts(items=[uc.ProducedTextInput(
        instance=instance, user_id=MARIA, task="meeting minutes", title="Forklift contract",
        production="LiftPro repairs forklifts within 24 hours, for 310 EUR a month.")]))
    created = uc.create_key(workbench, uc.CreateKey(name=f"k-{instance}", instances=[instance]))
    headers = {"Authorization": f"Bearer {created.secret}"}
    with thread_server(workbench) as url:
        search = f"{url}/v1/instances/{instance}/past-tasks/search"
        found = httpx.post(search, json={"user_id": MARIA, "query": "forklift repairs"}, headers=headers,
                           timeout=60)
        other = httpx.post(search, json={"user_id": "maria work@acme.com", "query": "forklift"}, headers=headers,
                           timeout=60)

        async def over_mcp() -> tuple[dict, str]:
            async with mcp_session(f"{url}{MCP_PATH}", headers) as s:
                got = await ok(s, "internal_memory", {"instance": instance, "user_id": MARIA,
                                                      "query": "forklift repairs"})
                refused = await s.call_tool("internal_memory", {"instance": instance, "user_id": "maria/acme",
                                                                "query": "forklift"})
                assert refused.is_error
                return got, text(refused)

        by_mcp, mcp_refusal = anyio.run(over_mcp)
    assert found.status_code == 200, found.text
    assert found.json()["query"]["user_id"] == MARIA
    assert [h["title"] for h in found.json()["search"]["hits"]] == ["Forklift contract"]
    assert other.status_code == 422
    assert other.json()["detail"] == (f"invalid input — user_id: user_id must be {USER_ID_RULE}; "
                                      "got 'maria work@acme.com'")
    assert [r["produced_text_title"] for r in by_mcp["keypoints"]["references"]] == ["Forklift contract"]
    assert f"user_id must be {USER_ID_RULE}" in mcp_refusal and "\n" not in mcp_refusal
