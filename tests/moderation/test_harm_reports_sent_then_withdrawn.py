"""Reports of harm staff sent to fact-checkers, then withdrawn by the platform (DELETE /api/v1/flags/{key}): they count
for nothing from then on, as any withdrawn flag, so the post goes where its remaining flags say, unless a fact-checker
rated it already (a rating stands). Read as the platform, staff and fact-checkers read it: the API's answers, the
desk's page and its reopen form, the fact-checkers' queue, and the admin's lift of a removal."""

from __future__ import annotations

import re
from html import unescape

import pytest

from audit.models import AuditEvent, AuditVerb
from factcheck.claims import claim_post
from factcheck.models import Claim, ClaimStatus, Post, QueueState
from moderation.models import ReportedPost
from moderation.selectors import active_removal
from tests.api.helpers import flag_payload, post_json
from tests.factories import DecisionFactory, FactCheckerFactory

pytestmark = pytest.mark.django_db

TEXT = "Those vaccines were made to harm us, and the nurses who give them should pay."
WRONG_POST = "Removed by mistake: this was not the post reported. Restoring it."


def send(client, *flags) -> None:
    assert post_json(client, "/api/v1/flags", {"flags": list(flags)}).status_code == 201


def withdraw(client, flag: dict) -> dict:
    response = client.delete(f"/api/v1/flags/{flag['idempotency_key']}", query_params={"reason": "Sent by mistake"})
    assert response.status_code == 200
    return response.json()


def report(category: str = "hate", source: str = "user_report", *, post: str = "sent") -> dict:
    return flag_payload(category=category, source=source, post={"external_id": post, "text": TEXT},
                        page={"external_id": "health-truths"})


def decide_on_the_desk(staff_client, post: Post, decision: str, **fields) -> None:
    """Staff claim the post on the desk and decide its reports there."""
    assert staff_client.post(f"/staff/reports/{post.pk}/claim/").status_code == 302
    response = staff_client.post(f"/staff/reports/{post.pk}/", {"decision": decision, **fields})
    assert response.status_code == 302


def sent_to_fact_checkers(platform_client, staff_client, *reports: dict) -> Post:
    send(platform_client, *reports)
    post = Post.objects.get(external_id=reports[0]["post"]["external_id"])
    decide_on_the_desk(staff_client, post, "sent_to_fact_checkers",
                       **{"sent_to_fact_checkers-reason": "A health claim to check."})
    assert Post.objects.get(pk=post.pk).queue_state == QueueState.QUEUED
    return post


def reopen_form(staff_client, post: Post) -> str | None:
    """The decision the desk's page offers to reopen (its `decided_at`), or None if it offers none."""
    page = staff_client.get(f"/staff/reports/{post.pk}/").content.decode()
    found = re.search(r'name="reopen-decided_at" value="([^"]+)"', page)
    return found.group(1) if found else None


def in_fact_checkers_queue(login, post: Post) -> bool:
    return "Those vaccines were made" in login(FactCheckerFactory()).get("/queue/").content.decode()


def test_when_every_report_sent_to_fact_checkers_is_withdrawn_the_post_leaves_their_queue_and_the_desk_says_why(
    platform_client, staff_client, ts_user, login,
):
    reports = [report("hate"), report("violence", source="partner")]
    post = sent_to_fact_checkers(platform_client, staff_client, *reports)
    decided_at = reopen_form(staff_client, post)
    assert decided_at is not None

    answers = [withdraw(platform_client, flag) for flag in reports]
    # The decision is kept beside the withdrawal, but nothing asks for the review any more.
    assert [(a["status"], a["outcome"]) for a in answers] == [("withdrawn", "sent_to_fact_checkers")] * 2
    assert answers[-1]["post"]["queue_state"] == "unflagged"
    assert not in_fact_checkers_queue(login, post)

    # The desk says the platform withdrew them, and offers nothing to reopen: there is nothing left to take back.
    page = staff_client.get(f"/staff/reports/{post.pk}/").content.decode()
    assert "The platform withdrew this post's reports of harm" in page
    assert "they have been decided" not in page
    assert reopen_form(staff_client, post) is None
    # A page loaded before the withdrawal is told why, not that someone decided again; nothing is written.
    stale = staff_client.post(f"/staff/reports/{post.pk}/reopen/",
                              {"reopen-decided_at": decided_at, "reopen-reason": "Clearly a threat."})
    assert stale.status_code == 409
    body = stale.content.decode()
    assert "The platform withdrew the reports this decision answered" in body
    assert "decided again" not in body
    assert not AuditEvent.objects.filter(post_id=post.pk, verb=AuditVerb.REPORTS_REOPENED).exists()


