"""Rolling the day's activity up into `DailyFigure` rows: the one writer of the roll-up tables.

`roll_up_day` computes one UTC day (to its end, or to now for today) for the whole program and
for each organisation, from the committed history: flags, ratings, actions and appeals. It is
idempotent: a day's rows are replaced whole, and a run never overwrites figures read from the
history at a later moment. A day is read in one snapshot (REPEATABLE READ on PostgreSQL), so its
figures agree with each other. `roll_up_recent` is the periodic job's body: today, every recent day
not yet settled (computed at least an hour after its end, so that flags and rows that commit just
after midnight are in it), and a few never-computed days of the last 90. `roll_up_days` rebuilds
any past range.

What each figure counts (tests/reports check every one against a direct count):
- A post waits for a rating from its first flag until its first rating or the rating it inherits
  as a copy of a rated claim (until the copy is unlinked from that claim, when it waits again), and again
  from the moment its rating, or its claim's, is withdrawn with nothing in its place (`ratings_in_force`), and not
  while trust and safety have it removed (a removed post is never rated: it had counted for ever).
  So the queue depth counts every post awaiting a rating: queued, claimed, and copies waiting
  with their group (one each), which the queue page shows as one row per group. Posts of
  politicians' pages are never in the queue. An organisation's queue is the posts in the
  languages and countries it covers. Both are read as they are now (a page's politician mark, an
  organisation's coverage): rebuilding a past day after either changed counts it the new way. The
  count reads the posts waiting now and those that left since the moment counted (each post's
  `left_queue_at`, factcheck.waiting), so today's costs the queue and today's leavers, not the history.
- Time to rating: from a post's first flag to its first rating, per day of that rating; a post
  rated before anyone flagged it has no wait and is not counted.
- Ratings count every rating made that day, including ones superseded later (on appeal or on a
  re-rating); an organisation's are those made by its reviewers.
- Decisions (actions taken that day) by kind: demotions (shown less in feeds), labels, removals,
  matched ratings (copies that inherited a rating), staff overrides and restorations. One fact-check action
  that demotes and labels counts in both; matched ratings also count in what they do. A rating's effect
  restored by staff (after they lifted or overrode it by mistake) counts as a restoration only: it is the
  rating's decision again, already counted as a demotion or a label on the day it was made.
- Appeals: filed and closed that day; open and overdue (open past the 24-hour target) at the end
  of the day. An organisation's appeals are those against its ratings; removal appeals are staff's.
- Notices and reports of harm (the program's only): reports.notices says what it counts.
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import UTC, date, datetime, time, timedelta

from django.db import connection, models, transaction
from django.db.models import Count, Exists, Min, OuterRef, Q
from django.utils import timezone

from factcheck.coverage import covered_by
from factcheck.models import Match, MatchState, Organisation, Post, Rating
from moderation.appeals import DECISION_TARGET
from moderation.models import Action, ActionKind, Appeal, AppealStatus, DecisionOutcome, RatingDecision
from moderation.selectors import removals_standing_at
from reports.models import DailyFigure, Metric, RolledUpDay
from reports.notices import count_notices

logger = logging.getLogger(__name__)

RECENT_DAYS = 90  # the periodic job fills in never-computed days this far back
SETTLE_AFTER = timedelta(hours=1)  # a day is final once computed this long after its end
BACKFILL_PER_RUN = 3  # ... a few per run, so that a first run on a big history stays short
Scope = int | None  # an organisation id, or None for the whole program
FigureKey = tuple[Scope, str, str]  # (scope, metric, key)
# Durations: zero seconds is a measurement (a rating the instant of the flag), not an absent count.
MEASURES = {Metric.QUEUE_OLDEST, Metric.TIME_TO_RATING_P50, Metric.TIME_TO_RATING_P90, Metric.APPEAL_DECIDE_SECONDS}


class DecisionKind(models.TextChoices):
    """The keys of Metric.DECISIONS (and the transparency report's action types)."""

    DEMOTION = "demotion", "Demotions"
    LABEL = "label", "Labels"
    REMOVAL = "removal", "Removals"
    MATCHED_RATING = "matched_rating", "Matched ratings"
    OVERRIDE = "override", "Staff overrides"
    RESTORATION = "restoration", "Restorations (a rating's effect restored by staff)"


def decision_kinds(*, kind: str, feed_multiplier, label: str, restored: bool = False) -> list[str]:
    """What one action did, as the dashboard and the transparency report count it (the module docstring says how)."""
    if restored:
        return [DecisionKind.RESTORATION]
    if kind == ActionKind.REMOVAL:
        return [DecisionKind.REMOVAL]
    kinds = []
    if feed_multiplier is not None and feed_multiplier < 1:
        kinds.append(DecisionKind.DEMOTION)
    if label:
        kinds.append(DecisionKind.LABEL)
    if kind == ActionKind.MATCHED_RATING:
        kinds.append(DecisionKind.MATCHED_RATING)
    elif kind == ActionKind.OVERRIDE:
        kinds.append(DecisionKind.OVERRIDE)
    return kinds


def day_bounds(day: date) -> tuple[datetime, datetime]:
    start = datetime.combine(day, time(), tzinfo=UTC)
    return start, start + timedelta(days=1)


def percentile(values: Sequence[float], fraction: float) -> float:
    """The `fraction` percentile of sorted `values` by linear interpolation (PostgreSQL's percentile_cont)."""
    if not values:
        raise ValueError("no values")
    position = (len(values) - 1) * fraction
    low = math.floor(position)
    high = min(low + 1, len(values) - 1)
    return values[low] + (values[high] - values[low]) * (position - low)


class _Figures:
    """The day's figures as they are counted, per scope."""

    def __init__(self, organisations: Iterable[Organisation]) -> None:
        self.values: Counter[FigureKey] = Counter()
        self.organisation_ids = {organisation.pk for organisation in organisations}

    def add(self, organisation_id: Scope, metric: str, key: str = "", amount: float = 1) -> None:
        """Counts for the program and, when the row belongs to one, for its organisation."""
        self.values[(None, metric, key)] += amount
        if organisation_id is not None and organisation_id in self.organisation_ids:
            self.values[(organisation_id, metric, key)] += amount

    def set(self, scope: Scope, metric: str, value: float, key: str = "") -> None:
        self.values[(scope, metric, key)] = value

    def rows(self, day: date) -> list[DailyFigure]:
        return [DailyFigure(day=day, organisation_id=scope, metric=metric, key=key, value=value)
                for (scope, metric, key), value in self.values.items() if value or metric in MEASURES]


def _ratings(figures: _Figures, start: datetime, end: datetime) -> None:
    earlier = Rating.objects.filter(
        Q(created_at__lt=OuterRef("created_at")) | Q(created_at=OuterRef("created_at"), id__lt=OuterRef("id")),
        post=OuterRef("post"),
    )
    rows = (Rating.objects.filter(created_at__gte=start, created_at__lt=end)
            .annotate(rated_before=Exists(earlier))
            .values_list("organisation_id", "reviewer_id", "verdict", "created_at", "post__first_flagged_at",
                         "rated_before"))
    waits: dict[Scope, list[float]] = {}
    for organisation_id, reviewer_id, verdict, created_at, first_flagged_at, rated_before in rows:
        figures.add(organisation_id, Metric.RATINGS, verdict)
        figures.add(organisation_id, Metric.REVIEWER_RATINGS, str(reviewer_id))
        figures.values[(None, Metric.ORGANISATION_RATINGS, str(organisation_id))] += 1
        if rated_before or first_flagged_at is None or first_flagged_at > created_at:
            continue
        wait = max((created_at - first_flagged_at).total_seconds(), 0.0)
        figures.add(organisation_id, Metric.FIRST_RATINGS)
        waits.setdefault(None, []).append(wait)
        if organisation_id in figures.organisation_ids:
            waits.setdefault(organisation_id, []).append(wait)
    for scope, values in waits.items():
        values.sort()
        figures.set(scope, Metric.TIME_TO_RATING_P50, percentile(values, 0.5))
        figures.set(scope, Metric.TIME_TO_RATING_P90, percentile(values, 0.9))


def _decisions(figures: _Figures, start: datetime, end: datetime) -> None:
    rows = (Action.objects.filter(created_at__gte=start, created_at__lt=end)
            .values_list("kind", "feed_multiplier", "label", "restored", "rating__organisation_id"))
    for kind, multiplier, label, restored, organisation_id in rows:
        for decision in decision_kinds(kind=kind, feed_multiplier=multiplier, label=label, restored=restored):
            figures.add(organisation_id, Metric.DECISIONS, decision)


def _appeals(figures: _Figures, start: datetime, end: datetime) -> None:
    for kind, organisation_id in (Appeal.objects.filter(created_at__gte=start, created_at__lt=end)
                                  .values_list("kind", "rating__organisation_id")):
        figures.add(organisation_id, Metric.APPEALS_FILED, kind)
    closed = (Appeal.objects.filter(decided_at__gte=start, decided_at__lt=end)
              .values_list("id", "status", "reviewer_id", "created_at", "decided_at", "rating__organisation_id"))
    for appeal_id, status, reviewer_id, created_at, decided_at, organisation_id in closed:
        figures.add(organisation_id, Metric.APPEALS_CLOSED, status)
        if status == AppealStatus.WITHDRAWN:
            continue
        seconds = max((decided_at - created_at).total_seconds(), 0.0)
        # Kept one row per appeal so that a range's median is exact, not a median of medians.
        figures.add(organisation_id, Metric.APPEAL_DECIDE_SECONDS, str(appeal_id), seconds)
        if reviewer_id is not None:
            figures.add(organisation_id, Metric.REVIEWER_APPEALS, str(reviewer_id))
        if organisation_id is not None:
            figures.values[(None, Metric.ORGANISATION_APPEALS, str(organisation_id))] += 1


def _open_appeals(figures: _Figures, through: datetime) -> None:
    still_open = Appeal.objects.filter(Q(decided_at__isnull=True) | Q(decided_at__gte=through),
                                       created_at__lt=through)
    for created_at, organisation_id in still_open.values_list("created_at", "rating__organisation_id"):
        figures.add(organisation_id, Metric.APPEALS_OPEN)
        if through - created_at > DECISION_TARGET:
            figures.add(organisation_id, Metric.APPEALS_OVERDUE)


def waiting_posts(through: datetime):
    """Posts waiting for a rating at `through` (the module docstring says what waiting means). Only the posts
    waiting now and those that left the queue since `through` can be (factcheck.waiting): the index of
    `left_queue_at` finds them (NULL included), so a day's figures read the queue and that day's leavers, not
    the history."""
    candidates = Q(left_queue_at__isnull=True) | Q(left_queue_at__gte=through)
    return (Post.objects.filter(candidates, first_flagged_at__lt=through, page__is_politician=False)
            .exclude(Exists(ratings_in_force(through).filter(post=OuterRef("pk"))))
            .exclude(Exists(removals_standing_at(through).filter(post=OuterRef("pk"))))
            # A copy inherits its claim's rating with that rating's decision on it, an action or none
            # (True), until the copy is unlinked from the claim (a match rejected, on appeal or by staff), or
            # the claim's rating is withdrawn (the copy waits again, with its claim or alone).
            .exclude(Exists(
                RatingDecision.objects.filter(post=OuterRef("pk"), outcome=DecisionOutcome.APPLIED,
                                              decided_at__lt=through)
                .filter(Exists(ratings_in_force(through).filter(post=OuterRef("rating__post"))))
                .exclude(Exists(Match.objects.filter(post=OuterRef("post"), source=OuterRef("rating__post"),
                                                     state=MatchState.REJECTED, decided_at__lt=through)))
            )))


def ratings_in_force(through: datetime):
    """The ratings a post carried at `through`: made before it and not retired by then. A rating retired for a
    successor hands over to it at the same moment, so a post rated stays rated through its re-ratings; one withdrawn
    by its organisation (no successor: factcheck.withdrawals) leaves the post waiting again from its withdrawal."""
    return Rating.objects.filter(Q(superseded_at__isnull=True) | Q(superseded_at__gte=through),
                                 created_at__lt=through)


def _queue(figures: _Figures, organisations: Sequence[Organisation], through: datetime) -> None:
    """Depth and oldest wait for the program and each organisation, in one pass over the waiting posts."""
    aggregates = {"depth": Count("id"), "oldest": Min("first_flagged_at")}
    for organisation in organisations:
        coverage = covered_by(organisation)
        if coverage:  # an organisation covering everything sees the program's queue
            aggregates[f"depth_{organisation.pk}"] = Count("id", filter=coverage)
            aggregates[f"oldest_{organisation.pk}"] = Min("first_flagged_at", filter=coverage)
    found = waiting_posts(through).aggregate(**aggregates)
    for scope, suffix in [(None, ""), *((o.pk, f"_{o.pk}") for o in organisations)]:
        depth = found.get(f"depth{suffix}", found["depth"])
        oldest = found.get(f"oldest{suffix}", found["oldest"])
        figures.set(scope, Metric.QUEUE_DEPTH, depth)
        if oldest is not None:
            figures.set(scope, Metric.QUEUE_OLDEST, max((through - oldest).total_seconds(), 0.0))


def compute_day(day: date, *, now: datetime | None = None) -> tuple[datetime, list[DailyFigure]]:
    """The figures of `day` through its end (or through `now`, if the day is not over)."""
    start, end = day_bounds(day)
    through = min(end, now or timezone.now())
    organisations = list(Organisation.objects.order_by("pk"))
    figures = _Figures(organisations)
    _ratings(figures, start, through)
    _decisions(figures, start, through)
    _appeals(figures, start, through)
    _open_appeals(figures, through)
    _queue(figures, organisations, through)
    count_notices(figures, start, through)
    return through, figures.rows(day)


def _snapshot(day: date, now: datetime) -> tuple[datetime, list[DailyFigure]]:
    """The day computed from one snapshot of the history, so that its figures agree with each other."""
    if connection.vendor != "postgresql" or connection.in_atomic_block:
        return compute_day(day, now=now)  # SQLite is serialisable already; a caller's transaction is its own
    with transaction.atomic(durable=True):
        with connection.cursor() as cursor:
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        return compute_day(day, now=now)


def roll_up_day(*, day: date, now: datetime | None = None) -> int:
    """Compute one day and replace its rows; the number of rows written (0 if a later run won).

    `now` is the moment the history is read: a run never replaces figures stored by a run that
    read it later (a slow periodic run finishing after a rebuild that started after it).
    """
    now = now or timezone.now()
    start, _ = day_bounds(day)
    if start > now:
        return 0
    # Computed outside the lock (the queue's pass is the slow part); written under it.
    through, rows = _snapshot(day, now)
    with transaction.atomic(durable=True):
        RolledUpDay.objects.bulk_create([RolledUpDay(day=day, through=through, computed_at=now)],
                                        ignore_conflicts=True)
        # Locks the day's bookkeeping row: two runs of one day write one after the other.
        done = RolledUpDay.objects.select_for_update(no_key=True).get(day=day)
        if done.computed_at > now:
            return 0  # a run that read the history later already wrote this day
        DailyFigure.objects.filter(day=day).delete()
        DailyFigure.objects.bulk_create(rows, batch_size=1000)
        done.through, done.computed_at = through, now
        done.save(update_fields=["through", "computed_at"])
    return len(rows)


def roll_up_days(*, start: date, end: date, now: datetime | None = None) -> int:
    """Rebuild every day from `start` to `end` inclusive (the rebuild command)."""
    written, day = 0, start
    while day <= end:
        written += roll_up_day(day=day, now=now)
        day += timedelta(days=1)
    return written


def settled(row: RolledUpDay) -> bool:
    """Whether a day's figures are final: computed at least SETTLE_AFTER after the day ended."""
    return row.computed_at >= day_bounds(row.day)[1] + SETTLE_AFTER


def days_to_roll_up(*, now: datetime) -> list[date]:
    """Today; every recent day computed but not settled (yesterday, or days a scheduler outage left
    half done); then a few never-computed recent days, newest first."""
    today = now.astimezone(UTC).date()
    known = {row.day: row for row in RolledUpDay.objects.filter(day__gte=today - timedelta(days=RECENT_DAYS),
                                                                day__lt=today)}
    unsettled = sorted((day for day, row in known.items() if not settled(row)), reverse=True)
    missing = [today - timedelta(days=back) for back in range(1, RECENT_DAYS + 1)
               if today - timedelta(days=back) not in known]
    return [today, *unsettled, *missing[:BACKFILL_PER_RUN]]


def roll_up_recent(*, now: datetime | None = None) -> int:
    now = now or timezone.now()
    return sum(roll_up_day(day=day, now=now) for day in days_to_roll_up(now=now))
