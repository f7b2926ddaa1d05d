"""What a flag's withdrawal leaves behind (DELETE /api/v1/flags/{idempotency_key}): copies waiting with their claim's
first post keep it waiting, and a decision staff made stands."""

from __future__ import annotations

import pytest

from factcheck.claims import claim_post
from factcheck.models import Claim, ClaimStatus, Post, QueueState
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
