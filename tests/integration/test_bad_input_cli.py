"""Property tests over the `workbench` command line, run in-process through `core.cli.main()` (the real
entry point, with its error handling) against the session's servers, plus a few runs of the installed
entry point in a subprocess. Bad input exits 2 with a one-line message naming the option; good input
exits 0 with JSON; nothing prints a traceback. Last, an empty instance refused by every front end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections import Counter

import anyio
import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from core import usecases as uc
from core.bank import MemoryBank
from core.errors import EMPTY_INSTANCE, InvalidInput
from core.mcp.server import build_mcp_server
from tests.support.api import thread_server
from tests.support.cli import in_process_cli, installed, mode, usual_umask
from tests.support.hostile import ATTACKS, SERVICE, ids, texts

INSTANCE = f"cli-fuzz-{uuid.uuid4().hex[:8]}"
OUTCOMES: Counter[str] = Counter()  # (command, exit code) → runs; printed at the end (pytest -s)


@pytest.fixture(scope="module", autouse=True)
def _report():
    yield
    print("\nCLI runs by command and exit code:", dict(sorted(OUTCOMES.items())))


@pytest.fixture(scope="module")
def cli(settings, workbench):
    """Runs `workbench ARGS` in this process. Each run builds its Workbench as the CLI does, but on the
    session's connections, so hundreds of runs do not open hundreds of Postgres pools."""
    mp = pytest.MonkeyPatch()
    run = in_process_cli(settings, workbench, mp)
    yield run
    with workbench.pool().connection() as conn:
        conn.execute("DELETE FROM fusion_profile WHERE name LIKE 'fz-%%'")
    mp.undo()


def assert_outcome(code: int, out: str, err: str, *, json_out: bool = True, command: str = "") -> None:
    OUTCOMES[f"{command} exit {code}"] += 1
    if code == 2 and os.environ.get("CLI_DEBUG"):
        print(command, err.strip().splitlines()[-1][:150])
    assert "Traceback" not in out + err
    assert code in (0, 2), (code, err[-500:])
    if code == 2:
        last = err.strip().splitlines()[-1]
        assert last.startswith(("error:", "Error:")), err[-500:]
        assert len(last) < 2_000
    elif json_out:
        json.loads(out)


def opt(name: str, strategy: st.SearchStrategy[str]) -> st.SearchStrategy[list[str]]:
    return st.one_of(st.just([]), strategy.map(lambda v: [name, v]))


def mostly(valid: st.SearchStrategy, bad: st.SearchStrategy) -> st.SearchStrategy:
    """Valid about four times in five: with many options per run, some runs must get through whole."""
    return st.integers(0, 4).flatmap(lambda i: bad if i == 0 else valid)


good_id = st.from_regex(r"[a-z0-9][a-z0-9._-]{0,20}", fullmatch=True)


bad_nums = st.one_of(st.integers(-10**6, 10**6).map(str), st.sampled_from(["nan", "inf", "-inf", "1e309", "abc", "",
                                                                      "0", "-1", "99999999999999999999"]),
                 st.floats(allow_nan=True, allow_infinity=True).map(repr))
nums = mostly(st.integers(1, 50).map(str), bad_nums)
words = texts(120, big=False)


@SERVICE
@given(st.one_of(words, st.sampled_from(["x" * 100_001])), st.tuples(
    opt("--chain", mostly(good_id, ids())),
    opt("--style", mostly(st.sampled_from(["deep", "CHRONOLOGICAL", " default "]), words)),
    opt("--top-k", nums), opt("--similarity-threshold", mostly(st.sampled_from(["0", "0.2", "1"]), bad_nums)),
    opt("--token-cap", nums), opt("--temporal", mostly(st.sampled_from(["yesterday", "in March", "last week"]),
                                                       st.one_of(words, st.just("31/12/9999")))),
    opt("--search-type", mostly(st.sampled_from(["hybrid", "vector", "text"]), st.just("sql"))),
    opt("--tag", mostly(st.text(st.characters(categories=["L", "N", "P", "S"]), min_size=1, max_size=20), words)),
    opt("--request-id", mostly(good_id, ids()))))
def test_remember(cli, text, options):
    code, out, err = cli("--instance", INSTANCE, "remember", text, *[x for o in options for x in o])
    assert_outcome(code, out, err, command="remember")
    if code == 0:
        assert json.loads(out)["status"] == "ok"


