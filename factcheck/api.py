"""The review side's API: the platform pushes flags, fact-checkers rate posts.

The flag schemas here are the single definition of a valid flag from outside; a batch is
validated item by item and refused whole, naming each bad item and field, before
factcheck.ingest writes anything.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from datetime import datetime
from typing import Annotated, Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import HttpRequest
from django.utils import timezone
from ninja import Router, Schema
from ninja.responses import Status
from pydantic import AwareDatetime, BaseModel, Field, StrictBool, StrictInt, StringConstraints, field_validator
from pydantic import ValidationError as PydanticValidationError

from accounts.api_auth import TokenAuth
from accounts.models import Role
from core.api_errors import NotFound, TooLarge, Unprocessable, errors_for, read_json_object
from factcheck.ingest import FlagInput, PageInput, PostInput, ingest_flags
from factcheck.models import FlagSource, MediaType, Post, QueueState, Rating, Verdict
from factcheck.ratings import MAX_CHANGE_REASON, MAX_RATIONALE, MAX_SOURCES, http_url, record_rating
from factcheck.timestamps import timestamp_problem

# What the server enforces, declared so that the OpenAPI document says it too.
TWO_LETTERS = r"^\s*([A-Za-z]{2})?\s*$"
HTTP_URL = r"^\s*[Hh][Tt][Tt][Pp][Ss]?://\S+"
HTTP_URL_OR_EMPTY = r"^\s*([Hh][Tt][Tt][Pp][Ss]?://\S+.*)?$"


def documented(**constraints: Any) -> dict[str, Any]:
    """JSON Schema constraints for the OpenAPI document of a field the domain validates itself."""
    return constraints


def no_blank_urls(urls: list[str]) -> list[str]:
    """A URL list sent to the API: the browser's forms drop blank lines, but here a blank item is
    refused, as the document's item pattern says (otherwise 11 items, one blank, pass `maxItems` 10)."""
    if any(not url.strip() for url in urls):
        raise ValueError("must not contain blank items")
    return urls


def null_is_blank(**constraints: Any) -> Callable[[dict[str, Any]], None]:
    """The OpenAPI document of a text field whose null is read as "" (`blank_for_null`): null is accepted."""

    def extra(schema: dict[str, Any]) -> None:
        schema.update(constraints)
        schema["type"] = ["string", "null"]

    return extra


MAX_BATCH = 1000
MAX_REASON = 5000
# Facebook's own limit for a post's text.
MAX_POST_TEXT = 63_206
BIGINT_MAX = 2**63 - 1

router = Router(tags=["review"])

Key = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]
Count = Annotated[StrictInt, Field(ge=0, le=BIGINT_MAX)]


def _blank_if_none(value: Any) -> Any:
    return "" if value is None else value


def _real_timestamp(value: datetime) -> datetime:
    problem = timestamp_problem(value, now=timezone.now())
    if problem:
        raise ValueError(problem)
    return value


class PageIn(BaseModel):
    external_id: Key
    name: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=300)]
    is_politician: StrictBool = False


class PostIn(BaseModel):
    external_id: Key
    url: Annotated[
        str, Field(max_length=2000, json_schema_extra=null_is_blank(pattern=HTTP_URL_OR_EMPTY))
    ] = ""
    text: Annotated[str, Field(max_length=MAX_POST_TEXT, json_schema_extra=null_is_blank())] = ""
    language: str = Field(
        "", description="ISO 639-1, two letters; stored lower-case.",
        json_schema_extra=null_is_blank(pattern=TWO_LETTERS),
    )
    country: str = Field(
        "", description="ISO 3166-1 alpha-2; stored upper-case.",
        json_schema_extra=null_is_blank(pattern=TWO_LETTERS),
    )
    media_type: MediaType = MediaType.TEXT
    posted_at: AwareDatetime
    views: Count = 0
    shares: Count = 0
    page: PageIn

    @field_validator("url", "text", "language", "country", mode="before")
    @classmethod
    def blank_for_null(cls, value: Any) -> Any:
        return _blank_if_none(value)

    @field_validator("url")
    @classmethod
    def http_or_https(cls, value: str) -> str:
        value = value.strip()
        if value:
            try:
                http_url(value)
            except DjangoValidationError:
                raise ValueError("must be an http:// or https:// URL") from None
        return value

    @field_validator("posted_at")
    @classmethod
    def real_posting_time(cls, value: datetime) -> datetime:
        return _real_timestamp(value)

    @field_validator("language")
    @classmethod
    def iso_639_1(cls, value: str) -> str:
        value = value.strip().lower()
        if value and not (len(value) == 2 and value.isascii() and value.isalpha()):
            raise ValueError("must be a two-letter ISO 639-1 code such as 'en'")
        return value

    @field_validator("country")
    @classmethod
    def iso_3166_alpha_2(cls, value: str) -> str:
        value = value.strip().upper()
        if value and not (len(value) == 2 and value.isascii() and value.isalpha()):
            raise ValueError("must be a two-letter ISO 3166-1 country code such as 'GB'")
        return value


