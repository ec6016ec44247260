"""Static checks over the source: SQL only with parameters, Redis keys only from validated parts.

- Every statement handed to `execute`, `executemany` or `copy` is a literal, a `psycopg.sql` composition,
  or a variable / call that yields one; values never enter its text. An f-string statement may only
  interpolate module constants (UPPER_CASE) or a few reviewed locals chosen among literals.
- `sql.SQL(...)` is given literals only: anything dynamic goes in through `sql.Identifier`,
  `sql.Literal` or a placeholder.
- Redis key prefixes appear only in the key functions of `core/conversation/keys.py`, and each of them
  validates the ids it joins (`validate_id`, directly or through `_chain`); the fixed keys (the outbox,
  the demo marker) are spelled out there only.
- The dashboard and the pages run no SQL and build no Redis key themselves.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORE = sorted((ROOT / "core").rglob("*.py"))
UI = sorted([*(ROOT / "dashboard").rglob("*.py"), *(ROOT / "pages").rglob("*.py")])
EXECUTORS = {"execute", "executemany", "copy"}
# Locals interpolated into SQL text, each reviewed: (file, name) -> why it is safe.
REVIEWED = {
    ("core/bank/db.py", "table"): "set to one of two literal table names just above",
    ("core/index/memory_index.py", "clause"): "joined from the literals 'instance = %s' and "
                                                "'embedding_model = %s'",
}
# sql.SQL arguments derived from constants only: (file, constant) -> why.
REVIEWED_SQL = {("core/retrieval/hybrid.py", "'m.' + c.strip()"): "column names split from ROW_COLUMNS",
                ("core/index/bulk_load.py", "constraint"): "pg_get_constraintdef of the parent's key",
                ("core/index/bulk_load.py", "body"): "pg_get_indexdef of the parent's index, from USING on",
                **{("core/retrieval/hybrid_sql.py", f"{name}('m.')"): "literal SQL over the event-time columns "
                   "of core/index/records.py, with the alias given here" for name in
                   ("stated_event_sql", "event_first_hour_sql", "event_last_hour_sql")}}
# The literal text before the first id of every key layout (an f-string starting exactly so builds a key).
KEY_PREFIXES = {"thought:", "chain:", "chainmeta:", "chains:", "request:", "feedback:index:",
                "feedback:pending:", "voice:feedback:", "deleted:"}
# Keys without an id: spelled out in the key module only, everyone else imports its constants.
FIXED_KEYS = {"index:outbox", "workbench:demo:loaded"}
KEY_MODULE = "core/conversation/keys.py"


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def functions(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node


def is_str_format(node: ast.AST) -> bool:
    """`"...".format(...)` or `"..." % x`: text built from values."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod | ast.Add):
        return not (isinstance(node.left, ast.Constant) and isinstance(node.right, ast.Constant))
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "format" and isinstance(node.func.value, ast.Constant))


def interpolated_names(node: ast.JoinedStr) -> list[ast.expr]:
    return [v.value for v in node.values if isinstance(v, ast.FormattedValue)]


def is_key(node: ast.AST) -> bool:
    return (isinstance(node, ast.JoinedStr) and len(node.values) > 1
            and isinstance(node.values[0], ast.Constant) and node.values[0].value in KEY_PREFIXES)


def core_calls():
    """(module path, call) for every call in the core package."""
    for path in CORE:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Call):
                yield rel(path), node


def test_sql_statements_carry_no_values():
    problems, checked = [], 0
    for module, call in core_calls():
        if not (isinstance(call.func, ast.Attribute) and call.func.attr in EXECUTORS and call.args):
            continue
        stmt, where = call.args[0], f"{module}:{call.lineno}"
        checked += 1
        if is_str_format(stmt):
            problems.append(f"{where}: SQL text built with % / + / .format")
        elif isinstance(stmt, ast.JoinedStr):
            for value in interpolated_names(stmt):
                name = value.id if isinstance(value, ast.Name) else None
                if name is None or not (name.isupper() or (module, name) in REVIEWED):
                    problems.append(f"{where}: f-string SQL interpolates {ast.unparse(value)}")
    assert checked > 50, "the check found almost no SQL: it no longer sees the calls"
    assert not problems, "\n".join(problems)


def test_sql_compositions_take_literals():
    problems = []
    for module, call in core_calls():
        if not (isinstance(call.func, ast.Attribute) and call.func.attr == "SQL"
                and isinstance(call.func.value, ast.Name) and call.func.value.id == "sql"):
            continue
        (arg,) = call.args
        if not isinstance(arg, ast.Constant) and (module, ast.unparse(arg)) not in REVIEWED_SQL:
            problems.append(f"{module}:{call.lineno}: sql.SQL({ast.unparse(arg)})")
    assert not problems, "\n".join(problems)


def test_redis_keys_come_from_validating_key_functions():
    problems, key_functions = [], 0
    for path in CORE:
        tree = ast.parse(path.read_text(), str(path))
        for fn in functions(tree):
            builds = [n for n in ast.walk(fn) if is_key(n)]
            if not builds:
                continue
            where = f"{rel(path)}:{fn.lineno} {fn.name}()"
            key_functions += 1
            if rel(path) != KEY_MODULE:
                problems.append(f"{where}: builds a Redis key; call the key functions of {KEY_MODULE}")
                continue
            calls = {n.func.id for n in ast.walk(fn)
                     if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
            if not calls & {"validate_id", "_chain"}:
                problems.append(f"{where}: joins ids into a key without validate_id")
            for b in builds:  # every interpolated part is itself a validating call
                for value in interpolated_names(b):
                    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
                            and value.func.id in {"validate_id", "_chain"}):
                        problems.append(f"{where}: key part {ast.unparse(value)} is not validated")
    assert key_functions >= len(KEY_PREFIXES), "the check no longer sees the key functions"
    assert not problems, "\n".join(problems)


def test_fixed_keys_are_spelled_out_in_the_key_module_only():
    problems = [f"{rel(path)}:{node.lineno}: {node.value!r}; import it from {KEY_MODULE}"
                for path in [*CORE, *UI] if rel(path) != KEY_MODULE
                for node in ast.walk(ast.parse(path.read_text(), str(path)))
                if isinstance(node, ast.Constant) and node.value in FIXED_KEYS]
    key_module = (ROOT / KEY_MODULE).read_text()
    assert all(repr(k).replace("'", '"') in key_module for k in FIXED_KEYS), "the key module lost a key"
    assert not problems, "\n".join(problems)


def test_the_ui_runs_no_sql_and_builds_no_key():
    problems = []
    for path in UI:
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in EXECUTORS):
                problems.append(f"{rel(path)}:{node.lineno}: runs SQL; call core instead")
            if is_key(node):
                problems.append(f"{rel(path)}:{node.lineno}: builds a Redis key")
    assert not problems, "\n".join(problems)
