"""The workshop's modules import one way (models ← selectors ← fragments ← broadcast ←
services ← views and consumers): no cycle, and no import tucked into a function to hide one."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from tests import stack
from tests.stack import BASE_DIR

PACKAGE = "teachlab.workshop"
APP_DIR = BASE_DIR / "teachlab" / "workshop"
# Django wants an app's signal receivers imported in AppConfig.ready(), not at module level.
LAZY_ALLOWED = {"apps"}


def _modules() -> dict[str, Path]:
    return {p.stem: p for p in APP_DIR.glob("*.py") if p.stem != "__init__"}


def _workshop_imports(node: ast.AST) -> set[str]:
    """Names of the workshop modules one import statement brings in."""
    found: set[str] = set()
    if isinstance(node, ast.ImportFrom) and node.module:
        if node.module == PACKAGE:
            found.update(alias.name for alias in node.names)
        elif node.module.startswith(PACKAGE + "."):
            found.add(node.module.split(".")[2])
    elif isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name.startswith(PACKAGE + "."):
                found.add(alias.name.split(".")[2])
    return found


def _graph() -> tuple[dict[str, set[str]], list[str]]:
    """Every module's workshop imports (wherever they are), and the ones inside functions."""
    modules = _modules()
    graph: dict[str, set[str]] = {}
    lazy: list[str] = []
    for name, path in modules.items():
        tree = ast.parse(path.read_text())
        edges: set[str] = set()
        top_level = set(map(id, tree.body))
        for node in ast.walk(tree):
            targets = _workshop_imports(node) & set(modules)
            edges |= targets
            if targets and id(node) not in top_level and name not in LAZY_ALLOWED:
                lazy.append(f"{name} imports {sorted(targets)} inside a function")
        graph[name] = edges - {name}
    return graph, lazy


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return []

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return []


def test_the_workshop_modules_import_each_other_without_a_cycle():
    graph, _ = _graph()
    assert graph["selectors"] <= {"models", "errors", "names"}
    assert not graph["fragments"] & {"broadcast", "rooms", "votes", "predictions"}
    assert _cycle(graph) == []


def test_no_workshop_import_is_hidden_inside_a_function():
    _, lazy = _graph()
    assert lazy == []


def test_each_module_imports_on_its_own_in_a_fresh_interpreter():
    """The issue's five modules (and the reads and the hub) each imported first, in one fresh
    interpreter: every other workshop module is dropped from sys.modules before each."""
    names = ["broadcast", "fragments", "predictions", "rooms", "votes", "selectors", "hub"]
    script = (
        "import importlib, sys, django; django.setup()\n"
        "keep = {'teachlab.workshop', 'teachlab.workshop.models', 'teachlab.workshop.errors',"
        " 'teachlab.workshop.apps'}\n"
        f"for name in {names!r}:\n"
        "    for mod in [m for m in sys.modules if m.startswith('teachlab.workshop.') and m not in keep]:\n"
        "        del sys.modules[mod]\n"
        "    importlib.import_module('teachlab.workshop.' + name)\n"
        "print('ok', len(sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=BASE_DIR,
        env=stack.test_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("ok")
