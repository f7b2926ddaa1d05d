"""Statements of reasons on their way to the EU Transparency Database: which ones, and the files.

`outgoing_statements` is the one selection (created in a date range, ordered by created_at then
puid, each converted by moderation.statements.transparency.outgoing_statement and checked by
statement_problems); `export_statements` writes them as the database's multi-statement bodies,
`{"statements": [...]}` of at most 100. A statement the rules refuse is reported, never written.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Any

from django.db.models import QuerySet

from moderation.models import StatementOfReasons
from moderation.statements.transparency import MAX_BATCH, outgoing_statement, statement_problems

FILE_PATTERN = "statements-*.json"


def day_start(day: date) -> datetime:
    return datetime.combine(day, time.min, tzinfo=UTC)


def stored_between(*, since: date | None = None, until: date | None = None) -> QuerySet[StatementOfReasons]:
    """Statements created on the UTC days `since` to `until`, both included, in (created_at, puid) order."""
    rows = StatementOfReasons.objects.all()
    if since is not None:
        rows = rows.filter(created_at__gte=day_start(since))
    if until is not None:
        rows = rows.filter(created_at__lt=day_start(until + timedelta(days=1)))
    return rows.order_by("created_at", "puid")


def outgoing_statements(
    rows: QuerySet[StatementOfReasons], *, chunk: int = 2000
) -> Iterator[tuple[str, dict[str, Any], list[str]]]:
    """(puid, the statement as sent, its problems) for each stored row, streamed."""
    for puid, stored in rows.values_list("puid", "transparency").iterator(chunk_size=chunk):
        data = outgoing_statement(stored)
        yield puid, data, statement_problems(data)


@dataclass
class Exported:
    files: list[Path]
    statements: int
    invalid: dict[str, list[str]]


class ExportRefused(Exception):
    """The export would mix its files with another export's."""


def export_statements(*, since: date, until: date | None, out_dir: Path, per_file: int = MAX_BATCH) -> Exported:
    """Write `statements-0001.json`, ... into `out_dir` (made if missing), each at most `per_file` statements."""
    per_file = min(per_file, MAX_BATCH)
    out_dir.mkdir(parents=True, exist_ok=True)
    if any(out_dir.glob(FILE_PATTERN)):
        raise ExportRefused(f"{out_dir} already holds {FILE_PATTERN} files; export into an empty directory.")
    files: list[Path] = []
    invalid: dict[str, list[str]] = {}
    batch: list[dict[str, Any]] = []
    count = 0

    def flush() -> None:
        path = out_dir / f"statements-{len(files) + 1:04d}.json"
        path.write_text(json.dumps({"statements": batch}, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        files.append(path)
        batch.clear()

    for puid, data, problems in outgoing_statements(stored_between(since=since, until=until)):
        if problems:
            invalid[puid] = problems
            continue
        batch.append(data)
        count += 1
        if len(batch) == per_file:
            flush()
    if batch:
        flush()
    return Exported(files=files, statements=count, invalid=invalid)
