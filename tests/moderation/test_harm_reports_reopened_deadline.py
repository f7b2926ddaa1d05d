"""A reopened decision on reports of harm is a new round for staff: the 24-hour target to decide runs from the
reopening, not from the reports' first receipt, on the desk's list and post page, on the admin index and in the
dashboard's overdue count; the median time from report to decision still runs from receipt to the first decision."""

from __future__ import annotations

import re
from datetime import UTC, datetime, time, timedelta

import pytest
from django.utils import timezone

from factcheck.models import ReportOutcome
from moderation.harm_reports import claim_report, decide_report, reopen_report
from reports.figures import Scope, figures_for
from reports.rollup import roll_up_day
from tests.scenarios import reported_post

pytestmark = pytest.mark.django_db
WHY = "Decided on the wrong post: the harassment is real."


def rows_marked(body: str) -> dict[str, str]:
    """Each row of the desk's list, top to bottom, with its class ("is-overdue" or "")."""
    return {post: marked for marked, post in re.findall(r'<tr class="([^"]*)" data-post="([^"]+)"', body)}


def decided_then_reopened(staff, *, external_id: str, received, decided, reopened, **fields):
    """A post reported at `received`, its reports decided "no violation" at `decided` and reopened at `reopened`."""
    post = reported_post(external_id=external_id, reports=[("harassment", "user_report")] * 2, at=received, **fields)
    claim_report(staff=staff, post_id=post.pk, now=decided)
    decide_report(staff=staff, post_id=post.pk, outcome=ReportOutcome.NO_VIOLATION,
                  reason="Banter between friends, no named victim.", now=decided)
    reopen_report(staff=staff, post_id=post.pk, decided_at=decided, reason=WHY, now=reopened)
    return post


def test_a_report_received_last_week_and_reopened_now_is_due_in_24_hours_not_overdue(ts_user, staff_client):
    now = timezone.now()
    post = decided_then_reopened(ts_user, external_id="reopened-old", received=now - timedelta(days=7),
                                 decided=now - timedelta(days=6), reopened=now - timedelta(minutes=1))
    body = staff_client.get("/staff/reports/").content.decode()
    assert rows_marked(body) == {"reopened-old": ""}
    assert re.search(r"due in 23 h 5\d min", body) and 'class="badge overdue"' not in body
    page = staff_client.get(f"/staff/reports/{post.pk}/").content.decode()
    assert re.search(r"due in 23 h 5\d min", page) and 'class="badge overdue"' not in page
    index = staff_client.get("/admin/").content.decode()
    assert re.search(r"Overdue reports</a></th>\s*<td>0 posts waiting more than 24 hours", index)


def test_a_reopened_report_is_overdue_24_hours_after_its_reopening(ts_user, staff_client):
    now = timezone.now()
    post = decided_then_reopened(ts_user, external_id="reopened-late", received=now - timedelta(days=7),
                                 decided=now - timedelta(days=6), reopened=now - timedelta(hours=25))
    body = staff_client.get("/staff/reports/").content.decode()
    assert rows_marked(body) == {"reopened-late": "is-overdue"}
    assert '<span class="badge overdue">1 overdue</span>' in body
    # 25 hours after the reopening, not 7 days after the first report.
    assert "overdue by 1 h" in body and "overdue by 6 d" not in body
    page = staff_client.get(f"/staff/reports/{post.pk}/").content.decode()
    assert '<span class="badge overdue">Overdue</span>' in page and "overdue by 1 h" in page
    index = staff_client.get("/admin/").content.decode()
    assert re.search(r"Overdue reports</a></th>\s*<td>1 post waiting more than 24 hours", index)


def test_a_report_that_arrived_before_the_reopening_keeps_the_round_waiting_from_its_arrival(ts_user, staff_client):
    # The round staff must decide began with the new report 30 hours ago: reopening an old decision into it makes
    # it no younger.
    now = timezone.now()
    post = reported_post(external_id="mixed", reports=[("hate", "user_report")], at=now - timedelta(days=7))
    claim_report(staff=ts_user, post_id=post.pk, now=now - timedelta(days=6))
    decide_report(staff=ts_user, post_id=post.pk, outcome=ReportOutcome.NO_VIOLATION,
                  reason="Criticism of an idea, not of people.", now=now - timedelta(days=6))
    reported_post(post=post, reports=[("hate", "partner")], at=now - timedelta(hours=30))
    reopen_report(staff=ts_user, post_id=post.pk, decided_at=now - timedelta(days=6), reason=WHY, now=now)
    body = staff_client.get("/staff/reports/").content.decode()
    assert rows_marked(body) == {"mixed": "is-overdue"} and "overdue by 6 h" in body


def test_reopening_leaves_the_desks_order_as_it_was(ts_user, staff_client):
    # Trusted flaggers' first, then severity, then velocity, whatever waited longest: a reopened post is not
    # pushed up or down by its new round's start.
    now = timezone.now()
    posted = now - timedelta(days=8)
    reported_post(external_id="trusted-new", reports=[("harassment", "trusted_flagger")], views=10, posted_at=posted)
    decided_then_reopened(ts_user, external_id="reopened-fast", received=now - timedelta(days=7),
                          decided=now - timedelta(days=6), reopened=now, views=900_000, posted_at=posted)
    reported_post(external_id="slow-late", reports=[("harassment", "user_report")], views=100, posted_at=posted,
                  at=now - timedelta(hours=30))
    body = staff_client.get("/staff/reports/").content.decode()
    assert list(rows_marked(body).items()) == [("trusted-new", ""), ("reopened-fast", ""), ("slow-late", "is-overdue")]


D1 = datetime(2025, 3, 4, tzinfo=UTC).date()


def at(day_offset: int, hour: int) -> datetime:
    return datetime.combine(D1 + timedelta(days=day_offset), time(hour), tzinfo=UTC)


def test_the_dashboards_overdue_count_runs_from_the_reopening_and_its_median_from_the_receipt(ts_user):
    decided_then_reopened(ts_user, external_id="reopened", received=at(0, 9), decided=at(0, 11), reopened=at(7, 20))
    for offset in (7, 8):
        roll_up_day(day=D1 + timedelta(days=offset), now=at(offset + 1, 2))
    figures = figures_for(Scope(organisation=None), start=D1 + timedelta(days=7), end=D1 + timedelta(days=8))
    ends = {(d.day - D1).days: (d.reports_open, d.reports_overdue) for d in figures.days}
    # Open at the end of the reopening's day (4 hours into its round) and not overdue; overdue a day later.
    assert ends == {7: (2, 0), 8: (2, 2)}
    roll_up_day(day=D1, now=at(1, 2))
    first = figures_for(Scope(organisation=None), start=D1, end=D1)
    assert first.report_median_seconds == 2 * 3600  # receipt to first decision: two hours
