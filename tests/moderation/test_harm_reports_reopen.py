"""Correcting a decision on reports of harm reaches the people who reported (DSA Art. 16(5)): lifting a removal
reopens the reports it answered, a later removal overrules staff's "no violation" or "send to fact-checkers",
and the desk's page of a decided post reopens its decision (or links to the admin's lift of a removal that
stands). Each is read as the platform and staff read it: GET /api/v1/flags/{key}, the `report.decided` events
in the webhook outbox, the desk's list and page, and the audit log."""

from __future__ import annotations

import re

import pytest

from audit.models import AuditEvent, AuditVerb
from factcheck.models import Post, QueueState, ReportOutcome
from moderation.appeals import decide_appeal, file_appeal
from moderation.harm_reports import DecisionChanged, ReportRefused, claim_report, decide_report, reopen_report
from moderation.models import ReportedPost
from moderation.selectors import active_removal
from moderation.staff_actions import lift_action, remove_post
from tests.factories import FactCheckerFactory, StaffFactory, UserFactory
from tests.scenarios import rated_post, reported_post
from tests.webhooks.conftest import allow_private, register  # noqa: F401 (fixtures)
from webhooks.models import Event

pytestmark = pytest.mark.django_db

WRONG_POST = "Removed by mistake: this was not the post reported. Restoring it."
HARASSMENT = (("harassment", "user_report"), ("harassment", "user_report"), ("harassment", "partner"))


@pytest.fixture
def listening(register):  # noqa: F811 (the fixture)
    """The platform's endpoint for flags' outcomes (and distribution changes), registered through the API."""
    register("https://127.0.0.1:9/hooks", events=("report.decided", "distribution.changed"))


def flags_told(platform_client, post: Post) -> dict[str, dict]:
    """Each flag of the post as its sender reads it: GET /api/v1/flags/{key}."""
    told = {}
    for key in post.flags.order_by("id").values_list("idempotency_key", flat=True):
        response = platform_client.get(f"/api/v1/flags/{key}")
        assert response.status_code == 200
        told[key] = response.json()
    return told


def report_events(post: Post, *, after: int = 0) -> list[dict]:
    """The `report.decided` events written to the outbox for the post's flags, oldest first."""
    return [event.data for event in Event.objects.filter(type="report.decided", post=post, pk__gt=after).order_by("id")]


def last_event_id() -> int:
    return Event.objects.order_by("-id").values_list("id", flat=True).first() or 0


def rows_in_order(body: str) -> list[str]:
    return re.findall(r'<tr class="[^"]*" data-post="([^"]+)"', body)


def decide(staff, post: Post, outcome: str, **fields) -> None:
    claim_report(staff=staff, post_id=post.pk)
    decide_report(staff=staff, post_id=post.pk, outcome=outcome, **fields)


def test_lifting_a_wrong_removal_reopens_its_reports_tells_the_reporters_and_puts_the_post_back_on_the_desk(
    platform_client, platform_user, listening, ts_user, staff_client,
):
    post = reported_post(external_id="demo-r002", reports=HARASSMENT, platform=platform_user, views=500_000)
    # Another post as severe and spreading slower waits below it once it is back.
    reported_post(external_id="hate-only", reports=[("hate", "user_report")], platform=platform_user, views=10)
    # A trusted flagger's violence reports: first in the order, removed by the same mistake.
    first = reported_post(external_id="demo-r001", reports=[("violence", "trusted_flagger")] * 2,
                          platform=platform_user)
    decide(ts_user, post, ReportOutcome.REMOVED, ground="harassment", reason="Harasses a named person.")
    decide(ts_user, first, ReportOutcome.REMOVED, ground="violence", reason="Incites violence.")
    assert rows_in_order(staff_client.get("/staff/reports/").content.decode()) == ["hate-only"]
    before = last_event_id()

    tariq = StaffFactory(username="tariq")
    for removed in (post, first):
        lift_action(actor=tariq, action_id=active_removal(removed).pk, reason=WRONG_POST)

    for removed in (post, first):
        told = flags_told(platform_client, removed)
        assert {(f["status"], f["outcome"], f["decided_at"]) for f in told.values()} == {("open", None, None)}
        events = report_events(removed, after=before)
        assert {e["idempotency_key"] for e in events} == set(told)
        for event in events:
            # The flag as GET reads it now, and what the reporter had been told before.
            assert event == {**told[event["idempotency_key"]], "previous_outcome": "removed"}
        reopened = AuditEvent.objects.get(post_id=removed.pk, verb=AuditVerb.REPORTS_REOPENED)
        assert reopened.actor == tariq and WRONG_POST in reopened.reason
        assert reopened.data["previous"] == {"removed": removed.flags.count()} and reopened.data["outcome"] is None
    assert ReportedPost.objects.get(post=post).open_reports == 3
    assert Post.objects.get(pk=post.pk).queue_state == QueueState.UNFLAGGED  # reports of harm alone: staff's
    # Back on the desk where the queue's order puts them: the trusted flagger's violence reports first.
    assert rows_in_order(staff_client.get("/staff/reports/").content.decode()) == ["demo-r001", "demo-r002",
                                                                                   "hate-only"]
    page = staff_client.get(f"/staff/reports/{post.pk}/").content.decode()
    assert "3 open reports" in page and "Claim" in page
    log = re.sub(r"<[^>]+>", "", staff_client.get("/admin/audit/auditevent/", {"post_id": post.pk}).content.decode())
    assert "tariq opened 3 flags on post demo-r002 again (they were: removed)" in re.sub(r"\s+", " ", log)


