"""`/staff/reports/`: the order staff see reports in, overdue marking and counts, claiming, the three decisions
and their refusals, and the list's fixed number of queries."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from audit.models import AuditEvent, AuditVerb
from factcheck.models import QueueState, ReportOutcome, ReportStatus
from moderation.harm_reports import (
    NothingToDecide,
    ReportClaimed,
    ReportClaimRequired,
    ReportRefused,
    claim_report,
    decide_report,
    release_report,
)
from moderation.models import Action, ActionKind, ReportedPost, StatementOfReasons, Strike, StrikeKind
from moderation.timeline import post_timeline
from tests.factories import PASSWORD, FactCheckerFactory, StaffFactory, UserFactory
from tests.scenarios import reported_post

pytestmark = pytest.mark.django_db


def rows_in_order(body: str) -> list[str]:
    """The external ids of the list's rows, top to bottom."""
    return re.findall(r'<tr class="[^"]*" data-post="([^"]+)"', body)


def test_the_list_puts_trusted_flaggers_first_then_severity_then_reach_velocity(staff_client):
    now = timezone.now()
    posted = now - timedelta(hours=10)
    reported_post(external_id="hate-fast", reports=[("hate", "user_report")], views=900_000, posted_at=posted)
    reported_post(external_id="violence-slow", reports=[("violence", "user_report")], views=100, posted_at=posted)
    reported_post(external_id="harassment-trusted", reports=[("harassment", "trusted_flagger")], views=10,
                  posted_at=posted)
    reported_post(external_id="imminent-fast", reports=[("imminent_harm", "user_report")], views=500_000,
                  posted_at=posted)
    reported_post(external_id="violence-mid", reports=[("violence", "classifier")], views=5_000, posted_at=posted)
    body = staff_client.get("/staff/reports/").content.decode()
    assert rows_in_order(body) == ["harassment-trusted", "imminent-fast", "violence-mid", "violence-slow",
                                   "hate-fast"]


def test_each_row_shows_its_reports_the_post_its_page_and_a_link_to_its_history(staff_client):
    post = reported_post(external_id="mocking", reports=[("harassment", "user_report"), ("hate", "partner")],
                         text="Mocks a named person.")
    body = staff_client.get("/staff/reports/").content.decode()
    for shown in ("Harassment", "Hate", "User report", "Partner", "“harassment report”", "Mocks a named person.",
                  post.page.name, post.page.external_id, f'href="/admin/factcheck/post/{post.pk}/change/"',
                  f'href="/staff/reports/{post.pk}/"'):
        assert shown in body, shown


def test_a_long_text_is_shortened_on_the_list_even_when_it_starts_with_blank_space(staff_client):
    # Cutting at the last word of the first 240 characters failed on a text whose first 240 were all blank.
    reported_post(external_id="padded", reports=[("harassment", "user_report")], text=" " * 300 + "Mocks a victim.")
    reported_post(external_id="long", reports=[("hate", "user_report")], text="word " * 100)
    response = staff_client.get("/staff/reports/")
    assert response.status_code == 200
    body = response.content.decode()
    assert rows_in_order(body) == ["padded", "long"] or rows_in_order(body) == ["long", "padded"]
    assert "word " * 40 in body and "word " * 60 not in body and "…" in body


def test_reports_waiting_over_24_hours_are_marked_overdue_in_the_list_and_counted_on_the_admin_index(staff_client):
    now = timezone.now()
    reported_post(external_id="late", reports=[("violence", "user_report")], at=now - timedelta(hours=25))
    reported_post(external_id="late-too", reports=[("hate", "user_report")], at=now - timedelta(hours=30))
    reported_post(external_id="on-time", reports=[("hate", "user_report")], at=now - timedelta(hours=23))
    body = staff_client.get("/staff/reports/").content.decode()
    rows = dict(zip(rows_in_order(body), re.findall(r'<tr class="([^"]*)" data-post=', body), strict=True))
    assert rows == {"late": "is-overdue", "late-too": "is-overdue", "on-time": ""}
    assert '<span class="badge overdue">2 overdue</span>' in body
    assert "overdue by 1 h" in body and "due in 59 min" in body
    index = staff_client.get("/admin/").content.decode()
    assert re.search(r"Overdue reports</a></th>\s*<td>2 posts waiting more than 24 hours for a decision", index)
    assert re.search(r"Reports of harm</a></th>\s*<td>3 posts waiting for a staff decision", index)


