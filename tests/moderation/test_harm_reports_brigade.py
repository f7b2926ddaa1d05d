"""The reports desk when a post is brigaded: its row in the queue and its own page count every open report (by
category and by source) and list a bounded few, trusted flaggers' always first; the queue's queries do not grow
with the reports, and one decision still answers every report, listed or not.

An audit made 3,000 reports of one post and 500 of ten others: the post's page was 917 KB, 3,000 lines, and page 2
of the queue 1.9 MB and 441,655 px tall (moderation.report_queue, LISTED_IN_QUEUE and LISTED_ON_POST)."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from factcheck.models import ReportOutcome, ReportStatus
from moderation.harm_reports import claim_report
from moderation.models import ReportedPost
from tests.moderation.test_harm_reports_desk import desk_queries
from tests.scenarios import reported_post

pytestmark = pytest.mark.django_db


def queue_row(body: str, external_id: str) -> str:
    """The markup of one row of the queue."""
    return re.search(rf'data-post="{re.escape(external_id)}">(.*?)</tr>', body, re.S).group(1)


def report_lines(html: str) -> list[str]:
    """The reports listed, one per line, in every list of reports of `html`."""
    return [line for listed in re.findall(r'<ul class="report-list">(.*?)</ul>', html, re.S)
            for line in re.findall(r"<li>(.*?)</li>", listed, re.S)]


def brigaded(*, external_id: str = "brigaded", trusted: int = 3, old: int = 60, new: int = 8):
    """A post reported `trusted` times by trusted flaggers two days ago, `old` times for hate by users a day ago,
    and `new` times for violence by a classifier an hour ago."""
    now = timezone.now()
    post = reported_post(external_id=external_id, reports=[("violence", "trusted_flagger")] * trusted,
                         at=now - timedelta(days=2))
    reported_post(post=post, reports=[("hate", "user_report")] * old, at=now - timedelta(days=1))
    reported_post(post=post, reports=[("violence", "classifier")] * new, at=now - timedelta(hours=1))
    return post


def test_a_brigaded_posts_row_counts_every_report_and_lists_the_trusted_flaggers_and_the_five_newest(staff_client):
    brigaded(trusted=3, old=60, new=8)
    reported_post(external_id="quiet", reports=[("harassment", "user_report"), ("hate", "partner")])
    body = staff_client.get("/staff/reports/").content.decode()
    row = queue_row(body, "brigaded")
    lines = report_lines(row)
    # The trusted flaggers' three, although 68 others are newer, then the five newest others (the classifier's).
    assert len(lines) == 3 + 5
    assert ["Trusted flagger" in line for line in lines] == [True] * 3 + [False] * 5
    assert all("Classifier" in line for line in lines[3:])
    assert "<strong>71 open reports</strong>" in row
    by_category = re.search(r'aria-label="Open reports by category">(.*?)</ul>', row, re.S).group(1)
    assert re.findall(r">([^<>]+)</span> ([\d,]+)</li>", by_category) == [("Violence", "11"), ("Hate", "60")]
    by_source = re.search(r'aria-label="Open reports by source">(.*?)</ul>', row, re.S).group(1)
    assert re.findall(r"<li>([^<]+)</li>", by_source) == ["Trusted flagger: 3", "User report: 60", "Classifier: 8"]
    post_id = ReportedPost.objects.get(post__external_id="brigaded").post_id
    assert re.search(rf'<a href="/staff/reports/{post_id}/">and 63 more<', row)
    # A post with few reports lists them all, with no totals or "more" to read.
    quiet = queue_row(body, "quiet")
    assert len(report_lines(quiet)) == 2 and "open reports</strong>" not in quiet and "more" not in quiet


def test_a_flood_of_reports_leaves_every_row_of_the_queue_a_few_lines(staff_client):
    for n in range(3):
        brigaded(external_id=f"brigaded-{n}", trusted=1, old=120, new=0)
    body = staff_client.get("/staff/reports/").content.decode()
    for n in range(3):
        row = queue_row(body, f"brigaded-{n}")
        assert len(report_lines(row)) == 1 + 5 and "<strong>121 open reports</strong>" in row
    assert len(report_lines(body)) == 3 * 6


def test_trusted_flaggers_reports_are_listed_before_newer_ones_up_to_a_bound_only_a_flood_of_them_reaches(
    staff_client,
):
    post = reported_post(external_id="flagged", reports=[("violence", "trusted_flagger")] * 25,
                         at=timezone.now() - timedelta(hours=3))
    reported_post(post=post, reports=[("hate", "user_report")] * 3, at=timezone.now())
    row = queue_row(staff_client.get("/staff/reports/").content.decode(), "flagged")
    lines = report_lines(row)
    assert ["Trusted flagger" in line for line in lines] == [True] * 20 + [False] * 3
    assert re.search(r">and 5 more<.*</a>, 5 of them from trusted flaggers</p>", row)
    # The post's own page lists every one of them.
    page = staff_client.get(f"/staff/reports/{post.pk}/").content.decode()
    assert ["Trusted flagger" in line for line in report_lines(page)] == [True] * 25 + [False] * 3


def test_the_posts_page_lists_the_trusted_flaggers_and_the_newest_fifty_with_the_totals_and_a_link_to_all(
    staff_client,
):
    post = brigaded(trusted=4, old=120, new=10)
    page = staff_client.get(f"/staff/reports/{post.pk}/").content.decode()
    lines = report_lines(page)
    assert len(lines) == 4 + 50
    assert ["Trusted flagger" in line for line in lines] == [True] * 4 + [False] * 50
    assert all("Classifier" in line for line in lines[4:14]) and all("User report" in line for line in lines[14:])
    assert "134 open reports" in page
    assert "Trusted flaggers' reports</h2>" in page
    assert "Other reports: the newest 50 of 130</h2>" in page
    assert re.search(r'aria-label="Open reports by category">\s*<li><span class="badge severity-violence">Violence'
                     r"</span> 14</li><li><span class=\"badge severity-hate\">Hate</span> 120</li>", page)
    link = re.search(r"<a href=\"([^\"]+)\">All 134 open reports in the admin's list of flags</a>", page)
    assert link
    # The admin's list, filtered to the post's open reports of harm: 134 of them, no other flag.
    reported_post(post=post, reports=[("misinformation", "user_report")], at=timezone.now())
    listed = staff_client.get(link.group(1).replace("&amp;", "&"))
    assert listed.status_code == 200
    assert listed.context["cl"].result_count == 134


def test_the_queue_reads_the_same_number_of_statements_however_many_reports_its_posts_have(
    staff_client, django_assert_max_num_queries,
):
    for n in range(3):
        reported_post(external_id=f"post-{n}", reports=[("hate", "user_report"), ("violence", "trusted_flagger")])
    few = desk_queries(staff_client)
    body = staff_client.get("/staff/reports/").content.decode()
    for n in range(3):
        reported_post(post=reported_post(external_id=f"post-{n}", reports=[("hate", "user_report")] * 150,
                                         at=timezone.now() - timedelta(hours=1)),
                      reports=[("violence", "trusted_flagger")] * 2, at=timezone.now() - timedelta(minutes=5))
    # session, user, the page's rows (with the waiting counts), the reports' totals, the reports listed; the
    # navigation's counts
    with django_assert_max_num_queries(6):
        grown = staff_client.get("/staff/reports/").content.decode()
    assert desk_queries(staff_client) == few
    assert len(report_lines(grown)) == 3 * (3 + 5) and len(grown) < len(body) * 2


def test_deciding_from_the_page_answers_every_open_report_listed_or_not(staff_client, ts_user):
    now = timezone.now()
    post = reported_post(external_id="brigaded", reports=[("hate", "user_report")] * 70, at=now - timedelta(hours=2))
    # Sent later with an older timestamp: the newest ids are the oldest reports, listed last or not at all.
    reported_post(post=post, reports=[("hate", "user_report")] * 5, at=now - timedelta(days=3))
    claim_report(staff=ts_user, post_id=post.pk)
    page = staff_client.get(f"/staff/reports/{post.pk}/").content.decode()
    assert len(report_lines(page)) == 50
    newest = max(post.flags.values_list("pk", flat=True))
    assert set(re.findall(r'name="[a-z_]+-up_to_flag" value="(\d+)"', page)) == {str(newest)}
    assert "One decision answers all 75 of them, listed above or not" in page
    response = staff_client.post(f"/staff/reports/{post.pk}/", {
        "decision": "no_violation", "no_violation-reason": "Quoted to condemn it.", "no_violation-up_to_flag": newest,
    })
    assert response.status_code == 302
    assert set(post.flags.values_list("status", "outcome")) == {(ReportStatus.DECIDED, ReportOutcome.NO_VIOLATION)}
    assert ReportedPost.objects.get(post=post).open_reports == 0