def test_a_removal_after_no_violation_or_sending_to_fact_checkers_answers_those_reports_removed_again(
    platform_client, platform_user, listening, ts_user, staff_client,
):
    waved = reported_post(external_id="waved", reports=HARASSMENT, platform=platform_user)
    sent = reported_post(external_id="sent", reports=[("imminent_harm", "user_report")], platform=platform_user)
    decide(ts_user, waved, ReportOutcome.NO_VIOLATION, reason="Criticism of a public figure.")
    decide(ts_user, sent, ReportOutcome.SENT_TO_FACT_CHECKERS, reason="")
    assert Post.objects.get(pk=sent.pk).queue_state == QueueState.QUEUED
    before = last_event_id()

    tariq = StaffFactory(username="tariq")
    for post, previous in ((waved, "no_violation"), (sent, "sent_to_fact_checkers")):
        remove_post(staff=tariq, post_id=post.pk, ground="violence",
                    reason="Should have been removed: it incites violence against clinic staff.")
        told = flags_told(platform_client, post)
        assert {(f["status"], f["outcome"]) for f in told.values()} == {("decided", "removed")}
        events = report_events(post, after=before)
        assert [e["idempotency_key"] for e in events] == list(told)
        assert all(e == {**told[e["idempotency_key"]], "previous_outcome": previous} for e in events)
        decided = AuditEvent.objects.filter(post_id=post.pk, verb=AuditVerb.REPORTS_DECIDED).latest("id")
        assert (decided.actor, decided.data["outcome"]) == (tariq, "removed")
        assert decided.data["previous"] == {previous: len(told)}
    log = re.sub(r"<[^>]+>", "", staff_client.get("/admin/audit/auditevent/", {"post_id": waved.pk}).content.decode())
    assert "tariq answered 3 flags on post waved: removed (they were: no violation)" in re.sub(r"\s+", " ", log)
    # The reports sent to fact-checkers count for their queue no more; lifting the removal brings them back to
    # staff, not to the fact-checkers.
    assert Post.objects.get(pk=sent.pk).flag_count == 0
    lift_action(actor=ts_user, action_id=active_removal(sent).pk, reason=WRONG_POST)
    sent.refresh_from_db()
    assert (sent.queue_state, sent.flag_count) == (QueueState.UNFLAGGED, 0)
    assert [f["status"] for f in flags_told(platform_client, sent).values()] == ["open"]
    assert ReportedPost.objects.get(post=sent).open_reports == 1


def test_a_lift_answers_a_misinformation_flag_as_if_it_arrived_now(platform_client, platform_user, ts_user):
    waiting = reported_post(external_id="waiting", reports=[("misinformation", "user_report"), ("hate", "partner")],
                            platform=platform_user)
    rated = rated_post(rater=FactCheckerFactory(), external_id="rated")
    for post in (waiting, rated):
        remove_post(staff=ts_user, post_id=post.pk, ground="hate", reason="Dehumanises a group.")
    # A flag arriving on the removed, rated post is answered by the removal.
    reported_post(post=rated, reports=[("misinformation", "user_report")], platform=platform_user)
    assert {f["outcome"] for f in flags_told(platform_client, rated).values()} == {"removed"}

    tariq = StaffFactory()
    for post in (waiting, rated):
        lift_action(actor=tariq, action_id=active_removal(post).pk, reason=WRONG_POST)
    # Unrated: the flag waits for a rating again, and the post waits in the fact-checkers' queue.
    assert [f["status"] for f in flags_told(platform_client, waiting).values()] == ["open", "open"]
    assert Post.objects.get(pk=waiting.pk).queue_state == QueueState.QUEUED
    # Rated: the rating the post carries answers it, as it would a flag arriving now.
    assert [(f["status"], f["outcome"]) for f in flags_told(platform_client, rated).values()] == [
        ("decided", "rated")]