def test_a_fact_checkers_claim_ends_when_the_reports_sent_to_them_are_withdrawn_and_a_rating_stands(
    platform_client, staff_client, ts_user,
):
    only = report("hate")
    post = sent_to_fact_checkers(platform_client, staff_client, only)
    claim = claim_post(reviewer=FactCheckerFactory(), post_id=post.pk)

    assert withdraw(platform_client, only)["post"]["queue_state"] == "unflagged"
    assert Claim.objects.get(pk=claim.pk).status != ClaimStatus.ACTIVE

    # Rated before the withdrawal: the rating stands, as every decision does.
    second = report("violence", post="rated")
    rated = sent_to_fact_checkers(platform_client, staff_client, second)
    DecisionFactory(post=rated, reviewer=FactCheckerFactory())
    assert withdraw(platform_client, second)["post"]["queue_state"] == "rated"


def test_a_misinformation_flag_keeps_the_post_waiting_when_the_reports_sent_with_it_are_withdrawn(
    platform_client, staff_client, ts_user, login,
):
    hate = report("hate")
    post = sent_to_fact_checkers(platform_client, staff_client, hate, report("misinformation"))
    assert withdraw(platform_client, hate)["post"]["queue_state"] == "queued"
    assert Post.objects.get(pk=post.pk).flag_count == 1
    assert in_fact_checkers_queue(login, post)
    # The desk says what went (the decision answered the report of harm alone) and what keeps the post waiting.
    page = desk_page(staff_client, post)
    assert "The platform withdrew this post's reports of harm" in page
    assert "The post still waits in the fact-checkers' queue on its other flags." in page


def desk_page(staff_client, post: Post) -> str:
    return unescape(staff_client.get(f"/staff/reports/{post.pk}/").content.decode())


def test_a_decision_with_one_of_its_sent_reports_withdrawn_still_stands_on_the_desk_and_may_be_reopened(
    platform_client, staff_client, ts_user,
):
    hate, violence = report("hate"), report("violence", source="partner")
    post = sent_to_fact_checkers(platform_client, staff_client, hate, violence)
    decided_at = reopen_form(staff_client, post)
    withdraw(platform_client, hate)
    assert Post.objects.get(pk=post.pk).queue_state == QueueState.QUEUED  # the other report still asks

    page = desk_page(staff_client, post)
    assert "count for nothing now" not in page and "nothing to reopen" not in page
    assert "No open reports of harm: they have been decided" in page
    assert "sent to the fact-checkers' queue</strong> (1 report)" in page
    assert reopen_form(staff_client, post) == decided_at


def decided_twice(platform_client, staff_client) -> tuple[Post, dict, str, str]:
    """A post whose first report staff sent to fact-checkers, then a second report, decided on its own; the first
    then withdrawn by the platform. Returns the post, the first report and both decisions' `decided_at`."""
    first = report("hate")
    post = sent_to_fact_checkers(platform_client, staff_client, first)
    first_decided_at = reopen_form(staff_client, post)
    send(platform_client, report("violence", source="partner"))
    decide_on_the_desk(staff_client, post, "sent_to_fact_checkers",
                       **{"sent_to_fact_checkers-reason": "Another health claim."})
    second_decided_at = reopen_form(staff_client, post)
    assert second_decided_at != first_decided_at
    withdraw(platform_client, first)
    assert Post.objects.get(pk=post.pk).queue_state == QueueState.QUEUED  # the second report still asks
    return post, first, first_decided_at, second_decided_at


def test_withdrawing_a_report_of_an_older_decision_leaves_the_newer_one_standing_on_the_desk(
    platform_client, staff_client, ts_user,
):
    post, _, _, second_decided_at = decided_twice(platform_client, staff_client)
    page = desk_page(staff_client, post)
    assert "count for nothing now" not in page
    assert "No open reports of harm: they have been decided" in page
    assert reopen_form(staff_client, post) == second_decided_at


