"""`manage.py transparency_report --from DATE --to DATE [--out FILE]`: the DSA counts as CSV (reports.dsa)."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.files import whole_file
from core.replicas import reads_from_replica
from reports.dsa import report_csv
from reports.management.commands._days import day_range


class Command(BaseCommand):
    help = ("Write the DSA transparency report (Art. 15 and 24) for --from to --to (UTC days, both included) "
            "as CSV, to --out or standard output.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--from", dest="start", required=True, help="first day, YYYY-MM-DD")
        parser.add_argument("--to", dest="end", required=True, help="last day, YYYY-MM-DD")
        parser.add_argument("--out", type=Path, help="the CSV file to write (default: standard output)")

    @reads_from_replica
    def handle(self, *args, start: str, end: str, out: Path | None, **options) -> None:
        first, last = day_range(start, end)
        text = report_csv(start=first, end=last)
        if out is None:
            self.stdout.write(text, ending="")
            return
        try:
            with whole_file(out) as file:  # a failed run never leaves half a report
                file.write(text)
        except OSError as exc:
            raise CommandError(f"Cannot write {out}: {exc.strerror or exc}") from None
        self.stdout.write(f"Transparency report for {first} to {last} written to {out}")