times = mostly(st.sampled_from(["2025-11-01", "2025-11", "2025", "today", "last week", "7 days ago",
                                 "2025-11-30T12:00:00Z"]),
               st.one_of(words, st.sampled_from(["9999-12-31", "0001-01-01", "31/12/9999", "2025-13", "-1 days ago"])))
# Past tasks kept by type and produced date (`--type` repeatable; an unknown type is refused naming the types).
task_filters = st.tuples(opt("--type", mostly(st.sampled_from(["email", "meeting minutes"]), words)),
                         opt("--type", mostly(st.just("report"), words)), opt("--since", times), opt("--until", times))


@SERVICE
@given(words, mostly(good_id, ids()), st.tuples(opt("--max-distance", mostly(st.sampled_from(["0.5", "1.5"]), bad_nums)),
                                                opt("--n-max", nums), opt("--execution-id", mostly(good_id, ids()))),
       task_filters)
def test_past_task_search(cli, query, user, options, filters):
    code, out, err = cli("--instance", INSTANCE, "tasks", "search", query, "--user", user,
                         *[x for o in options + filters for x in o])
    assert_outcome(code, out, err, command="tasks search")


@SERVICE
@given(mostly(good_id, ids()), opt("--limit", nums), task_filters)
def test_past_task_list(cli, user, limit, filters):
    code, out, err = cli("--instance", INSTANCE, "tasks", "list", "--user", user, *limit,
                         *[x for o in filters for x in o])
    assert_outcome(code, out, err, json_out=False, command="tasks list")


@SERVICE
@given(st.one_of(st.sampled_from(ATTACKS), st.from_regex(r"fz-[a-z0-9]{1,8}", fullmatch=True)),
       mostly(st.sampled_from([("0.6", "0.25", "0.15"), ("1", "0", "0"), ("0.5", "0.5", "0")]),
              st.tuples(bad_nums, bad_nums, bad_nums)),
       st.tuples(opt("--tau", mostly(st.just("3600"), bad_nums)), opt("--rrf-k", nums),
                 opt("--method", st.sampled_from(["rrf", "linear", "max"]))))
def test_profile_weights(cli, name, weights, options):
    w_sem, w_text, w_rec = weights
    code, out, err = cli("--instance", INSTANCE, "profiles", "save", name, "--w-sem", w_sem, "--w-text", w_text,
                         "--w-rec", w_rec, *[x for o in options for x in o])
    assert_outcome(code, out, err, command="profiles save")
    # A NaN weight is refused by the profile's own check, which names it; unless a weight that is no number
    # at all ("abc") was refused first, by the option's parsing.
    if "nan" in weights and all(_number(w) for w in weights) and name.startswith("fz-") and not any(options):
        assert code == 2 and ("w_" in err or "--w-" in err)  # the field, or the option that set it


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


@SERVICE
@given(mostly(texts(400, big=False).map(str.encode), st.binary(max_size=300)), mostly(good_id, ids()),
       mostly(st.sampled_from(["note", "meeting minutes", "e-mail"]), words),
       st.sampled_from(["a.md", "b.txt", "c.MD", "d.pdf", "noext"]))
def test_past_task_ingest_files(cli, tmp_path_factory, content, user, task, name):
    path = tmp_path_factory.mktemp("ingest") / name
    path.write_bytes(content)
    code, out, err = cli("--instance", INSTANCE, "tasks", "ingest", str(path), "--user", user, "--task", task)
    assert_outcome(code, out, err, command="tasks ingest")


@SERVICE
# Only files the loader refuses: a valid set would run an evaluation, whose metrics library compiles
# itself on first use (tens of seconds), and evaluation is tested by its own suite.
@given(st.one_of(st.binary(max_size=200), st.sampled_from([b'{"query": "dog"}\n', b'{"query": "", "relevant": []}',
                                                            b"[]", b'[{"conversation": {}}]'])),
       st.sampled_from(["1,5", "0", "a,b", "", "-3", "10"]))
def test_eval_files(cli, tmp_path_factory, content, ks):
    path = tmp_path_factory.mktemp("eval") / "set.jsonl"
    path.write_bytes(content)
    code, out, err = cli("--instance", INSTANCE, "eval", "--data", str(path), "--k", ks)
    assert_outcome(code, out, err, json_out=False, command="eval")


