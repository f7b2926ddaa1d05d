"""A flag's category through the API, and its outcome back to the platform (DSA Art. 16(5)): GET
/api/v1/flags/{idempotency_key}, the `reports` of GET /api/v1/posts/{external_id}, and the `report.decided`
webhook delivered by a real worker with the same object."""

from __future__ import annotations

import pytest
from django.utils import timezone

from factcheck.models import Flag, Post, QueueState, ReportOutcome
from moderation.harm_reports import claim_report, decide_report
from tests.api.helpers import flag_payload, post_json
from tests.conftest import bearer_client
from tests.factories import PlatformUserFactory
from tests.webhooks.conftest import allow_private, receiver  # noqa: F401 (fixtures)
from tests.webhooks.receiver import Receiver

pytestmark = pytest.mark.django_db
URL = "/api/v1/flags"


def outcome(client, key: str):
    return client.get(f"{URL}/{key}")


def test_a_flag_is_misinformation_unless_it_says_otherwise_and_a_report_of_harm_skips_the_fact_checkers(
    platform_client,
):
    plain, harm = flag_payload(), flag_payload(category="harassment", reason="Calls a named victim a liar")
    response = post_json(platform_client, URL, {"flags": [plain, harm]})
    assert response.status_code == 201
    states = {r["external_id"]: r["queue_state"] for r in response.json()["results"]}
    assert states == {plain["post"]["external_id"]: "queued", harm["post"]["external_id"]: "unflagged"}
    assert Flag.objects.get(idempotency_key=plain["idempotency_key"]).category == "misinformation"
    assert Flag.objects.get(idempotency_key=harm["idempotency_key"]).category == "harassment"


def test_an_unknown_category_is_a_422_naming_the_field_and_nothing_is_stored(platform_client):
    response = post_json(platform_client, URL, {"flags": [flag_payload(), flag_payload(category="spam")]})
    assert response.status_code == 422
    [error] = response.json()["error"]["details"]["errors"]
    assert (error["item"], error["field"]) == (1, "category")
    assert "misinformation" in error["message"] and "imminent_harm" in error["message"]
    assert not Flag.objects.exists()


def test_the_same_key_with_another_category_is_a_409_idempotency_conflict(platform_client):
    flag = flag_payload(category="hate")
    assert post_json(platform_client, URL, flag).status_code == 201
    assert post_json(platform_client, URL, flag).status_code == 200  # a retry of the same flag
    response = post_json(platform_client, URL, {**flag, "category": "violence"})
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "idempotency_conflict"
    assert response.json()["error"]["details"] == {"idempotency_keys": [flag["idempotency_key"]]}
    assert Flag.objects.get().category == "hate"
    # A key belongs to its platform account: another account's flag with the same key is its own flag.
    other = bearer_client(PlatformUserFactory())
    assert post_json(other, URL, {**flag, "category": "violence"}).status_code == 201
    assert sorted(Flag.objects.values_list("category", flat=True)) == ["hate", "violence"]


def test_a_flags_outcome_is_read_by_the_account_that_sent_it_only(platform_client):
    flag = flag_payload(category="violence")
    post_json(platform_client, URL, flag)
    response = outcome(platform_client, flag["idempotency_key"])
    assert response.status_code == 200
    assert response.json() == {"idempotency_key": flag["idempotency_key"], "category": "violence",
                               "status": "open", "outcome": None, "decided_at": None}
    other = outcome(bearer_client(PlatformUserFactory()), flag["idempotency_key"])
    assert other.status_code == 404 and other.json()["error"]["code"] == "not_found"
    assert outcome(platform_client, "never-sent").status_code == 404


