"""The lock policy, checked from the source: every `select_for_update` says `no_key`, and is in docs/concurrency.md.

A row lock is a promise about concurrency that no single test exercises, so it is held to a policy by
machine (Zulip lints its lock policy the same way): each `select_for_update(...)` in the application
states `no_key=` (True where others only insert referencing rows or nothing changes the row's key;
False, with a comment saying why, where a full lock is needed), and the function that takes it is named
in the lock table of docs/concurrency.md, with why it locks and where it stands in the global order.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCUMENT = ROOT / "docs" / "concurrency.md"
SKIPPED_DIRECTORIES = {"tests", "migrations", ".venv", "node_modules", "static", "templates"}


@dataclass(frozen=True)
class Lock:
    where: str  # module.function that takes it
    line: int
    no_key: ast.expr | None
    commented: bool

    def __str__(self) -> str:
        return f"{self.where} (line {self.line})"


def application_modules() -> list[Path]:
    return sorted(
        path for path in ROOT.rglob("*.py")
        if not SKIPPED_DIRECTORIES.intersection(path.relative_to(ROOT).parts[:-1])
        and not any(part.startswith(".") for part in path.relative_to(ROOT).parts)
    )


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def locks_in(path: Path) -> list[Lock]:
    source = path.read_text()
    lines = source.splitlines()
    found: list[Lock] = []

    def visit(node: ast.AST, function: str | None) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                # A nested helper's lock is its outer function's (the one a reader looks up).
                visit(child, function or child.name)
                continue
            if isinstance(child, ast.ClassDef):
                visit(child, function)
                continue
            if (isinstance(child, ast.Call) and isinstance(child.func, ast.Attribute)
                    and child.func.attr == "select_for_update"):
                no_key = next((k.value for k in child.keywords if k.arg == "no_key"), None)
                span = lines[max(child.lineno - 4, 0): child.end_lineno]
                found.append(Lock(
                    where=f"{_module_name(path)}.{function or '<module>'}", line=child.lineno, no_key=no_key,
                    commented=any("#" in line for line in span),
                ))
            visit(child, function)

    visit(ast.parse(source, filename=str(path)), None)
    return found


def all_locks() -> list[Lock]:
    return [lock for path in application_modules() for lock in locks_in(path)]


def documented_functions() -> set[str]:
    """The `module.function` names in the first column of the lock table (bare names there, in brackets,
    say who calls it)."""
    names: set[str] = set()
    for line in DOCUMENT.read_text().splitlines():
        if line.startswith("| `"):
            names.update(re.findall(r"`([a-z_]+(?:\.\w+)+)`", line.split("|")[1]))
    return names


def test_the_scan_finds_the_locks_of_every_app_that_takes_them():
    # So that a scan finding nothing (a moved tree, a changed parse) cannot pass the checks below.
    assert {lock.where.split(".")[0] for lock in all_locks()} >= {"factcheck", "moderation", "webhooks", "accounts",
                                                                 "reports"}


def test_every_select_for_update_states_no_key():
    missing = [str(lock) for lock in all_locks() if lock.no_key is None]
    assert not missing, f"select_for_update without no_key= (say True or False, see docs/concurrency.md): {missing}"


def test_a_full_lock_says_why_in_a_comment():
    bare = [str(lock) for lock in all_locks()
            if isinstance(lock.no_key, ast.Constant) and lock.no_key.value is False and not lock.commented]
    assert not bare, f"select_for_update(no_key=False) without a comment saying why a full lock is needed: {bare}"


def test_every_lock_is_listed_in_docs_concurrency():
    documented = documented_functions()
    missing = sorted({lock.where for lock in all_locks()} - documented)
    assert not missing, f"add these to docs/concurrency.md's lock table (why, and their place in the order): {missing}"


def test_docs_concurrency_lists_no_lock_that_is_gone():
    stale = sorted(documented_functions() - {lock.where for lock in all_locks()})
    assert not stale, f"docs/concurrency.md lists locks these functions no longer take: {stale}"
