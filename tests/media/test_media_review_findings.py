"""What two hostile reviews of issue 30 found, each as the test that failed before its fix.

- A rated post (or a matched copy) keeps the media it was decided on: a later flag with another picture does not
  carry an Altered rating to a picture nobody reviewed, nor unpublish the truth about the one that was, nor leave
  copies labelled by a source that no longer carries their picture. It may still give such a post its first media.
- A post we already had whose flag brings media is matched to rated claims by them, as a new post is.
- Media addresses are ASCII https URLs without credentials (shown to reviewers, published in MediaReview).
- A hash sent without its quality is matched only when it can be a real picture's (a blank image's matches all).
- `media: []` is a flag of its own, not a replay of the same flag without media.
- The display rule and the CSP agree on port 0 and trailing dots; the platform's words are isolated (<bdi>).
- One rated post whose sweep fails does not hold up the others'.
"""

from __future__ import annotations

from unittest import mock

import pytest
from django.test import Client, override_settings

from factcheck.ingest import ingest_flags
from factcheck.matching import sweep
from factcheck.matching.media import find_similar
from factcheck.media import MediaInput, matchable, pdq_hex, store_media
from factcheck.media_display import display_url
from factcheck.models import MatchMethod, MatchState, QueueState, Rating, Verdict
from factcheck.models_media import PostMedia
from factcheck.ratings import record_rating
from tests.api.helpers import flag_payload, post_json
from tests.factcheck.matching_helpers import flag, post
from tests.factories import PostFactory
from tests.media.test_media_matching import OTHER_PICTURE, PICTURE, TEXTS, arrive, checker, image, pair, with_media

pytestmark = pytest.mark.django_db
__all__ = ["checker"]  # the fixture, imported for these tests

FLAGS = "/api/v1/flags"


def again(external_id: str, text: str, *items: MediaInput, key: str):
    """A later flag of a post we have, from another report, carrying these items."""
    return ingest_flags(flags=[with_media(flag(external_id, text, page=f"page-{external_id}", key=key), *items)])


def rate_altered(reviewer, external_id: str = "source") -> Rating:
    record_rating(reviewer=reviewer, post_id=post(external_id).pk, verdict=Verdict.ALTERED,
                  rationale="The shark was pasted in.", sources=["https://source.example/a"], claim_if_unclaimed=True)
    return Rating.objects.get(post=post(external_id), is_current=True)


def test_a_rated_posts_picture_is_not_replaced_so_its_rating_never_reaches_an_unreviewed_picture(checker):
    arrive("source", TEXTS[0], image(PICTURE))
    rating = rate_altered(checker)
    arrive("copy-old", TEXTS[1], image(PICTURE, name="b"))
    again("source", TEXTS[0], image(OTHER_PICTURE, name="genuine"), key="second")
    # The rated picture stays, the genuine one is not taken: nothing carries Altered to it.
    assert list(PostMedia.objects.filter(post=post("source")).values_list("pdq", flat=True)) == [pdq_hex(PICTURE)]
    arrive("innocent", TEXTS[2], image(OTHER_PICTURE, name="genuine2"))
    assert pair("innocent") is None and post("innocent").queue_state == QueueState.QUEUED
    # The copy of the real altered picture stays matched, and new ones still are.
    assert pair("copy-old").state == MatchState.AUTO
    arrive("copy-new", TEXTS[3], image(PICTURE, name="c"))
    assert pair("copy-new").state == MatchState.AUTO
    # The public MediaReview names the picture that was reviewed.
    page = Client().get(f"/claims/{rating.pk}/").content.decode()
    assert "genuine" not in page and "https://media.example/a.jpg" in page


def test_a_rated_post_without_media_takes_its_first_pictures_and_its_rating_reaches_their_copies(checker):
    arrive("source", TEXTS[0])
    rate_altered(checker)
    again("source", TEXTS[0], image(PICTURE), key="second")
    assert PostMedia.objects.filter(post=post("source")).count() == 1
    arrive("copy", TEXTS[1], image(PICTURE, name="b"))
    assert pair("copy").state == MatchState.AUTO


