"""What a flag's withdrawal leaves behind (DELETE /api/v1/flags/{idempotency_key}): copies waiting with their claim's
first post keep it waiting. Reports of harm staff sent to fact-checkers, withdrawn:
tests/moderation/test_harm_reports_sent_then_withdrawn.py."""

from __future__ import annotations

import pytest

from factcheck.claims import claim_post
from factcheck.models import Claim, ClaimStatus, Flag, Post, QueueState, ReportStatus
from factcheck.withdrawal import MAX_WITHDRAWAL_REASON
from tests.api.helpers import flag_payload, post_json
from tests.factories import FactCheckerFactory

pytestmark = pytest.mark.django_db
URL = "/api/v1/flags"
TEXT = "Hot lemon water every morning cures type 2 diabetes within a fortnight, says a leaked memo."


def send(client, *flags) -> None:
    assert post_json(client, URL, {"flags": list(flags)}).status_code == 201


def withdraw(client, key: str, **query):
    return client.delete(f"{URL}/{key}", query_params=query)


def grouped_copy(client) -> tuple[dict, Post, Post]:
    """A claim's first post (flag returned) and a copy on another page waiting with it (its own flag)."""
    root_flag = flag_payload(post={"external_id": "root", "text": TEXT})
    send(client, root_flag, flag_payload(post={"external_id": "copy", "text": TEXT}))
    root = Post.objects.get(external_id="root")
    Post.objects.filter(external_id="copy").update(duplicate_of=root, queue_state=QueueState.GROUPED)
    return root_flag, root, Post.objects.get(external_id="copy")


def test_withdrawing_the_first_posts_flags_leaves_it_waiting_with_its_copies(platform_client, login):
    root_flag, root, copy = grouped_copy(platform_client)

    response = withdraw(platform_client, root_flag["idempotency_key"], reason="Duplicate of another report")
    assert response.status_code == 200
    assert response.json()["post"] == {"external_id": "root", "queue_state": "queued"}
    root.refresh_from_db(), copy.refresh_from_db()
    assert (root.queue_state, root.flag_count) == (QueueState.QUEUED, 0)
    assert (copy.queue_state, copy.duplicate_of_id, copy.flag_count) == (QueueState.GROUPED, root.pk, 1)
    reviewer = FactCheckerFactory()
    assert "Hot lemon water" in login(reviewer).get("/queue/").content.decode()
    assert claim_post(reviewer=reviewer, post_id=root.pk).status == ClaimStatus.ACTIVE


def test_a_claim_on_the_first_post_goes_on_when_its_own_flags_are_withdrawn(platform_client):
    root_flag, root, copy = grouped_copy(platform_client)
    claim = claim_post(reviewer=FactCheckerFactory(), post_id=root.pk)

    assert withdraw(platform_client, root_flag["idempotency_key"]).json()["post"]["queue_state"] == "claimed"
    assert Claim.objects.get(pk=claim.pk).status == ClaimStatus.ACTIVE
    assert Post.objects.get(pk=copy.pk).queue_state == QueueState.GROUPED


def test_a_reason_with_contact_details_is_refused_and_the_document_says_the_servers_limits(platform_client):
    flag = flag_payload()
    send(platform_client, flag)
    for reason, found in (("Reporter jane@example.com retracted", "jane@example.com"),
                          ("Call +44 20 7946 0958 about it", "+44 20 7946 0958")):
        refused = withdraw(platform_client, flag["idempotency_key"], reason=reason)
        assert refused.status_code == 422
        [problem] = refused.json()["error"]["details"]["errors"]
        assert problem["field"] == "reason" and "leave out e-mail addresses and phone numbers" in problem["message"]
        assert found in problem["message"]
    assert Flag.objects.get().status == ReportStatus.OPEN

    document = platform_client.get("/api/openapi.json").json()
    parameters = {p["name"]: p for p in document["paths"][f"{URL}/{{idempotency_key}}"]["delete"]["parameters"]}
    reason = parameters["reason"]
    assert reason["schema"]["maxLength"] == MAX_WITHDRAWAL_REASON == 500
    assert "at most 500 characters" in reason["description"] and "e-mail address" in reason["description"]
    assert "maxLength" not in parameters["idempotency_key"]["schema"]  # white space around a key is read past
    assert "a longer one is not found, 404" in parameters["idempotency_key"]["description"]
    assert withdraw(platform_client, flag["idempotency_key"], reason="r" * 500).status_code == 200


def test_the_document_says_a_withdrawn_keys_replay_is_a_duplicate_that_stays_withdrawn(platform_client):
    flag = flag_payload(post={"external_id": "replayed"})
    send(platform_client, flag)
    withdraw(platform_client, flag["idempotency_key"])
    [result] = post_json(platform_client, URL, {"flags": [flag]}).json()["results"]
    assert result["duplicate"] is True and result["queue_state"] == "unflagged"
    assert Flag.objects.get().status == ReportStatus.WITHDRAWN

    document = platform_client.get("/api/openapi.json").json()
    described = " ".join(document["paths"][URL]["post"]["description"].split())
    assert "A key you withdrew" in described and "the flag stays withdrawn" in described
    assert "send a new flag under a new key" in described
