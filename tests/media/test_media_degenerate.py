"""Hashes that say nothing of a picture match nothing: an all-zero (or all-one) PDQ hash, whatever quality the
platform sends with it, and the MD5 of an empty file (a failed download's, for a picture or a video). Each gave an
altered rating to an unrelated post through the API."""

from __future__ import annotations

import pytest

from factcheck.media import EMPTY_FILE_MD5, MediaInput, matchable
from factcheck.models import QueueState, Verdict
from tests.factcheck.matching_helpers import post
from tests.factories import FactCheckerFactory
from tests.media.test_media_matching import PICTURE, TEXTS, arrive, image, pair, rate

pytestmark = pytest.mark.django_db


@pytest.fixture
def checker():
    return FactCheckerFactory()


def flat(pdq: str, *, quality: int | None) -> MediaInput:
    return MediaInput(kind="image", url="https://media.example/flat.jpg", pdq=pdq, quality=quality)


@pytest.mark.parametrize("pdq", ["0" * 64, "f" * 64, "0" * 63 + "1"])
@pytest.mark.parametrize("quality", [100, None])
def test_a_flat_hash_matches_nothing_whatever_quality_it_is_sent_with(checker, pdq, quality):
    assert not matchable(pdq, quality)
    arrive("source", TEXTS[0], flat(pdq, quality=quality))
    rate(post("source"), Verdict.ALTERED, reviewer=checker)
    arrive("cat", TEXTS[5], flat(pdq, quality=quality))
    assert pair("cat") is None and post("cat").queue_state == QueueState.QUEUED


def test_the_md5_of_an_empty_file_matches_nothing_and_a_real_files_still_does(checker):
    arrive("source", TEXTS[0], image(PICTURE, md5=EMPTY_FILE_MD5),
           MediaInput(kind="image", url="https://media.example/b.jpg", md5="0123456789abcdef0123456789abcdef"))
    rate(post("source"), Verdict.ALTERED, reviewer=checker)
    arrive("clip", TEXTS[1], MediaInput(kind="video", url="https://media.example/v.mp4", md5=EMPTY_FILE_MD5))
    assert pair("clip") is None and post("clip").queue_state == QueueState.QUEUED
    arrive("same", TEXTS[2], MediaInput(kind="image", url="https://media.example/c.jpg",
                                        md5="0123456789abcdef0123456789abcdef"))
    assert post("same").queue_state == QueueState.MATCHED
