"""The staff's queue of reports of harm (`/staff/reports/`): its rows, their order, and the reads of it.

A post's open reports (flags of a harm category, status open) are counted into its `ReportedPost` row by
`refresh_rows` whenever they change: when reports arrive (moderation.receivers, inside the ingest batch's
transaction) and when a decision closes them (moderation.report_outcomes). The row carries what the
queue is ordered by, so that a page is one range of one index whatever the number of open reports:

1. a trusted flagger's report first (DSA Art. 22: their notices are decided with priority);
2. then severity: imminent harm and violence before hate and harassment;
3. then reach velocity (views and shares per hour since posting, as of the latest report);

and the post id last, so that paging is stable. `queue_page` reads a page of it with the totals it shows
(open, and overdue past the 24-hour target), `waiting_counts` the totals alone (the admin index).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Case, Count, IntegerField, Max, Min, When
from django.db.models.expressions import RawSQL

from core.counting import capped_count_sql, capped_counts
from factcheck.models import HARM_CATEGORIES, OPEN_HARM_REPORTS, Flag, FlagCategory, FlagSource, Post
from factcheck.priority import compute_priority
from moderation.deadlines import DECISION_TARGET
from moderation.models import ReportedPost

# Severity of a report's category: the queue's second key (the first is a trusted flagger's report).
SEVERITY = {
    FlagCategory.IMMINENT_HARM: 2, FlagCategory.VIOLENCE: 2,
    FlagCategory.HATE: 1, FlagCategory.HARASSMENT: 1,
}
QUEUE_ORDER = ("-trusted", "-severity", "-velocity", "post_id")
# Open rows are counted up to this and shown as "1,000+" beyond (the fact-checkers' queue does the same).
COUNT_CAP = 1_000


def refresh_rows(*, post_ids: Iterable[int], now: datetime) -> None:
    """Count the open reports of these posts into their queue rows (created for posts reported the first time).

    The caller holds the posts' row locks, or inserted them in its transaction (ingest): a row changes only
    under its post's lock, so the lease on it never interleaves with a decision. A post whose reports are all
    decided (by staff, or by a removal made elsewhere: the admin, an appeal) keeps its row, with nothing open
    and no lease: the next round is anyone's to claim.
    """
    post_ids = sorted(set(post_ids))
    if not post_ids:
        return
    severity = Case(*(When(category=category, then=rank) for category, rank in SEVERITY.items()), default=0,
                    output_field=IntegerField())
    trusted = Case(When(source=FlagSource.TRUSTED_FLAGGER, then=1), default=0, output_field=IntegerField())
    counted = {
        row["post_id"]: row for row in Flag.objects.filter(OPEN_HARM_REPORTS, post_id__in=post_ids)
        .values("post_id").annotate(n=Count("id"), opened=Min("received_at"), severity=Max(severity),
                                    trusted=Max(trusted)).order_by()
    }
    reach = Post.objects.filter(pk__in=post_ids).values_list("pk", "views", "shares", "posted_at")
    rows = []
    for post_id, views, shares, posted_at in reach:
        found = counted.get(post_id)
        velocity = compute_priority(views=views, shares=shares, posted_at=posted_at, flag_weight=0,
                                    first_flagged_at=None, now=now).velocity
        rows.append(ReportedPost(
            post_id=post_id, open_reports=found["n"] if found else 0, opened_at=found["opened"] if found else None,
            trusted=bool(found and found["trusted"]), severity=found["severity"] if found else 0, velocity=velocity,
        ))
    ReportedPost.objects.bulk_create(
        rows, update_conflicts=True, unique_fields=["post"],
        update_fields=["open_reports", "opened_at", "trusted", "severity", "velocity"],
    )
    closed = [row.post_id for row in rows if not row.open_reports]
    if closed:
        ReportedPost.objects.filter(post_id__in=closed, holder__isnull=False).update(
            holder=None, claimed_at=None, lease_expires_at=None)


def open_rows():
    """The queue's rows: posts with open reports of harm (the partial indexes' condition)."""
    return ReportedPost.objects.filter(open_reports__gt=0)


@dataclass(frozen=True)
class WaitingCounts:
    """Posts with open reports, and of them those past the 24-hour target, each counted up to COUNT_CAP + 1."""

    open: int
    overdue: int

    @property
    def open_shown(self) -> str:
        return capped(self.open)

    @property
    def overdue_shown(self) -> str:
        return capped(self.overdue)


def capped(count: int) -> str:
    """ "1,000+" past COUNT_CAP: counting 50,000 overdue posts exactly took 6 ms, a page's whole budget."""
    return f"{COUNT_CAP:,}+" if count > COUNT_CAP else f"{count:,}"


