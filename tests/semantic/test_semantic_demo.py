"""The demo tells issue 31's story (factcheck.demo_semantic): retellings of a rated claim suggested to the
organisation covering them, a language detected, a claim retold in the queue as one row, and a conflict."""

from __future__ import annotations

import html

import pytest
from django.test import Client

from factcheck.models import Match, MatchMethod, MatchState, Organisation, Post
from factcheck.queue import queue_page
from tests.factcheck.test_seed_demo import seeded  # noqa: F401  (the fixture: seed, then a real worker)

pytestmark = pytest.mark.django_db


def signed_in(username: str) -> Client:
    from accounts.models import User

    client = Client()
    client.force_login(User.objects.get(username=username))
    return client


def pair(post: str, source: str) -> Match:
    return Match.objects.get(post__external_id=post, source__external_id=source)


def test_the_demo_suggests_retellings_groups_variants_and_shows_a_conflict(seeded):  # noqa: F811
    # bob's False hot-water claim, retold in German and in French (sent without a language: detected).
    for retelling in ("demo-s001", "demo-s002"):
        suggestion = pair(retelling, "demo-c003")
        assert (suggestion.method, suggestion.state) == (MatchMethod.SEMANTIC, MatchState.SUGGESTED)
    french = Post.objects.get(external_id="demo-s002")
    assert french.language == "fr" and french.embedding.language_detected
    claire = signed_in("claire")
    page = html.unescape(claire.get(f"/queue/posts/{pair('demo-s001', 'demo-c003').source_id}/").content.decode())
    assert "English → German" in page and "English → French" in page
    # The garlic claim retold: one row with its two variants; the negating retelling a row of its own.
    rows = {row["external_id"]: row["variant_count"] for row in queue_page(
        organisation=Organisation.objects.get(name="Verifact"), columns=["external_id"], start=0, stop=1000).rows}
    assert rows["demo-s003"] == 2 and "demo-s004" not in rows and "demo-s005" not in rows
    assert rows["demo-s006"] == 0 and pair("demo-s006", "demo-s005").guard == "polarity"
    # alice's Missing context against claire's False of the paper-bags claim: on both organisations' pages.
    for user in ("alice", "claire"):
        conflicts = html.unescape(signed_in(user).get("/queue/conflicts/").content.decode())
        assert "demo-c012" in conflicts and "demo-c007" in conflicts