def desk_queries(client) -> int:
    """How many statements the reports desk's first page reads."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as context:
        assert client.get("/staff/reports/").status_code == 200
    return len(context)


def test_the_list_renders_in_a_fixed_number_of_queries_whatever_the_reports(
    staff_client, django_assert_max_num_queries,
):
    for n in range(3):
        reported_post(reports=[("hate", "user_report")] * (n + 1))
    few = desk_queries(staff_client)
    for _ in range(30):
        reported_post(reports=[("violence", "trusted_flagger"), ("hate", "user_report")])
    # session, user, the page's rows (with post, page, holder, and the two counts), their reports' totals, the
    # reports listed; the navigation's counts (issue 29)
    with django_assert_max_num_queries(6):
        assert staff_client.get("/staff/reports/").status_code == 200
    assert desk_queries(staff_client) == few


def test_a_staff_member_claims_a_post_then_removes_it_under_a_ground_with_its_strike_and_statement(
    staff_client, ts_user,
):
    post = reported_post(reports=[("harassment", "user_report"), ("harassment", "partner")])
    response = staff_client.post(f"/staff/reports/{post.pk}/claim/")
    assert response.status_code == 302 and response["Location"] == f"/staff/reports/{post.pk}/"
    page = staff_client.get(f"/staff/reports/{post.pk}/").content.decode()
    # Real labels for every field of the three forms.
    for field, label in (("removed-ground", "Ground"), ("removed-reason", "Reason for the removal"),
                         ("no_violation-reason", "Why there is no violation"),
                         ("sent_to_fact_checkers-reason", "Note for the fact-checkers (optional)")):
        assert re.search(rf'<label for="id_{field}">{re.escape(label)}', page), field
    # The ground of the most severe report is offered first.
    assert '<option value="harassment" selected>' in page
    assert "{#" not in page and "#}" not in page  # no template comment shown as text
    up_to = max(post.flags.values_list("pk", flat=True))
    response = staff_client.post(f"/staff/reports/{post.pk}/", {
        "decision": "removed", "removed-ground": "harassment", "removed-reason": "Sends people to her workplace.",
        "removed-up_to_flag": up_to,
    })
    assert response.status_code == 302 and response["Location"] == "/staff/reports/"
    removal = Action.objects.get(post=post, kind=ActionKind.REMOVAL)
    assert (removal.ground, removal.reason, removal.created_by_id) == ("harassment", "Sends people to her workplace.",
                                                                       ts_user.pk)
    assert Strike.objects.filter(action=removal, kind=StrikeKind.COMMUNITY_STANDARDS).exists()
    assert StatementOfReasons.objects.filter(action=removal).exists()
    assert set(post.flags.values_list("status", "outcome")) == {(ReportStatus.DECIDED, ReportOutcome.REMOVED)}
    row = ReportedPost.objects.get(post=post)
    assert (row.open_reports, row.holder_id, row.last_decided_at is not None) == (0, None, True)
    assert "removed. The reporters are told the outcome." in staff_client.get("/staff/reports/").content.decode()
    assert AuditEvent.objects.filter(verb=AuditVerb.REPORT_CLAIMED, actor=ts_user, post_id=post.pk).exists()
    decided = AuditEvent.objects.get(verb=AuditVerb.REPORTS_DECIDED, post_id=post.pk)
    assert decided.data["outcome"] == "removed" and decided.actor_id == ts_user.pk


def test_no_violation_needs_a_reason_and_answers_the_reports(staff_client, ts_user):
    post = reported_post(reports=[("hate", "user_report")])
    claim_report(staff=ts_user, post_id=post.pk)
    response = staff_client.post(f"/staff/reports/{post.pk}/", {"decision": "no_violation",
                                                                 "no_violation-reason": "  "})
    assert response.status_code == 400
    body = response.content.decode()
    assert "There is a problem" in body and "Say why: the reason is kept with the decision." in body
    assert post.flags.get().status == ReportStatus.OPEN
    staff_client.post(f"/staff/reports/{post.pk}/", {"decision": "no_violation",
                                                      "no_violation-reason": "Criticism of a politician's record."})
    flag = post.flags.get()
    assert (flag.status, flag.outcome) == (ReportStatus.DECIDED, ReportOutcome.NO_VIOLATION)
    assert not Action.objects.filter(post=post).exists()
    assert post.__class__.objects.get(pk=post.pk).queue_state == QueueState.UNFLAGGED


def test_a_reason_at_the_limit_over_many_lines_is_taken_with_each_line_break_counted_once(staff_client, ts_user):
    """The browser sends line breaks as "\r\n": a 1,999-character reason on 40 lines was refused as "it has 2,038"
    (and as missing) while the page's counter said one character was left."""
    post = reported_post(reports=[("hate", "user_report")])
    claim_report(staff=ts_user, post_id=post.pk)
    typed = "\r\n".join(["x" * 49] * 40)  # 1,999 characters as the counter counts them: 2,038 sent
    response = staff_client.post(f"/staff/reports/{post.pk}/", {"decision": "no_violation",
                                                                "no_violation-reason": typed})
    assert response.status_code == 302, response.content.decode()[:2000]
    decided = AuditEvent.objects.get(verb=AuditVerb.REPORTS_DECIDED, post_id=post.pk)
    assert post.flags.get().status == ReportStatus.DECIDED and decided.actor_id == ts_user.pk