def _counted(now: datetime) -> dict[str, RawSQL]:
    """The two counts, each at most COUNT_CAP + 1 entries of a partial index (report_queue_order,
    report_queue_opened), as scalar subqueries, which PostgreSQL runs once per statement."""
    counts = {}
    for name, qs in (("waiting", open_rows()), ("late", open_rows().filter(opened_at__lt=now - DECISION_TARGET))):
        sql, params = capped_count_sql(qs, cap=COUNT_CAP, name=name)
        counts[name] = RawSQL(sql, params, output_field=IntegerField())
    return counts


def waiting_counts(*, now: datetime) -> WaitingCounts:
    """Both counts in one statement (the admin index; the page reads them with its rows: `queue_page`)."""
    counts = capped_counts(cap=COUNT_CAP, waiting=open_rows(),
                           late=open_rows().filter(opened_at__lt=now - DECISION_TARGET))
    return WaitingCounts(open=counts["waiting"], overdue=counts["late"])


# What a row of the page shows: plain values, not models (building 26 posts, pages and users cost more than the
# query that reads them).
ROW_COLUMNS = ("post_id", "opened_at", "trusted", "velocity", "holder_id", "holder__username", "lease_expires_at",
               "post__external_id", "post__text", "post__page__name", "post__page__external_id")
REPORT_COLUMNS = ("post_id", "category", "source", "reason")


def queue_page(*, start: int, stop: int, now: datetime) -> tuple[list[dict[str, object]], WaitingCounts]:
    """Rows `start` to `stop` of the queue, best first, as dicts of ROW_COLUMNS with their open reports
    (`reports`, dicts of REPORT_COLUMNS, oldest first), and the waiting counts: two statements whatever the
    page's size, the counts riding along with the rows (a statement of their own only past the last page)."""
    rows = list(open_rows().order_by(*QUEUE_ORDER).annotate(**_counted(now)).values(*ROW_COLUMNS, "waiting", "late")
                [start:stop])
    counts = WaitingCounts(open=rows[0]["waiting"], overdue=rows[0]["late"]) if rows else waiting_counts(now=now)
    reports: dict[int, list[dict[str, object]]] = defaultdict(list)
    for report in (Flag.objects.filter(OPEN_HARM_REPORTS, post_id__in=[row["post_id"] for row in rows])
                   .order_by("received_at", "id").values(*REPORT_COLUMNS)):
        reports[report["post_id"]].append(report)
    for row in rows:
        row["reports"] = reports[row["post_id"]]
    return rows, counts


def open_reports_of(post: Post) -> list[Flag]:
    """The post's open reports of harm, oldest first (its desk page)."""
    return list(Flag.objects.filter(OPEN_HARM_REPORTS, post=post).order_by("received_at", "id"))


def open_report_counts(post: Post) -> dict[str, int]:
    """The post's open reports of harm by category, every harm category present (0 where none): the API's
    `reports.by_category` and the admin's post page."""
    counts = dict.fromkeys(HARM_CATEGORIES, 0)
    for category, n in (Flag.objects.filter(OPEN_HARM_REPORTS, post=post).values_list("category")
                        .annotate(n=Count("id")).order_by()):
        counts[category] = n
    return counts
