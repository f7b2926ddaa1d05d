"""Which timestamps Factdesk accepts from outside: real ones.

A post or flag is dated between 2000-01-01 and one day ahead of now (clocks drift; nothing is
posted in 2100), with a real UTC offset (-12:00 to +14:00). Anything else is refused with a
clear message before it is stored: a year-1 date once made a post unreadable for good, because
its UTC time falls before year 1 and no Python datetime can hold it. The database enforces the
same range with check constraints (factcheck.models), so no path can store one.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

EARLIEST = datetime(2000, 1, 1, tzinfo=UTC)
MAX_AHEAD = timedelta(days=1)
MIN_OFFSET = timedelta(hours=-12)
MAX_OFFSET = timedelta(hours=14)


def timestamp_problem(value: datetime, *, now: datetime) -> str | None:
    """Why this timestamp is refused, or None when it is acceptable."""
    offset = value.utcoffset()
    if offset is None:
        return "must carry a timezone offset, e.g. 2026-05-01T12:00:00Z or +02:00"
    if not MIN_OFFSET <= offset <= MAX_OFFSET:
        return "has no real timezone offset: offsets run from -12:00 to +14:00"
    try:
        utc = value.astimezone(UTC)
    except OverflowError:  # the first or the last day Python has, moved out of its range by the offset
        return "is before 2000-01-01" if value.year < EARLIEST.year else "is more than a day in the future"
    if utc < EARLIEST:
        return "is before 2000-01-01"
    if utc > now + MAX_AHEAD:
        return "is more than a day in the future"
    return None


def first_flagged(earliest: datetime | None, *, now: datetime) -> datetime | None:
    """A post's `first_flagged_at` from its earliest flag's timestamp: no later than now. A flag may be dated up to
    MAX_AHEAD ahead (a platform's clock), but nobody waits from a moment to come; a post dated so had been missing
    from the queue's figures, and its first rating from the time to rating (reports.rollup)."""
    return None if earliest is None else min(earliest, now)
