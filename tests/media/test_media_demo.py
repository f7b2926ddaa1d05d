"""The demo's media (issue 30): `seed_demo` draws its pictures with Pillow into a static directory, sends them
with its flags, and the `altered` rating of one picture reaches its copies (cropped, re-encoded, captioned)
by media matching."""

from __future__ import annotations

import hashlib
import io
from io import StringIO

import numpy as np
import pdqhash
import pytest
from django.core.management import call_command
from PIL import Image

from factcheck.demo_media import ALTERED, ALTERED_COPIES, external_id_of_copy, url_of
from factcheck.media import distance, pdq_int
from factcheck.models import Match, Post, QueueState, Rating
from factcheck.models_media import PostMedia
from moderation.models import Action

pytestmark = pytest.mark.django_db
MATCH_DISTANCE = 31


@pytest.fixture
def media_dir(settings, tmp_path):
    settings.DEMO_MEDIA_DIR = tmp_path / "demo-media"
    return settings.DEMO_MEDIA_DIR


@pytest.fixture
def seeded(media_dir, django_capture_on_commit_callbacks, run_worker) -> str:
    out = StringIO()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("seed_demo", stdout=out)
    with django_capture_on_commit_callbacks(execute=True):
        run_worker()
    run_worker()
    return out.getvalue()


def pdq_of_file(path) -> tuple[int, int]:
    """PDQ straight from pdqhash (not through the project's code), as an int in ThreatExchange's bit order."""
    vector, quality = pdqhash.compute(np.asarray(Image.open(path).convert("RGB")))
    return int("".join("1" if bit else "0" for bit in vector), 2), quality


def file_of(media_dir, url: str):
    return media_dir / url.rsplit("/", 1)[1]


def test_every_demo_picture_is_a_real_jpeg_file_in_the_static_directory_with_the_hashes_stored(seeded, media_dir):
    items = list(PostMedia.objects.exclude(url__startswith="https://video."))
    stills = list(PostMedia.objects.exclude(still_url=""))
    assert len(items) > 20 and len(stills) >= 2
    for item in items:
        path = file_of(media_dir, item.url)
        data = path.read_bytes()
        with Image.open(io.BytesIO(data)) as picture:
            picture.verify()
            assert picture.format == "JPEG" and picture.size[0] >= 400
        assert item.url == url_of(path.name)  # the site's own static file, /static/demo-media/...
        assert item.md5 == hashlib.md5(data).hexdigest()
        value, quality = pdq_of_file(path)
        assert distance(pdq_int(item.pdq), value) == 0 and item.quality == quality >= 50
    for item in stills:
        assert file_of(media_dir, item.still_url).is_file() and item.kind == "video" and not item.pdq


def test_the_copies_of_the_altered_picture_are_within_the_match_distance_and_no_other_picture_is(
    seeded, media_dir
):
    original, _ = pdq_of_file(media_dir / ALTERED)
    copies = [pdq_of_file(media_dir / spec.picture)[0] for spec in ALTERED_COPIES]
    assert len(copies) == 4
    assert all(0 < distance(original, copy) <= MATCH_DISTANCE for copy in copies), [
        distance(original, copy) for copy in copies]
    others = {item.url for item in PostMedia.objects.exclude(pdq="")} - {
        url_of(ALTERED), *(url_of(spec.picture) for spec in ALTERED_COPIES)}
    assert len(others) > 20
    assert min(distance(original, pdq_of_file(file_of(media_dir, url))[0]) for url in others) > MATCH_DISTANCE


def test_the_altered_rating_reaches_every_copy_of_its_picture_by_media_matching(seeded):
    rating = Rating.objects.select_related("post").get(is_current=True, post__media__url=url_of(ALTERED))
    assert rating.verdict == "altered"
    for number in range(1, len(ALTERED_COPIES) + 1):
        copy = Post.objects.get(external_id=external_id_of_copy(number))
        assert (copy.queue_state, copy.duplicate_of_id) == (QueueState.MATCHED, rating.post_id)
        match = Match.objects.get(post=copy, source=rating.post)
        assert (match.method, match.state) == ("media", "auto")
        action = Action.objects.get(post=copy, ended_at__isnull=True)
        assert (action.kind, action.rating_id) == ("matched_rating", rating.pk)


def test_seeding_again_draws_any_missing_picture_and_changes_nothing_else(seeded, media_dir):
    (media_dir / ALTERED).unlink()
    items = PostMedia.objects.count()

    out = StringIO()
    call_command("seed_demo", stdout=out)

    assert (media_dir / ALTERED).is_file()
    assert "Drew the demo's 1 missing pictures again." in out.getvalue()
    assert PostMedia.objects.count() == items
    value, _ = pdq_of_file(media_dir / ALTERED)
    assert pdq_int(PostMedia.objects.get(url=url_of(ALTERED)).pdq) == value


def test_the_portal_shows_olivia_her_copy_of_the_picture_and_its_rating(seeded, client):
    from factcheck.demo import DEMO_PASSWORD

    assert client.login(username="olivia", password=DEMO_PASSWORD)
    copy = Post.objects.get(external_id=external_id_of_copy(1))
    page = client.get(f"/appeals/posts/{copy.pk}/").content.decode()
    assert f'src="/static/demo-media/{ALTERED_COPIES[0].picture}"' in page
    assert "Altered" in page
