"""The layering is a contract the suite checks, not a hope.

The layers and the forbidden imports are declared in pyproject.toml ([tool.importlinter]) and
checked with import-linter; module-level import cycles (including imports inside functions)
are found with grimp, the graph library import-linter is built on.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("config", "moderation", "webhooks", "factcheck", "accounts", "audit", "core")


def test_the_import_contracts_in_pyproject_are_kept():
    lint = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run([str(lint), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 kept, 0 broken" in result.stdout


@pytest.fixture(scope="module")
def graph():
    sys.path.insert(0, str(ROOT))
    return grimp.build_graph(*PACKAGES, cache_dir=None)


def _cycles(graph) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_no_module_import_cycles_not_even_inside_functions(graph):
    assert _cycles(graph) == []


def test_factcheck_never_imports_moderation(graph):
    assert graph.find_shortest_chain(importer="factcheck", imported="moderation", as_packages=True) is None


def test_nothing_imports_the_composition_root(graph):
    config_modules = graph.find_descendants("config") | {"config"}
    importers = {
        importer
        for module in config_modules
        for importer in graph.find_modules_that_directly_import(module)
        if importer not in config_modules
    }
    assert importers == set()


def test_the_cycle_detector_finds_a_cycle():
    # The detector itself must not pass vacuously.
    class Two:
        modules = {"a", "b", "c"}

        @staticmethod
        def find_modules_directly_imported_by(module):
            return {"a": {"b"}, "b": {"a"}, "c": set()}[module]

    assert _cycles(Two()) == [["a", "b"]]


MAX_MODULE_LINES = 450  # issue 26: a module longer than this is split where its parts divide
LEFT_OUT = {".venv", "var", "node_modules", ".git", "migrations"}


def test_no_python_module_outside_migrations_is_longer_than_450_lines():
    too_long = {
        str(path.relative_to(ROOT)): lines
        for path in ROOT.rglob("*.py")
        if not LEFT_OUT & set(path.relative_to(ROOT).parts)
        and (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert too_long == {}
