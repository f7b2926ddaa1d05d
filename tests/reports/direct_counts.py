"""Direct counts over the raw rows, following the definitions of reports.rollup's docstring: what the
roll-up tests (test_rollup*.py) compare the dashboard's figures with. Percentiles are PostgreSQL's
own percentile_cont.
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, date, datetime, time, timedelta

import pytest
from django.db import connection

from factcheck.models import Match, MatchState, Organisation, Post, Rating
from moderation.models import Action, ActionKind, Appeal, AppealStatus, DecisionOutcome, RatingDecision
from reports.figures import DayFigures, Scope, figures_for
from reports.models import DailyFigure
from reports.rollup import roll_up_day, roll_up_days
from tests.reports.conftest import FIRST, LAST

DAY = timedelta(days=1)
TARGET = timedelta(hours=24)
SCOPES = ["program", "org_fr", "org_en"]


def organisation_of(history, scope: str) -> Organisation | None:
    return None if scope == "program" else getattr(history, scope)


def pg_percentile(values: list[float], fraction: float) -> float | None:
    """PostgreSQL's percentile_cont of the values (None for none)."""
    if not values:
        return None
    with connection.cursor() as cursor:
        cursor.execute("SELECT percentile_cont(%s) WITHIN GROUP (ORDER BY v) FROM unnest(%s::float8[]) AS v",
                       [fraction, values])
        return cursor.fetchone()[0]


def covers(organisation: Organisation | None, post: Post) -> bool:
    if organisation is None:
        return True
    return ((not organisation.languages or post.language in organisation.languages)
            and (not organisation.countries or post.country in organisation.countries))


def in_force(rating: Rating, through: datetime) -> bool:
    """Whether the rating stood at `through`: made before, not yet superseded or withdrawn."""
    return rating.created_at < through and (rating.superseded_at is None or rating.superseded_at >= through)


def waiting_at(through: datetime, organisation: Organisation | None) -> list[Post]:
    """Flagged posts of non-politicians with no rating of their own and no inherited rating yet (or one
    inherited from a claim the post has since been unlinked from), not removed at the moment."""
    waiting = []
    for post in Post.objects.select_related("page").exclude(first_flagged_at=None).order_by("pk"):
        if post.first_flagged_at >= through or post.page.is_politician or not covers(organisation, post):
            continue
        if any(in_force(rating, through) for rating in Rating.objects.filter(post=post)):
            continue
        removals = Action.objects.filter(post=post, kind=ActionKind.REMOVAL, created_at__lt=through)
        if any(removal.ended_at is None or removal.ended_at >= through for removal in removals):
            continue  # removed then: it cannot be rated while it is
        inherited = (RatingDecision.objects.filter(post=post, decided_at__lt=through, outcome=DecisionOutcome.APPLIED)
                     .exclude(rating__post=post).select_related("rating"))
        unlinked = {source for source in Match.objects.filter(
            post=post, state=MatchState.REJECTED, decided_at__lt=through).values_list("source_id", flat=True)}
        if any(decision.rating.post_id not in unlinked
               and any(in_force(rating, through) for rating in Rating.objects.filter(post=decision.rating.post_id))
               for decision in inherited):
            continue
        waiting.append(post)
    return waiting


def decision_kinds_of(action: Action) -> set[str]:
    """What the definition counts one action as: a restoration (a rating's effect restored by staff); a removal; else
    what it does, and what it is."""
    if action.restored:
        return {"restoration"}
    if action.kind == ActionKind.REMOVAL:
        return {"removal"}
    kinds = set()
    if action.feed_multiplier < 1:
        kinds.add("demotion")
    if action.label:
        kinds.add("label")
    if action.kind in (ActionKind.MATCHED_RATING, ActionKind.OVERRIDE):
        kinds.add(action.kind)
    return kinds


def nonzero(counter: Counter) -> dict[str, int]:
    return {key: value for key, value in counter.items() if value}