def test_a_failed_decision_keeps_what_was_typed_for_the_other_decisions(staff_client, ts_user):
    # A walk through the pages typed a removal reason, then pressed "Decide: no violation" with its box empty: the
    # error page came back with the removal reason gone. The three decisions are one form now.
    post = reported_post(reports=[("hate", "user_report")])
    claim_report(staff=ts_user, post_id=post.pk)
    page = staff_client.get(f"/staff/reports/{post.pk}/").content.decode()
    assert page.count('class="report-decisions"') == 1 and page.count('name="decision" value="') == 3
    response = staff_client.post(f"/staff/reports/{post.pk}/", {
        "decision": "no_violation", "no_violation-reason": "", "removed-ground": "hate",
        "removed-reason": "Slurs against a group, line after line."})
    assert response.status_code == 400
    body = response.content.decode()
    assert "Say why: the reason is kept with the decision." in body
    assert 'id="id_removed-reason">\nSlurs against a group, line after line.</textarea>' in body
    assert post.flags.get().status == ReportStatus.OPEN


def test_sending_to_fact_checkers_from_the_desk_queues_the_post_for_them(staff_client, ts_user):
    post = reported_post(reports=[("imminent_harm", "user_report")])
    claim_report(staff=ts_user, post_id=post.pk)
    response = staff_client.post(f"/staff/reports/{post.pk}/", {"decision": "sent_to_fact_checkers",
                                                                 "sent_to_fact_checkers-reason": ""})
    assert response.status_code == 302
    post.refresh_from_db()
    assert post.queue_state == QueueState.QUEUED
    assert post.flags.get().outcome == ReportOutcome.SENT_TO_FACT_CHECKERS


def test_deciding_needs_the_lease_and_another_staff_members_lease_is_refused(ts_user):
    other = StaffFactory()
    post = reported_post(reports=[("violence", "user_report")])
    with pytest.raises(ReportClaimRequired):
        decide_report(staff=ts_user, post_id=post.pk, outcome="no_violation", reason="Fine.")
    claim_report(staff=other, post_id=post.pk)
    with pytest.raises(ReportClaimed):
        claim_report(staff=ts_user, post_id=post.pk)
    with pytest.raises(ReportClaimed):
        decide_report(staff=ts_user, post_id=post.pk, outcome="no_violation", reason="Fine.")
    with pytest.raises(ReportRefused):
        release_report(staff=ts_user, post_id=post.pk)
    assert post.flags.get().status == ReportStatus.OPEN


def test_a_decision_after_ones_own_lease_ran_out_is_saved_if_nobody_took_the_post(staff_client, ts_user):
    """The desk has no countdown: staff who typed a removal's reason past their lease were refused and had to
    claim again, choose the ground again and paste their text back."""
    post = reported_post(reports=[("violence", "user_report")])
    claim_report(staff=ts_user, post_id=post.pk, now=timezone.now() - timedelta(hours=2))
    response = staff_client.post(f"/staff/reports/{post.pk}/", {
        "decision": "removed", "removed-ground": "violence", "removed-reason": "Calls for an attack on a named mosque.",
        "removed-up_to_flag": str(post.flags.get().pk)})
    assert response.status_code == 302
    assert post.flags.get().outcome == ReportOutcome.REMOVED
    # Not when someone else took the post meanwhile, nor when another's lapsed lease is the row's.
    other_post = reported_post(reports=[("hate", "user_report")])
    claim_report(staff=StaffFactory(), post_id=other_post.pk, now=timezone.now() - timedelta(hours=2))
    with pytest.raises(ReportClaimRequired):
        decide_report(staff=ts_user, post_id=other_post.pk, outcome="no_violation", reason="Fine.")


