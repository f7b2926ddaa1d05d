"""The JSON API under /api/: the NinjaAPI instance that assembles every app's router under v1/, with
its token auth, throttling, OpenAPI document and error handling.

Every answer that is not a success has one shape, {"error": {"code", "message", "details"}},
whatever produced it: an endpoint, ninja's own validation, auth, throttling, Django's body
limit, a domain refusal (REFUSAL_STATUS, the one table from refusal to HTTP status), an unknown
route under /api/ or a wrong method. Endpoints live in each app's router: factcheck/api.py (flags,
ratings), moderation/api.py (posts, appeals, decisions, statements of reasons),
moderation/api_claims.py (ClaimReview), moderation/api_unlink.py (unlinking a copy), moderation/api_withdraw.py
(withdrawing a rating), factcheck/api_media.py (image hashing), accounts/api.py (tokens), webhooks/api.py (webhook
endpoints) and reports/api.py (stats). What they share is core/api_errors.py (the error shape, body parsing) and
accounts/api_auth.py (the bearer token).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.urls import URLPattern, URLResolver, re_path
from django.views.decorators.csrf import csrf_exempt
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, AuthorizationError, HttpError, Throttled, ValidationError
from ninja.parser import Parser
from ninja.throttling import BaseThrottle
from pydantic.json_schema import models_json_schema

from accounts.api import router as accounts_router
from accounts.api_auth import TokenAuth, TokenNotAccepted
from accounts.services import AmbiguousTokenPrefix, InvalidTokenRequest, TokenAlreadyRevoked, TokenNotFound
from core.api_errors import ApiError, TooLarge, check_body_size, read_json_object, unprocessable
from core.rate_windows import Windows, parse_rate
from core.refusals import Refusal
from factcheck.api import REQUEST_SCHEMAS
from factcheck.api import router as factcheck_router
from factcheck.api_media import check_upload_length, hash_media
from factcheck.api_media import router as media_router
from factcheck.claims import AlreadyClaimed, ClaimError, OutsideCoverage, PostRemoved
from factcheck.ingest import IdempotencyConflict
from factcheck.matching.confirmable import NotYourClaimsMatch
from factcheck.matching.unlinkable import AutomaticMatch, NotACopy, UnlinkForbidden, UnlinkRefused
from factcheck.media_hashing import EmptyImage, MediaTooLarge
from factcheck.members import NoOrganisation
from factcheck.ratings import AppealOpen, ClaimRequired, NotYourRating, RatingRefused, StaleRating
from factcheck.withdrawals import RatingNotFound
from moderation.api import router as moderation_router
from moderation.api_claims import router as claimreview_router
from moderation.api_unlink import router as unlink_router
from moderation.api_withdraw import router as withdraw_router
from moderation.appeals import AppealConflict, AppealRefused, NotAllowed
from moderation.feed import CursorNotIssued
from moderation.staff_actions import RemovalRefused
from moderation.unlinking import UnlinkAppealHeld
from reports.api import DOCUMENTED_PARAMETERS
from reports.api import router as reports_router
from reports.figures import NoFigures
from webhooks.api import router as webhooks_router
from webhooks.endpoints import EndpointNotFound, EndpointRefused

logger = logging.getLogger(__name__)

STATUS_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "payload_too_large",
    414: "uri_too_long",
    422: "validation_error",
    429: "throttled",
    431: "headers_too_large",
}

DESCRIPTION = """\
Factdesk's API for the platform and for fact-checkers.

