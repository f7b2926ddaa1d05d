"""Date arguments of the export commands (statements, ClaimReview): YYYY-MM-DD, or a clear error (exit 1)."""

from __future__ import annotations

import re
from datetime import UTC, date, timedelta

from django.core.management.base import CommandError
from django.utils import timezone

DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")  # fromisoformat alone also takes 20260101 and 2026-W01-1
# Nothing is stored from before this day (the API refuses posts from before 2000).
EARLIEST = date(2000, 1, 1)


def parse_day(value: str | None, *, option: str) -> date | None:
    if value is None:
        return None
    if DAY.match(value):
        try:
            return date.fromisoformat(value)
        except ValueError:
            pass
    raise CommandError(f"{option} must be a date YYYY-MM-DD, not {value!r}.")


def parse_past_day(value: str | None, *, option: str) -> date | None:
    """A day of the stored history: from EARLIEST to tomorrow (UTC), so that an export's range is one there can be
    something in (`--until 9999-12-31` was a traceback: the day after it is no date)."""
    day = parse_day(value, option=option)
    latest = timezone.now().astimezone(UTC).date() + timedelta(days=1)
    if day is not None and not EARLIEST <= day <= latest:
        raise CommandError(f"{option} must be a day from {EARLIEST} to {latest}, not {value!r}"
                           f"{' (leave it out to export up to now)' if option == '--until' else ''}.")
    return day