@SERVICE
@given(ids(), st.lists(st.one_of(words, st.sampled_from(["op.retrieve_memory_op.params.top_k=-1",
                                                         "op.retrieve_memory_op.params.top_k=5",
                                                         "op.fuse_rerank_op.params.fuse_time_ratio=nan",
                                                         "nonsense=1", "=", "op.x.params.y={"])), max_size=2))
def test_instance_option_and_retrieve_params(cli, instance, params):
    code, out, err = cli("--instance", instance, "retrieve", "dog", *[x for p in params for x in ("--param", p)])
    assert_outcome(code, out, err, command="retrieve")


@pytest.mark.parametrize("args, names", [
    (["remember", ""], "thought"),
    (["remember", "hi", "--top-k", "-5"], "--top-k: "),  # the option typed, not the request's field top_k
    (["--instance", "a b", "remember", "hi"], "--instance: instance must be"),
    (["profiles", "save", "p", "--w-sem", "nan", "--w-text", "0.5", "--w-rec", "0.5"], "--w-sem: "),
    (["tasks", "search", "q", "--user", "x;y"], "user"),
    (["eval", "--data", "/nonexistent/locomo.json"], "not found"),
    (["--instance", "", "chains", "delete", "--yes", "c-1"], "the instance is empty"),
    (["chains", "export", "c-1", "-o", "/nonexistent/c-1.json"], "does not exist"),
    # Click's own refusals: usage, hint and error were three lines
    (["feedback", "summary", "--rating", "sideways"], "'sideways' is not one of 'up', 'down', 'none' (see "
                                                      "'workbench feedback summary --help')"),
    (["tasks", "history"], "Missing option '--user'"),
    (["nosuch"], "No such command 'nosuch'"),
    # A window of answers that starts in the future holds none: refused, not "no answers in this period"
    (["feedback", "summary", "--since", "in 3 days"], "--since: 'in 3 days' ("),
    (["feedback", "export", "--csv", "/tmp/never-written.csv", "--since", "2999-01-01"], "is in the future"),
])
def test_the_installed_entry_point(settings, args, names):
    env = {**os.environ, "DATA_DIR": str(settings.data_dir)}
    done = subprocess.run([sys.executable, "-m", "core.cli", *args], capture_output=True, text=True, env=env, check=False,
                          timeout=60)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and names in lines[0], done.stderr


def tiny_locomo(sample_id: str) -> bytes:
    turns = [{"speaker": "Ann", "dia_id": "D1:1", "text": "My dog loves the park."},
             {"speaker": "Bob", "dia_id": "D1:2", "text": "I had sushi today."}]
    return json.dumps([{"sample_id": sample_id, "conversation": {
        "session_1_date_time": "1:56 pm on 8 May, 2023", "session_1": turns},
        "qa": [{"question": "Where does the dog go?", "evidence": ["D1:1"], "category": 4}]}]).encode()


def assert_one_line_refusal(code: int, err: str, says: str) -> None:
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error:"), err[-500:]
    assert says in lines[0], lines[0]


@pytest.mark.parametrize("case, says", [
    ("nested", "must not nest so deeply"),            # RecursionError: exit 1 "Unexpected RecursionError"
    ("nested-jsonl", "recursion limit"),
    ("sample-not-object", "sample 2 of the LoCoMo file must be an object"),  # AttributeError with --sample
    ("not-utf8", "not UTF-8 text: byte 38 (0xff)"),  # silently replaced by U+FFFD
    ("json-in-missing-folder", "does not exist"),  # written after the whole evaluation had run
    ("json-is-folder", "is a folder"),
])
def test_eval_refuses_bad_files_and_outputs_before_evaluating(cli, workbench, tmp_path, case, says):
    sample = f"s-{uuid.uuid4().hex[:8]}"
    data, args = tmp_path / "set.json", []
    data.write_bytes({"nested": b"[" * 100_000 + b"]" * 100_000,
                      "nested-jsonl": b'{"query": ' + b"[" * 10_000 + b"]" * 10_000 + b"}",
                      "sample-not-object": b'[{"conversation": {}}, 3]',
                      "not-utf8": tiny_locomo(sample)[:38] + b"\xff" + tiny_locomo(sample)[38:],
                      }.get(case, tiny_locomo(sample)))
    if case == "sample-not-object":
        args = ["--sample", "s1"]
    elif case == "json-in-missing-folder":
        args = ["--json", str(tmp_path / "missing" / "report.json")]
    elif case == "json-is-folder":
        args = ["--json", str(tmp_path)]
    code, _, err = cli("--instance", INSTANCE, "eval", "--data", str(data), *args)
    assert_one_line_refusal(code, err, says)
    assert not [i for i in workbench.index.instances() if sample in i]  # nothing was evaluated