def test_a_key_with_slashes_or_a_line_break_reads_back_sent_raw_or_escaped(platform_client):
    flags = [flag_payload(idempotency_key="reports/2026/03/abc-1"), flag_payload(idempotency_key="two\nlines")]
    assert post_json(platform_client, URL, {"flags": flags}).status_code == 201
    for sent, key in (("reports/2026/03/abc-1", "reports/2026/03/abc-1"),
                      ("reports%2F2026%2F03%2Fabc-1", "reports/2026/03/abc-1"), ("two%0Alines", "two\nlines")):
        response = outcome(platform_client, sent)
        assert response.status_code == 200, sent
        assert response.json()["idempotency_key"] == key
    missing = outcome(platform_client, "reports/2026/03")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"


def test_staffs_decision_is_the_flags_outcome_and_the_posts_open_reports_go(platform_client, ts_user):
    flags = [flag_payload(category="hate", post={"external_id": "shared"}),
             flag_payload(category="violence", source="trusted_flagger", post={"external_id": "shared"}),
             flag_payload(post={"external_id": "shared"})]
    post_json(platform_client, URL, {"flags": flags})
    post = Post.objects.get(external_id="shared")
    read = platform_client.get("/api/v1/posts/shared").json()
    assert read["reports"] == {"open": 2, "by_category": {"violence": 1, "hate": 1, "harassment": 0,
                                                          "imminent_harm": 0}}
    assert read["queue_state"] == "queued" and read["flags"]["count"] == 3

    claim_report(staff=ts_user, post_id=post.pk)
    decide_report(staff=ts_user, post_id=post.pk, outcome=ReportOutcome.NO_VIOLATION, reason="News reporting.")
    for flag in flags[:2]:
        body = outcome(platform_client, flag["idempotency_key"]).json()
        assert (body["status"], body["outcome"]) == ("decided", "no_violation") and body["decided_at"]
    assert outcome(platform_client, flags[2]["idempotency_key"]).json()["status"] == "open"  # waits for a rating
    read = platform_client.get("/api/v1/posts/shared").json()
    assert read["reports"]["open"] == 0 and read["queue_state"] == QueueState.QUEUED


def test_report_decided_reaches_the_senders_endpoint_with_the_same_object_through_a_real_worker(
    platform_client, platform_user, ts_user, receiver, allow_private, run_worker,  # noqa: F811 (fixtures)
    django_capture_on_commit_callbacks,
):
    hook = post_json(platform_client, "/api/v1/webhooks", {"url": receiver.url, "events": ["report.decided"]})
    assert hook.status_code == 201
    # Another platform account's endpoint hears nothing of these flags.
    elsewhere = Receiver().start()
    other = bearer_client(PlatformUserFactory())
    assert post_json(other, "/api/v1/webhooks", {"url": elsewhere.url, "events": ["report.decided"]}).status_code == 201
    flags = [flag_payload(category="imminent_harm", post={"external_id": "bleach"}),
             flag_payload(category="imminent_harm", source="partner", post={"external_id": "bleach"})]
    post_json(platform_client, URL, {"flags": flags})
    post = Post.objects.get(external_id="bleach")
    claim_report(staff=ts_user, post_id=post.pk)
    with django_capture_on_commit_callbacks(execute=True):
        decide_report(staff=ts_user, post_id=post.pk, outcome=ReportOutcome.REMOVED,
                      ground="imminent_harm_misinformation", reason="Tells parents to give children bleach.",
                      now=timezone.now())
    assert run_worker() >= 1
    received = receiver.wait_for(2)
    assert {r.headers["X-Factdesk-Event"] for r in received} == {"report.decided"}
    bodies = sorted((r.json for r in received), key=lambda b: b["data"]["idempotency_key"])
    assert len(received) == 2  # one per flag, only to the sender's endpoint
    for body, flag in zip(bodies, sorted(flags, key=lambda f: f["idempotency_key"]), strict=True):
        assert body["type"] == "report.decided"
        assert body["data"] == outcome(platform_client, flag["idempotency_key"]).json()
        assert body["data"]["outcome"] == "removed"
    assert elsewhere.received == []
    elsewhere.stop()
