"""POST /api/v1/media/hash: an image's PDQ, quality and MD5, as ThreatExchange computes them, and every refusal
(size, pixels, format, corrupt files, roles) answered before decoding where it can be, never a 500."""

from __future__ import annotations

import hashlib
import io
import json
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

import numpy as np
import pdqhash
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from PIL import Image
from skimage import data as samples
from threatexchange.signal_type.pdq.pdq_hasher import pdq_from_bytes

from factcheck.media import distance, pdq_int
from factcheck.media_hashing import MAX_BYTES, hash_image, pdq_hex_from_vector
from tests.api.test_request_limits import post_chunked
from tests.conftest import bearer_client
from tests.factories import FactCheckerFactory, StaffFactory, UserFactory

URL = "/api/v1/media/hash"
pytestmark = pytest.mark.django_db


def encoded(image: Image.Image, fmt: str, **options) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, fmt, **options)
    return buffer.getvalue()


def photo() -> Image.Image:
    return Image.fromarray(samples.astronaut())  # a real photograph, 512 x 512


def send(client, body: bytes, content_type: str = "application/octet-stream", **extra):
    return client.generic("POST", URL, body, content_type=content_type, **extra)


def error_code(response) -> str:
    return response.json()["error"]["code"]


@pytest.mark.parametrize(("fmt", "options", "content_type"), [
    ("JPEG", {"quality": 85}, "image/jpeg"),
    ("PNG", {}, "image/png"),
    ("WEBP", {"quality": 80}, "image/webp"),
    ("WEBP", {"lossless": True}, "application/octet-stream"),
])
def test_an_image_is_hashed_as_threatexchange_hashes_it(platform_client, fmt, options, content_type):
    body = encoded(photo(), fmt, **options)
    response = send(platform_client, body, content_type)
    assert response.status_code == 200, response.content
    pdq, quality = pdq_from_bytes(body)
    assert response.json() == {"pdq": pdq, "quality": quality, "md5": hashlib.md5(body).hexdigest()}
    assert len(pdq) == 64 and pdq == pdq.lower()


def test_a_gif_is_hashed_by_its_colours_not_its_palette_indices(platform_client):
    picture = photo().quantize(256)
    body = encoded(picture, "GIF")
    response = send(platform_client, body, "image/gif")
    assert response.status_code == 200
    # ThreatExchange reads a palette image's index numbers as grey; the picture's colours are what is hashed.
    as_seen = encoded(Image.open(io.BytesIO(body)).convert("RGB"), "PNG")
    assert response.json()["pdq"] == pdq_from_bytes(as_seen)[0]
    assert response.json()["md5"] == hashlib.md5(body).hexdigest()


def test_an_animated_gif_is_hashed_by_its_first_frame(platform_client):
    first = photo().quantize(256)
    second = Image.fromarray(samples.camera()).convert("RGB").resize((512, 512)).quantize(256)
    buffer = io.BytesIO()
    first.save(buffer, "GIF", save_all=True, append_images=[second], duration=100, loop=0)
    animated = buffer.getvalue()
    assert Image.open(io.BytesIO(animated)).n_frames == 2

    answered = send(platform_client, animated).json()["pdq"]

    assert answered == send(platform_client, encoded(first, "GIF")).json()["pdq"]
    assert distance(pdq_int(answered), pdq_int(send(platform_client, encoded(second, "GIF")).json()["pdq"])) > 64


def test_the_format_is_judged_by_content_not_content_type(platform_client):
    body = encoded(photo(), "JPEG")
    assert send(platform_client, body, "text/plain").status_code == 200


def test_transparent_pixels_are_hashed_as_seen_over_white(platform_client):
    rgba = photo().convert("RGBA")
    alpha = Image.new("L", rgba.size, 255)
    alpha.paste(0, (0, 0, 256, 512))  # the left half transparent (its colour still stored beneath)
    rgba.putalpha(alpha)
    over_white = Image.new("RGB", rgba.size, "white")
    over_white.paste(rgba, mask=alpha)

    answered = send(platform_client, encoded(rgba, "PNG")).json()["pdq"]

    assert answered == pdq_from_bytes(encoded(over_white, "PNG"))[0]
    assert answered != pdq_from_bytes(encoded(rgba, "PNG"))[0]  # the hidden colours would be hashed