@pytest.mark.parametrize("command", [["feedback", "export", "--csv"], ["chains", "export", "c-1", "-o"]])
@pytest.mark.parametrize("where, says", [("missing/out.txt", "does not exist"), (".", "is a folder")])
def test_exports_refuse_an_output_path_they_cannot_write(cli, tmp_path, command, where, says):
    code, _, err = cli("--instance", INSTANCE, *command, str(tmp_path / where))
    assert_one_line_refusal(code, err, says)


def test_a_chain_export_is_readable_by_its_owner_alone(cli, tmp_path):
    """The whole transcript was written 0644 under the usual umask; a file replaced is made 0600 too, and
    the folder is left as it was."""
    instance, out, folder = f"cli-exp-{uuid.uuid4().hex[:8]}", tmp_path / "chain.json", mode(tmp_path)
    assert cli("--instance", instance, "remember", "my PIN is not 1234", "--chain", "pin")[0] == 0
    with usual_umask():
        code, _, err = cli("--instance", instance, "chains", "export", "pin", "-o", str(out))
        assert code == 0 and mode(out) == "0o600", err
        out.chmod(0o644)
        assert cli("--instance", instance, "chains", "export", "pin", "-o", str(out))[0] == 0
    assert mode(out) == "0o600" and "my PIN" in out.read_text() and mode(tmp_path) == folder


@pytest.mark.parametrize("args", [["--instance", "", "chains", "list"], ["--instance", " ", "sweep"],
                                  ["eval", "--instance", "", "--data", "set.jsonl"]])
def test_an_empty_instance_option_is_refused(cli, args):
    code, _, err = cli(*args)
    assert_one_line_refusal(code, err, "--instance: the instance is empty: give a name or leave the option out")


def test_an_empty_instance_setting_is_refused(cli, monkeypatch):
    monkeypatch.setenv("INSTANCE", "")
    code, _, err = cli("chains", "list")
    assert_one_line_refusal(code, err, "INSTANCE: the instance is empty")


def test_chains_delete_with_an_empty_instance_deletes_nothing(cli, monkeypatch):
    """`--instance "$INST"` with INST unset deleted the chain of that name in the default instance."""
    monkeypatch.setenv("INSTANCE", f"cli-default-{uuid.uuid4().hex[:8]}")  # this test's default instance
    code, out, err = cli("remember", "keep this chain", "--chain", "keep-me")
    assert code == 0, err
    code, _, err = cli("--instance", "", "chains", "delete", "--yes", "keep-me")
    assert_one_line_refusal(code, err, "the instance is empty")
    code, out, _ = cli("chains", "export", "keep-me")
    assert code == 0 and "keep this chain" in out


def test_an_empty_instance_is_refused_by_every_front_end(workbench):
    """HTTP (a path or a body), an MCP tool call and a use-case request, as on the command line."""
    # Keys are global to the database: once any test made one, every request needs one.
    key = uc.create_key(workbench, uc.CreateKey(name=f"k-{uuid.uuid4().hex[:10]}", instances=["x"])).secret
    auth = {"Authorization": f"Bearer {key}"}
    with thread_server(workbench) as base:
        by_path = httpx.get(f"{base}/v1/instances//chains", headers=auth)
        by_body = httpx.post(f"{base}/v1/instances/x/memories", json={"content": "hi", "instance": ""},
                             headers=auth)
    assert by_body.status_code == 422 and EMPTY_INSTANCE in by_body.json()["detail"], by_body.text
    # A path cannot leave the instance out: it is told where the name goes.
    assert by_path.status_code == 422 and by_path.json()["detail"] == (
        "instance: the path names none (/v1/instances//…): put the instance's name between the two slashes")
    called = anyio.run(build_mcp_server(workbench).call_tool, "add_memory", {"content": "hi", "instance": ""})
    assert called.is_error and EMPTY_INSTANCE in called.content[0].text
    with pytest.raises(ValidationError, match=EMPTY_INSTANCE):
        uc.ChainRef(instance="", chain_id="keep-me")
    with pytest.raises(InvalidInput, match=EMPTY_INSTANCE):  # a bank named by its instance
        MemoryBank(workbench, "", "b")


