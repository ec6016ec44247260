"""API keys: created once (the secret is returned once and stored only as its SHA-256), listed without
secret or hash, scoped to instances (optionally read-only), revoked by name with effect in every process
at once; and `workbench keys create|list|revoke`, whose bad input exits 2 with one line."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import uuid

import pytest

from core import usecases as uc
from core.errors import Forbidden, InvalidInput, NotFound, Unauthenticated
from tests.support.cli import in_process_cli
from core.runtime import Workbench


@pytest.fixture
def name() -> str:
    return f"k-{uuid.uuid4().hex[:10]}"


def test_create_returns_the_secret_once_and_stores_only_its_hash(workbench, name, instance):
    created = uc.create_key(workbench, uc.CreateKey(name=name, instances=[instance, "other", instance]))
    secret = created.secret
    assert secret.startswith("wb_") and len(secret) == 3 + 43  # 32 random bytes, URL-safe base64
    key = created.key
    assert (key.name, key.instances, key.read_only) == (name, [instance, "other"], False)
    assert key.revoked_at is None
    assert key.prefix == secret[:10] and key.created_at.tzinfo is not None

    with workbench.pool().connection() as conn:
        row = conn.execute("SELECT * FROM api_key WHERE name = %s", (name,)).fetchone()
    assert row[1] == hashlib.sha256(secret.encode()).hexdigest()
    assert not any(secret in str(value) for value in row)  # the hash and a 10-character prefix only

    listed = next(k for k in uc.list_keys(workbench) if k.name == name)
    assert listed == key
    dumped = json.dumps([k.model_dump(mode="json") for k in uc.list_keys(workbench)])
    assert secret not in dumped and row[1] not in dumped and "hash" not in dumped
    assert set(listed.model_dump()) == {"name", "prefix", "instances", "read_only", "created_at",
                                        "revoked_at"}
    assert uc.keys_exist(workbench)


def test_authenticate_known_unknown_missing_and_revoked(workbench, name, instance):
    secret = uc.create_key(workbench, uc.CreateKey(name=name, instances=[instance])).secret
    principal = uc.authenticate(workbench, secret)
    assert principal == uc.Principal(name=name, instances=[instance], read_only=False)
    assert not principal.is_local

    for wrong in (None, "", "wb_" + "A" * 43, secret + "x", secret[:-1], "x" * 10_000):
        with pytest.raises(Unauthenticated, match="Authorization: Bearer <key>") as e:
            uc.authenticate(workbench, wrong)
        assert "workbench keys create" in str(e.value)

    revoked = uc.revoke_key(workbench, uc.KeyRef(name=name))
    assert revoked.revoked_at is not None
    with pytest.raises(Unauthenticated, match="unknown or revoked"):
        uc.authenticate(workbench, secret)
    # A revoked key still marks a deployment that uses keys: revoking the last one must not open the API.
    with workbench.pool().connection() as conn:
        assert conn.execute("SELECT count(*) FROM api_key WHERE revoked_at IS NULL AND name = %s",
                            (name,)).fetchone()[0] == 0
    assert uc.keys_exist(workbench)
    # Revoking again changes nothing; an unknown name is NotFound.
    assert uc.revoke_key(workbench, uc.KeyRef(name=name)).revoked_at == revoked.revoked_at
    with pytest.raises(NotFound, match="workbench keys list"):
        uc.revoke_key(workbench, uc.KeyRef(name=name + "-nope"))


def test_scope_and_read_only_through_authorize(workbench, name, instance):
    writer = uc.authenticate(workbench, uc.create_key(
        workbench, uc.CreateKey(name=name, instances=[instance, "shared-ro"])).secret)
    reader = uc.authenticate(workbench, uc.create_key(
        workbench, uc.CreateKey(name=name + "-ro", instances=[instance], read_only=True)).secret)

    uc.authorize(writer, instance, write=True)
    uc.authorize(writer, "shared-ro", write=False)
    with pytest.raises(Forbidden, match=f"--instance {instance}-x"):
        uc.authorize(writer, instance + "-x", write=False)
    uc.authorize(reader, instance, write=False)
    with pytest.raises(Forbidden, match="read-only"):
        uc.authorize(reader, instance, write=True)
    with pytest.raises(Forbidden):
        uc.authorize(reader, "shared-ro", write=False)
    uc.authorize(uc.LOCAL_USER, instance + "-x", write=True)


def test_a_name_stays_taken_even_after_a_revoke(workbench, name, instance):
    uc.create_key(workbench, uc.CreateKey(name=name, instances=[instance]))
    with pytest.raises(InvalidInput, match="pick another name"):
        uc.create_key(workbench, uc.CreateKey(name=name, instances=[instance]))
    uc.revoke_key(workbench, uc.KeyRef(name=name))
    with pytest.raises(InvalidInput, match="pick another name"):
        uc.create_key(workbench, uc.CreateKey(name=name, instances=["elsewhere"]))
    assert [k.instances for k in uc.list_keys(workbench) if k.name == name] == [[instance]]


@pytest.mark.parametrize("fields, field", [
    ({"name": "a b", "instances": ["x"]}, "name"),
    ({"name": "ok", "instances": []}, "instances"),
    ({"name": "ok", "instances": ["bad instance"]}, "instances"),
    ({"name": "ok", "instances": ["x"], "scope": "all"}, "scope"),
])
def test_requests_refuse_bad_fields(fields, field):
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match=field):
        uc.CreateKey(**fields)


def test_the_store_refuses_bad_input_of_its_own(workbench, name):
    with pytest.raises(InvalidInput, match="at least one instance"):
        workbench.keys.create(name, [])
    with pytest.raises(InvalidInput, match="instance must be"):
        workbench.keys.create(name, ["x;DROP"])
    assert workbench.keys.principal_for(None) is None  # type: ignore[arg-type]


def test_a_revoke_is_seen_by_another_process_at_once(settings, workbench, name, instance):
    other = Workbench(settings)  # its own connection pool, as another replica would have
    try:
        secret = uc.create_key(workbench, uc.CreateKey(name=name, instances=[instance])).secret
        assert uc.authenticate(other, secret).name == name
        uc.revoke_key(workbench, uc.KeyRef(name=name))
        with pytest.raises(Unauthenticated):
            uc.authenticate(other, secret)
    finally:
        other.close()


# -- the command line -------------------------------------------------------------------------------

@pytest.fixture
def cli(settings, workbench, monkeypatch):
    return in_process_cli(settings, workbench, monkeypatch)


def test_cli_create_list_revoke(cli, workbench, name, instance):
    code, out, err = cli("keys", "create", name, "--instance", instance, "--instance", "second",
                         "--read-only")
    assert code == 0, err
    secret, document = out.split("\n", 1)
    assert secret.startswith("wb_") and out.count(secret) == 1
    assert "will not be shown again" in err and secret not in err
    printed = json.loads(document)
    assert (printed["name"], printed["instances"], printed["read_only"]) == (name, [instance, "second"], True)
    assert printed["prefix"] == secret[:10] and printed["revoked_at"] is None
    assert uc.authenticate(workbench, secret).read_only

    code, out, _ = cli("keys", "list")
    assert code == 0 and secret not in out
    assert [k for k in json.loads(out) if k["name"] == name] == [printed]

    # Piped, nobody can answer its question: refused, naming --yes (a terminal's "no" is test_bad_input_cli's).
    code, out, err = cli("keys", "revoke", name, stdin="y\n")
    assert code == 2 and "pass --yes" in err and uc.authenticate(workbench, secret)
    code, out, _ = cli("keys", "revoke", name, "--yes")
    assert code == 0 and json.loads(out)["revoked_at"] is not None
    with pytest.raises(Unauthenticated):
        uc.authenticate(workbench, secret)


@pytest.mark.parametrize("args, says", [
    (["keys", "create", "a b", "--instance", "x"], "name"),
    (["keys", "create", "ok-name"], "--instance"),
    (["keys", "create", "ok-name", "--instance", "x y"], "instances"),
    (["keys", "revoke", "no-such-key-here", "--yes"], "no API key named"),
    (["keys", "revoke", "a;b", "--yes"], "name"),
])
def test_cli_bad_input_exits_2_with_one_line(cli, args, says):
    code, out, err = cli(*args)
    assert code == 2, (out, err)
    last = err.strip().splitlines()[-1]
    assert last.startswith(("error:", "Error:")) and says in last, err
    assert "Traceback" not in out + err


def test_cli_name_taken_exits_2(cli, name, instance):
    assert cli("keys", "create", name, "--instance", instance)[0] == 0
    code, out, err = cli("keys", "create", name, "--instance", instance)
    assert code == 2 and out == ""
    expected = (f"error: an API key named '{name}' already exists (names stay taken after a revoke); "
                "pick another name")
    assert err.strip().splitlines() == [expected]


def test_the_installed_entry_point(settings, name):
    env = {**os.environ, "DATA_DIR": str(settings.data_dir)}
    done = subprocess.run([sys.executable, "-m", "core.cli", "keys", "create", name, "--instance", "a/b"],
                          capture_output=True, text=True, env=env, check=False, timeout=60)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and "instances" in lines[0], done.stderr
