"""Media in the published formats: the statement of reasons' `content_type` names the post's media, and an
`altered` rating of a post with media is published as schema.org MediaReview beside its ClaimReview, on
`/claims/{id}/` and in `export_claimreview`; nowhere for another verdict or a post without media."""

from __future__ import annotations

import json
import re
from datetime import date
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from factcheck.claimreview import claim_page_url
from factcheck.media import MediaInput, store_media
from factcheck.models import MediaType
from moderation.models import Action
from moderation.statements import transparency as tdb
from tests.factories import DecisionFactory, FactCheckerFactory, PageFactory, PostFactory
from tests.moderation.test_claimreview_out import check_claim_review, ld_scripts

pytestmark = pytest.mark.django_db

IMAGE = MediaInput(kind="image", url="https://cdn.social.example/i/shark.jpg", pdq="f" * 64, md5="a" * 32,
                   alt_text="A shark swimming down a flooded highway")
VIDEO = MediaInput(kind="video", url="https://cdn.social.example/v/flood.mp4",
                   still_url="https://cdn.social.example/v/flood.jpg")
RATIONALE = "The shark was pasted into a 2017 photo of the flood; the original has no shark."
ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def a_post(*media: MediaInput, text: str = "A shark on the highway after the storm!", **kwargs):
    post = PostFactory(text=text, url="https://social.example/p/7", page=PageFactory(name="Storm Watch"), **kwargs)
    store_media({post.pk: list(media)})
    return post


def decide(post, verdict: str = "altered"):
    reviewer = FactCheckerFactory(organisation__name="Full Fact", organisation__url="https://fullfact.org/")
    return DecisionFactory(post=post, verdict=verdict, reviewer=reviewer, rationale=RATIONALE)


def statement_content_type(platform_client, post) -> list[str]:
    action = Action.objects.get(post=post)
    response = platform_client.get(f"/api/v1/actions/{action.pk}/statement-of-reasons")
    assert response.status_code == 200
    transparency = action.statement.transparency
    assert tdb.statement_problems(transparency) == []
    return transparency["content_type"]


# --- the statement of reasons' content_type ----------------------------------------------------------


@pytest.mark.parametrize(("media", "text", "expected"), [
    ((IMAGE,), "Look at this!", [tdb.CONTENT_IMAGE, tdb.CONTENT_TEXT]),
    ((IMAGE,), "", [tdb.CONTENT_IMAGE]),
    ((VIDEO,), "", [tdb.CONTENT_VIDEO]),
    ((VIDEO, IMAGE, IMAGE), "Shocking footage", [tdb.CONTENT_IMAGE, tdb.CONTENT_VIDEO, tdb.CONTENT_TEXT]),
])
def test_the_statement_names_the_posts_media_and_its_text(platform_client, media, text, expected):
    post = a_post(*media, text=text, media_type=MediaType.TEXT)  # the media items decide, not the word
    decide(post, verdict="false")
    assert statement_content_type(platform_client, post) == expected


@pytest.mark.parametrize(("media_type", "expected"), [
    (MediaType.TEXT, [tdb.CONTENT_TEXT]), (MediaType.LINK, [tdb.CONTENT_TEXT]),
    (MediaType.IMAGE, [tdb.CONTENT_IMAGE]), (MediaType.VIDEO, [tdb.CONTENT_VIDEO]),
])
def test_a_post_without_media_items_keeps_the_rule_of_its_media_type(platform_client, media_type, expected):
    post = a_post(media_type=media_type)
    decide(post, verdict="false")
    assert statement_content_type(platform_client, post) == expected


def test_a_stored_statement_keeps_its_content_type_when_media_arrive_later(platform_client):
    before = a_post()
    decide(before, verdict="false")
    store_media({before.pk: [IMAGE]})
    assert statement_content_type(platform_client, before) == [tdb.CONTENT_TEXT]
    after = a_post(IMAGE)
    decide(after, verdict="false")
    assert statement_content_type(platform_client, after) == [tdb.CONTENT_IMAGE, tdb.CONTENT_TEXT]


# --- MediaReview ---------------------------------------------------------------------------------------


