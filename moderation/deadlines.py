"""The 24-hour target for a person's decision, shared by every desk that has one: appeals and reports of harm.

PRODUCT.md sets it for both ("Target time to decide: 24 hours; overdue ... marked in the queues and admin"), so
when a decision is due, whether it is overdue and how a page says so are written here, once; and, for reports of
harm, from when the target runs (`waiting_since`): the round the staff member must decide began when its first
report arrived, or when a decision on it was corrected by opening it again, not when a reopened report was first
received (a report received last week and reopened today is not overdue the moment it is back on the desk).

What the target is measured against is not what the figures measure: the median time from a report to its decision
(the dashboard, GET /api/v1/stats, the DSA report: reports.notices) runs from its receipt to its first decision, how
long its reporter waited for an answer (docs/dashboard.md says which clock each figure uses).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db.models import F
from django.db.models.functions import Coalesce

from core.formatting import duration

# An appeal, or a post's open reports of harm, should be decided within this of arriving; later, it is overdue.
DECISION_TARGET = timedelta(hours=24)


def overdue_before(now: datetime) -> datetime:
    """Something still waiting that has waited since before this is overdue at `now` (the rule as a query bound)."""
    return now - DECISION_TARGET


def is_past_target(since: datetime, *, now: datetime) -> bool:
    """Whether something waiting since `since` is overdue now (the caller knows it is still waiting)."""
    return since < overdue_before(now)


def due_label(since: datetime, *, now: datetime) -> str:
    """ "overdue by 2 h" or "due in 5 h 3 min": what a desk writes beside a waiting row (durations as the
    app writes them everywhere: core.formatting.duration, which also costs a list of 25 rows next to nothing)."""
    left = (since + DECISION_TARGET - now).total_seconds()
    return f"overdue by {duration(-left)}" if left < 0 else f"due in {duration(left)}"


def waiting_since(*, reopened=None):
    """When an open report of harm (a Flag) began to wait for the decision staff owe it, as a query expression: when
    it was last opened again, else when it arrived. A post's round waits from the earliest of its open reports'
    (moderation.report_queue counts it into the queue row's `opened_at`).

    `reopened`: when the report was last opened again as of the moment it is looked at, an expression that is NULL
    for a report not opened again since its receipt. By default the flag's `reopened_at`, right for a report open
    now; the figures, counting the reports open at the end of a past day, give the time of the report's latest answer
    before then when that answer reopened it (reports.notices.reports_open_at): a later reopening had not happened
    yet then, and `reopened_at` keeps only the latest."""
    return Coalesce(F("reopened_at") if reopened is None else reopened, F("received_at"))
