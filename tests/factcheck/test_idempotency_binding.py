"""An idempotency key belongs to one platform account and one flag (issue 28, finding 10; PRODUCT.md).

The same key with the same flag is stored once and a replay writes nothing; with a different flag the
request is refused whole (409 `idempotency_conflict`) and nothing is written, no post, no page change.
Keys of different platform accounts never collide, and each account reads only its own flag.
"""

from __future__ import annotations

import pytest

from factcheck.models import Flag, Page, Post
from tests.api.helpers import flag_payload, post_json
from tests.conftest import bearer_client
from tests.factories import PlatformUserFactory

pytestmark = pytest.mark.django_db
URL = "/api/v1/flags"


def _conflict(response) -> None:
    assert response.status_code == 409, response.json()
    assert response.json()["error"]["code"] == "idempotency_conflict"


def test_a_key_reused_for_a_flag_on_another_post_is_a_409_and_writes_no_post_or_page(platform_client):
    first = flag_payload()
    assert post_json(platform_client, URL, first).status_code == 201
    other = flag_payload(idempotency_key=first["idempotency_key"])  # another post, on another page

    _conflict(post_json(platform_client, URL, other))
    assert list(Post.objects.values_list("external_id", flat=True)) == [first["post"]["external_id"]]
    assert list(Page.objects.values_list("external_id", flat=True)) == [first["post"]["page"]["external_id"]]
    assert Flag.objects.count() == 1


def test_a_replay_with_other_text_page_name_or_politician_mark_is_refused_and_changes_nothing(platform_client):
    flag = flag_payload()
    assert post_json(platform_client, URL, flag).status_code == 201
    post, page = flag["post"], flag["post"]["page"]
    for changed in ({**post, "text": "Rewritten by a replay."}, {**post, "page": {**page, "name": "Renamed"}},
                    {**post, "page": {**page, "is_politician": True}}, {**post, "views": 1}):
        _conflict(post_json(platform_client, URL, {**flag, "post": changed}))

    stored = Post.objects.select_related("page").get()
    assert stored.text == post["text"] and stored.views == post["views"]
    assert (stored.page.name, stored.page.is_politician) == (page["name"], False)
    assert stored.queue_state == "queued" and stored.flag_count == 1


def test_a_conflicting_key_refuses_the_whole_batch(platform_client):
    flag = flag_payload()
    assert post_json(platform_client, URL, flag).status_code == 201
    fresh = flag_payload()

    _conflict(post_json(platform_client, URL, {"flags": [fresh, {**flag, "reason": "Another reason"}]}))
    assert not Post.objects.filter(external_id=fresh["post"]["external_id"]).exists()
    assert Flag.objects.count() == 1


def test_the_same_flag_sent_again_is_a_duplicate_and_writes_nothing(platform_client):
    flag = flag_payload()
    flag.pop("flagged_at")  # left to the server: a retry is still the same flag
    assert post_json(platform_client, URL, flag).status_code == 201
    before = Post.objects.values().get()

    again = post_json(platform_client, URL, flag)
    assert again.status_code == 200
    assert again.json()["results"] == [{"idempotency_key": flag["idempotency_key"],
                                        "external_id": flag["post"]["external_id"], "queue_state": "queued",
                                        "duplicate": True}]
    assert Post.objects.values().get() == before  # not even updated_at or the reach figures
    # Spelled differently, the same content: still the same flag.
    respelled = {**flag, "post": {**flag["post"], "language": " EN ", "posted_at": "2026-03-01T09:00:00+01:00"}}
    assert post_json(platform_client, URL, respelled).status_code == 200


def test_keys_of_different_accounts_do_not_collide_and_each_reads_its_own(platform_client):
    flag = flag_payload(category="hate")
    assert post_json(platform_client, URL, flag).status_code == 201
    other = bearer_client(PlatformUserFactory())
    theirs = {**flag, "category": "violence", "reason": "Their own report"}

    assert post_json(other, URL, theirs).status_code == 201
    assert post_json(other, URL, theirs).status_code == 200
    assert Flag.objects.filter(idempotency_key=flag["idempotency_key"]).count() == 2
    mine = platform_client.get(f"{URL}/{flag['idempotency_key']}").json()
    yours = other.get(f"{URL}/{flag['idempotency_key']}").json()
    assert (mine["category"], yours["category"]) == ("hate", "violence")


def test_a_flag_stored_before_fingerprints_is_compared_leniently_and_never_rewritten(platform_client):
    flag = flag_payload()
    assert post_json(platform_client, URL, flag).status_code == 201
    Flag.objects.update(fingerprint="")  # as migration 0018 leaves the flags it found

    replay = {**flag, "post": {**flag["post"], "text": "Rewritten by a replay."}}
    assert post_json(platform_client, URL, replay).status_code == 200  # same source, category, reason, post
    assert Post.objects.get().text == flag["post"]["text"]
    _conflict(post_json(platform_client, URL, {**flag, "source": "partner"}))
