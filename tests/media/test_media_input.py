"""A flag's `post.media` (issue 30): validated per field, stored per item with its band keys, replaced only
by a flag that sends other media, kept out of old flags' fingerprints, and shown by GET /api/v1/posts/{id}."""

from __future__ import annotations

import pytest

from factcheck.media import BAND_COLUMNS, band_keys, band_rows, pdq_int
from factcheck.models import Flag, Post
from factcheck.models_media import MediaBand, PostMedia, RatedMediaBand
from factcheck.ratings import record_rating
from tests.api.helpers import flag_payload, post_json
from tests.conftest import bearer_client
from tests.factories import FactCheckerFactory, UserFactory

pytestmark = pytest.mark.django_db
URL = "/api/v1/flags"
PDQ = "f8f8f0cee0f4a84f06370a22038f63f0b36e2ed596621e1d33e6b39c4e9c9b22"
OTHER_PDQ = "0f" * 32  # as balanced as a real picture's hash (factcheck.media.BALANCED_BITS)
BAND_FIELDS = [f"{name}_id" if name in ("media", "post") else name for name in BAND_COLUMNS]
MD5 = "d41d8cd98f00b204e9800998ecf8427e"


def image(n: int = 1, **fields) -> dict:
    return {"kind": "image", "url": f"https://media.example/{n}.jpg", "pdq": PDQ, "md5": MD5,
            "alt_text": f"Picture {n}", "quality": 100, **fields}


def video(**fields) -> dict:
    return {"kind": "video", "url": "https://media.example/clip.mp4", "still_url": "https://media.example/still.jpg",
            **fields}


def errors(response) -> list[tuple[int, str]]:
    assert response.status_code == 422, response.content
    return [(e["item"], e["field"]) for e in response.json()["error"]["details"]["errors"]]


def stored(external_id: str) -> list[tuple]:
    return list(PostMedia.objects.filter(post__external_id=external_id).order_by("position").values_list(
        "position", "kind", "url", "pdq", "md5", "alt_text", "quality", "still_url"))


PLAIN_HTTPS = "must be an https:// URL with an ASCII host name, a port that exists, and no user name or password"

@pytest.mark.parametrize(("item", "field", "message"), [
    (image(pdq="ab" * 31), "pdq", "must be a PDQ hash: 64 hex characters"),
    (image(pdq="g" * 64), "pdq", "must be a PDQ hash: 64 hex characters"),
    (image(pdq=f" {PDQ}"), "pdq", "must be a PDQ hash: 64 hex characters"),
    (image(md5="z" * 32), "md5", "must be an MD5 hash: 32 hex characters"),
    (image(md5=MD5 + "0"), "md5", "must be an MD5 hash: 32 hex characters"),
    (image(url="http://media.example/1.jpg"), "url", "must be an https:// URL"),
    (image(url="https://"), "url", "must be an https:// URL"),
    # A port that cannot exist: a reviewer's browser could never load it, and MediaReview would publish it.
    (image(url="https://media.example:0/1.jpg"), "url", PLAIN_HTTPS),
    (image(url="https://media.example:99999/1.jpg"), "url", PLAIN_HTTPS),
    (image(url="https://media.example/" + "a" * 2000), "url", "String should have at most 2000 characters"),
    (image(kind="gif"), "kind", "Input should be 'image' or 'video'"),
    (image(quality=101), "quality", "Input should be less than or equal to 100"),
    (image(quality="50"), "quality", "Input should be a valid integer"),
    (image(quality=True), "quality", "Input should be a valid integer"),
    (image(alt_text="a" * 5001), "alt_text", "String should have at most 5000 characters"),
    (image(still_url="https://media.example/still.jpg"), "still_url", "only a video has a still image"),
    (video(pdq=PDQ), "pdq", "only an image has a PDQ hash"),
    (video(quality=90), "quality", "only an image's PDQ hash has a quality"),
    (video(still_url="ftp://media.example/still.jpg"), "still_url", "must be an https:// URL"),
])
def test_a_bad_media_field_is_a_422_naming_the_item_and_field_and_nothing_is_stored(
    platform_client, item, field, message,
):
    response = post_json(platform_client, URL, flag_payload(post={"media": [image(0), video(), item]}))
    assert errors(response) == [(0, f"post.media.2.{field}")]
    assert response.json()["error"]["details"]["errors"][0]["message"] == message
    assert not Post.objects.exists() and not PostMedia.objects.exists()


