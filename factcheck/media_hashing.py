"""Hashing an uploaded image: its PDQ hash, PDQ's quality figure and its MD5, from the bytes alone.

PRODUCT.md, "Media: images and video": `POST /api/v1/media/hash` (factcheck/api_media.py) is for platforms
that do not hash themselves. Nothing here keeps the bytes: they are read in memory, hashed and dropped.

The bytes are refused before any decoding when they cannot be hashed safely: more than MAX_BYTES, not a
JPEG, PNG, WebP or GIF by their first bytes (the Content-Type a client declares is not trusted), or a
header announcing more than MAX_PIXELS. A corrupt or truncated file is refused too: Pillow's plugins raise
many kinds of exception on bad input, so every one of them becomes `unreadable_image`, never a 500.

PDQ is Meta's own code (the `pdqhash` bindings). The hex is ThreatExchange's and HMA's (the first bit of
pdqhash's vector is the highest bit of the first hex digit; lower case): an image of up to HASH_PIXELS is
hashed at full size, so its hash is the one ThreatExchange's `pdq_from_bytes` gives for the same file. A
larger one is first shrunk by an integer factor (a JPEG while it is decoded, by libjpeg's DCT scaling; the
others by averaging boxes of pixels) to at most HASH_PIXELS, as PDQ's reference shrinks before hashing.
Measured on scikit-image's sample photographs scaled up to 4-40 MP (JPEG and PNG, 67 files): the hash moves
3.8 bits on average from the full-size one (90th percentile 10, at most 12), far inside the match distance
of 31, and a 38 MP JPEG takes 0.14 s of CPU instead of 2.1 s. The worst cases the limits allow, 50 MP files of
well under 10 MiB, take 0.2 s (JPEG) to 0.85 s (WebP, whose decoder cannot shrink) of CPU on the 2-CPU
development machine under load (README, "Media"); decoding is the cost, and the pixel limit bounds it. So it
is for memory: a frame is shrunk before its palette, 1-bit or 16-bit pixels are widened to RGB (a band at a
time, _shrunk), so a 50 MP palette, 1-bit or GIF file peaks at +80-90 MB (50 MB of it the decoded frame), a
16-bit one at +128 MB; Pillow's WebP decoder alone holds about 760 MB for a 50 MP frame with alpha.

The limits bound one decode, not how many run at once: a flat-colour 50 MP WebP is 2 KB, and four sent
together took three web processes from 0.55 to 3.15 GB (a process has 8 threads; bin/run, deploy/). So a
process decodes at most MAX_PIXELS pixels at a time (`DECODING`): one image at the limit, or a dozen of a
few megapixels, while others wait their turn (a decode at the limit takes under a second of CPU). What a decode
frees stays in its thread's malloc arena: bin/run and deploy/ set MALLOC_ARENA_MAX=2, with which eight threads
decoding 50 MP WebPs in turn peaked at 1.2 GB and kept 0.5 GB (2.1 and 1.4 GB with glibc's default; one decode
alone peaks at 0.85 GB).
"""

from __future__ import annotations

import hashlib
import io
import math
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import pdqhash
from PIL import Image

from core.refusals import Refusal

MAX_BYTES = 10 * 1024 * 1024
MAX_PIXELS = 50_000_000
# Up to this many pixels an image is hashed as it is (as ThreatExchange does); above, shrunk to at most this.
# Full-size PDQ costs about 40 ms a megapixel here, so this bounds hashing near 0.15 s.
HASH_PIXELS = 4_000_000
# A progressive JPEG decodes every scan over the whole image; encoders write about ten. Thousands of tiny
# scans in a small file would keep a worker busy for seconds, so a file with more is refused.
MAX_JPEG_SCANS = 100
# An image shrunk by _shrunk is converted this many of its pixels at a time (a few MB whatever the mode).
BAND_PIXELS = 1_000_000

# Format by magic bytes -> its media type (the names the refusals and the API document give).
MEDIA_TYPES = {"JPEG": "image/jpeg", "PNG": "image/png", "WEBP": "image/webp", "GIF": "image/gif"}
ACCEPTED = "JPEG, PNG, WebP or GIF"
# What a transparent pixel is hashed as: the white of a light page, where such images are seen.
BACKGROUND = (255, 255, 255)


