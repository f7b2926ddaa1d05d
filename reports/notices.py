"""Notices in the figures (DSA Art. 15(1)(b) and 24): flags by category and source, their outcomes, and the time
from a report to its decision. The roll-up counts them per day (`count_notices`), the dashboard, its CSV and
GET /api/v1/stats read them back (reports.figures, reports.charts, reports.api), and the transparency report
counts them straight from the flags (`notice_lines`, exact for any range).

What is counted:
- notices received each day (by arrival), by category and source: every flag is a notice, misinformation
  included (a user's report under Art. 16 whatever it reports);
- notices decided each day (when answered), by category and outcome (`removed`, `no_violation`,
  `sent_to_fact_checkers`, `rated`);
- reports of harm open at the end of the day, and of them those open past the 24-hour target;
- the time from each report of harm to its decision, kept per day as a histogram of waits (to the minute under
  an hour, the quarter hour under a day, the hour beyond, at most 30 days), so that a range's median is read
  from the days' histograms, not a median of medians, in a bounded number of rows per day.
Figures are the whole program's: reports of harm are no organisation's.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable
from datetime import datetime

from django.db import connections
from django.db.models import Count, Q

from factcheck.models import HARM_CATEGORIES, OPEN_HARM_REPORTS, Flag, FlagCategory, FlagSource, ReportOutcome
from moderation.deadlines import DECISION_TARGET
from reports.models import Metric

CATEGORIES = list(FlagCategory.values)
SOURCES = list(FlagSource.values)
OUTCOMES = list(ReportOutcome.values)
LONGEST_WAIT_MINUTES = 30 * 24 * 60


def wait_bucket(seconds: float) -> int:
    """The histogram's bucket of a wait, in minutes (its lower bound)."""
    minutes = int(max(seconds, 0) // 60)
    if minutes < 60:
        return minutes
    if minutes < 24 * 60:
        return minutes - minutes % 15
    return min(minutes - minutes % 60, LONGEST_WAIT_MINUTES)


def histogram_median(histogram: Counter[int]) -> float | None:
    """The median wait in seconds of a histogram of waits in minutes (the middle two averaged), or None."""
    total = sum(histogram.values())
    if not total:
        return None
    middle = {(total - 1) // 2, total // 2}
    seen, found = 0, []
    for minutes in sorted(histogram):
        count = histogram[minutes]
        found += [minutes for position in middle if seen <= position < seen + count]
        seen += count
    return 60 * sum(found) / len(found)


def within_target(histogram: Counter[int]) -> int:
    """How many of the waits were decided within the 24-hour target."""
    limit = DECISION_TARGET.total_seconds() / 60
    return sum(count for minutes, count in histogram.items() if minutes < limit)


def count_notices(figures, start: datetime, through: datetime) -> None:
    """The day's notice figures into `figures` (reports.rollup's per-day counter), for the whole program."""
    received = (Flag.objects.filter(received_at__gte=start, received_at__lt=through)
                .values_list("category", "source").annotate(n=Count("id")).order_by())
    for category, source, n in received:
        figures.add(None, Metric.NOTICES_RECEIVED, f"{category}:{source}", n)
    decided = Flag.objects.filter(decided_at__gte=start, decided_at__lt=through)
    for category, outcome, n in decided.values_list("category", "outcome").annotate(n=Count("id")).order_by():
        figures.add(None, Metric.NOTICES_DECIDED, f"{category}:{outcome}", n)
    for received_at, decided_at in decided.filter(category__in=HARM_CATEGORIES).values_list("received_at",
                                                                                             "decided_at"):
        figures.add(None, Metric.REPORT_WAIT_MINUTES, str(wait_bucket((decided_at - received_at).total_seconds())))
    late = Q(received_at__lt=through - DECISION_TARGET)
    # Open at the end of the day: still open now, or decided after it (two index ranges, summed).
    still_open = Flag.objects.filter(OPEN_HARM_REPORTS, received_at__lt=through).aggregate(
        n=Count("id"), late=Count("id", filter=late))
    decided_later = Flag.objects.filter(category__in=HARM_CATEGORIES, received_at__lt=through,
                                        decided_at__gte=through).aggregate(n=Count("id"), late=Count("id", filter=late))
    figures.set(None, Metric.REPORTS_OPEN, still_open["n"] + decided_later["n"])
    figures.set(None, Metric.REPORTS_OVERDUE, still_open["late"] + decided_later["late"])


def split(counts: dict[str, int], *, position: int) -> dict[str, int]:
    """Counts keyed "a:b" summed by one part: `position` 0 (the category) or 1 (the source, or the outcome)."""
    totals: Counter[str] = Counter()
    for key, n in counts.items():
        totals[key.split(":")[position]] += n
    return dict(totals)


def notice_lines(since: datetime, until: datetime) -> Iterable[tuple[str, str, str, int, int | None]]:
    """The transparency report's notice lines, (section, item, label, count, median seconds to decide), counted
    from the flags themselves: received by category and by category and source; decided by category and
    outcome; and the median time from receipt to decision per category."""
    received = Counter({(category, source): n for category, source, n in (
        Flag.objects.filter(received_at__gte=since, received_at__lt=until)
        .values_list("category", "source").annotate(n=Count("id")).order_by())})
    categories = dict(FlagCategory.choices)
    for category in CATEGORIES:
        yield ("notices_by_category", category, categories[category],
               sum(n for (c, _), n in received.items() if c == category), None)
    sources = dict(FlagSource.choices)
    for category in CATEGORIES:
        for source in SOURCES:
            yield ("notices_by_category_and_source", f"{category}:{source}",
                   f"{categories[category]}, from {sources[source].lower()}", received[(category, source)], None)
    decided = Flag.objects.filter(decided_at__gte=since, decided_at__lt=until)
    outcomes = Counter({(category, outcome): n for category, outcome, n in (
        decided.values_list("category", "outcome").annotate(n=Count("id")).order_by())})
    labels = dict(ReportOutcome.choices)
    for category in CATEGORIES:
        for outcome in OUTCOMES:
            yield ("notices_by_outcome", f"{category}:{outcome}", f"{categories[category]}: {labels[outcome].lower()}",
                   outcomes[(category, outcome)], None)
    medians = _median_waits(since, until)
    for category in CATEGORIES:
        count, median = medians.get(category, (0, None))
        yield ("notices_decided", category, f"{categories[category]}: decided, with the median time from receipt",
               count, median)


def _median_waits(since: datetime, until: datetime) -> dict[str, tuple[int, int | None]]:
    """Per category, the flags decided in the range and their median wait from receipt (seconds): computed by
    PostgreSQL (percentile_cont, one row per category, however many flags); in Python on SQLite. A flag on a post
    rated before it arrived (an imported rating, a back-dated one) was answered at once: no wait, never a
    negative one, as the histogram's buckets count it (`wait_bucket`)."""
    decided = Flag.objects.filter(decided_at__gte=since, decided_at__lt=until)
    # The database the ORM reads these flags from (a replica inside core.replicas' scope), for the statement too.
    connection = connections[decided.db]
    if connection.vendor == "postgresql":
        sql, params = decided.values("category", "received_at", "decided_at").query.sql_with_params()
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT category, COUNT(*), percentile_cont(0.5) WITHIN GROUP "
                f"(ORDER BY GREATEST(EXTRACT(EPOCH FROM decided_at - received_at), 0)) FROM ({sql}) AS decided "
                "GROUP BY category",
                params,
            )
            return {category: (n, round(median)) for category, n, median in cursor.fetchall()}
    waits: dict[str, list[float]] = {}
    for category, received_at, decided_at in decided.values_list("category", "received_at", "decided_at"):
        waits.setdefault(category, []).append(max((decided_at - received_at).total_seconds(), 0))
    return {category: (len(times), round(statistics.median(times))) for category, times in waits.items()}
