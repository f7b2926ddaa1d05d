"""What a request may be before any view sees it: URL and header sizes under /api/, chunked bodies.

gunicorn answers an over-long request line or header itself, in HTML, before Django runs; bin/run
raises its limits as far as gunicorn allows, so that the API's own, lower limits here answer first,
in the API's error shape. Chunked bodies (no Content-Length) are read up to Django's body limit, so
that the API processes them or refuses them with its 413 instead of seeing an empty body.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.core.handlers.wsgi import LimitedStream
from django.http import HttpRequest, HttpResponse

from core.api_errors import ApiError, HeadersTooLarge, UriTooLong, error_json

API_PREFIX = "/api/"
# Keys of a WSGI environ that carry a request header without the HTTP_ prefix.
UNPREFIXED_HEADERS = ("CONTENT_TYPE", "CONTENT_LENGTH")


def header_section(request: HttpRequest) -> tuple[int, int]:
    """How many header fields the request has, and their size as sent ("Name: value" and CRLF each)."""
    count = size = 0
    for key, value in request.META.items():
        if key.startswith("HTTP_"):
            name_length = len(key) - len("HTTP_")
        elif key in UNPREFIXED_HEADERS:
            name_length = len(key)
        else:
            continue
        count += 1
        # WSGI gives header values as latin-1 strings: one character per byte received.
        size += name_length + len(": ") + len(str(value)) + len("\r\n")
    return count, size


def over_limit(request: HttpRequest) -> ApiError | None:
    """The API's refusal of an over-long URL or header section, or None."""
    # The path as sent (non-ASCII percent-encoded again) and the query string as received.
    url_bytes = len(request.get_full_path())
    if url_bytes > settings.API_MAX_URL_BYTES:
        return UriTooLong(
            f"The URL is {url_bytes:,} bytes; the limit is {settings.API_MAX_URL_BYTES:,}.",
            details={"limit_bytes": settings.API_MAX_URL_BYTES, "url_bytes": url_bytes},
        )
    count, size = header_section(request)
    if size > settings.API_MAX_HEADER_BYTES:
        return HeadersTooLarge(
            f"The request headers are {size:,} bytes; the limit is {settings.API_MAX_HEADER_BYTES:,}.",
            details={"limit_bytes": settings.API_MAX_HEADER_BYTES, "header_bytes": size},
        )
    if count > settings.API_MAX_HEADER_FIELDS:
        return HeadersTooLarge(
            f"The request has {count} header fields; the limit is {settings.API_MAX_HEADER_FIELDS}.",
            details={"limit_fields": settings.API_MAX_HEADER_FIELDS, "header_fields": count},
        )
    return None


class ApiRequestLimitsMiddleware:
    """Refuse an /api/ request whose URL or headers are over the API's limits: JSON 414 or 431."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path_info.startswith(API_PREFIX):
            refusal = over_limit(request)
            if refusal is not None:
                return error_json(refusal)
        return self.get_response(request)


def has_unframed_body(request: HttpRequest) -> bool:
    """A body without Content-Length (Transfer-Encoding: chunked) that the server ends for us.

    `wsgi.input_terminated` is the server's promise that reading the input stops at the end of the
    body (gunicorn makes it; Werkzeug reads such bodies the same way). Without that promise, reading
    a body of unknown length could wait on the socket forever, so it stays unread (empty).
    """
    environ = request.META
    return not environ.get("CONTENT_LENGTH") and bool(environ.get("wsgi.input_terminated"))


class ChunkedBodyMiddleware:
    """Let Django read a chunked body, at most one byte past its body limit.

    Django's WSGIRequest reads `Content-Length` bytes, 0 when there is none, so a chunked body
    looked empty. Reading up to DATA_UPLOAD_MAX_MEMORY_SIZE + 1 bytes lets Django's own check
    (RequestDataTooBig) and the API's (a 413) see a body that is too big, without holding more of
    it in memory than a body with Content-Length may have.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if has_unframed_body(request):
            limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE or settings.API_MAX_BODY_BYTES
            # WSGIRequest keeps its body stream in `_stream` (what `body`, `read()` and the
            # multipart parser read); there is no public way to give it a length it did not get.
            request._stream = LimitedStream(request.META["wsgi.input"], limit + 1)  # type: ignore[attr-defined]
        return self.get_response(request)