def test_a_post_we_had_whose_flag_brings_a_rated_picture_is_matched_by_it(checker):
    arrive("source", TEXTS[0], image(PICTURE))
    rate_altered(checker)
    arrive("late", TEXTS[1])
    [answer] = again("late", TEXTS[1], image(PICTURE, name="late"), key="late-2")
    assert answer.queue_state == QueueState.MATCHED
    assert (pair("late").method, pair("late").state) == (MatchMethod.MEDIA, MatchState.AUTO)


@pytest.mark.parametrize("url", [
    "https://user:secret@media.example/1.jpg",
    "https://мedia.example/1.jpg",
    "https://evil\u202eelpmaxe.aidem/x.jpg",
])
def test_a_media_address_with_credentials_or_a_non_ascii_host_is_refused(platform_client, url):
    response = post_json(platform_client, FLAGS, flag_payload(post={"media": [{"kind": "image", "url": url}]}))
    assert response.status_code == 422
    assert "post.media.0.url" in response.content.decode()


def test_a_blank_pictures_hash_sent_without_its_quality_matches_nothing(checker):
    assert not matchable("0" * 64, None) and not matchable("f" * 64, None)
    assert matchable(pdq_hex(PICTURE), None) and not matchable(pdq_hex(PICTURE), 49)
    arrive("source", TEXTS[0], MediaInput(kind="image", url="https://media.example/blank.jpg", pdq="0" * 64))
    rate_altered(checker)
    arrive("other-blank", TEXTS[1], MediaInput(kind="image", url="https://media.example/blank2.jpg", pdq="0" * 64))
    assert pair("other-blank") is None


def test_an_empty_media_list_under_a_key_sent_without_media_is_another_flag(platform_client):
    first = flag_payload(idempotency_key="k-1", post={"external_id": "p9", "media": [
        {"kind": "image", "url": "https://media.example/1.jpg"}]})
    assert post_json(platform_client, FLAGS, first).status_code == 201
    without = flag_payload(idempotency_key="k-9", post={"external_id": "p9"})
    assert post_json(platform_client, FLAGS, without).status_code in (200, 201)
    without["post"]["media"] = []
    assert post_json(platform_client, FLAGS, without).status_code == 409


@override_settings(FACTDESK_MEDIA_HOSTS=["media.example"])
@pytest.mark.parametrize("url", ["https://media.example:0/x.jpg", "https://media.example./x.jpg"])
def test_the_display_rule_refuses_what_the_csp_would_block(url):
    assert display_url(url) == ""
    assert display_url("https://media.example/x.jpg") == "https://media.example/x.jpg"


def test_the_platforms_words_are_isolated_on_the_post_page(checker, client):
    target = PostFactory(text="A picture")
    store_media({target.pk: [MediaInput(kind="image", url="https://elsewhere.example/x.jpg",
                                        alt_text="\u202eevil")]})
    client.force_login(checker)
    body = client.get(f"/queue/posts/{target.pk}/").content.decode()
    assert "<bdi>\u202eevil</bdi>" in body
    assert '<bdi class="mono media-url">https://elsewhere.example/x.jpg</bdi>' in body


def test_one_rated_post_whose_sweep_fails_does_not_hold_up_the_others(checker):
    for name, value in (("source", PICTURE), ("second", OTHER_PICTURE)):
        arrive(name, TEXTS[0 if name == "source" else 4], image(value, name=name))
    arrive("old-copy", TEXTS[1], image(OTHER_PICTURE, name="old"))
    rate_altered(checker)
    rate_altered(checker, "second")
    real = sweep.sweep_post

    def failing_first(*, post_id, now=None):
        if post_id == post("source").pk:
            raise RuntimeError("a lost connection")
        return real(post_id=post_id, now=now)

    with mock.patch.object(sweep, "sweep_post", failing_first), pytest.raises(RuntimeError):
        sweep.sweep_rated_media(post_ids=[post("source").pk, post("second").pk])
    assert pair("old-copy", "second").state == MatchState.AUTO
    assert PostMedia.objects.filter(post=post("source"), swept_at__isnull=True).exists()  # the reconciler's


def test_the_index_still_finds_a_matchable_hash_sent_without_quality():
    target = PostFactory()
    [media_id] = store_media({target.pk: [MediaInput(kind="image", url="https://m.example/x.jpg",
                                                     pdq=pdq_hex(PICTURE))]})
    assert [hit[0] for hit in find_similar([PICTURE], rated_only=False)[PICTURE]] == [media_id]