def test_a_stale_reopening_of_an_older_decision_is_told_the_reports_were_decided_again_not_withdrawn(
    platform_client, staff_client, ts_user,
):
    post, _, first_decided_at, _ = decided_twice(platform_client, staff_client)
    stale = staff_client.post(f"/staff/reports/{post.pk}/reopen/",
                              {"reopen-decided_at": first_decided_at, "reopen-reason": "Clearly a threat."})
    assert stale.status_code == 409
    body = unescape(stale.content.decode())
    assert "These reports were decided again since you loaded the page" in body
    assert "The platform withdrew the reports this decision answered" not in body
    assert not AuditEvent.objects.filter(post_id=post.pk, verb=AuditVerb.REPORTS_REOPENED).exists()


def test_reports_withdrawn_whole_after_an_older_decision_are_said_withdrawn_and_the_older_decision_still_stands(
    platform_client, staff_client, ts_user,
):
    post = sent_to_fact_checkers(platform_client, staff_client, report("violence", source="partner"))
    first_decided_at = reopen_form(staff_client, post)
    later = report("hate")
    send(platform_client, later)
    decide_on_the_desk(staff_client, post, "no_violation",
                       **{"no_violation-reason": "A figure of speech, not a threat to anyone."})
    withdraw(platform_client, later)

    page = desk_page(staff_client, post)
    assert "The platform withdrew this post's reports of harm made since the decision below" in page
    assert "That decision stands." in page
    assert reopen_form(staff_client, post) == first_decided_at


def test_taking_back_a_send_to_fact_checkers_after_some_of_its_reports_were_withdrawn_empties_their_queue(
    platform_client, staff_client, ts_user, login,
):
    kept, gone = report("hate"), report("violence", source="partner")
    post = sent_to_fact_checkers(platform_client, staff_client, kept, gone)
    assert withdraw(platform_client, gone)["post"]["queue_state"] == "queued"  # the other report still asks

    decided_at = reopen_form(staff_client, post)
    response = staff_client.post(f"/staff/reports/{post.pk}/reopen/",
                                 {"reopen-decided_at": decided_at, "reopen-reason": "Clearly a threat."})
    assert response.status_code == 302
    # The report still standing is back on the desk; the withdrawn one keeps the post in no queue.
    assert ReportedPost.objects.get(post=post).open_reports == 1
    assert Post.objects.get(pk=post.pk).queue_state == QueueState.UNFLAGGED
    assert not in_fact_checkers_queue(login, post)


def lift_in_the_admin(staff_client, post: Post) -> None:
    removal = active_removal(post)
    response = staff_client.post(f"/admin/moderation/action/{removal.pk}/lift/", {"reason": WRONG_POST})
    assert response.status_code == 302
    assert active_removal(post) is None


def test_lifting_a_removal_sends_a_post_whose_sent_reports_were_withdrawn_nowhere(
    platform_client, staff_client, ts_user, login,
):
    sent = report("hate")
    post = sent_to_fact_checkers(platform_client, staff_client, sent)
    withdraw(platform_client, sent)
    # A new report, decided: removed. Lifting the removal reopens it for staff; the withdrawn one asks for nothing.
    later = report("violence")
    send(platform_client, later)
    decide_on_the_desk(staff_client, post, "removed", **{"removed-ground": "violence",
                                                          "removed-reason": "Calls for violence against nurses."})
    assert Post.objects.get(pk=post.pk).queue_state == QueueState.REMOVED

    lift_in_the_admin(staff_client, post)
    assert Post.objects.get(pk=post.pk).queue_state == QueueState.UNFLAGGED
    assert not in_fact_checkers_queue(login, post)
    assert ReportedPost.objects.get(post=post).open_reports == 1
    assert platform_client.get(f"/api/v1/flags/{later['idempotency_key']}").json()["status"] == "open"
    assert platform_client.get(f"/api/v1/flags/{sent['idempotency_key']}").json()["status"] == "withdrawn"


def test_lifting_a_removal_sends_the_post_back_to_fact_checkers_when_a_misinformation_flag_remains(
    platform_client, staff_client, ts_user, login,
):
    sent = report("hate")
    post = sent_to_fact_checkers(platform_client, staff_client, sent, report("misinformation"))
    withdraw(platform_client, sent)
    later = report("violence")
    send(platform_client, later)
    decide_on_the_desk(staff_client, post, "removed", **{"removed-ground": "violence",
                                                          "removed-reason": "Calls for violence against nurses."})

    lift_in_the_admin(staff_client, post)
    assert Post.objects.get(pk=post.pk).queue_state == QueueState.QUEUED
    assert in_fact_checkers_queue(login, post)
    assert ReportedPost.objects.get(post=post).open_reports == 1
