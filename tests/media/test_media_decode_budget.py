"""A web process decodes at most MAX_PIXELS pixels of uploaded images at a time (factcheck.media_hashing,
DECODING): the byte and pixel limits bound one decode, and a 2 KB flat-colour WebP of 50 MP took a process
past 800 MB, so a few sent together could take a host's memory. Images of a few megapixels still decode side
by side."""

from __future__ import annotations

import io
import threading
import time

import pytest
from PIL import Image, ImageFile

from factcheck import media_hashing
from factcheck.media_hashing import DecodeBudget, hash_image


def png(width: int, height: int, shade: int) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), (shade, 255 - shade, 90)).save(buffer, "PNG")
    return buffer.getvalue()


@pytest.fixture
def decoding(monkeypatch):
    """The budget at 3 MP, and how many images are inside Pillow's decoder at once (each stays a moment,
    so two that may overlap do)."""
    monkeypatch.setattr(media_hashing, "DECODING", DecodeBudget(3_000_000))
    seen = {"now": 0, "most": 0}
    lock = threading.Lock()
    load = ImageFile.ImageFile.load

    def counted_load(image):
        with lock:
            seen["now"] += 1
            seen["most"] = max(seen["most"], seen["now"])
        try:
            time.sleep(0.3)
            return load(image)
        finally:
            with lock:
                seen["now"] -= 1

    monkeypatch.setattr(ImageFile.ImageFile, "load", counted_load)
    return seen


def hash_together(images: list[bytes]) -> list[str]:
    results: list[str] = [""] * len(images)

    def run(n: int) -> None:
        results[n] = hash_image(images[n]).pdq

    threads = [threading.Thread(target=run, args=(n,)) for n in range(len(images))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return results


def test_images_past_the_budget_together_are_decoded_one_after_the_other(decoding):
    images = [png(1500, 1200, 40), png(1500, 1200, 200)]  # 1.8 MP each: two would pass 3 MP
    results = hash_together(images)
    assert all(results) and results == [hash_image(image).pdq for image in images]  # both answered, rightly
    assert decoding["most"] == 1


def test_small_images_are_decoded_side_by_side(decoding):
    results = hash_together([png(1000, 1000, 40), png(1000, 1000, 200)])  # 1 MP each: both fit
    assert all(results)
    assert decoding["most"] == 2


def test_an_image_larger_than_the_budget_is_still_decoded(monkeypatch):
    monkeypatch.setattr(media_hashing, "DECODING", DecodeBudget(100_000))
    assert len(hash_image(png(1000, 1000, 40)).pdq) == 64
