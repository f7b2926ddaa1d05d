"""The media API: `POST /api/v1/media/hash`, an image's PDQ and MD5 for platforms that do not hash themselves.

The body is the image's raw bytes, whatever Content-Type says (the format is judged by content); what may be
hashed and how is factcheck.media_hashing's. The bytes live in this request's memory only: nothing is
written, logged or kept.
"""

from __future__ import annotations

from dataclasses import asdict

from django.conf import settings
from django.http import HttpRequest
from ninja import Router, Schema
from pydantic import Field

from accounts.api_auth import TokenAuth
from accounts.models import Role
from core.api_errors import MalformedBody, errors_for
from factcheck.media_hashing import ACCEPTED, MAX_BYTES, MAX_PIXELS, MEDIA_TYPES, MediaTooLarge, check_size, hash_image

router = Router(tags=["media"])


class ImageHashOut(Schema):
    pdq: str = Field(pattern="^[0-9a-f]{64}$", description="The PDQ hash: 64 lower-case hex characters, as "
                     "ThreatExchange and HMA write it (the `pdq` of a flag's media item).")
    quality: int = Field(ge=0, le=100, description="PDQ's quality figure; under 50 the hash is not matched.")
    md5: str = Field(pattern="^[0-9a-f]{32}$", description="The MD5 of the bytes as sent: 32 lower-case hex.")


BINARY = {"schema": {"type": "string", "format": "binary"}}
HASH_BODY = {
    "requestBody": {
        "required": True,
        "description": f"The image's raw bytes ({ACCEPTED}; at most {MAX_BYTES:,} bytes and {MAX_PIXELS:,} pixels).",
        "content": {media_type: BINARY for media_type in ("application/octet-stream", *MEDIA_TYPES.values())},
    }
}


def check_upload_length(request: HttpRequest) -> None:
    """Refuse an oversized image from its Content-Length, before anything reads the body (config/api.py calls
    this instead of the API's 5 MiB check: an image may have 10 MiB)."""
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        raise MalformedBody("The Content-Length header is not a number.", code="bad_content_length") from None
    check_size(length)


def read_upload(request: HttpRequest) -> bytes:
    """The body, never more than MAX_BYTES + 1 of it. Django's own `request.body` stops at the JSON bodies'
    limit, so the stream is read directly (its length already checked by check_upload_length)."""
    data = request.read(MAX_BYTES + 1)
    check_size(len(data))
    if not request.META.get("CONTENT_LENGTH") and len(data) > settings.DATA_UPLOAD_MAX_MEMORY_SIZE:
        # A chunked body is read only up to Django's body limit (core.request_limits.ChunkedBodyMiddleware).
        raise MediaTooLarge(
            f"A body sent without Content-Length is read up to {settings.DATA_UPLOAD_MAX_MEMORY_SIZE:,} bytes; "
            f"send Content-Length for an image of up to {MAX_BYTES:,}.",
            details={"limit_bytes": settings.DATA_UPLOAD_MAX_MEMORY_SIZE},
        )
    return data


@router.post(
    "/media/hash",
    auth=TokenAuth(Role.PLATFORM),
    response={200: ImageHashOut, **errors_for(400, 403, 413, 422)},
    openapi_extra=HASH_BODY,
    summary="Hash an image (PDQ and MD5)",
)
def hash_media(request: HttpRequest) -> dict[str, object]:
    """PDQ hash, PDQ quality and MD5 of an image sent as the raw body; the bytes are not kept.

    The format is judged by the bytes, not by Content-Type: JPEG, PNG, WebP or GIF (an animated one by its
    first frame). Refused: a body over 10 MiB (413 `payload_too_large`, from Content-Length before it is
    read), an empty body (400 `empty_body`), another format (422 `unsupported_media`), more than 50,000,000
    pixels by the image's header (422 `too_many_pixels`, before decoding), a truncated or corrupt file
    (422 `unreadable_image`). An image over 4,000,000 pixels is shrunk before hashing (docs: README, Media).
    """
    return asdict(hash_image(read_upload(request)))