def imported_memories(cli, instance: str, path, *options: str) -> int:
    code, out, err = cli("--instance", instance, "import", str(path), *options)
    assert code == 0, err
    return json.loads(out)["outcome"]["created"]["memories"]


def test_import_refuses_a_report_in_a_missing_folder_before_importing(cli, tmp_path):
    """It said "Unexpected FileNotFoundError", exit 1, once the file had been imported."""
    instance, notes = f"cli-imp-{uuid.uuid4().hex[:8]}", tmp_path / "notes.jsonl"
    notes.write_text('{"content": "the dog likes parks"}\n{"content": ""}\n')
    code, _, err = cli("--instance", instance, "import", str(notes), "--on-error", "skip",
                       "--report", str(tmp_path / "missing" / "r.jsonl"))
    assert_one_line_refusal(code, err, f"--report: '{tmp_path / 'missing' / 'r.jsonl'}' cannot be written: the "
                                       f"folder '{tmp_path / 'missing'}' does not exist")
    assert imported_memories(cli, instance, notes, "--on-error", "skip", "--report", str(tmp_path / "r.jsonl")) == 1


def test_import_checks_every_file_exists_before_importing_any(cli, tmp_path):
    instance = f"cli-imp-{uuid.uuid4().hex[:8]}"
    (tmp_path / "a.jsonl").write_text('{"content": "first file"}\n')
    (tmp_path / "b.jsonl").write_text('{"content": "last file"}\n')
    code, _, err = cli("--instance", instance, "import", str(tmp_path / "a.jsonl"), str(tmp_path / "nosuch.json"),
                       str(tmp_path / "b.jsonl"), str(tmp_path / "gone.csv"))
    assert_one_line_refusal(code, err, f"{tmp_path / 'nosuch.json'}, {tmp_path / 'gone.csv'}: no such file")
    assert imported_memories(cli, instance, tmp_path / "a.jsonl") == 1


def test_export_replaces_an_existing_file_only_with_force(cli, tmp_path):
    instance, out = f"cli-exp-{uuid.uuid4().hex[:8]}", tmp_path / "OUT"
    (tmp_path / "a.jsonl").write_text('{"content": "something to export"}\n')
    assert imported_memories(cli, instance, tmp_path / "a.jsonl") == 1
    out.write_text("keep me")
    code, _, err = cli("--instance", instance, "export", str(out))
    assert_one_line_refusal(code, err, f"{out} exists: choose another name, or pass --force to replace it")
    assert out.read_text() == "keep me"
    code, printed, err = cli("--instance", instance, "export", str(out), "--force")
    assert code == 0 and json.loads(printed)["path"] == str(out), err
    assert out.read_bytes().startswith(b"PK")


def test_eval_refuses_save_as_without_optimise(cli, workbench, tmp_path):
    """--save-as without --optimise ran the evaluation and saved nothing, silently."""
    sample = f"s-{uuid.uuid4().hex[:8]}"
    (tmp_path / "set.json").write_bytes(tiny_locomo(sample))
    code, _, err = cli("--instance", INSTANCE, "eval", "--data", str(tmp_path / "set.json"), "--save-as", "fz-p")
    assert code == 2 and "--save-as" in err.splitlines()[-1] and "add --optimise" in err, err
    assert not [i for i in workbench.index.instances() if sample in i]


@pytest.mark.parametrize("args, declined", [
    (["chains", "delete", "c-1"], "nothing was deleted"),
    (["memory", "delete", "m-1"], "nothing was deleted"),
    (["bank", "clear", "--bank", "b-1"], "nothing was removed"),
    (["bank", "delete", "--bank", "b-1"], "nothing was deleted"),
    (["demo", "reset"], "nothing was removed"),
    (["services", "repair-redis"], "nothing was changed"),
    (["profiles", "delete", "p-1"], "nothing was deleted"),
])
def test_a_question_with_no_terminal_to_answer_it_is_refused_naming_yes(cli, args, declined):
    """It read the answer from the pipe, or ended with exit 130 and no word at the pipe's end."""
    for stdin in (None, "y\n"):
        code, out, err = cli(*args, stdin=stdin)
        assert_one_line_refusal(code, err, "pass --yes to confirm")
        assert declined in err and out == ""