class FlagIn(BaseModel):
    """One flag. Datetimes need a timezone offset; `flagged_at` defaults to when it arrives."""

    idempotency_key: Key
    source: FlagSource
    reason: Annotated[str, Field(max_length=MAX_REASON, json_schema_extra=null_is_blank())] = ""
    flagged_at: AwareDatetime | None = None
    post: PostIn

    @field_validator("reason", mode="before")
    @classmethod
    def blank_for_null(cls, value: Any) -> Any:
        return _blank_if_none(value)

    @field_validator("flagged_at")
    @classmethod
    def real_flagging_time(cls, value: datetime | None) -> datetime | None:
        return None if value is None else _real_timestamp(value)

    def to_input(self, *, now: datetime) -> FlagInput:
        post, page = self.post, self.post.page
        return FlagInput(
            idempotency_key=self.idempotency_key,
            source=self.source.value,
            reason=self.reason,
            flagged_at=self.flagged_at or now,
            post=PostInput(
                external_id=post.external_id,
                page=PageInput(external_id=page.external_id, name=page.name, is_politician=page.is_politician),
                posted_at=post.posted_at,
                url=post.url,
                text=post.text,
                language=post.language,
                country=post.country,
                media_type=post.media_type.value,
                views=post.views,
                shares=post.shares,
            ),
        )


class FlagBatchIn(BaseModel):
    """Up to 1,000 flags, stored all or none."""

    flags: Annotated[list[FlagIn], Field(min_length=1, max_length=MAX_BATCH)]


REQUEST_SCHEMAS: list[type[BaseModel]] = [FlagIn, FlagBatchIn]


def _message(error: dict) -> str:
    message = error["msg"]
    return message.removeprefix("Value error, ")


def _field(loc: tuple) -> str:
    return ".".join(str(part) for part in loc)


def parse_flags(data: dict[str, Any], *, now: datetime) -> list[FlagInput]:
    """One flag or {"flags": [...]}, validated whole: any bad item refuses the batch (422)."""
    if "flags" in data:
        items = data["flags"]
        if not isinstance(items, list) or not items:
            raise Unprocessable(
                "`flags` must be a non-empty list.",
                details={"errors": [{"item": None, "field": "flags", "message": "must be a non-empty list"}]},
            )
        if len(items) > MAX_BATCH:
            raise TooLarge(
                f"A batch holds at most {MAX_BATCH} flags; this one has {len(items)}.",
                code="batch_too_large", details={"max_flags": MAX_BATCH, "flags": len(items)},
            )
    else:
        items = [data]
    valid: list[FlagIn] = []
    errors: list[dict[str, Any]] = []
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            errors.append({"item": index, "field": "", "message": "a flag must be a JSON object"})
            continue
        try:
            valid.append(FlagIn.model_validate(item))
        except PydanticValidationError as exc:
            errors.extend(
                {"item": index, "field": _field(e["loc"]), "message": _message(e)} for e in exc.errors()
            )
    if not errors:
        errors = _repeated_keys(valid)
    if errors:
        bad = len({e["item"] for e in errors})
        raise Unprocessable(
            f"{bad} of {len(items)} flag(s) are invalid; nothing was stored.", details={"errors": errors}
        )
    return [flag.to_input(now=now) for flag in valid]


def _repeated_keys(flags: list[FlagIn]) -> list[dict[str, Any]]:
    """One batch may not give one idempotency key to two different flags: which would be "the" flag?

    The same flag repeated word for word is a retry and is stored once.
    """
    seen: dict[str, int] = {}
    errors = []
    for index, flag in enumerate(flags):
        first = seen.setdefault(flag.idempotency_key, index)
        if first != index and flag != flags[first]:
            errors.append({
                "item": index, "field": "idempotency_key",
                "message": f"repeats the idempotency key of item {first} for a different flag; each flag needs its own key",
            })
    return errors