def test_a_lapsed_lease_lets_another_staff_member_claim(ts_user):
    other = StaffFactory()
    post = reported_post(reports=[("violence", "user_report")])
    claim_report(staff=other, post_id=post.pk, now=timezone.now() - timedelta(hours=2))
    row = claim_report(staff=ts_user, post_id=post.pk)
    assert row.holder_id == ts_user.pk


def test_the_desk_says_who_holds_a_post_and_offers_no_claim_button_then(staff_client):
    other = StaffFactory(username="tariq-desk")
    post = reported_post(reports=[("violence", "user_report")])
    claim_report(staff=other, post_id=post.pk)
    body = staff_client.get("/staff/reports/").content.decode()
    assert "Claimed by tariq-desk" in body and f'action="/staff/reports/{post.pk}/claim/"' not in body
    response = staff_client.post(f"/staff/reports/{post.pk}/claim/", follow=True)
    assert "tariq-desk is deciding this post&#x27;s reports" in response.content.decode()


def test_a_decision_answers_the_reports_seen_and_later_ones_open_the_next_round(ts_user):
    post = reported_post(reports=[("hate", "user_report"), ("hate", "classifier")])
    seen = max(post.flags.values_list("pk", flat=True))
    claim_report(staff=ts_user, post_id=post.pk)
    reported_post(post=post, reports=[("violence", "trusted_flagger")])  # arrives while the staff member decides
    decide_report(staff=ts_user, post_id=post.pk, outcome="no_violation", reason="Satire.", up_to_flag=seen)
    assert list(post.flags.order_by("id").values_list("outcome", flat=True)) == [
        ReportOutcome.NO_VIOLATION, ReportOutcome.NO_VIOLATION, ""]
    row = ReportedPost.objects.get(post=post)
    assert (row.open_reports, row.trusted, row.severity, row.holder_id) == (1, True, 2, None)
    with pytest.raises(ReportClaimRequired):  # the new round needs a new claim
        decide_report(staff=ts_user, post_id=post.pk, outcome="no_violation", reason="Again.")


def test_a_decision_from_a_stale_page_is_refused_and_keeps_the_lease_and_the_new_report_open(staff_client, ts_user):
    other = StaffFactory()
    post = reported_post(reports=[("hate", "user_report")])
    seen = post.flags.get().pk  # the page the staff member opened shows this report
    claim_report(staff=other, post_id=post.pk)
    decide_report(staff=other, post_id=post.pk, outcome="no_violation", reason="Satire.", up_to_flag=seen)
    reported_post(post=post, reports=[("violence", "user_report")])  # the next round
    claim_report(staff=ts_user, post_id=post.pk)
    response = staff_client.post(f"/staff/reports/{post.pk}/", {
        "decision": "no_violation", "no_violation-reason": "From the old page.", "no_violation-up_to_flag": seen,
    })
    assert response.status_code == 409
    assert ("These reports were decided by someone else; 1 new report(s) arrived: reload."
            in response.content.decode())
    # What was typed is shown back, not lost (a hostile review found the reason gone after the refusal).
    assert "What you wrote (not saved)" in response.content.decode()
    assert "<blockquote class=\"unsaved-text\">From the old page.</blockquote>" in response.content.decode()
    newest = post.flags.order_by("-id").first()
    assert (newest.status, newest.outcome) == (ReportStatus.OPEN, "")
    row = ReportedPost.objects.get(post=post)
    assert (row.open_reports, row.holder_id) == (1, ts_user.pk) and row.lease_expires_at > timezone.now()


