"""A decision on reports corrected later (reopened, decided again, overruled by a removal) is counted on its own day,
as a correction: the day of the first decision keeps its count, in the dashboard's roll-up (settled days are never
recomputed) and in the DSA transparency report alike, which therefore agree and stay reproducible."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta

import pytest

from factcheck.models import ReportOutcome
from moderation.harm_reports import claim_report, decide_report, reopen_report
from moderation.models import ReportAnswer
from moderation.staff_actions import remove_post
from reports.api import stats_out
from reports.dsa import report_lines
from reports.figures import Scope, figures_for
from reports.rollup import roll_up_day
from tests.factories import StaffFactory
from tests.scenarios import reported_post

pytestmark = pytest.mark.django_db
D1 = datetime(2025, 3, 4, tzinfo=UTC).date()
HOUR = 3600


def at(day_offset: int, hour: int):
    return datetime.combine(D1 + timedelta(days=day_offset), time(hour), tzinfo=UTC)


def settle(*days: int) -> None:
    """Roll the days up the morning after each, as the periodic job does: never again."""
    for offset in days:
        roll_up_day(day=D1 + timedelta(days=offset), now=at(offset + 1, 2))


def dashboard(first: int, last: int):
    """Per day, (decided, corrected) as the dashboard's figures read them back, for the days with any."""
    figures = figures_for(Scope(organisation=None), start=D1 + timedelta(days=first), end=D1 + timedelta(days=last))
    return figures, {(d.day - D1).days: (d.notices_decided, d.notices_corrected) for d in figures.days
                     if d.notices_decided or d.notices_corrected}


def dsa(first: int, last: int) -> dict[tuple[str, str], int]:
    """The report's decision lines with a count, for the days from `first` to `last` (offsets from D1)."""
    return {(line.section, line.item): line.count
            for line in report_lines(start=D1 + timedelta(days=first), end=D1 + timedelta(days=last))
            if line.section in ("notices_by_outcome", "notices_corrected", "notices_decided") and line.count}


def test_a_reopened_decision_decided_again_counts_once_on_its_day_and_once_as_a_correction(ts_user):
    """The review's probe: three harassment reports answered "no violation" on D1 (rolled up), reopened and removed
    on D3. The dashboard said 6 decisions for 3 reports; the report for D1 lost them once corrected."""
    post = reported_post(reports=(("harassment", "user_report"),) * 3, at=at(0, 9))
    claim_report(staff=ts_user, post_id=post.pk, now=at(0, 10))
    decide_report(staff=ts_user, post_id=post.pk, outcome=ReportOutcome.NO_VIOLATION,
                  reason="Banter between friends, no named victim.", now=at(0, 10))
    settle(0)
    published_for_d1 = dsa(0, 0)
    tariq = StaffFactory(username="tariq")
    reopen_report(staff=tariq, post_id=post.pk, decided_at=at(0, 10), reason="Wrong call: a named victim.",
                  now=at(3, 9))
    claim_report(staff=tariq, post_id=post.pk, now=at(3, 9))
    decide_report(staff=tariq, post_id=post.pk, outcome=ReportOutcome.REMOVED, ground="harassment",
                  reason="Harasses a named person.", now=at(3, 9))
    settle(1, 2, 3)

    figures, days = dashboard(0, 3)
    assert days == {0: ({"harassment:no_violation": 3}, {}),
                    3: ({}, {"harassment:reopened": 3, "harassment:removed": 3})}
    assert figures.report_median_seconds == HOUR  # to the first decision, not to the correction three days on
    notices = {d["date"]: d["notices"] for d in stats_out(figures)["days"]}
    assert notices[D1]["decided"]["no_violation"] == 3 and notices[D1]["corrected"]["removed"] == 0
    assert notices[D1 + timedelta(days=3)]["decided"]["removed"] == 0
    assert notices[D1 + timedelta(days=3)]["corrected"] == {"reopened": 3, **dict.fromkeys(ReportOutcome.values, 0),
                                                            "removed": 3}
    assert stats_out(figures)["reports"]["decided"] == 3

    assert dsa(0, 0) == published_for_d1 == {("notices_by_outcome", "harassment:no_violation"): 3,
                                             ("notices_decided", "harassment"): 3}
    assert dsa(3, 3) == {("notices_corrected", "harassment:reopened"): 3,
                         ("notices_corrected", "harassment:removed"): 3}
    assert dsa(0, 3) == {**published_for_d1, **dsa(3, 3)}
    median = {line.item: line.median_seconds for line in report_lines(start=D1, end=D1 + timedelta(days=3))
              if line.section == "notices_decided"}
    assert median["harassment"] == HOUR

    chains = [(a.outcome, a.replaces.outcome if a.replaces else None, a.actor.username)
              for a in ReportAnswer.objects.filter(flag__post=post).select_related("replaces", "actor")]
    assert sorted(chains) == sorted([("no_violation", None, ts_user.username)] * 3
                                    + [("", "no_violation", "tariq")] * 3 + [("removed", "", "tariq")] * 3)