class IngestResultOut(Schema):
    idempotency_key: str
    external_id: str
    queue_state: QueueState
    duplicate: bool


class IngestOut(Schema):
    results: list[IngestResultOut]


FLAGS_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {
                "schema": {
                    "oneOf": [
                        {"$ref": "#/components/schemas/FlagIn"},
                        {"$ref": "#/components/schemas/FlagBatchIn"},
                    ]
                }
            }
        },
    }
}


@router.post(
    "/flags",
    auth=TokenAuth(Role.PLATFORM),
    response={200: IngestOut, 201: IngestOut, **errors_for(400, 403, 413, 422)},
    openapi_extra=FLAGS_BODY,
    summary="Push flags (one or a batch of up to 1,000)",
)
def push_flags(request: HttpRequest) -> Status:
    """Store flags, idempotent by `idempotency_key`; answers each post's queue state.

    201 when at least one flag was new, 200 when every flag had been received before.
    A batch with any invalid flag is refused whole (422) and nothing is stored.
    """
    flags = parse_flags(read_json_object(request), now=timezone.now())
    results = ingest_flags(flags=flags, submitted_by=request.auth)  # type: ignore[attr-defined]
    status = 201 if any(not r.duplicate for r in results) else 200
    return Status(status, {"results": [asdict(r) for r in results]})


class RatingIn(Schema):
    """The constraints are declared for clients; factcheck.ratings enforces them, with its own messages."""

    verdict: str = Field(json_schema_extra={"enum": list(Verdict.values)})
    rationale: str = Field(
        description="Required: why, and how you know.",
        json_schema_extra=documented(minLength=1, maxLength=MAX_RATIONALE, pattern=r"\S"),
    )
    sources: list[str] = Field(
        description="At least one http:// or https:// URL.",
        json_schema_extra=documented(
            minItems=1, maxItems=MAX_SOURCES, items={"type": "string", "maxLength": 2000, "pattern": HTTP_URL}
        ),
    )
    article_url: str = Field("", json_schema_extra=documented(maxLength=2000, pattern=HTTP_URL_OR_EMPTY))
    change_reason: str = Field(
        "", description="Why the current rating changes (new evidence, an error); required when re-rating.",
        json_schema_extra=documented(maxLength=MAX_CHANGE_REASON),
    )

    _sources_not_blank = field_validator("sources")(no_blank_urls)


class RatingOut(Schema):
    id: int
    post: str
    verdict: Verdict
    verdict_label: str
    rationale: str
    sources: list[str]
    article_url: str
    organisation: str
    created_at: datetime


def rating_out(rating: Rating, *, post: Post) -> dict[str, Any]:
    return {
        "id": rating.pk,
        "post": post.external_id,
        "verdict": rating.verdict,
        "verdict_label": rating.get_verdict_display(),
        "rationale": rating.rationale,
        "sources": rating.sources,
        "article_url": rating.article_url,
        "organisation": rating.organisation.name,
        "created_at": rating.created_at,
    }


@router.post(
    "/posts/{external_id}/ratings",
    auth=TokenAuth(Role.FACTCHECKER),
    response={201: RatingOut, **errors_for(400, 403, 404, 409, 413, 422)},
    summary="Rate a post",
)
def rate_post(request: HttpRequest, external_id: str, payload: RatingIn) -> Status:
    """Record a fact-checker's rating; it supersedes the post's current one.

    An unclaimed post in the organisation's coverage is claimed and the claim completed in the
    same transaction. Refused with: 403 `outside_coverage` (the post's language or country is not
    the organisation's), 403 `not_your_rating` (the current rating is another organisation's),
    409 `already_claimed` (another reviewer holds the claim), 409 `appeal_open` (an appeal against
    the current rating is open: only its decision changes it), 422 `rating_refused` (a politician's
    post) and 422 `validation_error` (invalid fields, or a re-rating without `change_reason`).
    Nothing is written when refused.
    """
    post = Post.objects.filter(external_id=external_id).first()
    if post is None:
        raise NotFound(f"No post {external_id!r}.")
    # Refusals (coverage, claims, re-rating rules) and field errors map to HTTP in config/api.py.
    rating = record_rating(
        reviewer=request.auth,  # type: ignore[attr-defined]
        post_id=post.pk,
        verdict=payload.verdict,
        rationale=payload.rationale,
        sources=payload.sources,
        article_url=payload.article_url,
        change_reason=payload.change_reason,
        claim_if_unclaimed=True,
    )
    return Status(201, rating_out(rating, post=post))