class MediaRefused(Refusal):
    """Bytes that cannot be hashed (422 unless a subclass says otherwise in config/api.py)."""

    code = "media_refused"


class MediaTooLarge(MediaRefused):
    """More bytes than MAX_BYTES (413)."""

    code = "payload_too_large"


class UnsupportedMedia(MediaRefused):
    code = "unsupported_media"


class TooManyPixels(MediaRefused):
    code = "too_many_pixels"


class UnreadableImage(MediaRefused):
    code = "unreadable_image"


class EmptyImage(MediaRefused):
    """No bytes at all (400, as an empty JSON body is)."""

    code = "empty_body"


class DecodeBudget:
    """Pixels being decoded at once in this process, at most `pixels`; a decode that would pass it waits."""

    def __init__(self, pixels: int) -> None:
        self.pixels = pixels
        self._decoding = 0
        self._changed = threading.Condition()

    @contextmanager
    def held(self, pixels: int) -> Iterator[None]:
        pixels = min(pixels, self.pixels)  # one image alone always fits
        with self._changed:
            self._changed.wait_for(lambda: self._decoding + pixels <= self.pixels)
            self._decoding += pixels
        try:
            yield
        finally:
            with self._changed:
                self._decoding -= pixels
                self._changed.notify_all()


DECODING = DecodeBudget(MAX_PIXELS)


@dataclass(frozen=True)
class ImageHash:
    pdq: str  # 64 lower-case hex characters, as ThreatExchange writes them
    quality: int  # PDQ's quality, 0-100; under 50 the hash is not matched (factcheck.media.MIN_QUALITY)
    md5: str  # 32 lower-case hex characters of the bytes as sent


def sniff_format(data: bytes) -> str | None:
    """The image format by the file's first bytes, or None."""
    if data.startswith(b"\xff\xd8\xff"):
        return "JPEG"
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "PNG"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "WEBP"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "GIF"
    return None


def check_size(length: int) -> None:
    """Refuse more than MAX_BYTES (the API checks Content-Length with this before reading the body)."""
    if length > MAX_BYTES:
        raise MediaTooLarge(
            f"The image is {length:,} bytes; the limit is {MAX_BYTES:,} (10 MiB).",
            details={"limit_bytes": MAX_BYTES, "bytes": length},
        )


def hash_image(data: bytes) -> ImageHash:
    """PDQ, quality and MD5 of an image's bytes; raises a MediaRefused naming what is wrong with them."""
    if not data:
        raise EmptyImage(f"The body is empty: send the image's bytes ({ACCEPTED}).",
                         details={"accepted": list(MEDIA_TYPES.values())})
    check_size(len(data))
    fmt = sniff_format(data)
    if fmt is None:
        raise UnsupportedMedia(
            f"This is not a {ACCEPTED} image (judged by its content, not its Content-Type).",
            details={"accepted": list(MEDIA_TYPES.values())},
        )
    if fmt == "JPEG" and data.count(b"\xff\xda") > MAX_JPEG_SCANS:
        raise UnreadableImage(f"The JPEG has more than {MAX_JPEG_SCANS} scans; it is refused unread.",
                              details={"format": MEDIA_TYPES[fmt]})
    pixels = _decoded_rgb(data, fmt)
    vector, quality = pdqhash.compute(pixels)
    return ImageHash(pdq=pdq_hex_from_vector(vector), quality=int(quality),
                     md5=hashlib.md5(data, usedforsecurity=False).hexdigest())


def pdq_hex_from_vector(vector: np.ndarray) -> str:
    """pdqhash's 256 bits as ThreatExchange writes them: the first bit is the highest of the first digit."""
    return np.packbits(np.asarray(vector, dtype=np.uint8)).tobytes().hex()


