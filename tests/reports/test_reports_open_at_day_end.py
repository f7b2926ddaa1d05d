"""Reports of harm open at the end of a past day are counted as they stood at that moment, not from each report's
state now: rebuilding a day after its reports were decided, reopened or withdrawn gives the figures it had at its
end, on GET /api/v1/stats and in the dashboard's CSV."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime, time, timedelta

import pytest

from factcheck.models import Flag, Post, ReportOutcome
from factcheck.withdrawal import withdraw_flag
from moderation.harm_reports import claim_report, decide_report, reopen_report
from reports.rollup import roll_up_day
from tests.conftest import bearer_client
from tests.scenarios import reported_post

pytestmark = pytest.mark.django_db
DAY = datetime(2025, 3, 5, tzinfo=UTC).date()  # D-1, the past day rebuilt; D is the day after it


def at(day_offset: int, hour: int, minute: int = 0) -> datetime:
    """A moment `day_offset` days after D-1 (0: D-1, 1: D, -1: D-2)."""
    return datetime.combine(DAY + timedelta(days=day_offset), time(hour, minute), tzinfo=UTC)


def decide(staff, post: Post, when: datetime) -> None:
    claim_report(staff=staff, post_id=post.pk, now=when)
    decide_report(staff=staff, post_id=post.pk, outcome=ReportOutcome.NO_VIOLATION,
                  reason="Banter between friends, no named victim.", now=when)


def reopen(staff, post: Post, *, decided: datetime, when: datetime) -> None:
    reopen_report(staff=staff, post_id=post.pk, decided_at=decided, reason="Decided on the wrong post.", now=when)


def withdraw(post: Post, when: datetime) -> None:
    flag = Flag.objects.get(post=post)
    withdraw_flag(sender=flag.submitted_by, idempotency_key=flag.idempotency_key, now=when)


def ends_of_days(user) -> list[tuple[int, int]]:
    """(reports open, of them overdue) at the end of D-1 and of D, as GET /api/v1/stats shows them (the days rolled
    up)."""
    body = bearer_client(user).get("/api/v1/stats", {"from": DAY.isoformat(),
                                                     "to": (DAY + timedelta(days=1)).isoformat()}).json()
    return [(day["notices"]["reports_open"], day["notices"]["reports_overdue"]) for day in body["days"]
            if day["computed"]]


def test_a_past_day_rebuilt_after_its_reports_were_decided_reopened_or_withdrawn_counts_them_as_at_its_end(
    ts_user, client,
):
    # Open at the end of D-1: arrived on D-2 (38 h before the day's end: overdue), decided on D.
    decided_later = reported_post(external_id="decided-later", at=at(-1, 10))
    # Open at the end of D-1 (15 h: not overdue), withdrawn by its sender on D.
    withdrawn_later = reported_post(external_id="withdrawn-later", reports=[("hate", "user_report")], at=at(0, 9))
    # Decided on D-1, so not open at its end; reopened on D.
    reopened_later = reported_post(external_id="reopened-later", at=at(-1, 12))
    decide(ts_user, reopened_later, at(0, 10))
    # Open at the end of D-1 (34 h: overdue), decided on D and reopened the same day.
    decided_and_reopened = reported_post(external_id="decided-and-reopened", reports=[("violence", "partner")],
                                         at=at(-1, 14))
    # Decided on D-3 and reopened on D-1 (its round began then: 14 h before the day's end, not overdue); decided
    # again on D and reopened once more.
    reopened_twice = reported_post(external_id="reopened-twice", at=at(-2, 8))
    decide(ts_user, reopened_twice, at(-2, 10))
    reopen(ts_user, reopened_twice, decided=at(-2, 10), when=at(0, 10))
    # Decided on D-1, so not open at its end; withdrawn on D (a withdrawal keeps the decision that answered it).
    decided_then_withdrawn = reported_post(external_id="decided-then-withdrawn", at=at(-1, 9))
    decide(ts_user, decided_then_withdrawn, at(0, 9))
    # Withdrawn during D-1: not open at its end, then or now.
    withdraw(reported_post(external_id="withdrawn-before", at=at(-1, 8)), at(0, 8))

    # What the periodic job stored half an hour after D-1 ended, before anything happened on D.
    roll_up_day(day=DAY, now=at(1, 0, 30))
    assert ends_of_days(ts_user) == [(4, 2)]

    decide(ts_user, decided_later, at(1, 10))
    withdraw(withdrawn_later, at(1, 11))
    reopen(ts_user, reopened_later, decided=at(0, 10), when=at(1, 12))
    decide(ts_user, decided_and_reopened, at(1, 9))
    reopen(ts_user, decided_and_reopened, decided=at(1, 9), when=at(1, 13))
    decide(ts_user, reopened_twice, at(1, 10, 30))
    reopen(ts_user, reopened_twice, decided=at(1, 10, 30), when=at(1, 14))
    withdraw(decided_then_withdrawn, at(1, 15))

    # D-1 rebuilt after all of that (and D rolled up): D-1 keeps the figures it had at its end. At D's end three are
    # open, each reopened that day (their rounds began then: none overdue).
    roll_up_day(day=DAY, now=at(2, 2))
    roll_up_day(day=DAY + timedelta(days=1), now=at(2, 2))
    assert ends_of_days(ts_user) == [(4, 2), (3, 0)]
    client.force_login(ts_user)
    rows = list(csv.DictReader(io.StringIO(client.get("/dashboard/notices.csv", {
        "from": DAY.isoformat(), "to": (DAY + timedelta(days=1)).isoformat()}).content.decode())))
    assert [(row["reports_open"], row["reports_overdue"]) for row in rows] == [("4", "2"), ("3", "0")]
