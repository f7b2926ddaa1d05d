"""The 24-hour target for a person's decision, shared by every desk that has one: appeals and reports of harm.

PRODUCT.md sets it for both ("Target time to decide: 24 hours; overdue ... marked in the queues and admin"), so
when a decision is due, whether it is overdue and how a page says so are written here, once.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from core.formatting import duration

# An appeal, or a post's open reports of harm, should be decided within this of arriving; later, it is overdue.
DECISION_TARGET = timedelta(hours=24)


def is_past_target(since: datetime, *, now: datetime) -> bool:
    """Whether something waiting since `since` is overdue now (the caller knows it is still waiting)."""
    return now - since > DECISION_TARGET


def due_label(since: datetime, *, now: datetime) -> str:
    """ "overdue by 2 h" or "due in 5 h 3 min": what a desk writes beside a waiting row (durations as the
    app writes them everywhere: core.formatting.duration, which also costs a list of 25 rows next to nothing)."""
    left = (since + DECISION_TARGET - now).total_seconds()
    return f"overdue by {duration(-left)}" if left < 0 else f"due in {duration(left)}"
