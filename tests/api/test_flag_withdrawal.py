"""The platform withdraws a flag it sent by mistake: DELETE /api/v1/flags/{idempotency_key}.

The flag is kept, withdrawn (when, by whom, audited) and counts for nothing any more: a post left with no flag asking
for a fact-check leaves the fact-checkers' queue (its claim ends), a post whose reports of harm are all withdrawn
leaves the staff's reports queue (their lease ends), and a decision already made stands.
"""

from __future__ import annotations

import html

import pytest

from audit.models import AuditEvent, AuditVerb
from factcheck.claims import claim_post
from factcheck.models import (
    Claim,
    ClaimStatus,
    Flag,
    Post,
    QueueState,
    Rating,
    RatingDraft,
    ReportOutcome,
    ReportStatus,
)
from moderation.harm_reports import claim_report
from moderation.models import Action, ReportedPost
from moderation.staff_actions import lift_action, remove_post
from tests.api.helpers import flag_payload, post_json
from tests.conftest import bearer_client
from tests.factories import FactCheckerFactory, PlatformUserFactory, UserFactory
from tests.scenarios import rated_post

pytestmark = pytest.mark.django_db
URL = "/api/v1/flags"


def send(client, *flags) -> None:
    assert post_json(client, URL, {"flags": list(flags)}).status_code == 201


def withdraw(client, key: str, **query):
    return client.delete(f"{URL}/{key}", query_params=query)


def test_withdrawing_the_only_flag_marks_it_withdrawn_and_the_post_leaves_the_queue(platform_client, platform_user):
    flag = flag_payload(source="classifier", post={"external_id": "cure"})
    send(platform_client, flag)
    assert Post.objects.get(external_id="cure").queue_state == QueueState.QUEUED

    response = withdraw(platform_client, flag["idempotency_key"], reason="Classifier false positive")
    assert response.status_code == 200
    body = response.json()
    assert {k: body[k] for k in ("idempotency_key", "category", "status", "outcome", "decided_at")} == {
        "idempotency_key": flag["idempotency_key"], "category": "misinformation", "status": "withdrawn",
        "outcome": None, "decided_at": None}
    assert body["withdrawn_at"] and body["post"] == {"external_id": "cure", "queue_state": "unflagged"}

    stored = Flag.objects.get()
    assert (stored.status, stored.withdrawn_by, stored.outcome) == (ReportStatus.WITHDRAWN, platform_user, "")
    assert stored.withdrawn_at.isoformat().startswith(body["withdrawn_at"][:19])
    event = AuditEvent.objects.get(verb=AuditVerb.FLAG_WITHDRAWN)
    assert (event.actor, event.post_id, event.reason) == (platform_user, stored.post_id, "Classifier false positive")
    post = Post.objects.get()
    assert (post.queue_state, post.flag_count, post.flag_weight, post.flag_score) == (QueueState.UNFLAGGED, 0, 0, 0)
    assert post.left_queue_at is not None
    # GET reads it withdrawn; the post's figures no longer count it.
    read = platform_client.get(f"{URL}/{flag['idempotency_key']}").json()
    assert read == {k: body[k] for k in ("idempotency_key", "category", "status", "outcome", "decided_at",
                                          "withdrawn_at")}
    counted = platform_client.get("/api/v1/posts/cure").json()
    assert counted["flags"]["count"] == 0 and counted["flags"]["by_source"]["classifier"] == 0
    assert counted["queue_state"] == "unflagged"


def test_withdrawing_one_of_two_flags_leaves_the_post_queued_with_a_lower_priority(platform_client):
    kept = flag_payload(source="user_report", post={"external_id": "two"})
    mistaken = flag_payload(source="trusted_flagger", post={"external_id": "two"})
    send(platform_client, kept, mistaken)
    before = Post.objects.get()
    assert withdraw(platform_client, mistaken["idempotency_key"]).json()["post"]["queue_state"] == "queued"
    after = Post.objects.get()
    assert (after.queue_state, after.flag_count) == (QueueState.QUEUED, 1)
    assert after.flag_weight < before.flag_weight and after.priority < before.priority
    by_source = platform_client.get("/api/v1/posts/two").json()["flags"]["by_source"]
    assert (by_source["user_report"], by_source["trusted_flagger"]) == (1, 0)
    # A flag still counting reads as before: the same five fields, nothing added.
    assert set(platform_client.get(f"{URL}/{kept['idempotency_key']}").json()) == {
        "idempotency_key", "category", "status", "outcome", "decided_at"}