def test_sixteen_bit_grey_is_scaled_to_eight_bits_not_clipped(platform_client):
    grey = np.asarray(Image.fromarray(samples.camera()), dtype=np.uint16)
    body = encoded(Image.fromarray(grey * 257), "PNG")  # 0-255 spread over 0-65535
    assert Image.open(io.BytesIO(body)).mode.startswith("I")

    answered = send(platform_client, body).json()

    assert answered["pdq"] == pdq_from_bytes(encoded(Image.fromarray(samples.camera()), "PNG"))[0]
    assert answered["quality"] == 100


@pytest.mark.parametrize("mode", ["LA", "P", "CMYK", "L"])
def test_other_modes_hash_close_to_the_colour_picture(platform_client, mode):
    picture = photo().convert(mode)
    body = encoded(picture, "JPEG" if mode == "CMYK" else "PNG")
    response = send(platform_client, body)
    assert response.status_code == 200
    colour = pdq_int(pdq_from_bytes(encoded(photo(), "PNG"))[0])
    assert distance(pdq_int(response.json()["pdq"]), colour) <= 16


def test_a_large_image_is_shrunk_before_hashing_and_stays_close_to_the_full_size_hash(platform_client):
    big = photo().resize((5000, 5000), Image.BICUBIC)  # 25 MP, hashed at 1/4 scale (libjpeg's draft)
    body = encoded(big, "JPEG", quality=90)
    full, _ = pdqhash.compute(np.asarray(Image.open(io.BytesIO(body)).convert("RGB")))

    response = send(platform_client, body)

    assert response.status_code == 200
    assert distance(pdq_int(response.json()["pdq"]), pdq_int(pdq_hex_from_vector(full))) <= 12


@pytest.mark.parametrize(("who", "status"), [
    ("nobody", 401), ("factchecker", 403), ("page_owner", 403), ("staff", 403),
])
def test_only_the_platform_may_hash(client, who, status):
    factories = {"factchecker": FactCheckerFactory, "page_owner": UserFactory, "staff": StaffFactory}
    caller = bearer_client(factories[who]()) if who in factories else client
    response = send(caller, encoded(photo(), "PNG"))
    assert response.status_code == status
    assert "pdq" not in response.json()


def test_a_body_over_10_mib_is_refused_413(platform_client):
    body = b"\xff\xd8\xff" + bytes(MAX_BYTES - 2)  # a JPEG's first bytes, one byte over the limit
    response = send(platform_client, body, "image/jpeg")
    assert response.status_code == 413
    assert error_code(response) == "payload_too_large"
    assert response.json()["error"]["details"]["limit_bytes"] == MAX_BYTES


def test_an_image_of_more_than_the_json_limit_but_under_10_mib_is_hashed(platform_client, settings):
    noise = np.random.default_rng(3).integers(0, 256, (1500, 1500, 3), dtype=np.uint8)
    body = encoded(Image.fromarray(noise), "PNG")
    assert settings.API_MAX_BODY_BYTES < len(body) <= MAX_BYTES
    response = send(platform_client, body, "image/png")
    assert response.status_code == 200
    assert response.json()["md5"] == hashlib.md5(body).hexdigest()


class Unreadable(io.RawIOBase):
    def read(self, *args) -> bytes:
        raise AssertionError("the body was read")


def test_an_oversized_content_length_is_refused_before_the_body_is_read(platform_client, client):
    for caller in (platform_client, client):  # before authentication too
        response = send(caller, b"", "image/jpeg", CONTENT_LENGTH=str(MAX_BYTES + 1), **{"wsgi.input": Unreadable()})
        assert response.status_code == 413
        assert error_code(response) == "payload_too_large"


