"""What every API router shares: the error shape, the errors it raises and the JSON body.

In the bottom layer so that the routers (factcheck/api.py, moderation/api.py) and the
composition in config/api.py can all import it; token authentication is accounts' (accounts/api_auth.py).
"""

from __future__ import annotations

import json
import re
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import HttpRequest, JsonResponse
from ninja import Schema

# The largest BigAutoField id: a larger one cannot exist (and PostgreSQL could not compare it), so path ids
# are bounded by it and a huge number is a 422, not a database error.
MAX_ID = 2**63 - 1


class ErrorBody(Schema):
    code: str
    message: str
    details: Any = None


class ErrorOut(Schema):
    """Every error the API returns: {"error": {"code", "message", "details"}}."""

    error: ErrorBody


class ApiError(Exception):
    """An error answered with the JSON error shape; subclasses fix the status and code."""

    status: int = 400
    code: str = "bad_request"

    def __init__(self, message: str, *, details: Any = None, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details
        if code is not None:
            self.code = code


class MalformedBody(ApiError):
    status, code = 400, "malformed_json"


class Forbidden(ApiError):
    status, code = 403, "forbidden"


class NotFound(ApiError):
    status, code = 404, "not_found"


class Conflict(ApiError):
    status, code = 409, "conflict"


class TooLarge(ApiError):
    status, code = 413, "payload_too_large"


class UriTooLong(ApiError):
    status, code = 414, "uri_too_long"


class Unprocessable(ApiError):
    status, code = 422, "validation_error"


class HeadersTooLarge(ApiError):
    status, code = 431, "headers_too_large"


def error_json(exc: ApiError) -> JsonResponse:
    """The error shape outside ninja (middleware answers before any API view runs)."""
    return JsonResponse(
        {"error": {"code": exc.code, "message": exc.message, "details": exc.details}},
        status=exc.status, content_type="application/json; charset=utf-8",
    )


ERROR_RESPONSES: dict[int, type[ErrorOut]] = {
    code: ErrorOut for code in (400, 401, 403, 404, 409, 413, 414, 422, 429, 431)
}
# Every operation can answer these: no token (401), too many requests (429), and the request
# limits that core.request_limits applies under /api/ before any view runs (414, 431).
EVERY_OPERATION = (401, 414, 429, 431)


def errors_for(*codes: int) -> dict[int, type[ErrorOut]]:
    """The documented error responses of an operation, with those every operation can give."""
    return {code: ERROR_RESPONSES[code] for code in sorted({*EVERY_OPERATION, *codes})}


def check_body_size(request: HttpRequest) -> None:
    """Refuse an oversized body from its Content-Length, before anything reads it."""
    limit = settings.API_MAX_BODY_BYTES
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        raise MalformedBody("The Content-Length header is not a number.", code="bad_content_length") from None
    if length > limit:
        raise TooLarge(f"The body is {length} bytes; the limit is {limit}.", details={"limit_bytes": limit})


# What a JSON body may be declared as: `application/json` or a JSON-based type (`application/*+json`),
# parameters such as `charset` aside.
JSON_CONTENT_TYPE = re.compile(r"^application/(?:json|[!#$%&'*.^_`|~0-9A-Za-z-]+\+json)$", re.IGNORECASE)


def check_json_content_type(request: HttpRequest) -> None:
    """Refuse a body declared as anything but JSON (a form, text, or no Content-Type at all): 400
    `unsupported_content_type` (the API's statuses have no 415; docs/interfaces.md)."""
    declared = request.META.get("CONTENT_TYPE", "")
    if not JSON_CONTENT_TYPE.match(declared.split(";", 1)[0].strip()):
        raise MalformedBody(
            f"Send the body as JSON with `Content-Type: application/json`, not {declared[:100]!r}.",
            code="unsupported_content_type", details={"content_type": declared[:100]},
        )


def read_json_object(request: HttpRequest) -> dict[str, Any]:
    """The request body as a JSON object, or 400 (not declared or not JSON, not an object) / 413 (too big)."""
    check_body_size(request)
    try:
        raw = request.body
    except RequestDataTooBig:
        # No usable Content-Length (chunked upload): Django's own limit stopped the read.
        raise TooLarge(
            "The body is larger than the limit.", details={"limit_bytes": settings.API_MAX_BODY_BYTES}
        ) from None
    if len(raw) > settings.API_MAX_BODY_BYTES:
        # A chunked body has no Content-Length to refuse it by; Django's limit is a little higher.
        raise TooLarge(
            "The body is larger than the limit.",
            details={"limit_bytes": settings.API_MAX_BODY_BYTES},
        )
    if not raw:
        raise MalformedBody("The request needs a JSON body.", code="empty_body")
    check_json_content_type(request)
    if nesting_depth(raw, most=MAX_JSON_DEPTH) > MAX_JSON_DEPTH:
        raise MalformedBody(f"The JSON is nested more than {MAX_JSON_DEPTH} levels deep.", code="too_deep")
    try:
        data = json.loads(raw)
    except ValueError as exc:
        # JSONDecodeError, UnicodeDecodeError, and an integer longer than Python converts (4,300 digits).
        raise MalformedBody(f"The body is not valid JSON: {exc}.") from None
    if not isinstance(data, dict):
        raise MalformedBody("The body must be a JSON object.", code="body_not_object")
    try:
        # A lone surrogate ("\ud800") parses, but no database can store it as text.
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise Unprocessable(
            SURROGATE_MESSAGE,
            code="invalid_text",
            details={"errors": [{"field": "", "message": "an unpaired UTF-16 surrogate is not a character"}]},
        ) from None
    if holds_nul(raw):
        # PostgreSQL text cannot hold NUL; refuse it here rather than fail on insert.
        raise Unprocessable(
            NUL_MESSAGE,
            details={"errors": [{"field": "", "message": "NUL characters are not allowed."}]},
        )
    return data


# What refuses text no database can store; the importers (factcheck.importing) say the same.
SURROGATE_MESSAGE = "Text may not contain unpaired surrogates (such as \\ud800): they are not characters."
NUL_MESSAGE = "Text may not contain NUL (\\u0000) characters."
# The escape of NUL in a JSON text: \u0000 after an even number of backslashes (none included). Text that only
# mentions it (a post about programming: the JSON "\\u0000") is a backslash and five characters, and was refused.
_NUL_ESCAPE = re.compile(rb"(?<!\\)(?:\\\\)*\\u0000")


def holds_nul(raw: bytes) -> bool:
    """Whether a JSON text holds a NUL character (as the only way JSON can: escaped)."""
    return _NUL_ESCAPE.search(raw) is not None


# Deeper than any request of this API needs; json.loads would recurse into a hostile body.
MAX_JSON_DEPTH = 32
# A JSON string, possessive, its closing quote optional: an unclosed string (invalid JSON, refused by json.loads
# after) is taken once to the body's end, where `"(?:[^"\\]|\\.)*"` was tried again from each quote inside it, each
# time to the end, which is quadratic: a 160 KB body of escaped quotes took 103 s of a web worker with the GIL held,
# and any token holder could send 5 MiB. Now 0.07 s; 5 MiB of valid strings well under a second, as before. (The
# brackets of an unclosed string, which json.loads reads as text, are not counted: it is refused as not JSON, not as
# too deep.)
_STRINGS = re.compile(rb'"(?:[^"\\]++|\\.)*+"?')


def nesting_depth(raw: bytes, *, most: int) -> int:
    """How deeply arrays and objects nest in a JSON text (strings skipped), stopping past `most`."""
    depth = deepest = 0
    for char in _STRINGS.sub(b'""', raw).translate(None, delete=_NOT_BRACKETS):
        if char in b"[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > most:
                    return deepest
        else:
            depth -= 1
    return deepest


_NOT_BRACKETS = bytes(c for c in range(256) if c not in b"[]{}")


def unprocessable(exc: DjangoValidationError, message: str) -> Unprocessable:
    """A domain ValidationError as the API's 422, one {"field", "message"} per problem."""
    errors = [{"field": field, "message": m} for field, messages in exc.message_dict.items() for m in messages]
    return Unprocessable(message, details={"errors": errors})
