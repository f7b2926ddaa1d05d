"""`manage.py rollup_figures [--from DATE --to DATE | --days N]`: compute the dashboard's roll-up for a range of days.

Without dates it does what the periodic job does (today, yesterday, a few missing recent days).
With them it rebuilds every day of the range from the history, replacing what was there: use it
after importing old flags, or to fill in the days before the job first ran. `--days N` rebuilds
the last N days to today (`make run` does it after seeding the demo).
"""

from __future__ import annotations

import time
from datetime import UTC, timedelta

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from reports.figures import MAX_DAYS
from reports.management.commands._days import day_range
from reports.rollup import roll_up_day, roll_up_recent


class Command(BaseCommand):
    help = "Compute the dashboard's daily figures from --from to --to (UTC days, both included)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--from", dest="start", help="first day, YYYY-MM-DD")
        parser.add_argument("--to", dest="end", help="last day, YYYY-MM-DD (default: the --from day)")
        parser.add_argument("--days", type=int, help="rebuild the last N days, today included")

    def handle(self, *args, start: str | None, end: str | None, days: int | None, **options) -> None:
        if days is not None:
            if start or end:
                raise CommandError("Give either --days or --from/--to.")
            if not 1 <= days <= 10 * MAX_DAYS:
                raise CommandError(f"--days must be from 1 to {10 * MAX_DAYS}.")
            today = timezone.now().astimezone(UTC).date()
            start, end = (today - timedelta(days=days - 1)).isoformat(), today.isoformat()
        if start is None:
            if end is not None:
                raise CommandError("--to needs --from.")
            self.stdout.write(f"{roll_up_recent()} figures written for the recent days")
            return
        first, last = day_range(start, end)
        if (last - first).days + 1 > 10 * MAX_DAYS:
            raise CommandError(f"At most {10 * MAX_DAYS} days at a time.")
        today = timezone.now().astimezone(UTC).date()
        day, written, rebuilt = first, 0, 0
        while day <= min(last, today):  # a day to come has nothing to count yet
            started = time.monotonic()
            rows = roll_up_day(day=day)
            written, rebuilt = written + rows, rebuilt + 1
            if options["verbosity"] > 1:
                self.stdout.write(f"{day}: {rows} figures in {(time.monotonic() - started) * 1000:.0f} ms")
            day += timedelta(days=1)
        ahead = (last - max(first, today + timedelta(days=1))).days + 1
        later = f"; {ahead} day{'s' if ahead != 1 else ''} after today left alone" if ahead > 0 else ""
        self.stdout.write(f"{rebuilt} day{'s' if rebuilt != 1 else ''} rebuilt, {written} figures written{later}")