def test_keys_revoke_says_an_unknown_key_before_asking_and_asks_for_a_known_one(cli, workbench):
    code, _, err = cli("keys", "revoke", f"nosuch-{uuid.uuid4().hex[:8]}")
    assert_one_line_refusal(code, err, "no API key named")
    name = f"k-{uuid.uuid4().hex[:10]}"
    secret = uc.create_key(workbench, uc.CreateKey(name=name, instances=["x"])).secret
    code, _, err = cli("keys", "revoke", name, stdin="y\n")
    assert_one_line_refusal(code, err, "pass --yes to confirm (the key was not revoked)")
    assert uc.authenticate(workbench, secret)


def test_a_question_answered_no_says_nothing_was_deleted(settings):
    """On a terminal, "n" (or Ctrl+D) ended with exit 130 and no word."""
    import pty

    for answer in (b"n\n", b"\x04"):
        terminal, stdin = pty.openpty()
        os.write(terminal, answer)  # held by the terminal until the question reads it
        try:
            done = installed("chains", "delete", "c-1", data_dir=settings.data_dir, stdin=stdin)
        finally:
            os.close(stdin)
            os.close(terminal)
        assert done.returncode == 130 and done.stdout.startswith("Delete this chain from every store?")
        assert done.stderr.strip().splitlines() == ["aborted: nothing was deleted"]


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc, where no folder can be made")
@pytest.mark.parametrize("data_dir", ["/proc/wb-nope", "/proc/wb-nope/data"])
def test_a_data_directory_that_cannot_be_made_is_refused_naming_data_dir(data_dir):
    done = installed("chains", "list", data_dir=data_dir)
    assert done.returncode == 2 and done.stdout == "", done.stderr
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("error: cannot create the ") and data_dir in line
    assert line.endswith("Set DATA_DIR to a folder you can write to.")


@pytest.mark.parametrize(("name", "url", "said"), [
    ("DATABASE_URL", "postgresql://bob:SuperSecretPW123@[::1", "cannot be read as a Postgres URL: end of"),
    ("REDIS_URL", "redis://:SuperSecretPW123@h:notaport/0", "cannot be read as a Redis URL: Port could"),
    ("REDIS_URL", "redis://:pw@[::1", "cannot be read as a Redis URL: Invalid IPv6 URL"),
])
def test_a_malformed_service_url_is_refused_naming_the_setting_and_never_shown(settings, name, url, said):
    """It said "Unexpected ProgrammingError/ValueError", and WORKBENCH_DEBUG=1's traceback printed the
    password."""
    done = installed("chains", "list", data_dir=settings.data_dir, **{name: url})
    assert done.returncode == 2 and done.stdout == "", done.stderr
    [line] = done.stderr.strip().splitlines()
    assert line.startswith(f"error: invalid setting — {name}: {said}") and "SuperSecretPW123" not in line
    debug = installed("chains", "list", data_dir=settings.data_dir, WORKBENCH_DEBUG="1", **{name: url})
    assert "Traceback" in debug.stderr and f"ConfigError: invalid setting — {name}: {said}" in debug.stderr
    assert "SuperSecretPW123" not in debug.stdout + debug.stderr and ":pw@" not in debug.stderr


def test_cli_messages_name_settings_and_options_not_the_dashboard(cli, settings, monkeypatch):
    down = installed("chains", "list", data_dir=settings.data_dir, REDIS_URL="redis://127.0.0.1:1")
    assert down.returncode == 1 and down.stderr.strip().splitlines() == [
        ("error: Redis is unavailable. Check that it runs (`workbench services`) and that REDIS_URL, if set, "
         "names it; then retry.")]
    code, _, err = cli("--instance", "bad name!", "remember", "x")
    assert_one_line_refusal(code, err, "--instance: instance must be 1–128 characters")
    assert "secrets.toml" not in err

    def bug(*_args, **_kwargs):
        raise KeyError("secret")

    monkeypatch.setattr(uc, "chains", bug)
    code, _, err = cli("--instance", INSTANCE, "chains", "list")
    assert code == 1 and err.strip().splitlines() == [
        "error: Unexpected KeyError. Rerun with WORKBENCH_DEBUG=1 to see the traceback; please report it."]
