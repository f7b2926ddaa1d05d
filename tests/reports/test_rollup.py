"""The dashboard's roll-up: every figure, for the program and each organisation, equals a direct count.

The history (tests/reports/conftest.py) is made through the domain functions at explicit times; the
roll-up is read back through `figures_for`, as the dashboard and the stats API read it, and compared
with counts written here with plain queries over the raw rows, following the definitions of
reports.rollup's docstring. Percentiles are PostgreSQL's own percentile_cont. A few figures are
also spelled out by hand, so that a direct count that went wrong the same way would still be caught.
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, date, datetime, time, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from factcheck.ingest import ingest_flags
from factcheck.models import Match, MatchState, Organisation, Post, QueueState, Rating
from moderation.appeals import decide_appeal, file_appeal
from moderation.models import Action, ActionKind, Appeal, AppealStatus, DecisionOutcome, RatingDecision
from moderation.propagation import apply_matches
from reports.figures import DayFigures, Scope, figures_for
from reports.models import DailyFigure, RolledUpDay
from reports.rollup import (
    SETTLE_AFTER, days_to_roll_up, roll_up_day, roll_up_days, roll_up_recent, settled, waiting_posts,
)
from tests.factcheck.matching_helpers import CLAIM, EXACT_COPY
from tests.factories import FactCheckerFactory, OrganisationFactory, PageFactory, PostFactory, UserFactory
from tests.reports.conftest import DAYS, FIRST, LAST, at, flag, rate

pytestmark = pytest.mark.django_db

DAY = timedelta(days=1)
TARGET = timedelta(hours=24)
SCOPES = ["program", "org_fr", "org_en"]


def organisation_of(history, scope: str) -> Organisation | None:
    return None if scope == "program" else getattr(history, scope)


# --- direct counts over the raw rows ---------------------------------------------------------------


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


def waiting_at(through: datetime, organisation: Organisation | None) -> list[Post]:
    """Flagged posts of non-politicians with no rating of their own and no inherited rating yet (or one
    inherited from a claim the post has since been unlinked from)."""
    waiting = []
    for post in Post.objects.select_related("page").exclude(first_flagged_at=None).order_by("pk"):
        if post.first_flagged_at >= through or post.page.is_politician or not covers(organisation, post):
            continue
        if Rating.objects.filter(post=post, created_at__lt=through).exists():
            continue
        inherited = (RatingDecision.objects.filter(post=post, decided_at__lt=through, outcome=DecisionOutcome.APPLIED)
                     .exclude(rating__post=post).select_related("rating"))
        unlinked = {source for source in Match.objects.filter(
            post=post, state=MatchState.REJECTED, decided_at__lt=through).values_list("source_id", flat=True)}
        if any(decision.rating.post_id not in unlinked for decision in inherited):
            continue
        waiting.append(post)
    return waiting


def decision_kinds_of(action: Action) -> set[str]:
    """What the definition counts one action as: a removal; else what it does, and what it is."""
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


@pytest.fixture
def rolled_up(history):
    roll_up_days(start=FIRST, end=LAST, now=history.now)
    return history


# --- each figure against its direct count ----------------------------------------------------------


@pytest.mark.parametrize("scope", SCOPES)
def test_every_days_figures_equal_a_direct_count_of_the_history(rolled_up, scope):
    organisation = organisation_of(rolled_up, scope)
    figures = figures_for(Scope(organisation=organisation), start=FIRST, end=LAST)
    assert [d.day for d in figures.days] == DAYS
    for day_figures in figures.days:
        expected = direct_day(day_figures.day, organisation, now=rolled_up.now)
        assert shown(day_figures) == approximately(expected), f"{scope} on {day_figures.day}"


@pytest.mark.parametrize("scope, depths, oldest_hours", [
    # D0 ends with fr2, en2 and de1 waiting (fr1, en1, claim1 rated, copy1 matched, the politician's never);
    # D1 adds fr3, claim2 and its grouped copy (one each); D3 rates fr2, fr3, claim2 and gives copy2 its
    # match; en2 stays waiting after its removal (a removal is not a rating); nobody covers de1.
    ("program", [3, 6, 6, 2, 2], [19, 43, 67, 91, 115]),  # de1, flagged D0 05:00
    ("org_fr", [1, 2, 2, 0, 0], [17, 41, 65, None, None]),  # fr2, flagged D0 07:00
    ("org_en", [1, 3, 3, 1, 1], [16, 40, 64, 88, 112]),  # en2, flagged D0 08:00
])
def test_queue_depth_and_oldest_wait_at_each_days_end_follow_the_organisations_coverage(
        rolled_up, scope, depths, oldest_hours):
    figures = figures_for(Scope(organisation=organisation_of(rolled_up, scope)), start=FIRST, end=LAST)
    assert [d.queue_depth for d in figures.days] == depths
    assert [d.queue_oldest_seconds for d in figures.days] == [h and h * 3600.0 for h in oldest_hours]


def test_first_ratings_and_the_time_from_first_flag_to_rating_are_counted_on_the_day_of_the_rating(rolled_up):
    figures = figures_for(Scope(organisation=None), start=FIRST, end=LAST)
    # D0: fr1 after 4 h, en1 after 4.5 h, claim1 after 5.25 h; D1 only re-rates (not first ratings);
    # D3: claim2 after 47 h, fr3 after 50.5 h, fr2 after 76.5 h; D4: en4 after 1 h.
    assert [d.first_ratings for d in figures.days] == [3, 0, 0, 3, 1]
    assert figures.days[0].time_to_rating_p50 == 4.5 * 3600
    assert figures.days[0].time_to_rating_p90 == pytest.approx((4.5 + 0.8 * 0.75) * 3600)
    assert figures.days[3].time_to_rating_p50 == 50.5 * 3600
    assert figures.days[1].time_to_rating_p50 is None and figures.days[4].time_to_rating_p90 == 3600
    fr = figures_for(Scope(organisation=rolled_up.org_fr), start=FIRST, end=LAST)
    assert [d.first_ratings for d in fr.days] == [1, 0, 0, 2, 0]
    assert fr.days[3].time_to_rating_p50 == pytest.approx(63.5 * 3600)


def test_ratings_by_verdict_count_every_rating_made_that_day_including_ones_superseded_later(rolled_up):
    program = figures_for(Scope(organisation=None), start=FIRST, end=LAST)
    # fr1's False (reversed on appeal on D1) and en1's Partly false (re-rated on D1) still count on D0.
    assert program.days[0].ratings == {"false": 2, "partly_false": 1}
    assert program.days[1].ratings == {"missing_context": 1, "false": 1}
    assert program.days[2].ratings == {}
    assert program.days[3].ratings == {"false": 1, "true": 1, "altered": 1, "satire": 1}
    assert figure_of("org_fr", rolled_up, 0, "ratings") == {"false": 1}
    assert figure_of("org_en", rolled_up, 1, "ratings") == {"false": 1}


def test_decisions_count_each_action_in_every_kind_it_is(rolled_up):
    program = figures_for(Scope(organisation=None), start=FIRST, end=LAST)
    # D0: three fact-checks that demote and label, copy1's matched rating (demotes, labels, matched), a removal.
    assert program.days[0].decisions == {"demotion": 4, "label": 4, "matched_rating": 1, "removal": 1}
    # D1: the reversal's label-only Missing context, en1's re-rating, staff's 0.9 override.
    assert program.days[1].decisions == {"demotion": 2, "label": 2, "override": 1}
    # D3: the True of the reversed correction takes no action.
    assert program.days[3].decisions == {"demotion": 3, "label": 4, "matched_rating": 1}
    assert program.days[4].decisions == {"removal": 1}
    # An organisation's decisions are those resting on its ratings: never a removal.
    assert figure_of("org_en", rolled_up, 0, "decisions") == {"demotion": 3, "label": 3, "matched_rating": 1}
    assert figure_of("org_fr", rolled_up, 1, "decisions") == {"label": 1}


def test_appeals_filed_closed_open_and_overdue_by_day_and_scope(rolled_up):
    program = figures_for(Scope(organisation=None), start=FIRST, end=LAST)
    assert [d.appeals_filed for d in program.days] == [
        {"dispute": 1, "removal": 1}, {"correction": 1, "dispute": 1}, {}, {"dispute": 1}, {}]
    assert [d.appeals_closed for d in program.days] == [
        {}, {"reversed": 1, "withdrawn": 1}, {}, {"upheld": 1, "reversed": 1}, {}]
    assert [d.appeals_open for d in program.days] == [2, 2, 2, 1, 1]
    # The removal appeal (filed D0 20:00) is overdue from D1's end, the correction (D1 16:00) at D2's, fr3's
    # dispute (D3 20:00) at D4's; the withdrawn dispute never is.
    assert [d.appeals_overdue for d in program.days] == [0, 1, 2, 0, 1]
    fr = figures_for(Scope(organisation=rolled_up.org_fr), start=FIRST, end=LAST)
    en = figures_for(Scope(organisation=rolled_up.org_en), start=FIRST, end=LAST)
    assert [d.appeals_open for d in fr.days] == [1, 0, 0, 1, 1]
    assert [d.appeals_overdue for d in fr.days] == [0, 0, 0, 0, 1]
    assert [d.appeals_overdue for d in en.days] == [0, 0, 1, 0, 0]
    assert en.days[1].appeals_closed == {"withdrawn": 1}  # removal appeals are staff's, never an organisation's


@pytest.mark.parametrize("scope", SCOPES)
def test_the_ranges_median_time_to_decide_counts_each_decided_appeal_once_and_no_withdrawn_one(rolled_up, scope):
    organisation = organisation_of(rolled_up, scope)
    figures = figures_for(Scope(organisation=organisation), start=FIRST, end=LAST)
    seconds = sorted((a.decided_at - a.created_at).total_seconds() for a in decided_in(FIRST, LAST, organisation))
    assert figures.decide_seconds == seconds
    assert figures.appeal_median_seconds == pg_percentile(seconds, 0.5)
    # A sub-range: only the appeals decided in it.
    part = figures_for(Scope(organisation=organisation), start=DAYS[2], end=LAST)
    assert part.decide_seconds == sorted(
        (a.decided_at - a.created_at).total_seconds() for a in decided_in(DAYS[2], LAST, organisation))


def test_the_programs_median_time_to_decide_is_the_middle_appeal(rolled_up):
    figures = figures_for(Scope(organisation=None), start=FIRST, end=LAST)
    # fr1's dispute 19 h, the correction 42 h, the removal appeal 61 h.
    assert figures.decide_seconds == [19 * 3600.0, 42 * 3600.0, 61 * 3600.0]
    assert figures.appeal_median_seconds == 42 * 3600.0
    assert figures.appeals_within_target == 1


@pytest.mark.parametrize("scope", SCOPES)
def test_throughput_per_reviewer_and_per_organisation_equals_their_ratings_and_decided_appeals(rolled_up, scope):
    organisation = organisation_of(rolled_up, scope)
    figures = figures_for(Scope(organisation=organisation), start=FIRST, end=LAST)
    since, until = at(0, 0), at(5, 0)
    ratings = Rating.objects.filter(created_at__gte=since, created_at__lt=until)
    if organisation is not None:
        ratings = ratings.filter(organisation=organisation)
    rated = Counter(ratings.values_list("reviewer_id", flat=True))
    decided = Counter(decided_in(FIRST, LAST, organisation).values_list("reviewer_id", flat=True))
    assert {p.id: (p.ratings, p.appeals_decided) for p in figures.reviewers} == {
        user: (rated[user], decided[user]) for user in rated.keys() | decided.keys()}
    if organisation is not None:
        assert figures.organisations == []  # the per-organisation table is staff's
        return
    by_organisation = Counter(ratings.values_list("organisation_id", flat=True))
    decided_by_organisation = Counter(
        decided_in(FIRST, LAST, None).exclude(rating=None).values_list("rating__organisation_id", flat=True))
    assert {p.id: (p.ratings, p.appeals_decided) for p in figures.organisations} == {
        org: (by_organisation[org], decided_by_organisation[org])
        for org in by_organisation.keys() | decided_by_organisation.keys()}


def test_throughput_names_each_reviewer_with_their_organisation_busiest_first(rolled_up):
    h = rolled_up
    figures = figures_for(Scope(organisation=None), start=FIRST, end=LAST)
    table = [(p.id, p.organisation, p.ratings, p.appeals_decided) for p in figures.reviewers]
    assert table[0] == (h.en_a.pk, "Full Facts", 4, 1)  # en1, claim1, claim2 and en1's True; the correction
    assert (h.staff_2.pk, "Trust and safety", 0, 1) in table  # the removal appeal
    assert (h.colleague.pk, "Vérifions", 1, 1) in table  # the reversal's rating, and the dispute
    assert h.staff.pk not in [row[0] for row in table]  # a removal is not a rating or an appeal decided
    assert [(p.name, p.ratings, p.appeals_decided) for p in figures.organisations] == [
        ("Full Facts", 6, 1), ("Vérifions", 4, 1)]


# --- days: empty, never computed, today ----------------------------------------------------------


def test_a_day_with_no_activity_is_computed_with_no_flows_and_carries_the_stocks(rolled_up):
    empty = figures_for(Scope(organisation=None), start=DAYS[2], end=DAYS[2]).days[0]
    assert empty.computed and empty.through == at(3, 0)
    assert (empty.ratings, empty.decisions, empty.appeals_filed, empty.appeals_closed) == ({}, {}, {}, {})
    assert (empty.first_ratings, empty.time_to_rating_p50) == (0, None)
    assert (empty.queue_depth, empty.appeals_open, empty.appeals_overdue) == (6, 2, 2)


def test_a_day_never_computed_shows_as_not_computed_not_as_zero(history):
    roll_up_days(start=FIRST, end=DAYS[1], now=history.now)
    roll_up_days(start=DAYS[3], end=LAST, now=history.now)
    figures = figures_for(Scope(organisation=history.org_en), start=FIRST, end=LAST)
    assert figures.missing_days == [DAYS[2]]
    missing = figures.days[2]
    assert not missing.computed and missing.through is None
    assert (missing.queue_depth, missing.queue_oldest_seconds, missing.appeals_open, missing.appeals_overdue) == (
        None, None, None, None)
    # A computed day with nothing waiting reads 0, not unknown.
    fr = figures_for(Scope(organisation=history.org_fr), start=DAYS[3], end=DAYS[3]).days[0]
    assert fr.computed and fr.queue_depth == 0 and fr.queue_oldest_seconds is None


def test_today_is_counted_up_to_now(history):
    now = at(4, 12, 30)  # after en4's flag (12:00), before its rating (13:00)
    roll_up_day(day=LAST, now=now)
    assert RolledUpDay.objects.get(day=LAST).through == now
    for scope in SCOPES:
        organisation = organisation_of(history, scope)
        today = figures_for(Scope(organisation=organisation), start=LAST, end=LAST).days[0]
        assert shown(today) == approximately(direct_day(LAST, organisation, now=now)), scope
    program = figures_for(Scope(organisation=None), start=LAST, end=LAST).days[0]
    assert program.queue_depth == 3 and program.ratings == {}  # en2, de1 and en4, still unrated at 12:30


def test_days_after_now_are_not_computed(history):
    assert roll_up_day(day=at(6, 0).date(), now=history.now) == 0
    assert not RolledUpDay.objects.exists()


# --- rebuilding, idempotence, and runs racing ----------------------------------------------------


def test_a_second_run_writes_exactly_the_same_rows(rolled_up):
    first = stored_rows()
    roll_up_days(start=FIRST, end=LAST, now=rolled_up.now)
    assert stored_rows() == first
    assert list(RolledUpDay.objects.values_list("day", "through")) == [(d, at(n + 1, 0)) for n, d in enumerate(DAYS)]


def test_rebuilding_a_past_range_later_gives_exactly_the_same_rows(rolled_up):
    h = rolled_up
    before = stored_rows()
    # Later activity: new flags and ratings, fr3's dispute decided, a new appeal; none of it is in the range.
    ingest_flags(flags=[flag("fr2", flagged_at=at(6, 9), key="flag-fr2-later"),
                        flag("en2", flagged_at=at(6, 9), key="flag-en2-later")], now=at(6, 9))
    decide_appeal(appeal_id=h.appeals["fr3"].pk, reviewer=h.colleague, outcome="upheld", reason="Altered.",
                  now=at(6, 10))
    rate(h.en_a, h.posts["en2"], "false", now=at(6, 11))
    file_appeal(owner=h.owner, post_id=h.posts["en2"].pk, kind="dispute", statement="No.", now=at(6, 12))
    DailyFigure.objects.all().delete()
    RolledUpDay.objects.all().delete()
    roll_up_days(start=FIRST, end=LAST)  # now: today, years later
    assert stored_rows() == before


def test_a_run_with_an_earlier_now_never_overwrites_a_day_computed_to_a_later_moment(history):
    assert roll_up_day(day=LAST, now=at(4, 14)) > 0
    later = stored_rows()
    assert roll_up_day(day=LAST, now=at(4, 9)) == 0  # a slow run that started earlier finishes last
    assert stored_rows() == later
    assert RolledUpDay.objects.get(day=LAST).through == at(4, 14)
    assert figure_of("program", history, 4, "ratings") == {"true": 1}  # en4 at 13:00 is still there
    roll_up_day(day=LAST, now=history.now)  # the day's end wins over 14:00
    done = RolledUpDay.objects.get(day=LAST)
    assert (done.through, done.computed_at) == (at(5, 0), history.now) and settled(done)


def test_a_stale_run_of_a_past_day_never_overwrites_a_run_that_read_the_history_later(history):
    # Both runs read D3 after its end, so both run to its end: the later reading wins, whichever finishes last.
    day = DAYS[3]
    assert roll_up_day(day=day, now=history.now) > 0
    # A mark on the stored rows: a write of the day would replace them.
    marked = DailyFigure.objects.filter(day=day, organisation=None, metric="queue_depth").update(value=999)
    assert marked == 1
    before = stored_rows()
    assert roll_up_day(day=day, now=at(4, 0, 30)) == 0  # read at D4 00:30, finishing after the run of D5 06:00
    assert stored_rows() == before
    done = RolledUpDay.objects.get(day=day)
    assert (done.through, done.computed_at) == (at(4, 0), history.now)
    # A run that read the history later still replaces it, and stores when it read it (not when it wrote).
    later = history.now + timedelta(hours=1)
    assert roll_up_day(day=day, now=later) > 0
    assert figure_of("program", history, 3, "queue_depth") == 2
    assert RolledUpDay.objects.get(day=day).computed_at == later


# --- which days the periodic job computes --------------------------------------------------------


def test_the_job_computes_today_and_the_three_most_recent_days_never_computed(db):
    now = at(10, 9)
    today = now.date()
    # Yesterday, never computed, is the first of the missing days.
    assert days_to_roll_up(now=now) == [today - timedelta(days=n) for n in range(4)]
    assert roll_up_recent(now=now) >= 0
    assert list(RolledUpDay.objects.order_by("-day").values_list("day", flat=True)) == [
        today - timedelta(days=n) for n in range(4)]
    assert set(RolledUpDay.objects.values_list("computed_at", flat=True)) == {now}  # when the history was read
    # The next run: today again; the past days, computed at 09:00, are settled; the next three missing days.
    assert days_to_roll_up(now=now + timedelta(minutes=5)) == [today] + [today - timedelta(days=n) for n in (4, 5, 6)]


def test_the_job_computes_today_then_every_recent_unsettled_day_newest_first_then_three_missing_days(db):
    now = at(100, 9)
    today = now.date()

    def computed(back: int, computed_at: datetime) -> RolledUpDay:
        day = today - timedelta(days=back)
        end = datetime.combine(day, time(), tzinfo=UTC) + DAY
        return RolledUpDay(day=day, through=min(end, computed_at), computed_at=computed_at)

    RolledUpDay.objects.bulk_create([
        computed(1, at(100, 0, 30)),  # 30 minutes after its end: not settled yet
        computed(2, at(99, 0, 59)),  # 59 minutes after its end: not settled
        computed(3, at(98, 1)),  # exactly an hour after its end: settled
        computed(5, at(95, 23)),  # during the day, then the scheduler stopped: not settled
        computed(90, at(10, 12)),  # the oldest day of the window, computed during the day
        computed(91, at(9, 12)),  # past the window: left as it is
        *(computed(back, now) for back in range(6, 90)),  # settled
    ])
    assert not settled(RolledUpDay.objects.get(day=today - timedelta(days=1)))
    assert settled(RolledUpDay.objects.get(day=today - timedelta(days=3)))
    assert days_to_roll_up(now=now) == [today] + [today - timedelta(days=n) for n in (1, 2, 5, 90, 4)]


def test_yesterday_is_recomputed_until_a_run_an_hour_after_its_end_has_computed_it(db):
    today = at(10, 0).date()
    yesterday = today - timedelta(days=1)
    roll_up_day(day=yesterday, now=at(9, 23, 50))  # computed to 23:50 only
    assert yesterday in days_to_roll_up(now=at(10, 0, 5))
    roll_up_day(day=yesterday, now=at(10, 0, 5))
    done = RolledUpDay.objects.get(day=yesterday)
    # To its end now, but rows of its last moments may still be committing: not settled.
    assert (done.through, done.computed_at) == (at(10, 0), at(10, 0, 5)) and not settled(done)
    assert yesterday in days_to_roll_up(now=at(10, 0, 10))
    roll_up_day(day=yesterday, now=at(10, 0) + SETTLE_AFTER)
    assert settled(RolledUpDay.objects.get(day=yesterday))
    assert yesterday not in days_to_roll_up(now=at(10, 1, 5))


def test_a_day_last_computed_before_its_end_is_recomputed_after_a_scheduler_outage_until_settled(db):
    roll_up_day(day=FIRST, now=at(0, 23, 55))  # the last run before the scheduler stopped
    ingest_flags(flags=[flag("en1", flagged_at=at(0, 23, 58))], now=at(0, 23, 58))  # after that run
    assert figures_for(Scope(organisation=None), start=FIRST, end=FIRST).days[0].queue_depth == 0
    # The scheduler is back at D2 00:10: D0 is recomputed, as well as D1, never computed.
    assert days_to_roll_up(now=at(2, 0, 10))[:3] == [DAYS[2], FIRST, DAYS[1]]
    roll_up_recent(now=at(2, 0, 10))
    program = figures_for(Scope(organisation=None), start=FIRST, end=DAYS[2])
    assert [d.queue_depth for d in program.days] == [1, 1, 1]
    assert program.days[0].queue_oldest_seconds == 120.0  # en1 at D0's end, flagged at 23:58
    assert program.days[0].through == at(1, 0)
    # D0, computed more than an hour after its end, is settled: never recomputed again. D1 ended ten
    # minutes before that run: it is recomputed until a run an hour after its end.
    assert settled(RolledUpDay.objects.get(day=FIRST))
    assert FIRST not in days_to_roll_up(now=at(2, 0, 15))
    assert DAYS[1] in days_to_roll_up(now=at(2, 0, 15))
    roll_up_recent(now=at(2, 1))
    assert DAYS[1] not in days_to_roll_up(now=at(2, 1, 5))


def test_the_job_never_backfills_past_ninety_days_and_skips_days_already_computed(db):
    now = at(100, 9)
    today = now.date()
    RolledUpDay.objects.bulk_create([
        RolledUpDay(day=today - timedelta(days=n), through=now, computed_at=now) for n in range(2, 89)])
    # Left: 89 and 90 days back; 91 is past the window.
    assert days_to_roll_up(now=now) == [today, today - timedelta(days=1), today - timedelta(days=89),
                                        today - timedelta(days=90)]


# --- reading a range: a fixed number of queries ---------------------------------------------------


TEXT_EARLY = "The city council will paint every bus in the city gold to celebrate the football team's victory"
EXTRA_TEXTS = [
    "A famous footballer secretly bought the moon and plans to build a stadium on it next summer",
    "Drinking seawater every day makes children grow taller according to a viral video from Brazil",
    "The new bridge in the harbour was designed to collapse on purpose to collect the insurance money",
    "Mobile phone masts change the weather over farms and ruin every harvest in the southern counties",
]


def one_rating(reviewer) -> None:
    ingest_flags(flags=[flag("en1", flagged_at=at(0, 7))], now=at(0, 7))
    rate(reviewer, Post.objects.get(external_id="en1"), "false", now=at(0, 9))


@pytest.mark.parametrize("volume", ["one rating", "five days of history and more reviewers"])
def test_reading_a_range_runs_a_fixed_number_of_queries_whatever_the_volume(request, volume):
    if volume == "one rating":
        organisation = OrganisationFactory(name="Full Facts", languages=["en"])
        one_rating(FactCheckerFactory(organisation=organisation))
        now = at(5, 6)
    else:
        history = request.getfixturevalue("history")
        organisation, now = history.org_en, history.now
        for n, reviewer in enumerate(FactCheckerFactory.create_batch(len(EXTRA_TEXTS), organisation=organisation)):
            name = f"extra{n}"
            ingest_flags(flags=[flag(name, flagged_at=at(n, 1), text=EXTRA_TEXTS[n], where=("en", "GB"))],
                         now=at(n, 1))
            rate(reviewer, Post.objects.get(external_id=name), "false", now=at(n, 2))
    roll_up_days(start=FIRST, end=LAST, now=now)
    counts = {}
    for scope in (None, organisation):
        with CaptureQueriesContext(connection) as queries:
            figures_for(Scope(organisation=scope), start=FIRST, end=LAST)
        counts["program" if scope is None else "organisation"] = len(queries)
    # The days computed, the figures, the reviewers' names (with their organisations), and for staff the
    # organisations' names: never the flags, ratings, actions or appeals behind them.
    assert counts == {"program": 4, "organisation": 3}


# --- edge cases of the definitions ----------------------------------------------------------------


def test_a_copy_of_a_claim_rated_true_stops_waiting_when_it_inherits_the_rating(db):
    organisation = OrganisationFactory(name="Full Facts", languages=["en"])
    reviewer = FactCheckerFactory(organisation=organisation)
    ingest_flags(flags=[flag("lemon", flagged_at=at(0, 8), text=CLAIM, where=("en", "GB"))], now=at(0, 8))
    rate(reviewer, Post.objects.get(external_id="lemon"), "true", now=at(0, 9))
    ingest_flags(flags=[flag("lemon-copy", flagged_at=at(0, 10), text=EXACT_COPY, where=("en", "GB"))],
                 now=at(0, 10))
    copy = Post.objects.get(external_id="lemon-copy")
    assert copy.queue_state == QueueState.MATCHED  # matched on arrival: out of the reviewers' queue
    apply_matches(post_ids=[copy.pk], now=at(0, 10, 5))  # a True rating takes no action, on the copy either
    assert not Action.objects.exists()
    roll_up_days(start=FIRST, end=FIRST, now=at(1, 6))
    day = figures_for(Scope(organisation=None), start=FIRST, end=FIRST).days[0]
    assert day.queue_depth == 0 == len(waiting_at(at(1, 0), None))


def test_a_rating_made_the_instant_its_post_was_flagged_counts_a_wait_of_zero(db):
    organisation = OrganisationFactory(name="Full Facts", languages=["en"])
    ingest_flags(flags=[flag("en1", flagged_at=at(0, 9))], now=at(0, 9))
    rate(FactCheckerFactory(organisation=organisation), Post.objects.get(external_id="en1"), "false", now=at(0, 9))
    roll_up_days(start=FIRST, end=FIRST, now=at(1, 6))
    day = figures_for(Scope(organisation=None), start=FIRST, end=FIRST).days[0]
    assert (day.first_ratings, day.time_to_rating_p50, day.time_to_rating_p90) == (1, 0.0, 0.0)


def test_an_appeal_decided_the_instant_it_was_filed_counts_in_the_median_time_to_decide(db):
    organisation = OrganisationFactory(name="Full Facts", languages=["en"])
    owner = UserFactory()
    ingest_flags(flags=[flag("en1", flagged_at=at(0, 8)), flag("en2", flagged_at=at(0, 8))], now=at(0, 8))
    posts = {p.external_id: p for p in Post.objects.select_related("page")}
    for post in posts.values():
        post.page.owners.add(owner)
        rate(FactCheckerFactory(organisation=organisation), post, "false", now=at(0, 9))
    colleague = FactCheckerFactory(organisation=organisation)
    for name, decided in (("en1", at(0, 12)), ("en2", at(0, 16))):
        appeal = file_appeal(owner=owner, post_id=posts[name].pk, kind="dispute", statement="No.", now=at(0, 12))
        decide_appeal(appeal_id=appeal.pk, reviewer=colleague, outcome="upheld", reason="Stands.", now=decided)
    roll_up_days(start=FIRST, end=FIRST, now=at(1, 6))
    figures = figures_for(Scope(organisation=None), start=FIRST, end=FIRST)
    assert figures.decide_seconds == [0.0, 4 * 3600.0]
    assert figures.appeal_median_seconds == 2 * 3600.0
    assert figures.appeals_within_target == 2


def test_a_copy_unlinked_from_its_rated_claim_waits_again_from_the_moment_it_is_unlinked(db, page_owner):
    organisation = OrganisationFactory(name="Full Facts", languages=["en"])
    rater, colleague = FactCheckerFactory.create_batch(2, organisation=organisation)
    ingest_flags(flags=[flag("lemon", flagged_at=at(0, 8), text=CLAIM, where=("en", "GB"))], now=at(0, 8))
    rate(rater, Post.objects.get(external_id="lemon"), "false", now=at(0, 9))
    ingest_flags(flags=[flag("lemon-copy", flagged_at=at(0, 10), text=EXACT_COPY, where=("en", "GB"))],
                 now=at(0, 10))
    copy = Post.objects.select_related("page").get(external_id="lemon-copy")
    copy.page.owners.add(page_owner)
    apply_matches(post_ids=[copy.pk], now=at(0, 10, 5))  # the copy inherits the claim's False
    copy.refresh_from_db()
    assert copy.queue_state == QueueState.MATCHED
    assert roll_up_day(day=FIRST, now=at(0, 13)) > 0
    assert figures_for(Scope(organisation=None), start=FIRST, end=FIRST).days[0].queue_depth == 0
    assert waiting_posts(at(0, 13)).count() == 0 == len(waiting_at(at(0, 13), None))
    # The owner says it is not the same claim; the claim's organisation agrees: the copy is unlinked at 14:00.
    appeal = file_appeal(owner=page_owner, post_id=copy.pk, kind="dispute", statement="Not the same claim.",
                         now=at(0, 12))
    decide_appeal(appeal_id=appeal.pk, reviewer=colleague, outcome="reversed", reason="A different claim.",
                  now=at(0, 14))
    copy.refresh_from_db()
    assert (copy.queue_state, copy.duplicate_of_id) == (QueueState.QUEUED, None)  # back in the queue, live
    assert Match.objects.get(post=copy).state == MatchState.REJECTED
    assert [p.pk for p in waiting_at(at(0, 14), None)] == []  # not yet at the very moment
    for moment in (at(0, 14, 1), at(1, 0)):
        waiting = [p.pk for p in waiting_at(moment, None)]
        assert waiting == [copy.pk] == list(waiting_posts(moment).values_list("pk", flat=True))
    # What waits now is exactly what the live queue states say waits.
    live = Post.objects.filter(queue_state__in=[QueueState.QUEUED, QueueState.CLAIMED, QueueState.GROUPED])
    assert list(live.values_list("pk", flat=True)) == [copy.pk]
    roll_up_day(day=FIRST, now=at(0, 14, 1))
    today = figures_for(Scope(organisation=None), start=FIRST, end=FIRST).days[0]
    assert (today.queue_depth, today.queue_oldest_seconds) == (1, (4 * 60 + 1) * 60.0)  # flagged at 10:00
    roll_up_days(start=FIRST, end=FIRST, now=at(1, 6))
    for scope in (None, organisation):
        day = figures_for(Scope(organisation=scope), start=FIRST, end=FIRST).days[0]
        assert shown(day) == approximately(direct_day(FIRST, scope, now=at(1, 6)))
        assert (day.queue_depth, day.queue_oldest_seconds) == (1, 14 * 3600.0)


def test_a_rating_made_before_the_posts_first_flag_is_not_a_first_rating_and_adds_no_wait(db):
    organisation = OrganisationFactory(name="Full Facts", languages=["en"])
    reviewer = FactCheckerFactory(organisation=organisation)
    # Rated while nobody had flagged it (through the API, which claims an unclaimed post)...
    early = PostFactory(external_id="early", page=PageFactory(external_id="page-early", name="Page of early"),
                        language="en", country="GB", posted_at=at(0, 5), queue_state=QueueState.UNFLAGGED,
                        flag_count=0, flag_weight=0.0, first_flagged_at=None)
    rate(reviewer, early, "false", now=at(0, 9))
    # ... and flagged later that day, after its rating.
    ingest_flags(flags=[flag("early", flagged_at=at(0, 11), text=TEXT_EARLY, where=("en", "GB"))], now=at(0, 11))
    early.refresh_from_db()
    assert early.first_flagged_at == at(0, 11) and early.flag_count == 1
    # A post flagged at 12:00 and rated at 14:00 is the day's only first rating.
    ingest_flags(flags=[flag("en1", flagged_at=at(0, 12))], now=at(0, 12))
    rate(reviewer, Post.objects.get(external_id="en1"), "partly_false", now=at(0, 14))
    roll_up_days(start=FIRST, end=FIRST, now=at(1, 6))
    for scope in (None, organisation):
        day = figures_for(Scope(organisation=scope), start=FIRST, end=FIRST).days[0]
        assert shown(day) == approximately(direct_day(FIRST, scope, now=at(1, 6)))
        assert day.ratings == {"false": 1, "partly_false": 1}  # both ratings count as ratings
        assert (day.first_ratings, day.time_to_rating_p50, day.time_to_rating_p90) == (1, 7200.0, 7200.0)
        assert day.queue_depth == 0  # rated before its flag, it never waited
