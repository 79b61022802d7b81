"""The shape of ``services/``: no import circle, the game port and adapter contract name no game, modules kept small.

The import graph is read from the source (every ``import``, at any depth, ``TYPE_CHECKING`` blocks aside: they
run no code), so a circle hidden in a function's body is caught too.
"""

from __future__ import annotations

import ast
import importlib
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SERVICES = ROOT / "services"
MOST_LINES = 450
# The files still over MOST_LINES, each with the size it may not grow past: the core's split shrinks this list.
STILL_LARGE: dict[str, int] = {}


def _modules() -> dict[str, Path]:
    found = {}
    for path in SERVICES.rglob("*.py"):
        if "migrations" in path.parts:
            continue
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        found[name] = path
    return found


def _statements(body: list[ast.stmt]) -> Iterator[ast.AST]:
    for node in body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            yield from _statements(node.orelse)
            continue
        yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.stmt):
                yield from _statements([child])
            else:
                yield from ast.walk(child)


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The modules of ``services`` that ``name`` imports (a package's submodule, not the package, when named so)."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found: set[str] = set()
    for node in _statements(ast.parse(path.read_text()).body):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name in modules}
        elif isinstance(node, ast.ImportFrom):
            above = package[: len(package) - node.level + 1]
            base = (".".join([*above, node.module or ""]) if node.level else node.module or "").rstrip(".")
            subs = {f"{base}.{alias.name}" for alias in node.names} & modules.keys()
            found |= subs | ({base} if len(subs) < len(node.names) and base in modules else set())
    return found - {name}


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected parts of more than one node (Tarjan's), each a circle or several."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for to in graph.get(node, ()):
            if to not in index:
                visit(to)
                low[node] = min(low[node], low[to])
            elif to in stack:
                low[node] = min(low[node], index[to])
        if low[node] == index[node]:
            part = []
            while True:
                top = stack.pop()
                part.append(top)
                if top == node:
                    break
            if len(part) > 1:
                circles.append(sorted(part))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return circles


def _packages(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    def package(name: str) -> str:
        return ".".join(name.split(".")[:2])

    found: dict[str, set[str]] = {}
    for name, targets in graph.items():
        found.setdefault(package(name), set()).update(package(t) for t in targets if package(t) != package(name))
    return found


def test_no_module_imports_itself_round_a_circle() -> None:
    assert _circles(_graph()) == []


def test_no_package_imports_itself_round_a_circle() -> None:
    assert _circles(_packages(_graph())) == []


def test_the_circle_finder_finds_a_circle() -> None:
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_game_port_and_the_adapter_contract_name_no_game() -> None:
    graph = _graph()
    games = {"pokdeng", "tienlen", "maubinh"}
    for contract in (
        "services.games.base",
        "services.games.rooms",
        "services.rounds.adapters",
        "services.rounds.service",
    ):
        named = {target for target in graph[contract] if games & set(target.split("."))}
        assert named == set(), f"{contract} imports {named}"


def test_only_the_composition_root_builds_the_catalog() -> None:
    builds = re.compile(r"Catalog\.of\(|\.adding\(")
    builders = {str(path.relative_to(ROOT)) for path in _modules().values() if builds.search(path.read_text())}
    assert builders - {"services/rounds/adapters.py"} == {"services/catalog.py"}  # the catalog's own module aside


@pytest.mark.parametrize("path", sorted(_modules().values()), ids=lambda p: str(p.relative_to(ROOT)))
def test_a_module_stays_small(path: Path) -> None:
    relative = str(path.relative_to(ROOT))
    lines = len(path.read_text().splitlines())
    ceiling = STILL_LARGE.get(relative, MOST_LINES)
    assert lines <= ceiling, f"{relative} has {lines} lines (at most {ceiling}): split it by topic"


def test_the_list_of_large_modules_only_shrinks() -> None:
    """A file split below the line drops off ``STILL_LARGE`` (so its old ceiling cannot be grown back into)."""
    for relative in STILL_LARGE:
        path = ROOT / relative
        assert path.exists() and len(path.read_text().splitlines()) > MOST_LINES, (
            f"{relative}: remove it from STILL_LARGE"
        )


def _exceptions() -> dict[str, list[type[Exception]]]:
    """Every exception class defined under ``services``, by the package (``services.<package>``) that defines it."""
    found: dict[str, list[type[Exception]]] = {}
    for name, path in _modules().items():
        if not re.search(r"^class \w+\(.*(Error|Exception)\b", path.read_text(), re.MULTILINE):
            continue
        module = importlib.import_module(name)
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Exception) and value.__module__ == name:
                found.setdefault(".".join(name.split(".")[:2]), []).append(value)
    return found


def test_each_package_has_one_root_of_its_exceptions_each_with_a_code() -> None:
    """A caller catches one class per package; every refusal carries a stable code."""
    for package, classes in _exceptions().items():
        roots = {kind for kind in classes if not any(base in classes for base in kind.__mro__[1:])}
        named = sorted(root.__name__ for root in roots)
        assert len(roots) == 1, f"{package} has {len(roots)} roots of its exceptions: {named}"
        [root] = roots
        assert isinstance(getattr(root, "code", None), str), f"{package}: {root.__name__} has no code"


def test_only_the_api_knows_http_statuses() -> None:
    """Domain exceptions say what was refused; ``services/api/errors.py`` alone maps them to HTTP."""
    for package, classes in _exceptions().items():
        if package == "services.api":
            continue
        for kind in classes:
            assert "status" not in vars(kind), f"{kind.__module__}.{kind.__name__} carries an HTTP status"