def test_the_queue_page_no_longer_lists_a_post_whose_flags_were_withdrawn(platform_client, login):
    flag = flag_payload(post={"external_id": "gone-from-queue", "text": "Onions in socks cure the flu overnight."})
    send(platform_client, flag)
    browser = login(FactCheckerFactory())
    assert "Onions in socks" in browser.get("/queue/").content.decode()
    withdraw(platform_client, flag["idempotency_key"])
    assert "Onions in socks" not in browser.get("/queue/").content.decode()


def test_a_claim_on_the_post_ends_and_the_reviewers_save_says_why_keeping_what_they_typed(platform_client, login):
    flag = flag_payload(post={"external_id": "claimed"})
    send(platform_client, flag)
    post = Post.objects.get()
    reviewer = FactCheckerFactory()
    claim_post(reviewer=reviewer, post_id=post.pk)
    withdraw(platform_client, flag["idempotency_key"], reason="The reporter retracted")

    claim = Claim.objects.get()
    assert claim.status == ClaimStatus.RELEASED and claim.ended_at is not None
    released = AuditEvent.objects.get(verb=AuditVerb.CLAIM_RELEASED)
    assert "withdrew the flags" in released.reason
    assert Post.objects.get().queue_state == QueueState.UNFLAGGED

    typed = {"verdict": "false", "rationale": "The clinic's own records show no such trial ever took place.",
             "sources": "https://records.example/trials", "article_url": "", "replaces": ""}
    response = login(reviewer).post(f"/queue/posts/{post.pk}/", typed)
    assert response.status_code == 409
    page = html.unescape(response.content.decode())
    assert "Not saved: The platform withdrew the flags that asked for a fact-check of this post" in page
    assert typed["rationale"] in page  # on the page again, and kept as their draft
    assert RatingDraft.objects.get(reviewer=reviewer, post=post).rationale == typed["rationale"]
    assert not Rating.objects.exists()
    # The post's page says so instead of the form, and shows the draft, kept.
    page = html.unescape(login(reviewer).get(f"/queue/posts/{post.pk}/").content.decode())
    assert "The platform withdrew the flags" in page and 'id="kept-draft"' in page and typed["rationale"] in page
    # Claiming it again is refused with the same reason, not "not flagged".
    claimed = login(reviewer).post(f"/queue/posts/{post.pk}/claim/", follow=True)
    assert "The platform withdrew the flags" in html.unescape(claimed.content.decode())


def test_a_post_whose_reports_of_harm_are_all_withdrawn_leaves_the_reports_queue_and_the_staff_lease_ends(
    platform_client, platform_user, staff_client, ts_user,
):
    reports = [flag_payload(category="hate", post={"external_id": "hateful", "text": "Those people ruin the town."}),
               flag_payload(category="harassment", source="partner", post={"external_id": "hateful"})]
    send(platform_client, *reports)
    post = Post.objects.get()
    claim_report(staff=ts_user, post_id=post.pk)
    assert 'data-post="hateful"' in staff_client.get("/staff/reports/").content.decode()

    withdraw(platform_client, reports[0]["idempotency_key"])
    row = ReportedPost.objects.get(post=post)
    assert (row.open_reports, row.holder_id) == (1, ts_user.pk)  # one report left: still theirs to decide
    withdraw(platform_client, reports[1]["idempotency_key"])
    row = ReportedPost.objects.get(post=post)
    assert (row.open_reports, row.holder_id, row.lease_expires_at) == (0, None, None)
    assert 'data-post="hateful"' not in staff_client.get("/staff/reports/").content.decode()
    ended = AuditEvent.objects.get(verb=AuditVerb.REPORT_RELEASED)
    assert ended.actor == platform_user and "withdrew" in ended.reason
    assert platform_client.get("/api/v1/posts/hateful").json()["reports"]["open"] == 0

    # The staff member's decision on the page they had open says what happened; nothing is decided.
    response = staff_client.post(f"/staff/reports/{post.pk}/", {
        "decision": "no_violation", "no_violation-reason": "Opinion about a town, no target.",
        "no_violation-up_to_flag": max(post.flags.values_list("pk", flat=True))}, follow=True)
    assert "The platform withdrew this post's reports of harm" in html.unescape(response.content.decode())
    assert set(Flag.objects.values_list("status", flat=True)) == {ReportStatus.WITHDRAWN}


