"""A flag its sender withdrew (DELETE /api/v1/flags/{key}) is kept as history and read nowhere as the post's flags:
not by a later decision's statement of reasons, not in the owner's timeline or data export."""

from __future__ import annotations

import json

import pytest

from factcheck.models import Post
from moderation.models import StatementOfReasons
from moderation.staff_actions import remove_post
from tests import scenarios
from tests.api.helpers import flag_payload, post_json
from tests.factories import PageFactory, UserFactory

pytestmark = pytest.mark.django_db
URL = "/api/v1/flags"


def send(client, *flags) -> None:
    assert post_json(client, URL, {"flags": list(flags)}).status_code == 201


def test_a_removal_after_a_classifiers_flag_was_withdrawn_credits_no_automated_detection(platform_client, ts_user):
    post = {"external_id": "rally", "text": "Everyone meet at the square at noon."}
    detected = flag_payload(source="classifier", category="violence", flagged_at="2026-03-01T09:00:00Z", post=post)
    reported = flag_payload(source="user_report", category="misinformation", flagged_at="2026-03-01T10:00:00Z",
                            post=post)
    send(platform_client, detected, reported)
    assert platform_client.delete(f"{URL}/{detected['idempotency_key']}").json()["status"] == "withdrawn"

    action = remove_post(staff=ts_user, post_id=Post.objects.get(external_id="rally").pk, ground="violence",
                         reason="Removed after review by staff")
    statement = StatementOfReasons.objects.get(action=action)
    assert statement.automated_detection is False
    assert statement.transparency["automated_detection"] == "No"
    assert statement.transparency["source_type"] == "SOURCE_ARTICLE_16"  # the user's report that still counts
    assert "classifier" not in statement.facts.lower()


def test_the_owner_sees_no_withdrawn_flag_in_the_posts_story_or_their_data(platform_client, login):
    owner = UserFactory()
    page = PageFactory(external_id="owned", name="Owned page")
    page.owners.add(owner)
    post = {"external_id": "story", "page": {"external_id": "owned", "name": "Owned page"}}
    mistaken = flag_payload(source="classifier", post=post)
    send(platform_client, mistaken, flag_payload(source="user_report", post=post),
         flag_payload(source="user_report", post=post))
    platform_client.delete(f"{URL}/{mistaken['idempotency_key']}")
    rated = scenarios.rated_post(post=Post.objects.get(external_id="story"))

    browser = login(owner)
    story = " ".join(browser.get(f"/appeals/posts/{rated.pk}/").content.decode().split())
    assert "Flagged (user report)" in story and "2 flags" in story
    assert "Flagged (classifier)" not in story
    exported = json.loads(b"".join(browser.get("/appeals/export/").streaming_content))
    [mine] = [p for p in exported["posts"] if p["external_id"] == "story"]
    assert [(row["source"], row["flags"]) for row in mine["flags_by_source"]] == [("user_report", 2)]