def test_remove_on_a_post_removed_already_answers_the_reports_with_that_removal(ts_user):
    from moderation.staff_actions import remove_post
    from tests.scenarios import rated_post

    post = reported_post(reports=[("hate", "user_report")])
    remove_post(staff=StaffFactory(), post_id=post.pk, ground="hate", reason="A slur.")
    reported_post(post=post, reports=[("harassment", "user_report")])  # answered on arrival: it is removed
    assert post.flags.filter(status=ReportStatus.OPEN).count() == 0
    with pytest.raises(NothingToDecide):
        claim_report(staff=ts_user, post_id=post.pk)
    # A rated post keeps its state when removed, yet its removal stands: a later report is answered by it on
    # arrival too, and makes no second removal.
    rated = rated_post()
    remove_post(staff=StaffFactory(), post_id=rated.pk, ground="violence", reason="A threat.")
    reported_post(post=rated, reports=[("violence", "user_report")])
    with pytest.raises(NothingToDecide):
        claim_report(staff=ts_user, post_id=rated.pk)
    assert Action.objects.filter(post=rated, kind=ActionKind.REMOVAL).count() == 1
    assert rated.flags.get(category="violence").outcome == ReportOutcome.REMOVED


def test_a_staff_member_signs_in_and_finds_the_desk_in_the_navigation(client, ts_user):
    client.login(username=ts_user.username, password=PASSWORD)
    body = client.get("/staff/reports/").content.decode()
    assert '<a href="/staff/reports/" aria-current="page">Reports of harm</a>' in body
    assert "No open reports of harm. Nothing is waiting for a decision." in body


def test_a_removal_made_in_the_admin_answers_the_reports_and_ends_the_lease_for_the_next_round(ts_user):
    from moderation.staff_actions import remove_post

    post = reported_post(reports=[("violence", "user_report")])
    claim_report(staff=StaffFactory(), post_id=post.pk)
    remove_post(staff=ts_user, post_id=post.pk, ground="violence", reason="A threat.")
    row = ReportedPost.objects.get(post=post)
    assert (row.open_reports, row.holder_id) == (0, None)
    assert post.flags.get().outcome == ReportOutcome.REMOVED


def test_the_admins_post_page_shows_open_reports_by_category_and_the_log_says_what_staff_did(staff_client, ts_user):
    post = reported_post(reports=[("hate", "user_report"), ("hate", "partner"), ("violence", "trusted_flagger")])
    page = staff_client.get(f"/admin/factcheck/post/{post.pk}/change/").content.decode()
    assert re.search(r"<td>Hate</td>\s*<td>2</td>", page) and re.search(r"<td>Violence</td>\s*<td>1</td>", page)
    assert f'href="/staff/reports/{post.pk}/"' in page
    assert "reported" in page and "for hate (User report)" in page
    claim_report(staff=ts_user, post_id=post.pk)
    decide_report(staff=ts_user, post_id=post.pk, outcome="no_violation", reason="Quoted to condemn it.")
    page = staff_client.get(f"/admin/factcheck/post/{post.pk}/change/").content.decode()
    assert "claimed the reports of harm on" in page
    assert "answered 3 flags on" in page and "no violation: “Quoted to condemn it.”" in page
    assert "No open reports of harm." in page


def test_the_note_sent_with_a_post_reaches_the_fact_checkers_and_not_the_owner(staff_client, ts_user, client):
    """The desk asked for a "note for the fact-checkers", which no page of the review side showed."""
    owner = UserFactory()
    post = reported_post(reports=[("imminent_harm", "user_report")])
    post.page.owners.add(owner)
    claim_report(staff=ts_user, post_id=post.pk)
    note = "Not a threat: a false cure claim. Please check the dosage it gives."
    staff_client.post(f"/staff/reports/{post.pk}/", {"decision": "sent_to_fact_checkers",
                                                      "sent_to_fact_checkers-reason": note})
    client.force_login(FactCheckerFactory())
    page = client.get(f"/queue/posts/{post.pk}/").content.decode()
    flags = page[page.index('id="flags-title"'):]
    flags = flags[:flags.index("</section>")]
    assert "Sent to the fact-checkers by trust and safety" in flags and note in flags
    assert ts_user.get_username() in flags
    client.force_login(owner)
    assert note not in client.get(f"/appeals/posts/{post.pk}/").content.decode()
    # Once rated, the post's timeline keeps it for the reviewers (and not for the owner).
    assert [e.detail for e in post_timeline(post, for_owner=False) if e.kind == "reports"] == [note]
    assert not [e for e in post_timeline(post, for_owner=True) if e.kind == "reports"]
