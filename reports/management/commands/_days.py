"""The --from/--to days of the figures' commands: read, and bounded as the dashboard bounds them."""

from __future__ import annotations

from datetime import UTC, date

from django.core.management.base import CommandError
from django.utils import timezone

from moderation.management.commands._dates import parse_day
from reports.figures import BadRange, check_days


def day_range(start: str, end: str | None) -> tuple[date, date]:
    """(first, last) from YYYY-MM-DD options (`--to` defaults to `--from`), or a CommandError saying why."""
    first = parse_day(start, option="--from")
    last = parse_day(end, option="--to") if end else first
    if last < first:
        raise CommandError(f"--to ({last}) is before --from ({first}).")
    try:
        check_days(first, last, today=timezone.now().astimezone(UTC).date(), names=("--from", "--to"))
    except BadRange as refusal:
        raise CommandError(refusal.message) from None
    return first, last