def test_the_desk_reopens_a_no_violation_decision_with_a_reason_and_refuses_a_stale_second_reopen(
    platform_client, platform_user, listening, ts_user, staff_client,
):
    post = reported_post(external_id="waved", reports=HARASSMENT, platform=platform_user)
    decide(ts_user, post, ReportOutcome.NO_VIOLATION, reason="Decided by mistake on the wrong post.")
    page = staff_client.get(f"/staff/reports/{post.pk}/").content.decode()
    assert "Nothing to decide" not in page and "decided: no violation" in page
    assert "Reopen this decision" in page and '<label for="id_reopen-reason">Why reopen it' in page
    decided_at = re.search(r'name="reopen-decided_at" value="([^"]+)"', page).group(1)
    url = f"/staff/reports/{post.pk}/reopen/"

    missing = staff_client.post(url, {"reopen-decided_at": decided_at, "reopen-reason": "  "})
    assert missing.status_code == 400 and "Say why you reopen the decision" in missing.content.decode()
    before = last_event_id()
    response = staff_client.post(url, {"reopen-decided_at": decided_at,
                                       "reopen-reason": "The reports were about this post after all."})
    assert response.status_code == 302 and response["Location"] == f"/staff/reports/{post.pk}/"

    told = flags_told(platform_client, post)
    assert {(f["status"], f["outcome"]) for f in told.values()} == {("open", None)}
    assert [e for e in report_events(post, after=before)] == [
        {**told[key], "previous_outcome": "no_violation"} for key in told]
    reopened = AuditEvent.objects.get(post_id=post.pk, verb=AuditVerb.REPORTS_REOPENED)
    assert (reopened.actor, reopened.reason) == (ts_user, "The reports were about this post after all.")
    assert rows_in_order(staff_client.get("/staff/reports/").content.decode()) == ["waved"]
    assert "3 open reports" in staff_client.get(response["Location"]).content.decode()

    # A second click, or a colleague's page loaded before the first: a clear refusal, nothing written.
    stale = staff_client.post(url, {"reopen-decided_at": decided_at, "reopen-reason": "Reopen it, please."})
    assert stale.status_code == 409
    assert f"{ts_user.username} reopened this decision already" in stale.content.decode()
    assert AuditEvent.objects.filter(post_id=post.pk, verb=AuditVerb.REPORTS_REOPENED).count() == 1


def test_reopening_reports_sent_to_fact_checkers_takes_the_post_out_of_their_queue_if_it_waited_for_them_alone(
    ts_user,
):
    post = reported_post(reports=[("imminent_harm", "user_report"), ("imminent_harm", "partner")])
    decide(ts_user, post, ReportOutcome.SENT_TO_FACT_CHECKERS, reason="")
    decided_at = post.flags.values_list("decided_at", flat=True).first()
    assert Post.objects.get(pk=post.pk).queue_state == QueueState.QUEUED

    assert reopen_report(staff=ts_user, post_id=post.pk, decided_at=decided_at, reason="Clearly a threat.") == 2
    post.refresh_from_db()
    assert (post.queue_state, post.flag_count, post.left_queue_at is not None) == (QueueState.UNFLAGGED, 0, True)
    assert ReportedPost.objects.get(post=post).open_reports == 2
    with pytest.raises(DecisionChanged):
        reopen_report(staff=ts_user, post_id=post.pk, decided_at=decided_at, reason="Clearly a threat.")


def test_a_removed_posts_desk_page_links_to_the_admins_lift_and_a_second_lift_says_who_lifted_it(
    platform_client, platform_user, ts_user, staff_client,
):
    post = reported_post(reports=HARASSMENT, platform=platform_user)
    decide(ts_user, post, ReportOutcome.REMOVED, ground="harassment", reason="Harasses a named person.")
    removal = active_removal(post)
    page = staff_client.get(f"/staff/reports/{post.pk}/").content.decode()
    lift_url = f"/admin/moderation/action/{removal.pk}/lift/"
    assert f'<a href="{lift_url}">restore the post in the admin</a>' in page
    assert "Reopen this decision" not in page
    decided_at = post.flags.values_list("decided_at", flat=True).first()
    with pytest.raises(ReportRefused, match="restore it in the admin"):
        reopen_report(staff=ts_user, post_id=post.pk, decided_at=decided_at, reason="Wrong post.")

    tariq = StaffFactory(username="tariq")
    lift_action(actor=tariq, action_id=removal.pk, reason=WRONG_POST)
    # sam's lift page was loaded before tariq lifted it.
    stale = staff_client.post(lift_url, {"reason": WRONG_POST}, follow=True).content.decode()
    assert "has already ended: lifted by staff (tariq) at" in stale
    assert AuditEvent.objects.filter(post_id=post.pk, verb=AuditVerb.REPORTS_REOPENED).count() == 1
    assert {f["status"] for f in flags_told(platform_client, post).values()} == {"open"}


def test_a_removal_reversed_on_the_owners_appeal_reopens_the_reports_it_answered(platform_client, platform_user,
                                                                                  ts_user):
    owner = UserFactory()
    post = reported_post(reports=HARASSMENT, platform=platform_user)
    post.page.owners.add(owner)
    decide(ts_user, post, ReportOutcome.REMOVED, ground="harassment", reason="Harasses a named person.")
    appeal = file_appeal(owner=owner, post_id=post.pk, kind="removal", statement="It quotes the person, no more.")

    reviewer = StaffFactory(username="tariq")
    decide_appeal(appeal_id=appeal.pk, reviewer=reviewer, outcome="reversed", reason="A quotation, not harassment.")
    assert {(f["status"], f["outcome"]) for f in flags_told(platform_client, post).values()} == {("open", None)}
    reopened = AuditEvent.objects.get(post_id=post.pk, verb=AuditVerb.REPORTS_REOPENED)
    assert reopened.actor == reviewer and "A quotation, not harassment." in reopened.reason
    assert ReportedPost.objects.get(post=post).open_reports == 3