def test_in_a_batch_the_bad_flag_is_named_by_its_place_and_the_whole_batch_is_refused(platform_client):
    batch = {"flags": [flag_payload(post={"media": [image()]}),
                       flag_payload(post={"media": [image(), image(2, md5="nothex")]})]}
    assert errors(post_json(platform_client, URL, batch)) == [(1, "post.media.1.md5")]
    assert not Post.objects.exists()


def test_more_than_ten_items_or_a_non_list_is_refused(platform_client):
    eleven = flag_payload(post={"media": [image(n) for n in range(11)]})
    response = post_json(platform_client, URL, eleven)
    assert errors(response) == [(0, "post.media")]
    assert "at most 10 items" in response.json()["error"]["details"]["errors"][0]["message"]
    assert errors(post_json(platform_client, URL, flag_payload(post={"media": image()}))) == [(0, "post.media")]
    assert errors(post_json(platform_client, URL, flag_payload(post={"media": ["https://media.example/1.jpg"]}))) \
        == [(0, "post.media.0")]
    assert post_json(platform_client, URL, flag_payload(post={"media": [image(n) for n in range(10)]})
                     ).status_code == 201


def test_items_are_stored_in_order_with_hashes_lower_case_and_blanks_for_nulls(platform_client):
    flag = flag_payload(post={"external_id": "p-media", "media": [
        image(1, pdq=PDQ.upper(), md5=MD5.upper(), alt_text=None, quality=87.0, unknown_key="ignored"),
        video(md5=MD5, alt_text="A clip"),
        {"kind": "image", "url": " https://media.example/bare.png ", "pdq": None, "md5": None, "still_url": None},
    ]})
    assert post_json(platform_client, URL, flag).status_code == 201
    assert stored("p-media") == [
        (0, "image", "https://media.example/1.jpg", PDQ, MD5, "", 87, ""),
        (1, "video", "https://media.example/clip.mp4", "", MD5, "A clip", None, "https://media.example/still.jpg"),
        (2, "image", "https://media.example/bare.png", "", "", "", None, ""),
    ]
    # Only the image with a PDQ hash has band keys: its 16 chunks.
    first = PostMedia.objects.get(post__external_id="p-media", position=0)
    assert sorted(MediaBand.objects.values_list("band", "media_id")) == sorted(
        (key, first.pk) for key in band_keys(pdq_int(PDQ)))


def test_a_low_quality_hash_is_stored_but_gets_no_band_keys(platform_client):
    flag = flag_payload(post={"external_id": "p-flat", "media": [image(quality=30)]})
    assert post_json(platform_client, URL, flag).status_code == 201
    assert stored("p-flat")[0][6] == 30
    assert not MediaBand.objects.exists()


def test_media_type_follows_the_first_item_unless_the_flag_names_it(platform_client):
    omitted = flag_payload(post={"external_id": "p-video", "media": [video(), image()]})
    del omitted["post"]["media_type"]
    named = flag_payload(post={"external_id": "p-named", "media_type": "text", "media": [image()]})
    bare = flag_payload(post={"external_id": "p-bare", "media": []})
    del bare["post"]["media_type"]
    for flag in (omitted, named, bare):
        assert post_json(platform_client, URL, flag).status_code == 201
    assert dict(Post.objects.values_list("external_id", "media_type")) == {
        "p-video": "video", "p-named": "text", "p-bare": "text"}