def _decoded_rgb(data: bytes, fmt: str) -> np.ndarray:
    """The first frame as an 8-bit RGB array, shrunk when it has more than HASH_PIXELS pixels."""
    try:
        with Image.open(io.BytesIO(data), formats=[fmt]) as image:
            width, height = image.size
            _check_pixels(width, height, fmt)
            with DECODING.held(width * height):
                factor = math.ceil(math.sqrt(width * height / HASH_PIXELS))
                if factor > 1 and fmt == "JPEG":
                    # libjpeg decodes at 1/2, 1/4 or 1/8 scale, no smaller than asked: most of the work saved.
                    image.draft("RGB", (math.ceil(width / factor), math.ceil(height / factor)))
                image.load()  # the first frame only, for an animated GIF or WebP
                factor = math.ceil(math.sqrt(image.width * image.height / HASH_PIXELS))
                frame = _shrunk(image, factor) if factor > 1 else _reducible(image)
                return np.asarray(_as_rgb(frame))
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        # Pillow's own bound (about 89 MP), met first only if warnings are errors; the size is in the header.
        raise TooManyPixels(f"The image has more than {MAX_PIXELS:,} pixels.",
                            details={"limit_pixels": MAX_PIXELS}) from None
    except MediaRefused:
        raise
    except Exception as exc:  # noqa: BLE001  (corrupt input reaches Pillow's plugins in many ways)
        raise UnreadableImage(
            f"The {MEDIA_TYPES[fmt]} image cannot be read: it is truncated or corrupt.",
            # Pillow's words, without the repr of the buffer it names ("<_io.BytesIO object at 0x7f...>": an address
            # in the server's memory, nothing the sender can use).
            details={"format": MEDIA_TYPES[fmt], "reason": _WHERE_IN_MEMORY.sub("the upload", str(exc))[:200]},
        ) from None


_WHERE_IN_MEMORY = re.compile(r"<[\w.]+ object at 0x[0-9a-fA-F]+>")


def _check_pixels(width: int, height: int, fmt: str) -> None:
    if width < 1 or height < 1:
        raise UnreadableImage("The image has no pixels.", details={"format": MEDIA_TYPES[fmt]})
    if width * height > MAX_PIXELS:
        raise TooManyPixels(
            f"The image is {width} x {height} pixels ({width * height:,}); the limit is {MAX_PIXELS:,}.",
            details={"limit_pixels": MAX_PIXELS, "width": width, "height": height},
        )


def _shrunk(image: Image.Image, factor: int) -> Image.Image:
    """The frame reduced `factor` times (each pixel the mean of a factor x factor box), in a mode of _reducible.
    Any other mode is converted a band of rows at a time, each band shrunk before the next: a palette, 1-bit or
    16-bit frame widened whole would take 3-8 bytes a pixel (+200-400 MB at 50 MP, decoded in 50-100 MB), and
    Pillow premultiplies a whole LA or RGBA frame before shrinking it. Bands are whole boxes high, so the
    result is the same, pixel for pixel, as converting the whole frame first."""
    if image.mode in ("L", "RGB"):
        return image.reduce(factor)
    rows = factor * max(1, BAND_PIXELS // (image.width * factor))
    shrunk = None
    for top in range(0, image.height, rows):
        band = _reducible(image.crop((0, top, image.width, min(top + rows, image.height)))).reduce(factor)
        if shrunk is None:
            shrunk = Image.new(band.mode, (math.ceil(image.width / factor), math.ceil(image.height / factor)))
        shrunk.paste(band, (0, top // factor))
    return shrunk


def _reducible(image: Image.Image) -> Image.Image:
    """The frame in a mode Pillow can shrink (L, LA, RGB, RGBA): 16-bit grey scaled (not clipped) to 8 bits,
    a palette looked up (ThreatExchange would read a palette's index numbers as grey levels), CMYK converted."""
    if image.mode in ("I;16", "I;16B", "I;16L", "I"):
        return Image.fromarray((np.asarray(image) >> 8).clip(0, 255).astype(np.uint8), "L")
    if image.mode == "P":
        return image.convert("RGBA" if "transparency" in image.info else "RGB")
    if image.mode == "PA":
        return image.convert("RGBA")
    if image.mode == "1":
        return image.convert("L")  # 0 or 255, as RGB would have it in every channel
    if image.mode not in ("L", "LA", "RGB", "RGBA"):
        return image.convert("RGB")  # CMYK, YCbCr: Pillow's conversions are exact for these
    return image


def _as_rgb(image: Image.Image) -> Image.Image:
    """8-bit RGB, as PDQ reads it; a transparent pixel shown over white (ThreatExchange would read the colour
    hidden under it)."""
    if image.mode in ("LA", "RGBA"):
        rgba = image.convert("RGBA")
        flat = Image.new("RGB", rgba.size, BACKGROUND)
        flat.paste(rgba, mask=rgba.getchannel("A"))
        return flat
    return image.convert("RGB") if image.mode != "RGB" else image
