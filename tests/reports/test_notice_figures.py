"""Notices in the figures: the dashboard, GET /api/v1/stats and the transparency report count flags by category
and source, their outcomes, reports of harm open and overdue, and the median time from report to decision."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime, time, timedelta

import pytest
from django.core.management import call_command

from factcheck.models import Flag, ReportOutcome
from moderation.harm_reports import claim_report, decide_report
from moderation.models import ReportAnswer
from reports.notices import histogram_median, wait_bucket
from reports.rollup import roll_up_days
from tests.conftest import bearer_client
from tests.factories import FlagFactory, StaffFactory
from tests.scenarios import reported_post

pytestmark = pytest.mark.django_db
DAY = datetime(2025, 3, 4, tzinfo=UTC).date()


def at(hour: int, minute: int = 0, *, day=DAY):
    return datetime.combine(day, time(hour, minute), tzinfo=UTC)


@pytest.fixture
def notices():
    """On DAY: a violence report (trusted flagger) removed after 2 h, two hate reports answered "no violation"
    after 6 h, a misinformation flag waiting, and a harassment report still open at the end of the next day."""
    staff = StaffFactory()
    violent = reported_post(reports=[("violence", "trusted_flagger")], at=at(8), posted_at=at(6))
    hateful = reported_post(reports=[("hate", "user_report"), ("hate", "classifier")], at=at(9), posted_at=at(6))
    reported_post(reports=[("misinformation", "user_report")], at=at(10), posted_at=at(6))
    reported_post(reports=[("harassment", "user_report")], at=at(11), posted_at=at(6))
    claim_report(staff=staff, post_id=violent.pk, now=at(10))
    decide_report(staff=staff, post_id=violent.pk, outcome=ReportOutcome.REMOVED, ground="violence",
                  reason="A call to attack the clinic.", now=at(10))
    claim_report(staff=staff, post_id=hateful.pk, now=at(15))
    decide_report(staff=staff, post_id=hateful.pk, outcome=ReportOutcome.NO_VIOLATION, reason="A quote.",
                  now=at(15))
    roll_up_days(start=DAY, end=DAY + timedelta(days=1), now=at(12, day=DAY + timedelta(days=2)))


def test_the_stats_api_counts_notices_by_category_and_source_outcomes_and_reports_waiting(notices, ts_user):
    body = bearer_client(ts_user).get("/api/v1/stats", {"from": DAY.isoformat(),
                                                         "to": (DAY + timedelta(days=1)).isoformat()}).json()
    day, next_day = body["days"]
    assert day["notices"]["by_category"] == {"misinformation": 1, "violence": 1, "hate": 2, "harassment": 1,
                                             "imminent_harm": 0}
    assert day["notices"]["by_source"] == {"user_report": 3, "classifier": 1, "partner": 0, "trusted_flagger": 1}
    assert day["notices"]["by_category_and_source"]["hate:classifier"] == 1
    assert day["notices"]["decided"] == {"removed": 1, "no_violation": 2, "sent_to_fact_checkers": 0, "rated": 0}
    assert (day["notices"]["reports_open"], day["notices"]["reports_overdue"]) == (1, 0)
    assert (next_day["notices"]["reports_open"], next_day["notices"]["reports_overdue"]) == (1, 1)
    # Waits of 2 h, 6 h and 6 h: the median is 6 h, each within the 24-hour target.
    assert body["reports"] == {"decided": 3, "median_seconds_to_decide": 6 * 3600, "decided_within_target": 3,
                               "target_seconds": 86400}


def test_an_organisations_figures_have_no_notices(notices):
    from tests.factories import FactCheckerFactory

    body = bearer_client(FactCheckerFactory()).get("/api/v1/stats", {"from": DAY.isoformat(),
                                                                      "to": DAY.isoformat()}).json()
    assert body["days"][0]["notices"] is None and body["reports"] is None


def test_the_dashboard_draws_the_notices_and_downloads_them_as_csv(notices, client, ts_user):
    client.force_login(ts_user)
    query = {"from": DAY.isoformat(), "to": (DAY + timedelta(days=1)).isoformat()}
    page = client.get("/dashboard/", query)
    chart = next(chart for chart in page.context["charts"] if chart.slug == "notices")
    assert "Median time from a report of harm to its decision: 6 h (target 1 d)" in chart.summary
    assert "3 of 3 decided within 1 d" in chart.summary
    rows = list(csv.DictReader(io.StringIO(client.get("/dashboard/notices.csv", query).content.decode())))
    assert (rows[0]["received_hate"], rows[0]["from_trusted_flagger"], rows[0]["answered_no_violation"]) == (
        "2", "1", "2")
    assert (rows[1]["reports_open"], rows[1]["reports_overdue"]) == ("1", "1")


def test_the_transparency_report_counts_notices_and_the_median_time_to_decide_by_category(notices, tmp_path):
    out = tmp_path / "report.csv"
    call_command("transparency_report", "--from", DAY.isoformat(), "--to", DAY.isoformat(), "--out", str(out),
                 stdout=io.StringIO())
    rows = {(row["section"], row["item"]): row for row in csv.DictReader(io.StringIO(out.read_text()))}
    assert rows[("notices_by_category", "hate")]["count"] == "2"
    assert rows[("notices_by_category_and_source", "violence:trusted_flagger")]["count"] == "1"
    assert rows[("notices_by_outcome", "hate:no_violation")]["count"] == "2"
    assert rows[("notices_by_outcome", "violence:removed")]["count"] == "1"
    assert (rows[("notices_decided", "hate")]["count"], rows[("notices_decided", "hate")][
        "median_seconds_to_decide"]) == ("2", str(6 * 3600))
    assert rows[("notices_decided", "violence")]["median_seconds_to_decide"] == str(2 * 3600)
    assert rows[("notices_decided", "harassment")]["median_seconds_to_decide"] == ""


def test_a_flag_on_a_post_rated_before_it_arrived_waited_no_time(tmp_path):
    # An imported or back-dated rating: the flag is answered before it was received. The report said -7200.
    flag = FlagFactory()
    Flag.objects.filter(pk=flag.pk).update(received_at=at(10), status="decided", outcome="rated", decided_at=at(8))
    ReportAnswer.objects.create(flag=flag, outcome="rated", answered_at=at(8))  # the answer the figures count
    out = tmp_path / "report.csv"
    call_command("transparency_report", "--from", DAY.isoformat(), "--to", DAY.isoformat(), "--out", str(out),
                 stdout=io.StringIO())
    rows = {(row["section"], row["item"]): row for row in csv.DictReader(io.StringIO(out.read_text()))}
    assert rows[("notices_decided", "misinformation")]["median_seconds_to_decide"] == "0"


def test_the_wait_histogram_keeps_minutes_then_quarter_hours_then_hours_and_reads_its_median():
    assert [wait_bucket(s) for s in (59, 61 * 60, 90 * 60 + 59, 25 * 3600 + 59 * 60)] == [0, 60, 90, 1500]
    assert histogram_median({10: 1, 20: 1}) == 15 * 60
    assert histogram_median({10: 2, 600: 1}) == 10 * 60
    assert histogram_median({}) is None
