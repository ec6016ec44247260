"""`--instance` before the subcommand (`workbench --instance X chains list`) or after it (`workbench chains
list --instance X`, where a user puts it): the same instance either way, and two different names refused in
one line. Run in-process through `core.cli.main()` on the session's servers, and once as the installed
command in a subprocess, which lists the chains without importing pandas or scipy."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid

import pytest

from core import usecases as uc
from tests.support.cli import in_process_cli

TWICE = "error: --instance is given twice, as 'a-1' and 'b-1': give it once, before or after the command"


@pytest.fixture
def cli(settings, workbench, monkeypatch):
    return in_process_cli(settings, workbench, monkeypatch)


@pytest.fixture
def chain(cli, instance) -> str:
    """A chain of one turn in `instance`, remembered with `--instance` after the subcommand."""
    chain_id = f"bike-{uuid.uuid4().hex[:8]}"
    code, _, err = cli("remember", "my bike is the blue one", "--chain", chain_id, "--instance", instance)
    assert code == 0, err
    return chain_id


def listed(result: tuple[int, str, str]) -> tuple[str, list[str]]:
    code, out, err = result
    assert code == 0, err
    page = json.loads(out)
    return page["instance"], [c["chain_id"] for c in page["chains"]]


def test_chains_list_with_the_instance_after_the_subcommand_lists_that_instance(cli, instance, chain):
    assert listed(cli("chains", "list", "--instance", instance)) == (instance, [chain])
    assert listed(cli("--instance", instance, "chains", "list")) == (instance, [chain])
    assert listed(cli("--instance", instance, "chains", "list", "--instance", instance)) == (instance, [chain])
    assert listed(cli("chains", "--instance", instance, "list")) == (instance, [chain])
    assert chain not in listed(cli("chains", "list"))[1]  # the default instance


@pytest.mark.parametrize("args", [
    ["--instance", "a-1", "chains", "list", "--instance", "b-1"],
    ["chains", "--instance", "a-1", "list", "--instance", "b-1"],
    ["--instance", "a-1", "services", "--instance", "b-1"],
    # Commands with an `--instance` of their own check it the same way.
    ["--instance", "a-1", "retrieve", "dog", "--instance", "b-1"],
    ["--instance", "a-1", "export", "never-written.json", "--instance", "b-1"],
])
def test_two_different_instances_are_refused_in_one_line(cli, args):
    assert cli(*args) == (2, "", TWICE + "\n")


@pytest.mark.parametrize("args", [["chains", "list", "--instance", ""], ["chains", "list", "--instance", " "]])
def test_an_empty_instance_after_the_subcommand_is_refused(cli, args):
    code, _, err = cli(*args)
    assert code == 2
    empty = "error: --instance: the instance is empty: give a name or leave the option out"
    assert err.strip().splitlines() == [empty]


def test_a_bad_instance_after_the_subcommand_is_named(cli):
    code, _, err = cli("chains", "list", "--instance", "a b")
    assert code == 2 and err.startswith("error: --instance: instance must be") and len(err.splitlines()) == 1


def test_keys_create_keeps_its_own_instance_option(cli, workbench, instance):
    """`keys create --instance` names the instances the key may use, not the one the command works on."""
    name = f"k-{uuid.uuid4().hex[:10]}"
    code, out, err = cli("--instance", "a-1", "keys", "create", name, "--instance", instance)
    assert code == 0, err
    try:
        assert json.loads(out.split("\n", 1)[1])["instances"] == [instance]
    finally:
        uc.revoke_key(workbench, uc.KeyRef(name=name))


PROBE = """
import sys
from core.cli import main
try:
    main()
finally:
    print("imported:", *(m for m in ("pandas", "scipy") if m in sys.modules), file=sys.stderr)
"""


def test_the_installed_command_lists_the_chains_without_pandas_or_scipy(settings, instance, chain):
    done = subprocess.run([sys.executable, "-c", PROBE, "chains", "list", "--instance", instance],
                          capture_output=True, text=True, timeout=60, check=False,
                          env={**os.environ, "DATA_DIR": str(settings.data_dir)})
    assert done.returncode == 0, done.stderr
    assert [c["chain_id"] for c in json.loads(done.stdout)["chains"]] == [chain]
    assert done.stderr.splitlines()[-1] == "imported:"
