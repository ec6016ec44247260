"""The shape of the code (docs/ARCHITECTURE.md): no import circles in `core`, no upward imports, and
front ends that reach the core only through the use-case layer.

Imports are read from the source with `ast`, function-local ones included (they hide circles just as
well); those under `if TYPE_CHECKING:` are left out, since they never run.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FRONT_ENDS = ("dashboard", "pages", "core/cli", "core/mcp", "core/api")
# The front ends inside `core`: each may import its own modules and start another (`workbench mcp`
# serves the MCP server; the API mounts it at /mcp).
CORE_FRONT_ENDS = ("core.cli", "core.mcp", "core.api")
# What a front end may import from the core: the use cases, and what it needs to build the runtime and
# to show an error.
FRONT_END_MAY_IMPORT = ("core.usecases", "core.errors", "core.config", "core.runtime")
# Only these may import the runtime (the Workbench) at run time: everything below it takes one as an
# argument, typed under TYPE_CHECKING.
RUNTIME_USERS = ("core.usecases", "core.cli", "core.api", "core.demo", "core.runtime")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imports(path: Path) -> Iterator[str]:
    """Every module `path` imports when it runs (`from a import b` yields a and, if it exists, a.b)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and _is_type_checking(node):
            skipped.update(id(n) for child in node.body for n in ast.walk(child))
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module
            for alias in node.names:
                yield f"{node.module}.{alias.name}"


def graph(package: str) -> dict[str, set[str]]:
    files = {module_name(p): p for p in (ROOT / package).rglob("*.py")}
    return {name: {m for m in imports(path) if m in files and m != name} for name, path in files.items()}


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_the_walk_finds_a_circle() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_core_has_no_import_circles() -> None:
    assert circles(graph("core")) == []


def test_core_never_imports_a_front_end() -> None:
    wrong = {(name, m) for name, path in _files("core")
             for m in imports(path) if m.split(".")[0] in ("dashboard", "pages", "streamlit")}
    assert not wrong


def test_only_the_use_cases_and_front_ends_import_the_runtime() -> None:
    wrong = {name for name, path in _files("core")
             if "core.runtime" in set(imports(path)) and not name.startswith(RUNTIME_USERS)}
    assert not wrong, f"import core.runtime under `if TYPE_CHECKING:` in {sorted(wrong)}"


def test_front_ends_reach_the_core_only_through_the_use_cases() -> None:
    wrong = {(name, m) for front in FRONT_ENDS for name, path in _files(front)
             for m in _top_imports(path) if m.startswith("core.") and not m.startswith(FRONT_END_MAY_IMPORT)
             and not m.startswith(CORE_FRONT_ENDS)}
    assert not wrong, sorted(wrong)


def _files(package: str) -> Iterator[tuple[str, Path]]:
    for path in sorted((ROOT / package).rglob("*.py")):
        yield module_name(path), path


def _top_imports(path: Path) -> Iterator[str]:
    """The modules named in import statements (not `module.attribute` guesses)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module


def test_every_exported_use_case_name_exists() -> None:
    """`core.usecases.__all__` is edited by hand beside its imports: a name listed but not imported
    fails only when a front end reaches for it."""
    from core import usecases as uc

    assert [name for name in uc.__all__ if not hasattr(uc, name)] == []
