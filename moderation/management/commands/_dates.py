"""Date arguments of the export commands (statements, ClaimReview): YYYY-MM-DD, or a clear error (exit 1)."""

from __future__ import annotations

import re
from datetime import date

from django.core.management.base import CommandError

DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")  # fromisoformat alone also takes 20260101 and 2026-W01-1


def parse_day(value: str | None, *, option: str) -> date | None:
    if value is None:
        return None
    if DAY.match(value):
        try:
            return date.fromisoformat(value)
        except ValueError:
            pass
    raise CommandError(f"{option} must be a date YYYY-MM-DD, not {value!r}.")
