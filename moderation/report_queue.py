"""The staff's queue of reports of harm (`/staff/reports/`): its rows, their order, and the reads of it.

A post's open reports (flags of a harm category, status open) are counted into its `ReportedPost` row by
`refresh_rows` whenever they change: when reports arrive (moderation.receivers, inside the ingest batch's
transaction) and when a decision closes them (moderation.report_outcomes). The row carries what the
queue is ordered by, so that a page is one range of one index whatever the number of open reports:

1. a trusted flagger's report first (DSA Art. 22: their notices are decided with priority);
2. then severity: imminent harm and violence before hate and harassment;
3. then reach velocity (views and shares per hour since posting, as of the latest report);

and the post id last, so that paging is stable. `queue_page` reads a page of it with the totals it shows
(open, and overdue past the 24-hour target), `waiting_counts` the totals alone (the admin index). The target runs
from the row's `opened_at`: when its round began (moderation.deadlines.waiting_since: its first report's arrival,
or a reopening of a decision on it).

A row, and a post's own page on the desk, count every open report of the post (by category and by source) and
list a bounded few (`open_reports`, as `Listed` says): a post brigaded with 3,000 reports is one row of the
queue like any other, and one decision still answers all of its reports, listed or not.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import Case, Count, F, IntegerField, Max, Min, When, Window
from django.db.models.expressions import RawSQL
from django.db.models.functions import RowNumber

from core.counting import capped_count_sql, capped_counts
from factcheck.models import HARM_CATEGORIES, OPEN_HARM_REPORTS, Flag, FlagCategory, FlagSource, Post
from factcheck.priority import compute_priority
from moderation.deadlines import overdue_before, waiting_since
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
        .values("post_id").annotate(n=Count("id"), opened=Min(waiting_since()), severity=Max(severity),
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


def overdue_rows(now: datetime):
    """The queue's rows past the 24-hour target at `now`, counted from when their rounds began (`opened_at`)."""
    return open_rows().filter(opened_at__lt=overdue_before(now))


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
    for name, qs in (("waiting", open_rows()), ("late", overdue_rows(now))):
        sql, params = capped_count_sql(qs, cap=COUNT_CAP, name=name)
        counts[name] = RawSQL(sql, params, output_field=IntegerField())
    return counts


def waiting_counts(*, now: datetime) -> WaitingCounts:
    """Both counts in one statement (the admin index; the page reads them with its rows: `queue_page`)."""
    counts = capped_counts(cap=COUNT_CAP, waiting=open_rows(), late=overdue_rows(now))
    return WaitingCounts(open=counts["waiting"], overdue=counts["late"])


# What a row of the page shows: plain values, not models (building 26 posts, pages and users cost more than the
# query that reads them).
ROW_COLUMNS = ("post_id", "opened_at", "trusted", "velocity", "holder_id", "holder__username", "lease_expires_at",
               "post__external_id", "post__text", "post__page__name", "post__page__external_id")


def queue_page(*, start: int, stop: int, now: datetime) -> tuple[list[dict[str, object]], WaitingCounts]:
    """Rows `start` to `stop` of the queue, best first, as dicts of ROW_COLUMNS with their open reports
    (`reports`: their OpenReports, listed as LISTED_IN_QUEUE), and the waiting counts. Three
    statements whatever the page's size and its posts' numbers of reports: the rows, with the counts riding along
    (a statement of their own only past the last page), then the reports' totals and the few listed."""
    rows = list(open_rows().order_by(*QUEUE_ORDER).annotate(**_counted(now)).values(*ROW_COLUMNS, "waiting", "late")
                [start:stop])
    counts = WaitingCounts(open=rows[0]["waiting"], overdue=rows[0]["late"]) if rows else waiting_counts(now=now)
    reports = open_reports([row["post_id"] for row in rows], listed=LISTED_IN_QUEUE)
    for row in rows:
        row["reports"] = reports[row["post_id"]]
    return rows, counts


@dataclass(frozen=True)
class Listed:
    """How many of a post's open reports a page lists (every one is counted): a trusted flagger's reports first,
    up to `trusted` (they are few, and they set the queue's order: a bound only a flood of them reaches), then
    the newest `others`."""

    trusted: int
    others: int


# A row of the queue: enough to see what is reported and by whom without pushing the next posts off the screen
# (a post reported 3,000 times made page 2 of the queue 441,655 px tall, 1.9 MB).
LISTED_IN_QUEUE = Listed(trusted=20, others=5)
# The post's own page, where staff decide: a longer list, still one screenful of scrolling, not 3,000 lines.
LISTED_ON_POST = Listed(trusted=100, others=50)
REPORT_COLUMNS = ("id", "post_id", "category", "source", "reason", "received_at")


