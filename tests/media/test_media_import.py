"""`import_posts`: jsonl lines carry `post.media` as the API takes it; ClaimReview's image appearances become
image media items (issue 30). Every file is written here, into tmp_path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from factcheck.models import Flag, Post
from factcheck.models_media import MediaBand, PostMedia
from tests.api.helpers import flag_payload, post_json
from tests.factcheck.importers.helpers import import_posts

pytestmark = pytest.mark.django_db
PDQ = "f8f8f0cee0f4a84f06370a22038f63f0b36e2ed596621e1d33e6b39c4e9c9b22"


def write(tmp_path: Path, name: str, lines: list) -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def urls(external_id: str) -> list[str]:
    return list(PostMedia.objects.filter(post__external_id=external_id).order_by("position")
                .values_list("url", flat=True))


def test_jsonl_lines_store_their_media_and_bad_media_are_rejected_with_the_line(tmp_path):
    good = flag_payload(post={"external_id": "j-1", "media": [
        {"kind": "image", "url": "https://media.example/a.jpg", "pdq": PDQ.upper(), "quality": 90},
        {"kind": "video", "url": "https://media.example/b.mp4", "still_url": "https://media.example/b.jpg"}]})
    bad_hash = flag_payload(post={"external_id": "j-2", "media": [
        {"kind": "image", "url": "https://media.example/c.jpg"},
        {"kind": "image", "url": "https://media.example/d.jpg", "pdq": "123"}]})
    bad_url = flag_payload(post={"external_id": "j-3", "media": [{"kind": "image", "url": "http://media.example/e"}]})
    out = import_posts(write(tmp_path, "flags.jsonl", [good, bad_hash, bad_url]), "jsonl")
    assert out == [
        "imported 1, already present 0, rejected 2",
        "line 2: post.media.1.pdq: must be a PDQ hash: 64 hex characters",
        "line 3: post.media.0.url: must be an https:// URL",
    ]
    assert list(PostMedia.objects.values_list("post__external_id", "kind", "url", "pdq", "quality", "still_url")) == [
        ("j-1", "image", "https://media.example/a.jpg", PDQ, 90, ""),
        ("j-1", "video", "https://media.example/b.mp4", "", None, "https://media.example/b.jpg"),
    ]
    assert MediaBand.objects.count() == 16
    assert set(Post.objects.values_list("external_id", flat=True)) == {"j-1"}
    # The same file again: the stored line is already present, its media untouched.
    before = list(PostMedia.objects.values_list("id", flat=True))
    assert import_posts(write(tmp_path, "flags.jsonl", [good]), "jsonl") == [
        "imported 0, already present 1, rejected 0"]
    assert list(PostMedia.objects.values_list("id", flat=True)) == before


def test_a_jsonl_line_gets_the_same_media_field_and_message_as_the_api(platform_client, tmp_path):
    bad = flag_payload(post={"media": [{"kind": "video", "url": "https://media.example/v.mp4", "pdq": PDQ,
                                        "md5": "XYZ"}] * 11})
    del bad["post"]["media"][10]
    bad["post"]["media"][3] = {"kind": "image", "url": "https://media.example/i.jpg", "still_url": "https://x.example"}
    answer = post_json(platform_client, "/api/v1/flags", bad).json()["error"]["details"]["errors"]
    api = "; ".join(f"{e['field']}: {e['message']}" for e in answer)
    assert "post.media.3.still_url: only a video has a still image" in api
    assert import_posts(write(tmp_path, "one.jsonl", [bad]), "jsonl")[1] == f"line 1: {api}"


def review(n: int, item: dict) -> dict:
    return {
        "@context": "https://schema.org", "@type": "ClaimReview", "url": f"https://checkers.example/checks/{n}",
        "claimReviewed": f"Photo {n} shows the flood.", "datePublished": "2024-08-30",
        "author": {"@type": "Organization", "name": "Fact Desk Checkers", "url": "https://checkers.example"},
        "reviewRating": {"@type": "Rating", "alternateName": "Altered"},
        "itemReviewed": {"@type": "Claim", "datePublished": "2024-08-25", "identifier": f"cr-{n}",
                         "author": {"@type": "Person", "name": "Sam Speaker"}, **item},
    }


def test_claimreview_image_appearances_become_image_media_in_order(tmp_path):
    item = {
        "firstAppearance": {"@type": "ImageObject", "contentUrl": "https://img.example/first",
                            "url": "https://social.example/page"},
        "appearance": [
            {"@type": "CreativeWork", "url": "https://social.example/sam/1"},  # a page, not an image
            "https://img.example/two.PNG",  # a bare URL ending in an image type
            {"@type": "CreativeWork", "url": "http://img.example/three.jpg"},  # not https: skipped
            {"@type": "MediaObject", "contentUrl": "https://img.example/four.webp?size=large"},
            {"@type": "ImageObject", "url": "https://img.example/first"},  # the same image again: once
            {"@type": "ImageObject", "url": "ftp://img.example/five"},  # not https: skipped
            {"@type": "ImageObject"},  # no URL: skipped
        ],
    }
    path = tmp_path / "reviews.json"
    path.write_text(json.dumps([review(1, item), review(2, {"appearance": [
        {"@type": "CreativeWork", "url": "https://social.example/sam/2"}]})]))
    assert import_posts(path, "claimreview") == ["imported 2, already present 0, rejected 0"]
    assert urls("cr-1") == ["https://img.example/first", "https://img.example/two.PNG",
                            "https://img.example/four.webp?size=large"]
    assert set(PostMedia.objects.values_list("kind", "pdq", "md5", "alt_text", "still_url")) == {
        ("image", "", "", "", "")}
    assert dict(Post.objects.values_list("external_id", "media_type")) == {"cr-1": "image", "cr-2": "text"}
    assert urls("cr-2") == []
    # Imported again: already present, nothing rewritten.
    before = list(PostMedia.objects.values_list("id", flat=True))
    assert import_posts(path, "claimreview") == ["imported 0, already present 2, rejected 0"]
    assert list(PostMedia.objects.values_list("id", flat=True)) == before


def test_claimreview_keeps_at_most_ten_images(tmp_path):
    item = {"appearance": [{"@type": "ImageObject", "contentUrl": f"https://img.example/{n}.jpg"} for n in range(12)]}
    path = tmp_path / "many.json"
    path.write_text(json.dumps(review(3, item)))
    assert import_posts(path, "claimreview") == ["imported 1, already present 0, rejected 0"]
    assert urls("cr-3") == [f"https://img.example/{n}.jpg" for n in range(10)]


def test_a_review_imported_before_media_is_already_present_when_its_images_arrive(tmp_path):
    page = {"@type": "CreativeWork", "url": "https://social.example/sam/4"}
    path = tmp_path / "review.json"
    path.write_text(json.dumps(review(4, {"appearance": [page]})))
    assert import_posts(path, "claimreview") == ["imported 1, already present 0, rejected 0"]
    path.write_text(json.dumps(review(4, {"appearance": [page, "https://img.example/4.jpg"]})))
    # Not an idempotency conflict: the review's images are not part of its flag's fingerprint.
    assert import_posts(path, "claimreview") == ["imported 0, already present 1, rejected 0"]
    assert Flag.objects.count() == 1 and urls("cr-4") == []
