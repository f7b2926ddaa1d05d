"""The dashboard's roll-up over time: empty days, days never computed and today; rebuilding gives the
same rows and a stale run never overwrites a later one; which days the periodic job computes.
"""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta

import pytest

from factcheck.ingest import ingest_flags
from moderation.appeals import decide_appeal, file_appeal
from moderation.selectors import active_removal
from moderation.staff_actions import lift_action
from reports.figures import Scope, figures_for
from reports.models import DailyFigure, RolledUpDay
from reports.rollup import (
    SETTLE_AFTER,
    days_to_roll_up,
    roll_up_day,
    roll_up_days,
    roll_up_recent,
    settled,
)
from tests.factories import (
    DecisionFactory,
)
from tests.reports.conftest import DAYS, FIRST, LAST, at, flag
from tests.reports.direct_counts import (
    DAY,
    SCOPES,
    approximately,
    direct_day,
    figure_of,
    organisation_of,
    shown,
    stored_rows,
)

pytestmark = pytest.mark.django_db


# --- days: empty, never computed, today ----------------------------------------------------------


def test_a_day_with_no_activity_is_computed_with_no_flows_and_carries_the_stocks(rolled_up):
    empty = figures_for(Scope(organisation=None), start=DAYS[2], end=DAYS[2]).days[0]
    assert empty.computed and empty.through == at(3, 0)
    assert (empty.ratings, empty.decisions, empty.appeals_filed, empty.appeals_closed) == ({}, {}, {}, {})
    assert (empty.first_ratings, empty.time_to_rating_p50) == (0, None)
    assert (empty.queue_depth, empty.appeals_open, empty.appeals_overdue) == (5, 2, 2)


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
    assert program.queue_depth == 1 and program.ratings == {}  # en4, unrated at 12:30 (en2 and de1 removed)


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
    # en2 was removed on D4: restored first, since a removed post is never rated.
    lift_action(actor=h.staff, action_id=active_removal(h.posts["en2"]).pk, reason="Threat misread.",
                now=at(6, 10, 30))
    DecisionFactory(reviewer=h.en_a, post=h.posts["en2"], verdict="false",
                    created_at=at(6, 11), decided_at=at(6, 11, 1))
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
    assert figure_of("program", history, 3, "queue_depth") == 1
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