def check_media_review(review: dict, *, claim_review: dict, post, rating) -> None:
    """The MediaReview of an altered rating, field by field, against its ClaimReview and the post's media."""
    assert review["@context"] == "https://schema.org"
    assert review["@type"] == "MediaReview"
    assert review["url"] == claim_review["url"]
    assert review["author"] == claim_review["author"] == {"@type": "Organization", "name": "Full Fact",
                                                          "url": "https://fullfact.org/"}
    assert ISO_DATE.match(review["datePublished"]) and review["datePublished"] == claim_review["datePublished"]
    assert review["mediaAuthenticityCategory"] == "https://schema.org/TransformedContent"
    assert "originalMediaContextDescription" not in review  # schema.org's, for media out of context only
    item = review["itemReviewed"]
    assert item["@type"] == "MediaReviewItem"
    assert item["creator"] == {"@type": "Organization", "name": "Storm Watch"}
    posted = post.posted_at.date().isoformat()
    shared_on = {"@type": "SocialMediaPosting", "url": post.url}
    assert item["mediaItemAppearance"] == [
        {"@type": "ImageObject", "contentUrl": IMAGE.url, "uploadDate": posted, "caption": IMAGE.alt_text,
         "sharedOn": shared_on},
        {"@type": "VideoObject", "contentUrl": VIDEO.url, "uploadDate": posted, "thumbnailUrl": VIDEO.still_url,
         "sharedOn": shared_on},
    ]
    assert date.fromisoformat(item["mediaItemAppearance"][0]["uploadDate"])


def test_the_claim_page_publishes_an_altered_ratings_media_review_beside_its_claim_review():
    post = a_post(IMAGE, VIDEO)
    rating = decide(post).rating
    response = Client().get(f"/claims/{rating.pk}/")
    assert response.status_code == 200
    claim_review, media_review = ld_scripts(response.content.decode())
    check_claim_review(claim_review, verdict="altered")
    check_media_review(media_review, claim_review=claim_review, post=post, rating=rating)


@pytest.mark.parametrize(("verdict", "media"), [
    ("false", (IMAGE,)), ("partly_false", (IMAGE, VIDEO)), ("missing_context", (VIDEO,)), ("altered", ()),
])
def test_no_media_review_for_another_verdict_or_a_post_without_media(verdict, media):
    rating = decide(a_post(*media), verdict=verdict).rating
    scripts = ld_scripts(Client().get(f"/claims/{rating.pk}/").content.decode())
    assert [script["@type"] for script in scripts] == ["ClaimReview"]


def test_a_superseded_altered_rating_publishes_neither():
    post = a_post(IMAGE)
    first = decide(post).rating
    decide(post, verdict="false")
    response = Client().get(f"/claims/{first.pk}/")
    assert response.status_code == 200
    assert ld_scripts(response.content.decode()) == []


def export(tmp_path) -> tuple[dict, str]:
    target, out = tmp_path / "feed.json", StringIO()
    call_command("export_claimreview", "--since", "2000-01-01", "--out", str(target), stdout=out)
    return json.loads(target.read_text()), out.getvalue()


def test_the_export_puts_the_media_review_in_its_ratings_feed_item(tmp_path):
    altered_post = a_post(IMAGE, VIDEO)
    altered = decide(altered_post).rating
    decide(a_post(IMAGE), verdict="false")
    decide(a_post(), verdict="altered")

    feed, summary = export(tmp_path)

    items = {element["item"][0]["url"]: element["item"] for element in feed["dataFeedElement"]}
    assert len(items) == 3
    claim_review, media_review = items[claim_page_url(altered)]
    check_claim_review(claim_review, verdict="altered")
    check_media_review(media_review, claim_review=claim_review, post=altered_post, rating=altered)
    assert sorted(len(reviews) for reviews in items.values()) == [1, 1, 2]
    assert all(reviews[0]["@type"] == "ClaimReview" for reviews in items.values())
    assert "Exported 3 ClaimReview(s) published since 2000-01-01, with 1 MediaReview(s)." in summary


def test_the_export_reads_the_media_in_one_query_however_many_altered_ratings(tmp_path):
    def queries_for(count: int) -> int:
        for _ in range(count):
            decide(a_post(IMAGE, VIDEO))
        with CaptureQueriesContext(connection) as queries:
            feed, _ = export(tmp_path)
        assert all(len(element["item"]) == 2 for element in feed["dataFeedElement"])
        return len(queries)

    assert queries_for(2) == queries_for(4)


def test_the_apis_claimreview_stays_one_claim_review(platform_client):
    post = a_post(IMAGE)
    decide(post)
    review = platform_client.get(f"/api/v1/posts/{post.external_id}/claimreview").json()
    assert review["@type"] == "ClaimReview"
    check_claim_review(review, verdict="altered")


def test_importing_our_own_export_reads_the_media_review_as_part_of_its_claim_review(tmp_path):
    decide(a_post(IMAGE, VIDEO))
    export(tmp_path)
    out = StringIO()
    call_command("import_posts", str(tmp_path / "feed.json"), "--format", "claimreview", "--no-progress",
                 stdout=out, stderr=StringIO())
    summary = out.getvalue()
    # One review read (the ClaimReview), not a MediaReview refused as "not a ClaimReview".
    assert "rejected 0" in summary and "MediaReview" not in summary
    assert re.search(r"imported 1\b|already present 1\b", summary), summary