def _rated_band(external_id: str) -> None:
    """As if the post had been rated: its image's keys among the rated posts' (the rating side writes them)."""
    for item in PostMedia.objects.filter(post__external_id=external_id, kind="image").exclude(pdq=""):
        RatedMediaBand.objects.bulk_create([RatedMediaBand(**dict(zip(BAND_FIELDS, row, strict=True)))
                                            for row in band_rows(item.pk, item.post_id, pdq_int(item.pdq))])


def test_a_later_flag_with_other_media_replaces_the_items_and_their_band_keys(platform_client):
    assert post_json(platform_client, URL, flag_payload(
        post={"external_id": "p-swap", "media": [image(1), image(2)]})).status_code == 201
    _rated_band("p-swap")
    old_ids = set(PostMedia.objects.values_list("id", flat=True))
    assert MediaBand.objects.count() == RatedMediaBand.objects.count() == 32
    response = post_json(platform_client, URL, flag_payload(
        post={"external_id": "p-swap", "media": [image(3, pdq=OTHER_PDQ), video()]}))
    assert response.status_code == 201
    assert stored("p-swap") == [
        (0, "image", "https://media.example/3.jpg", OTHER_PDQ, MD5, "Picture 3", 100, ""),
        (1, "video", "https://media.example/clip.mp4", "", "", "", None, "https://media.example/still.jpg"),
    ]
    assert not set(PostMedia.objects.values_list("id", flat=True)) & old_ids
    assert not MediaBand.objects.filter(media_id__in=old_ids).exists()
    assert not RatedMediaBand.objects.exists()
    assert set(MediaBand.objects.values_list("band", flat=True)) == set(band_keys(pdq_int(OTHER_PDQ)))


def test_a_later_flag_without_media_or_with_the_same_media_leaves_the_items_as_they_are(platform_client):
    assert post_json(platform_client, URL, flag_payload(
        post={"external_id": "p-keep", "media": [image(1), video()]})).status_code == 201
    before = list(PostMedia.objects.order_by("position").values_list("id", flat=True))
    without = flag_payload(post={"external_id": "p-keep", "text": "Edited caption"})
    del without["post"]["media_type"]
    same = flag_payload(post={"external_id": "p-keep", "text": "Edited caption",
                              "media": [image(1, pdq=PDQ.upper()), video(alt_text=None)]})
    for flag in (without, same):
        assert post_json(platform_client, URL, flag).status_code == 201
    assert list(PostMedia.objects.order_by("position").values_list("id", flat=True)) == before
    assert Post.objects.get(external_id="p-keep").text == "Edited caption"
    assert MediaBand.objects.count() == 16


def test_a_later_flag_with_an_empty_list_removes_the_media(platform_client):
    assert post_json(platform_client, URL, flag_payload(
        post={"external_id": "p-clear", "media": [image()]})).status_code == 201
    assert post_json(platform_client, URL, flag_payload(post={"external_id": "p-clear", "media": []})
                     ).status_code == 201
    assert stored("p-clear") == [] and not MediaBand.objects.exists()


def test_in_one_batch_a_posts_last_flag_that_sends_media_decides(platform_client):
    batch = {"flags": [flag_payload(post={"external_id": "p-batch", "media": [image(1)]}),
                       flag_payload(post={"external_id": "p-batch", "media": [image(2), image(3)]}),
                       flag_payload(post={"external_id": "p-batch"})]}
    assert post_json(platform_client, URL, batch).status_code == 201
    assert [row[2] for row in stored("p-batch")] == ["https://media.example/2.jpg", "https://media.example/3.jpg"]