Authenticate with `Authorization: Bearer <token>` (tokens come from `manage.py issue_token`).
Every error has the shape `{"error": {"code": ..., "message": ..., "details": ...}}`.
Validation errors (422) list each problem in `details.errors` as `{"field", "message"}`, with
`item` (the index in the batch) for flags. Datetimes are ISO 8601 and must carry a timezone
offset (`Z` or `+01:00`); naive datetimes are refused. Requests are limited per token holder
(`429` with `Retry-After` when exceeded), and so are failed authentications per client address
(by default 20 a minute; past it, every request from that address with a wrong, expired or revoked
token is `429` for a minute or two, while a good token goes on working).
By default a URL (path and query) over 8,000 bytes
is refused with `414` (`uri_too_long`), request headers over 16 KiB or 100 fields with `431`
(`headers_too_large`), and a body over 5 MiB with `413`, chunked bodies included (an image sent to
`POST /api/v1/media/hash` may have 10 MiB: send it with Content-Length).
A JSON body must be sent with `Content-Type: application/json` (or another `application/*+json`);
any other, or none, is refused with `400` (`unsupported_content_type`); an image's raw bytes are judged by
their content, whatever their Content-Type. No text anywhere in a body may
hold NUL (`\\u0000`) or an unpaired surrogate (`422`). Refusals that depend on the state of things or on
two fields together are listed in each operation's description; the schemas say everything else.
"""


class JsonObjectParser(Parser):
    """Bodies of ninja-validated endpoints: a JSON object, or the same 400/413 as everywhere."""

    def parse_body(self, request: HttpRequest) -> dict[str, Any]:
        return read_json_object(request)


class TokenRateThrottle(BaseThrottle, threading.local):
    """settings.API_RATE_LIMIT per authenticated user (read on each request, so it can change), over a sliding
    minute (or the rate's period): each request counted atomically (core.rate_windows), refused ones too, so a
    client that keeps sending past the limit stays refused.

    ninja asks the throttle for `wait()` after `allow_request`, and the API has one throttle; gunicorn's gthread
    workers (bin/run) serve several requests of a process at once, so each thread keeps its own wait
    (threading.local).
    """

    retry_after: int | None = None

    def allow_request(self, request: HttpRequest) -> bool:
        user = getattr(request, "auth", None)
        if user is None:
            return True
        allowed, period = parse_rate(settings.API_RATE_LIMIT)
        windows = Windows.now(name="api-rate", who=user.pk, period=period)
        current = windows.add()
        previous = windows.previous()
        if windows.sliding(previous, current) <= allowed:
            return True
        self.retry_after = windows.wait_for(allowed, previous, current)
        return False

    def wait(self) -> float | None:
        return self.retry_after


def error_response(request: HttpRequest, status: int, code: str, message: str, details: Any = None) -> HttpResponse:
    return api.create_response(
        request, {"error": {"code": code, "message": message, "details": details}}, status=status
    )


# Operations whose body has a limit of its own (raw uploads): their view function -> its check of Content-Length.
OWN_BODY_LIMITS: dict[Callable[..., Any], Callable[[HttpRequest], None]] = {hash_media: check_upload_length}


def refuse_oversized_body(run: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Check Content-Length before authentication, throttling or parsing touch the body."""
    # ninja passes each operation's bound `run`; its operation knows the view function it calls.
    check = OWN_BODY_LIMITS.get(getattr(getattr(run, "__self__", None), "view_func", None), check_body_size)

    def checked(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            check(request)
        except ApiError as exc:
            return on_api_error(request, exc)
        except Refusal as exc:
            return on_refusal(request, exc)
        return run(request, *args, **kwargs)

    return checked


class FactdeskAPI(NinjaAPI):
    @property
    def urls(self) -> tuple[list[URLPattern | URLResolver], str, str]:
        patterns, app_name, namespace = super().urls
        wrapped: list[URLPattern | URLResolver] = [
            with_json_errors(p) if isinstance(p, URLPattern) else p for p in patterns
        ]
        # Last: anything else under /api/ is a JSON 404, not the site's HTML page.
        wrapped.append(re_path(r"^.*$", csrf_exempt(unknown_route), name="unknown-route"))
        return wrapped, app_name, namespace

    def get_openapi_schema(self, *, path_prefix: str | None = None, path_params: dict | None = None) -> Any:
        schema = super().get_openapi_schema(path_prefix=path_prefix, path_params=path_params)
        # Bodies read by hand (POST /flags: one flag or a batch) are described here.
        _, definitions = models_json_schema(
            [(model, "validation") for model in REQUEST_SCHEMAS], ref_template="#/components/schemas/{model}"
        )
        schema["components"].setdefault("schemas", {}).update(definitions.get("$defs", {}))
        # Query parameters whose check is the domain's: the document says it as exactly as a schema can.
        for path, operations in schema["paths"].items():
            for operation in operations.values():
                for parameter in operation.get("parameters", []):
                    if (path, parameter["name"]) in DOCUMENTED_PARAMETERS:
                        parameter["schema"] = DOCUMENTED_PARAMETERS[path, parameter["name"]]
        return schema


def with_json_errors(pattern: URLPattern) -> URLPattern:
    """Wrap a ninja URL so its 405s and stray 404s (outside any operation) answer in JSON."""
    view = pattern.callback

    def json_view(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if any("\x00" in value for value in kwargs.values() if isinstance(value, str)):
            return unknown_route(request)  # no id holds NUL, and PostgreSQL cannot even compare one
        try:
            response = view(request, *args, **kwargs)
        except Http404:
            return unknown_route(request)
        if isinstance(response, HttpResponseNotAllowed):
            allowed = response["Allow"]
            error = error_response(
                request, 405, "method_not_allowed", f"{request.method} is not allowed here; use {allowed}.",
                {"allowed": [m.strip() for m in allowed.split(",")]},
            )
            error["Allow"] = allowed
            return error
        return response

    json_view.csrf_exempt = True  # type: ignore[attr-defined]  # as ninja's own views are
    return URLPattern(pattern.pattern, json_view, pattern.default_args, pattern.name)


def unknown_route(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
    return error_response(request, 404, "not_found", f"No API endpoint at {request.path}.")


api = FactdeskAPI(
    title="Factdesk API",
    version="1",
    description=DESCRIPTION,
    urls_namespace="api",
    parser=JsonObjectParser(),
    auth=TokenAuth(),
    throttle=[TokenRateThrottle()],
)
api.add_decorator(refuse_oversized_body, mode="view")
api.add_router("v1/", factcheck_router)
api.add_router("v1/", moderation_router)
api.add_router("v1/", claimreview_router)
api.add_router("v1/", unlink_router)
api.add_router("v1/", withdraw_router)
api.add_router("v1/", media_router)
api.add_router("v1/", accounts_router)
api.add_router("v1/", webhooks_router)
api.add_router("v1/", reports_router)


@api.exception_handler(ApiError)
def on_api_error(request: HttpRequest, exc: ApiError) -> HttpResponse:
    response = error_response(request, exc.status, exc.code, exc.message, exc.details)
    for name, value in getattr(exc, "headers", {}).items():  # e.g. Retry-After (accounts.api_auth)
        response[name] = value
    return response


# The one table of refusals to HTTP statuses; the code and message are the refusal's own.
# The most specific class listed wins (looked up along the exception's MRO).
REFUSAL_STATUS: dict[type[Refusal], int] = {
    Refusal: 422,
    RatingRefused: 422,
    AppealRefused: 422,
    RemovalRefused: 422,
    NotYourRating: 403,
    OutsideCoverage: 403,
    NoOrganisation: 403,
    NotAllowed: 403,
    ClaimError: 409,
    AlreadyClaimed: 409,
    PostRemoved: 409,
    IdempotencyConflict: 409,
    ClaimRequired: 409,
    AppealOpen: 409,
    StaleRating: 409,
    AppealConflict: 409,
    TokenNotFound: 404,
    RatingNotFound: 404,
    AmbiguousTokenPrefix: 409,
    TokenAlreadyRevoked: 409,
    CursorNotIssued: 409,
    InvalidTokenRequest: 422,
    EndpointNotFound: 404,
    EndpointRefused: 422,
    NoFigures: 403,
    MediaTooLarge: 413,
    EmptyImage: 400,  # as an empty JSON body is (core.api_errors, `empty_body`)
    UnlinkRefused: 422,
    UnlinkForbidden: 403,
    NotYourClaimsMatch: 403,
    NotACopy: 409,
    AutomaticMatch: 409,
    UnlinkAppealHeld: 409,
}


def refusal_status(exc: Refusal) -> int:
    return next(REFUSAL_STATUS[cls] for cls in type(exc).__mro__ if cls in REFUSAL_STATUS)


@api.exception_handler(Refusal)
def on_refusal(request: HttpRequest, exc: Refusal) -> HttpResponse:
    return error_response(request, refusal_status(exc), exc.code, exc.message, exc.details)


@api.exception_handler(DjangoValidationError)
def on_domain_validation_error(request: HttpRequest, exc: DjangoValidationError) -> HttpResponse:
    """A domain function's field errors: 422, one {"field", "message"} per problem; nothing was saved."""
    return on_api_error(request, unprocessable(exc, "The request is invalid; nothing was saved."))


@api.exception_handler(RequestDataTooBig)
def on_body_too_big(request: HttpRequest, exc: RequestDataTooBig) -> HttpResponse:
    return on_api_error(
        request, TooLarge("The body is larger than the limit.", details={"limit_bytes": settings.API_MAX_BODY_BYTES})
    )


@api.exception_handler(AuthenticationError)
def on_unauthenticated(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
    if isinstance(exc, TokenNotAccepted):  # a known token, expired or revoked: say which
        response = error_response(request, 401, exc.code, exc.message, exc.details)
    else:
        response = error_response(
            request, 401, "unauthorized", "A valid API token is required: send `Authorization: Bearer <token>`."
        )
    response["WWW-Authenticate"] = 'Bearer realm="factdesk"'
    return response


@api.exception_handler(AuthorizationError)
def on_forbidden(request: HttpRequest, exc: AuthorizationError) -> HttpResponse:
    return error_response(request, 403, "forbidden", exc.message)


@api.exception_handler(Throttled)
def on_throttled(request: HttpRequest, exc: Throttled) -> HttpResponse:
    return error_response(
        request, 429, "throttled", f"Too many requests: the limit is {settings.API_RATE_LIMIT} per token holder.",
        {"retry_after_seconds": exc.wait},
    )


@api.exception_handler(HttpError)
def on_http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    # ninja wraps whatever the body parser raised in HttpError(400); answer for the cause.
    if isinstance(exc.__cause__, ApiError):
        return on_api_error(request, exc.__cause__)
    if isinstance(exc.__cause__, RequestDataTooBig):
        return on_body_too_big(request, exc.__cause__)
    if exc.status_code == 400:
        return error_response(request, 400, "malformed_json", "The body is not valid JSON.")
    return error_response(request, exc.status_code, STATUS_CODES.get(exc.status_code, "error"), exc.message)


@api.exception_handler(ValidationError)
def on_validation_error(request: HttpRequest, exc: ValidationError) -> HttpResponse:
    errors = []
    for error in exc.errors:
        source, *loc = error["loc"]
        if source == "body" and len(loc) > 1:
            loc = loc[1:]  # drop the name of the view's body parameter
        errors.append({"field": ".".join(str(part) for part in loc), "message": error["msg"]})
    return error_response(request, 422, "validation_error", "The request is invalid.", {"errors": errors})


@api.exception_handler(Http404)
def on_not_found(request: HttpRequest, exc: Http404) -> HttpResponse:
    return error_response(request, 404, "not_found", "Not found.")


@api.exception_handler(Exception)
def on_unexpected(request: HttpRequest, exc: Exception) -> HttpResponse:
    # Still JSON for the client; the traceback goes to the log for us.
    logger.exception("unhandled error in %s %s", request.method, request.path)
    return error_response(request, 500, "server_error", "Something went wrong on our side; it has been logged.")