def test_a_decision_overruled_by_a_removal_is_a_correction_on_the_removals_day(ts_user):
    post = reported_post(reports=(("hate", "user_report"),), at=at(0, 9))
    claim_report(staff=ts_user, post_id=post.pk, now=at(0, 11))
    decide_report(staff=ts_user, post_id=post.pk, outcome=ReportOutcome.SENT_TO_FACT_CHECKERS,
                  reason="A claim about a vaccine, for the fact-checkers.", now=at(0, 11))
    settle(0)
    remove_post(staff=ts_user, post_id=post.pk, ground="hate", reason="Slurs against a group, seen on a re-read.",
                now=at(1, 9))
    settle(1)

    _, days = dashboard(0, 1)
    assert days == {0: ({"hate:sent_to_fact_checkers": 1}, {}), 1: ({}, {"hate:removed": 1})}
    assert dsa(0, 1) == {("notices_by_outcome", "hate:sent_to_fact_checkers"): 1, ("notices_decided", "hate"): 1,
                         ("notices_corrected", "hate:removed"): 1}
    assert dsa(1, 1) == {("notices_corrected", "hate:removed"): 1}


def test_a_reopened_report_decided_again_another_day_counts_each_step_on_its_day(ts_user):
    post = reported_post(reports=(("violence", "trusted_flagger"),), at=at(0, 8))
    claim_report(staff=ts_user, post_id=post.pk, now=at(0, 12))
    decide_report(staff=ts_user, post_id=post.pk, outcome=ReportOutcome.NO_VIOLATION,
                  reason="A film quote, no threat.", now=at(0, 12))
    reopen_report(staff=ts_user, post_id=post.pk, decided_at=at(0, 12), reason="Check the context again.",
                  now=at(1, 9))
    claim_report(staff=ts_user, post_id=post.pk, now=at(2, 9))
    decide_report(staff=ts_user, post_id=post.pk, outcome=ReportOutcome.NO_VIOLATION,
                  reason="Confirmed: a film quote.", now=at(2, 9))
    settle(0, 1, 2)

    figures, days = dashboard(0, 2)
    assert days == {0: ({"violence:no_violation": 1}, {}), 1: ({}, {"violence:reopened": 1}),
                    2: ({}, {"violence:no_violation": 1})}
    assert figures.report_median_seconds == 4 * HOUR
    assert dsa(0, 2) == {("notices_by_outcome", "violence:no_violation"): 1, ("notices_decided", "violence"): 1,
                         ("notices_corrected", "violence:reopened"): 1,
                         ("notices_corrected", "violence:no_violation"): 1}


def test_a_report_answered_on_arrival_is_a_first_decision(ts_user):
    post = reported_post(reports=(("violence", "user_report"),), at=at(0, 8))
    remove_post(staff=ts_user, post_id=post.pk, ground="violence", reason="A threat against a named person.",
                now=at(0, 9))
    reported_post(post=post, reports=(("violence", "trusted_flagger"),), at=at(0, 10))  # answered `removed` at once
    settle(0)

    _, days = dashboard(0, 0)
    assert days == {0: ({"violence:removed": 2}, {})}
    arrival = ReportAnswer.objects.get(flag__post=post, flag__source="trusted_flagger")
    assert (arrival.outcome, arrival.answered_at, arrival.actor, arrival.replaces) == ("removed", at(0, 10), None, None)