def test_a_chunked_upload_is_hashed(platform_client):
    body = encoded(photo(), "JPEG")
    response, stream = post_chunked(platform_client, URL, body, content_type="image/jpeg")
    assert response.status_code == 200, response.content
    assert response.json()["md5"] == hashlib.md5(body).hexdigest()


def test_a_chunked_upload_past_djangos_body_limit_is_refused_not_cut(platform_client, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1_000  # how far core.request_limits reads a body without length
    body = encoded(photo(), "JPEG")
    response, stream = post_chunked(platform_client, URL, body, content_type="image/jpeg")
    assert response.status_code == 413
    assert "Content-Length" in response.json()["error"]["message"]
    assert stream.bytes_read <= 1_001


def png_claiming(width: int, height: int) -> bytes:
    """A tiny valid-looking PNG whose header claims width x height pixels."""
    body = encoded(Image.new("RGB", (8, 8)), "PNG")
    ihdr = body[16:29]
    patched = struct.pack(">II", width, height) + ihdr[8:]
    crc = struct.pack(">I", zlib.crc32(b"IHDR" + patched))
    return body[:16] + patched + crc + body[33:]


@pytest.mark.parametrize(("width", "height"), [(8000, 7000), (10000, 10000), (100_000, 100_000), (7072, 7071)])
def test_more_than_50_megapixels_is_refused_from_the_header_fast(platform_client, width, height):
    started = time.perf_counter()
    response = send(platform_client, png_claiming(width, height), "image/png")
    assert time.perf_counter() - started < 1
    assert response.status_code == 422
    assert error_code(response) == "too_many_pixels"
    assert "50,000,000" in response.json()["error"]["message"]


def test_a_small_file_that_decodes_to_a_huge_image_is_refused(platform_client):
    body = encoded(Image.new("L", (9000, 9000)), "PNG")  # 81 MP of black in about 80 KiB
    assert len(body) < 200_000
    response = send(platform_client, body)
    assert response.status_code == 422
    assert error_code(response) == "too_many_pixels"


HASH_IN_A_FRESH_PROCESS = """
import json, re, sys
from factcheck.media_hashing import hash_image

def peak_mb():  # this process's peak resident memory (ru_maxrss would count the parent's from before exec)
    return int(re.search(r"VmHWM:\\s+(\\d+) kB", open("/proc/self/status").read()).group(1)) / 1024

hash_image(bytes.fromhex(sys.argv[1]))  # imports and plugins loaded before measuring
body = sys.stdin.buffer.read()
before = peak_mb()
answer = hash_image(body)
print(json.dumps({"peak_mb": peak_mb() - before, "pdq": answer.pdq}))
"""


@pytest.mark.parametrize(("mode", "save"), [("P", {"transparency": 0}), ("1", {})])
def test_a_huge_palette_or_1_bit_image_is_shrunk_before_its_colours_are_looked_up(mode, save):
    picture = photo().resize((707, 707)).quantize(16) if mode == "P" else photo().resize((707, 707)).convert("1")
    small = encoded(picture, "PNG", **save)
    huge = encoded(picture.resize((7070, 7070), Image.NEAREST), "PNG", **save)  # 50 MP in under 200 KB
    assert len(huge) < 200_000
    # Pillow allocates outside Python's allocator (tracemalloc misses it): a fresh process's peak RSS is measured.
    warm_up = encoded(picture.crop((0, 0, 64, 64)), "PNG", **save).hex()
    run = subprocess.run([sys.executable, "-c", HASH_IN_A_FRESH_PROCESS, warm_up], input=huge, capture_output=True,
                         cwd=Path(__file__).resolve().parents[2], timeout=60, check=True)
    answer = json.loads(run.stdout)
    # Measured on the development machine: +89 MB (palette) and +80 MB (1-bit), 50 MB of it the decoded frame;
    # looked up to RGBA or RGB at full size before shrinking, they took +441 MB and +268 MB.
    assert answer["peak_mb"] < 150, answer
    # The colours, over white where transparent, as the same picture hashed at full size.
    assert distance(pdq_int(answer["pdq"]), pdq_int(hash_image(small).pdq)) <= 8


@pytest.mark.parametrize("fmt", ["JPEG", "PNG", "WEBP", "GIF"])
def test_a_truncated_file_is_422(platform_client, fmt):
    picture = photo() if fmt != "GIF" else photo().quantize(256)
    body = encoded(picture, fmt)
    response = send(platform_client, body[: len(body) // 2])
    assert response.status_code == 422
    assert error_code(response) == "unreadable_image"


@pytest.mark.parametrize("keep", [8, 40])
def test_a_corrupt_file_with_a_right_first_bytes_is_422(platform_client, keep):
    body = encoded(photo(), "PNG")
    corrupt = body[:keep] + bytes(len(body) - keep)
    response = send(platform_client, corrupt)
    assert response.status_code == 422
    assert error_code(response) == "unreadable_image"
    # Pillow's reason, without the address in the server's memory of the buffer it names.
    assert " at 0x" not in response.json()["error"]["details"]["reason"]


def test_a_jpeg_with_thousands_of_scans_is_refused_unread(platform_client):
    body = encoded(photo(), "JPEG")
    response = send(platform_client, body[:-2] + b"\xff\xda\x00\x08\x01\x01\x00\x00\x3f\x00" * 200 + b"\xff\xd9")
    assert response.status_code == 422
    assert error_code(response) == "unreadable_image"


@pytest.mark.parametrize(("body", "content_type"), [
    (b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n", "image/jpeg"),
    (b"Just some text, not a picture.", "text/plain"),
    (b'{"image": "https://example.org/a.jpg"}', "application/json"),
    (b"II*\x00" + bytes(100), "image/tiff"),
])
def test_other_formats_are_refused_naming_the_accepted_ones(platform_client, body, content_type):
    response = send(platform_client, body, content_type)
    assert response.status_code == 422
    assert error_code(response) == "unsupported_media"
    assert "JPEG, PNG, WebP or GIF" in response.json()["error"]["message"]
    assert response.json()["error"]["details"]["accepted"] == ["image/jpeg", "image/png", "image/webp", "image/gif"]


def test_an_empty_body_is_refused(platform_client):
    response = send(platform_client, b"")
    assert response.status_code == 400
    assert error_code(response) == "empty_body"


def test_the_bytes_are_not_kept(platform_client, monkeypatch, tmp_path):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    body = encoded(photo(), "JPEG")
    with CaptureQueriesContext(connection) as queries:
        response = send(platform_client, body)
    assert response.status_code == 200
    writes = [q["sql"] for q in queries if q["sql"].lstrip().upper().startswith(("INSERT", "UPDATE", "DELETE"))]
    assert all("accounts_apitoken" in sql for sql in writes), writes  # at most the token's last use
    assert list(tmp_path.iterdir()) == []


def test_hash_image_is_what_the_endpoint_answers():
    body = encoded(photo(), "WEBP")
    answered = hash_image(body)
    pdq, quality = pdq_from_bytes(body)
    assert (answered.pdq, answered.quality, answered.md5) == (pdq, quality, hashlib.md5(body).hexdigest())


def test_the_openapi_document_describes_a_binary_body_and_the_answer(client):
    document = client.get("/api/openapi.json").json()
    operation = document["paths"][URL]["post"]
    content = operation["requestBody"]["content"]
    assert set(content) == {"application/octet-stream", "image/jpeg", "image/png", "image/webp", "image/gif"}
    assert all(c["schema"] == {"type": "string", "format": "binary"} for c in content.values())
    answer = operation["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]
    assert set(document["components"]["schemas"][answer]["required"]) == {"pdq", "quality", "md5"}
    assert {"401", "403", "413", "422"} <= set(operation["responses"])