def test_a_flag_from_before_media_keeps_its_fingerprint_and_its_replay_is_a_duplicate(platform_client):
    flag = {"idempotency_key": "legacy-1", "source": "user_report", "reason": "Says a miracle cure exists",
            "flagged_at": "2026-03-01T10:00:00Z", "post": {
                "external_id": "legacy-post", "url": "https://social.example/posts/legacy",
                "text": "Drinking bleach cures the flu.", "language": "en", "country": "GB",
                "posted_at": "2026-03-01T08:00:00+00:00", "views": 100, "shares": 5,
                "page": {"external_id": "legacy-page", "name": "Health Truths Daily"}}}
    assert post_json(platform_client, URL, flag).status_code == 201
    # The digest the code before issue 30 gave this flag (what flags stored then carry).
    assert Flag.objects.get().fingerprint == "89c166cf1ee47d2210e97705fc4fe6be1af9bde2dee12c736339800a801361b2"
    replay = post_json(platform_client, URL, flag)
    assert replay.status_code == 200 and replay.json()["results"][0]["duplicate"] is True


def test_media_are_part_of_a_flags_content_for_its_idempotency_key(platform_client):
    flag = flag_payload(post={"media": [image()]})
    assert post_json(platform_client, URL, flag).status_code == 201
    assert post_json(platform_client, URL, flag).json()["results"][0]["duplicate"] is True
    other = {**flag, "post": {**flag["post"], "media": [image(alt_text="Another description")]}}
    response = post_json(platform_client, URL, other)
    assert response.status_code == 409 and response.json()["error"]["code"] == "idempotency_conflict"
    assert stored(flag["post"]["external_id"])[0][5] == "Picture 1"


def test_get_post_shows_the_media_in_order_to_the_platform_and_to_the_pages_owner(platform_client):
    flag = flag_payload(post={"external_id": "p-shown", "media": [video(md5=MD5), image(2, quality=None)]})
    assert post_json(platform_client, URL, flag).status_code == 201
    expected = [
        {"kind": "video", "url": "https://media.example/clip.mp4", "pdq": "", "md5": MD5, "alt_text": "",
         "quality": None, "still_url": "https://media.example/still.jpg"},
        {"kind": "image", "url": "https://media.example/2.jpg", "pdq": PDQ, "md5": MD5, "alt_text": "Picture 2",
         "quality": None, "still_url": ""},
    ]
    assert platform_client.get("/api/v1/posts/p-shown").json()["media"] == expected
    owner, stranger = UserFactory(), UserFactory()
    Post.objects.get(external_id="p-shown").page.owners.add(owner)
    assert bearer_client(owner).get("/api/v1/posts/p-shown").json()["media"] == expected
    assert bearer_client(stranger).get("/api/v1/posts/p-shown").status_code == 404


def test_a_post_without_media_shows_an_empty_list(platform_client):
    flag = flag_payload(post={"external_id": "p-plain"})
    assert post_json(platform_client, URL, flag).status_code == 201
    assert platform_client.get("/api/v1/posts/p-plain").json()["media"] == []


def test_a_rated_post_keeps_the_images_it_was_rated_on_whatever_a_later_flag_sends(platform_client):
    assert post_json(platform_client, URL, flag_payload(
        post={"external_id": "p-rated", "media": [image(1)]})).status_code == 201
    post = Post.objects.get(external_id="p-rated")
    record_rating(reviewer=FactCheckerFactory(), post_id=post.pk, verdict="altered", rationale="Edited photo.",
                  sources=["https://source.example/a"], claim_if_unclaimed=True)
    old = PostMedia.objects.get(post=post)
    assert RatedMediaBand.objects.filter(media_id=old.pk).count() == 16
    assert post_json(platform_client, URL, flag_payload(
        post={"external_id": "p-rated", "media": [image(2, pdq=OTHER_PDQ)]})).status_code == 201
    # The rating was about the first picture: it stays, and stays the rated one (the flag itself is stored).
    assert list(PostMedia.objects.filter(post=post).values_list("pk", flat=True)) == [old.pk]
    assert sorted(RatedMediaBand.objects.values_list("band", flat=True)) == sorted(band_keys(pdq_int(old.pdq)))
    assert post.flags.count() == 2
