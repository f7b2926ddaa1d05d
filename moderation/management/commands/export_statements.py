"""`manage.py export_statements --since DATE [--until DATE] --out DIR`: statements of reasons as files.

Each file is a body for the Transparency Database's `POST /api/v1/statements`:
`{"statements": [...]}` of at most 100. moderation.statements.export does the work.
"""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.replicas import reads_from_replica
from moderation.management.commands._dates import parse_past_day
from moderation.statements.export import ExportRefused, export_statements


class Command(BaseCommand):
    help = "Write the statements of reasons created from --since to --until (UTC days, both included) into DIR."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--since", required=True, help="first day, YYYY-MM-DD")
        parser.add_argument("--until", help="last day, YYYY-MM-DD (default: up to now)")
        parser.add_argument("--out", required=True, type=Path, help="directory for statements-0001.json, ...")

    @reads_from_replica
    def handle(self, *args, since: str, until: str | None, out: Path, **options) -> None:
        first = parse_past_day(since, option="--since")
        last = parse_past_day(until, option="--until")
        if last is not None and first is not None and last < first:
            raise CommandError(f"--until ({last}) is before --since ({first}).")
        try:
            exported = export_statements(since=first, until=last, out_dir=Path(out))
        except (ExportRefused, OSError) as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"{len(exported.files)} files, {exported.statements} statements written to {out}")
        for puid, problems in exported.invalid.items():
            self.stderr.write(f"not exported, invalid: {puid}: {'; '.join(problems)}")
        if exported.invalid:
            raise CommandError(f"{len(exported.invalid)} statements break the Transparency Database's rules.")
