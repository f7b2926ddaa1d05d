"""Notices in the figures (DSA Art. 15(1)(b) and 24): flags by category and source, their outcomes, and the time
from a report to its decision. The roll-up counts them per day (`count_notices`), the dashboard, its CSV and
GET /api/v1/stats read them back (reports.figures, reports.charts, reports.api), and the transparency report
counts them straight from the flags (`notice_lines`, exact for any range).

Decisions are counted from the answers kept for each flag (moderation.models.ReportAnswer), never from the
flag as it stands: a flag's outcome is overwritten when its decision is corrected, and a day already rolled up
or a report already published must not change when it is.

What is counted:
- notices received each day (by arrival), by category and source: every flag is a notice, misinformation
  included (a user's report under Art. 16 whatever it reports);
- notices decided each day, by category and outcome (`removed`, `no_violation`, `sent_to_fact_checkers`,
  `rated`): a notice's first decision, on the day it was made, counted once whatever became of it;
- decisions corrected each day, by category and what the notice became (`reopened`, or the outcome it was given
  again: decided after a reopening, overruled by a removal, answered anew when a removal was lifted): each
  correction on its own day, never taken from the earlier day's count;
- reports of harm open at the end of the day as they stood then (`reports_open_at`: a report decided, reopened or
  withdrawn since counts as it was), and of them those past the 24-hour target, which runs as on the desk from when
  the report's round began then: its receipt, or a reopening of its decision before the day's end
  (moderation.deadlines);
- the time from each report of harm to its first decision, from its receipt (how long its reporter waited), kept
  per day as a histogram of waits (to the minute under an hour, the quarter hour under a day, the hour beyond, at
  most 30 days), so that a range's median is read from the days' histograms, not a median of medians, in a
  bounded number of rows per day.
Figures are the whole program's: reports of harm are no organisation's.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable
from datetime import datetime

from django.db import connections
from django.db.models import Count, F, OuterRef, Q, QuerySet, Subquery

from factcheck.models import HARM_CATEGORIES, OPEN_HARM_REPORTS, Flag, FlagCategory, FlagSource, ReportOutcome
from moderation.deadlines import DECISION_TARGET, overdue_before, waiting_since
from moderation.models import ReportAnswer
from reports.models import Metric

CATEGORIES = list(FlagCategory.values)
SOURCES = list(FlagSource.values)
OUTCOMES = list(ReportOutcome.values)
REOPENED = "reopened"
# What a corrected decision became: opened again, or one of the outcomes.
CORRECTIONS = [REOPENED, *OUTCOMES]
# A notice's first decision: its first answer (reopening a flag whose decision predates the kept answers is a
# correction, as is every answer that replaces another).
FIRST_DECISION = Q(replaces__isnull=True) & ~Q(outcome=ReportAnswer.REOPENED)
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
    for (category, outcome), n in decisions(start, through).items():
        figures.add(None, Metric.NOTICES_DECIDED, f"{category}:{outcome}", n)
    for (category, became), n in corrections(start, through).items():
        figures.add(None, Metric.NOTICES_CORRECTED, f"{category}:{became}", n)
    first = first_decisions(start, through).filter(flag__category__in=HARM_CATEGORIES)
    for received_at, decided_at in first.values_list("flag__received_at", "answered_at"):
        figures.add(None, Metric.REPORT_WAIT_MINUTES, str(wait_bucket((decided_at - received_at).total_seconds())))
    # Overdue as the desk marks it: from when the report's round began, its receipt or a reopening before the day's
    # end (moderation.deadlines), not from its receipt alone.
    at_end = reports_open_at(through).aggregate(
        n=Count("id"), late=Count("id", filter=Q(waiting_since__lt=overdue_before(through))))
    figures.set(None, Metric.REPORTS_OPEN, at_end["n"])
    figures.set(None, Metric.REPORTS_OVERDUE, at_end["late"])


def reports_open_at(moment: datetime) -> QuerySet[Flag]:
    """The reports of harm open at `moment` as they stood then, whatever became of them since, each annotated with
    `waiting_since` (when its round began, as of then: moderation.deadlines.waiting_since).

    A report was open at `moment` if it had arrived, was not withdrawn by then (`withdrawn_at` before it), and its
    latest answer before it (ReportAnswer: decisions, and reopenings as ""; the highest id of equal times) was none
    or a reopening. The flag's own columns say only its latest answer (`decided_at`, `reopened_at`), so they serve to
    find the candidates, not to judge them. Only three kinds of report can have been open then, each found by an
    index, so a past day costs the reports open now and those answered or withdrawn since, not the history: open now
    (flag_open_harm_report); answered since `moment` (flag_decided_at: a report decided now whose decision predates
    it was decided then, since `decided_at` is its latest answer's time); withdrawn since while open
    (flag_withdrawn_at: one withdrawn after a decision keeps that decision's `decided_at`, and nothing answers it
    after its withdrawal, so if that is before `moment` it was decided then, answers kept or not). Each candidate's
    latest answer is read by the flag_answers index, in the same query.

    What no timestamp says: a withdrawal writes no answer, only `withdrawn_at`, which is all it needs here. A flag's
    history from before answers were kept (migration moderation 0022) is its then standing decision alone: an earlier
    decision and reopening of it, known only to the audit log, are not seen, so a day before then may count such a
    report as open when it had been decided."""
    latest = (ReportAnswer.objects.filter(flag=OuterRef("pk"), answered_at__lt=moment)
              .order_by("-answered_at", "-id"))
    candidates = (OPEN_HARM_REPORTS | Q(decided_at__gte=moment)
                  | Q(withdrawn_at__gte=moment, decided_at__isnull=True))
    return (Flag.objects.filter(candidates, category__in=HARM_CATEGORIES, received_at__lt=moment)
            .annotate(answer_then=Subquery(latest.values("outcome")[:1]))
            .filter(Q(answer_then__isnull=True) | Q(answer_then=ReportAnswer.REOPENED))
            # Its latest answer then was none (waiting since its receipt) or a reopening (since that), as filtered.
            .annotate(waiting_since=waiting_since(reopened=Subquery(latest.values("answered_at")[:1]))))


def first_decisions(since: datetime, until: datetime) -> QuerySet:
    """The notices' first decisions made in [since, until)."""
    return ReportAnswer.objects.filter(FIRST_DECISION, answered_at__gte=since, answered_at__lt=until)


def decisions(since: datetime, until: datetime) -> Counter[tuple[str, str]]:
    """First decisions made in [since, until), by (category, outcome)."""
    return Counter({(category, outcome): n for category, outcome, n in (
        first_decisions(since, until).values_list("flag__category", "outcome").annotate(n=Count("id")).order_by())})


def corrections(since: datetime, until: datetime) -> Counter[tuple[str, str]]:
    """Decisions corrected in [since, until), by (category, what the notice became: `reopened` or an outcome)."""
    corrected = (ReportAnswer.objects.filter(answered_at__gte=since, answered_at__lt=until).exclude(FIRST_DECISION)
                 .values_list("flag__category", "outcome").annotate(n=Count("id")).order_by())
    return Counter({(category, outcome or REOPENED): n for category, outcome, n in corrected})


def split(counts: dict[str, int], *, position: int) -> dict[str, int]:
    """Counts keyed "a:b" summed by one part: `position` 0 (the category) or 1 (the source, or the outcome)."""
    totals: Counter[str] = Counter()
    for key, n in counts.items():
        totals[key.split(":")[position]] += n
    return dict(totals)


def notice_lines(since: datetime, until: datetime) -> Iterable[tuple[str, str, str, int, int | None]]:
    """The transparency report's notice lines, (section, item, label, count, median seconds to decide), counted
    from the flags and their kept answers: received by category and by category and source; first decisions by
    category and outcome; decisions corrected by category and what they became; and per category the first
    decisions with the median time from receipt to them."""
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
    outcomes = decisions(since, until)
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
    corrected = corrections(since, until)
    became = {REOPENED: "reopened", **{o: f"corrected to {label.lower()}" for o, label in labels.items()}}
    for category in CATEGORIES:
        for outcome in CORRECTIONS:
            yield ("notices_corrected", f"{category}:{outcome}",
                   f"{categories[category]}: decision {became[outcome]}", corrected[(category, outcome)], None)


def _median_waits(since: datetime, until: datetime) -> dict[str, tuple[int, int | None]]:
    """Per category, the notices first decided in the range and their median wait from receipt (seconds): computed by
    PostgreSQL (percentile_cont, one row per category, however many flags); in Python on SQLite. A flag on a post
    rated before it arrived (an imported rating, a back-dated one) was answered at once: no wait, never a
    negative one, as the histogram's buckets count it (`wait_bucket`)."""
    decided = first_decisions(since, until).annotate(
        category=F("flag__category"), received_at=F("flag__received_at"), decided_at=F("answered_at"))
    # The database the ORM reads these answers from (a replica inside core.replicas' scope), for the statement too.
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