def test_another_platform_accounts_key_is_a_404_and_other_roles_are_refused(platform_client, page_owner):
    flag = flag_payload()
    send(platform_client, flag)
    other = withdraw(bearer_client(PlatformUserFactory()), flag["idempotency_key"])
    assert other.status_code == 404 and other.json()["error"]["code"] == "not_found"
    for user in (page_owner, FactCheckerFactory(), UserFactory()):
        refused = withdraw(bearer_client(user), flag["idempotency_key"])
        assert refused.status_code == 403 and refused.json()["error"]["code"] == "forbidden"
    assert Flag.objects.get().status == ReportStatus.OPEN
    assert Post.objects.get().queue_state == QueueState.QUEUED
    assert not AuditEvent.objects.filter(verb=AuditVerb.FLAG_WITHDRAWN).exists()


def test_withdrawing_twice_answers_the_same_and_writes_nothing_more(platform_client):
    flag = flag_payload()
    send(platform_client, flag)
    first = withdraw(platform_client, flag["idempotency_key"], reason="duplicate of key 7")
    second = withdraw(platform_client, flag["idempotency_key"], reason="sent again")
    assert first.status_code == second.status_code == 200
    assert first.json() == second.json()
    assert AuditEvent.objects.filter(verb=AuditVerb.FLAG_WITHDRAWN).count() == 1
    # Sending the flag again is a replay of a stored flag: it stays withdrawn and does not queue the post.
    assert post_json(platform_client, URL, flag).status_code == 200
    assert Flag.objects.get().status == ReportStatus.WITHDRAWN
    assert Post.objects.get().queue_state == QueueState.UNFLAGGED


def test_unknown_and_malformed_keys_are_404_and_a_bad_reason_is_422(platform_client):
    flag = flag_payload()
    send(platform_client, flag)
    for key in ("never-sent", "x" * 201, "%20"):
        missing = withdraw(platform_client, key)
        assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found", key
    for reason in ("r" * 501, "a\x1bb"):
        bad = withdraw(platform_client, flag["idempotency_key"], reason=reason)
        assert bad.status_code == 422 and bad.json()["error"]["details"]["errors"][0]["field"] == "reason"
    assert Flag.objects.get().status == ReportStatus.OPEN


def test_a_rated_post_keeps_its_rating_and_decision_and_the_flag_its_outcome(platform_client):
    flag = flag_payload(post={"external_id": "rated"})
    send(platform_client, flag)
    post = rated_post(post=Post.objects.get())
    assert Flag.objects.get().outcome == ReportOutcome.RATED
    actions = list(Action.objects.filter(post=post, ended_at__isnull=True).values_list("pk", flat=True))
    assert actions

    response = withdraw(platform_client, flag["idempotency_key"])
    assert response.status_code == 200
    body = response.json()
    assert (body["status"], body["outcome"], body["post"]["queue_state"]) == ("withdrawn", "rated", "rated")
    assert body["decided_at"] is not None
    post.refresh_from_db()
    assert post.queue_state == QueueState.RATED and post.flag_count == 0
    assert Rating.objects.get(post=post).is_current
    assert list(Action.objects.filter(post=post, ended_at__isnull=True).values_list("pk", flat=True)) == actions


def test_a_withdrawn_flag_stays_withdrawn_when_the_removal_that_answered_it_is_lifted(platform_client, ts_user):
    first = flag_payload(post={"external_id": "rated-then-removed"})
    send(platform_client, first)
    post = rated_post(post=Post.objects.get())
    removal = remove_post(staff=ts_user, post_id=post.pk, ground="harassment", reason="Names a private person.")
    late = flag_payload(post={"external_id": "rated-then-removed"})
    send(platform_client, late)  # answered by the removal on arrival
    assert withdraw(platform_client, late["idempotency_key"]).json()["outcome"] == "removed"

    lift_action(actor=ts_user, action_id=removal.pk, reason="The person named is a public official.")
    body = platform_client.get(f"{URL}/{late['idempotency_key']}").json()
    assert (body["status"], body["outcome"]) == ("withdrawn", "removed")  # not answered `rated` anew
    assert Flag.objects.get(idempotency_key=first["idempotency_key"]).status == ReportStatus.DECIDED