def direct_day(day: date, organisation: Organisation | None, *, now: datetime) -> dict:
    start = datetime.combine(day, time(), tzinfo=UTC)
    through = min(start + DAY, now)

    def own(rows, path: str):
        return rows if organisation is None else rows.filter(**{path: organisation})

    ratings = own(Rating.objects.filter(created_at__gte=start, created_at__lt=through), "organisation")
    waits = []
    for rating in ratings.select_related("post"):
        first_rating = Rating.objects.filter(post=rating.post).order_by("created_at", "id").first()
        flagged = rating.post.first_flagged_at
        # A post rated before anyone flagged it never waited: not a first rating, no wait.
        if first_rating.pk == rating.pk and flagged is not None and flagged <= rating.created_at:
            waits.append(max((rating.created_at - rating.post.first_flagged_at).total_seconds(), 0.0))
    decisions = Counter()
    for action in own(Action.objects.filter(created_at__gte=start, created_at__lt=through), "rating__organisation"):
        decisions.update(decision_kinds_of(action))
    appeals = own(Appeal.objects.all(), "rating__organisation")
    still_open = [a for a in appeals if a.created_at < through and (a.decided_at is None or a.decided_at >= through)]
    waiting = waiting_at(through, organisation)
    return {
        "computed": True,
        "queue_depth": len(waiting),
        "queue_oldest_seconds": (
            (through - min(p.first_flagged_at for p in waiting)).total_seconds() if waiting else None),
        "first_ratings": len(waits),
        "time_to_rating_p50": pg_percentile(waits, 0.5),
        "time_to_rating_p90": pg_percentile(waits, 0.9),
        "ratings": nonzero(Counter(ratings.values_list("verdict", flat=True))),
        "decisions": nonzero(decisions),
        "appeals_filed": nonzero(Counter(
            appeals.filter(created_at__gte=start, created_at__lt=through).values_list("kind", flat=True))),
        "appeals_closed": nonzero(Counter(
            appeals.filter(decided_at__gte=start, decided_at__lt=through).values_list("status", flat=True))),
        "appeals_open": len(still_open),
        "appeals_overdue": sum(1 for a in still_open if through - a.created_at > TARGET),
    }


def shown(figures: DayFigures) -> dict:
    return {
        "computed": figures.computed,
        "queue_depth": figures.queue_depth,
        "queue_oldest_seconds": figures.queue_oldest_seconds,
        "first_ratings": figures.first_ratings,
        "time_to_rating_p50": figures.time_to_rating_p50,
        "time_to_rating_p90": figures.time_to_rating_p90,
        "ratings": figures.ratings,
        "decisions": figures.decisions,
        "appeals_filed": figures.appeals_filed,
        "appeals_closed": figures.appeals_closed,
        "appeals_open": figures.appeals_open,
        "appeals_overdue": figures.appeals_overdue,
    }


def approximately(expected: dict) -> dict:
    return {key: pytest.approx(value) if isinstance(value, float) else value for key, value in expected.items()}


def decided_in(start: date, end: date, organisation: Organisation | None):
    """Appeals decided (upheld or reversed, not withdrawn) in the days from start to end."""
    since = datetime.combine(start, time(), tzinfo=UTC)
    until = datetime.combine(end, time(), tzinfo=UTC) + DAY
    appeals = Appeal.objects.filter(decided_at__gte=since, decided_at__lt=until,
                                    status__in=[AppealStatus.UPHELD, AppealStatus.REVERSED])
    return appeals if organisation is None else appeals.filter(rating__organisation=organisation)


def stored_rows() -> list[tuple]:
    return sorted(DailyFigure.objects.values_list("day", "organisation_id", "metric", "key", "value"),
                  key=lambda row: (row[0], row[1] or 0, row[2], row[3]))


def figure_of(scope: str, history, day_index: int, attribute: str):
    figures = figures_for(Scope(organisation=organisation_of(history, scope)), start=FIRST, end=LAST)
    return getattr(figures.days[day_index], attribute)


def rolled_up_first_day(organisation: Organisation | None, *, live_at: datetime,
                        rebuilt_at: datetime) -> tuple[DayFigures, list[DayFigures]]:
    """FIRST rolled up at `live_at`, as the cron job rolls up today, then rebuilt at `rebuilt_at`, as the next day's
    run rebuilds yesterday, each scope's rebuilt figures checked against the direct counts: the program's figures as
    they read live, and the rebuilt day's for the program and for `organisation`."""
    roll_up_day(day=FIRST, now=live_at)
    live = figures_for(Scope(organisation=None), start=FIRST, end=FIRST).days[0]
    roll_up_days(start=FIRST, end=FIRST, now=rebuilt_at)
    rebuilt = []
    for scope in (None, organisation):
        day = figures_for(Scope(organisation=scope), start=FIRST, end=FIRST).days[0]
        assert shown(day) == approximately(direct_day(FIRST, scope, now=rebuilt_at))
        rebuilt.append(day)
    return live, rebuilt