@dataclass
class OpenReports:
    """A post's open reports of harm as the desk shows them: all of them counted, by category (most severe
    first) and by source (trusted flaggers first), and a bounded few listed (dicts of REPORT_COLUMNS, trusted
    flaggers' first, then newest first)."""

    total: int = 0
    by_category: dict[str, int] = field(default_factory=dict)
    by_source: dict[str, int] = field(default_factory=dict)
    # The newest open report, listed or not: a decision answers every report up to it (harm_reports.decide_report,
    # `up_to_flag`), so what it answers never depends on what the page lists.
    newest_id: int | None = None
    # The most severe category reported (the first reported of equals): the ground a removal offers first.
    severest: str | None = None
    listed: list[dict[str, object]] = field(default_factory=list)

    @property
    def trusted(self) -> int:
        return self.by_source.get(FlagSource.TRUSTED_FLAGGER, 0)

    @property
    def others(self) -> int:
        return self.total - self.trusted

    @property
    def listed_trusted(self) -> int:
        return sum(1 for report in self.listed if report["source"] == FlagSource.TRUSTED_FLAGGER)

    @property
    def listed_others(self) -> int:
        return len(self.listed) - self.listed_trusted

    # Never below 0, should a report arrive between the count and the list.
    @property
    def unlisted(self) -> int:
        return max(self.total - len(self.listed), 0)

    @property
    def unlisted_trusted(self) -> int:
        return max(self.trusted - self.listed_trusted, 0)

    @property
    def unlisted_others(self) -> int:
        return max(self.others - self.listed_others, 0)


def open_reports(post_ids: Collection[int], *, listed: Listed) -> dict[int, OpenReports]:
    """The open reports of harm of these posts, each post's counted and listed as `listed` says (an empty
    OpenReports for a post with none): two statements whatever the number of posts and of their reports."""
    found = _counted_reports(post_ids)
    if not found:
        return found
    for report in _listed(post_ids, listed=listed):
        reports = found[report["post_id"]]
        reports.listed.append(report)
        # A report that arrived between the two statements is listed: the decision answers it too.
        reports.newest_id = max(reports.newest_id or 0, report["id"])
    return found


def _counted_reports(post_ids: Collection[int]) -> defaultdict[int, OpenReports]:
    """The posts' open reports counted by category and source, in one statement (nothing listed yet)."""
    found: defaultdict[int, OpenReports] = defaultdict(OpenReports)
    if not post_ids:
        return found
    earliest: dict[int, dict[str, datetime]] = defaultdict(dict)
    for post_id, category, source, n, first, newest in (
            Flag.objects.filter(OPEN_HARM_REPORTS, post_id__in=post_ids).values_list("post_id", "category", "source")
            .annotate(n=Count("id"), first=Min("received_at"), newest=Max("id")).order_by()):
        reports = found[post_id]
        reports.total += n
        reports.by_category[category] = reports.by_category.get(category, 0) + n
        reports.by_source[source] = reports.by_source.get(source, 0) + n
        reports.newest_id = max(reports.newest_id or 0, newest)
        earliest[post_id][category] = min(earliest[post_id].get(category, first), first)
    for post_id, reports in found.items():
        reports.by_category = dict(sorted(reports.by_category.items(), key=lambda pair: (-SEVERITY[pair[0]], -pair[1])))
        reports.by_source = dict(sorted(reports.by_source.items(), key=lambda pair: (
            pair[0] != FlagSource.TRUSTED_FLAGGER, -pair[1])))
        reports.severest = min(earliest[post_id], key=lambda category: (
            -SEVERITY[category], earliest[post_id][category]))
    return found


def _listed(post_ids: Collection[int], *, listed: Listed) -> list[dict[str, object]]:
    """Each post's newest `listed.trusted` trusted flaggers' reports and newest `listed.others` other reports,
    trusted flaggers' first, in one statement: numbered within each post and kind by a window function
    (ROW_NUMBER, which SQLite has since 3.25; Django puts it in a subquery to keep those within the bound), which
    reads the posts' open reports once. The few kept are put in order here: ordered by the database, the 5,000
    reports of 11 brigaded posts were sorted again before the bound was applied (15 of the statement's 22 ms)."""
    trusted = Case(When(source=FlagSource.TRUSTED_FLAGGER, then=1), default=0, output_field=IntegerField())
    numbered = Window(RowNumber(), partition_by=[F("post_id"), trusted],
                      order_by=[F("received_at").desc(), F("id").desc()])
    bound = Case(When(source=FlagSource.TRUSTED_FLAGGER, then=listed.trusted), default=listed.others,
                 output_field=IntegerField())
    kept = (Flag.objects.filter(OPEN_HARM_REPORTS, post_id__in=post_ids).annotate(number=numbered)
            .filter(number__lte=bound).order_by().values(*REPORT_COLUMNS))
    newest_first = sorted(kept, key=lambda report: (report["received_at"], report["id"]), reverse=True)
    return sorted(newest_first, key=lambda report: report["source"] != FlagSource.TRUSTED_FLAGGER)  # stable


def open_report_counts(post: Post) -> dict[str, int]:
    """The post's open reports of harm by category, every harm category present (0 where none): the API's
    `reports.by_category` and the admin's post page."""
    counted = _counted_reports([post.pk])[post.pk].by_category
    return {category: counted.get(category, 0) for category in HARM_CATEGORIES}
