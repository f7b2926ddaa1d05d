"""`manage.py import_posts PATH --format csv|jsonl|claimreview|liar`: a thin caller of factcheck.importing."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from factcheck.importing.records import FileProblem
from factcheck.importing.runner import DEFAULT_BATCH, FORMATS, import_file


class Command(BaseCommand):
    help = (
        "Import posts from a file (docs/importing.md): csv or jsonl flags, ClaimReview or LIAR "
        "rated posts. Idempotent; prints imported, already present and rejected, with each rejection's "
        "line and reason; exits 1 with nothing written when the file cannot be read."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("path", type=Path)
        parser.add_argument("--format", required=True, choices=FORMATS)
        parser.add_argument("--batch-size", type=int, default=DEFAULT_BATCH,
                            help=f"records per transaction (default {DEFAULT_BATCH:,})")
        parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")

    def handle(self, *args, path: Path, format: str, batch_size: int, no_progress: bool, **options) -> None:
        try:
            summary = import_file(path=path, format=format, batch_size=batch_size, progress=not no_progress)
        except FileProblem as exc:
            raise CommandError(f"{path}: {exc}" if not str(exc).startswith(str(path)) else str(exc)) from None
        for line in summary.lines():
            self.stdout.write(line)
