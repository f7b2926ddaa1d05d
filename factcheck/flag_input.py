"""What a valid flag from outside is: the one definition the API and the importers share.

`POST /api/v1/flags` and `manage.py import_posts` (csv, jsonl, and the flags of ClaimReview and
LIAR records) validate every flag with these pydantic schemas, so a flag is accepted or refused
with the same field names and messages whichever way it arrives. The schemas also declare the
constraints the OpenAPI document shows (factcheck.api lists them in REQUEST_SCHEMAS).
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from typing import Annotated, Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.validators import URLValidator
from django.utils import timezone
from pydantic import (
    AwareDatetime,
    BaseModel,
    BeforeValidator,
    Field,
    StrictBool,
    StrictInt,
    StringConstraints,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
)
from pydantic import ValidationError as PydanticValidationError

from factcheck.ingest import FlagInput, PageInput, PostInput, flag_fingerprint
from factcheck.media import MAX_ITEMS, MediaInput
from factcheck.models import FlagCategory, FlagSource, MediaType
from factcheck.models_media import MediaKind
from factcheck.ratings import http_url
from factcheck.timestamps import timestamp_problem

# What the server enforces, declared so that the OpenAPI document says it too.
TWO_LETTERS = r"^\s*([A-Za-z]{2})?\s*$"
# An http(s) URL as Django's URLValidator (factcheck.ratings.http_url) takes it, its ASCII part: a host name
# with a top-level domain, an IPv4 address or localhost; an optional port; a path of printable ASCII.
_OCTET = r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
_HOST = (rf"(?:localhost|{_OCTET}(?:\.{_OCTET}){{3}}"
         r"|(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}\.?)")
_REST = r"(?::\d{1,5})?(?:[/?#][!-~]*)?"
_URL = rf"[Hh][Tt][Tt][Pp][Ss]?://{_HOST}{_REST}"
HTTP_URL = rf"^\s*{_URL}\s*$"
HTTP_URL_OR_EMPTY = rf"^\s*(?:{_URL})?\s*$"
PORT = r"(?:[1-9]\d{0,3}|[1-5]\d{4}|6[0-4]\d{3}|65[0-4]\d{2}|655[0-2]\d|6553[0-5])"  # 1 to 65535
# Media are loaded by reviewers' browsers from the platform's hosts: https only, on a port that can exist (a media
# address is shown to reviewers and published in MediaReview: ":0" or ":99999" is nobody's).
_HTTPS_URL = rf"[Hh][Tt][Tt][Pp][Ss]://{_HOST}(?::{PORT})?(?:[/?#][!-~]*)?"
HTTPS_URL = rf"^\s*{_HTTPS_URL}\s*$"
HTTPS_URL_OR_EMPTY = rf"^\s*(?:{_HTTPS_URL})?\s*$"
https_url = URLValidator(schemes=["https"])
# Hashes as the platform's hasher writes them: hex digits only, nothing around them (any case; stored lower-case).
PDQ_HEX = r"^(?:[0-9A-Fa-f]{64})?$"
MD5_HEX = r"^(?:[0-9A-Fa-f]{32})?$"


def real_days(years: range) -> str:
    """A pattern of the real calendar days of these years: each month's own days, 29 February in leap years only."""
    month_days = (r"(?:0[13578]|1[02])-(?:0[1-9]|[12]\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\d|30)"
                  r"|02-(?:0[1-9]|1\d|2[0-8])")
    every = "|".join(str(year) for year in years)
    leap = "|".join(str(year) for year in years if calendar.isleap(year))
    return rf"(?:(?:{every})-(?:{month_days})|(?:{leap})-02-29)"


# A timestamp as factcheck.timestamps takes it, for the document: 2000-01-01 up to a day ahead of the
# server's clock, with an offset from -12:00 to +14:00. A pattern cannot follow the clock: the document admits
# every real day of the years 2001 to next year (so a server running over New Year still admits the new year's
# flags), and its description says the rest. A day later than tomorrow is a 422 the pattern cannot say
# (tests/api/test_openapi_strict.py allows it, as any rule of the world); 2000-01-01 is before the first moment
# at any positive offset, so the year 2000 is left out.
_THIS_YEAR = datetime.now(UTC).year
TIMESTAMP = (rf"^{real_days(range(2001, _THIS_YEAR + 2))}T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d"
             r"(?:\.\d{1,6})?(?:Z|[+-](?:0\d|1[01]):[0-5]\d|-12:00|\+1[23]:[0-5]\d|\+14:00)$")
DAY = rf"^{real_days(range(2000, _THIS_YEAR + 2))}$"  # a day of the figures: from 2000-01-01 to tomorrow


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
MAX_TOPIC = 100
MAX_ALT_TEXT = 5000
# A post's views or shares: at most the largest integer every JSON reader holds exactly (JavaScript's
# Number.MAX_SAFE_INTEGER), so that their sum, the reach that the priority (factcheck.priority), the queue's
# "most reach" order and a copy group's combined reach (factcheck.queue) add up in PostgreSQL's bigint,
# can never overflow it (2 x 2^53 is far below 2^63).
MAX_COUNT = 2**53 - 1
# No control characters (C0, DEL, C1) in an external id: it is shown, logged and put in URLs; and, as
# surrounding whitespace is stripped, at least one other character.
_NO_CONTROL = r"[^\x00-\x1f\x7f-\x9f]"
NO_CONTROLS = rf"^{_NO_CONTROL}*[^\s\x00-\x1f\x7f-\x9f]{_NO_CONTROL}*$"
NOT_BLANK = r"\S"  # what `min_length=1` after stripping is, said so that the document says it too

Key = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200, pattern=NOT_BLANK)]
ExternalId = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200,
                                              pattern=NO_CONTROLS)]
# A post's id is also a segment of its API URLs (/api/v1/posts/{external_id}/...), where "/" (even sent as %2F)
# splits it: such a post was stored and could then be neither read nor rated.
_IN_A_SEGMENT = r"[^/\x00-\x1f\x7f-\x9f]"
# "." and ".." are path segments clients resolve away (/posts/../ratings is /ratings to them), so never a post's id:
# an id holds a character other than a dot (or a space), or at least three dots, so that it is neither once its
# surrounding spaces are stripped. No look-ahead: pydantic's regular expressions have none.
POST_ID = rf"^(?:{_IN_A_SEGMENT}*[^./\s\x00-\x1f\x7f-\x9f]{_IN_A_SEGMENT}*| *\. *\. *\.[. ]*)$"
PostExternalId = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200,
                                                  pattern=POST_ID)]
# What a pattern refuses, as people read it (pydantic's own message quotes the regular expression).
PATTERN_MEANS = {
    NO_CONTROLS: "must not be blank or contain control characters",
    POST_ID: "must not be blank, '.' or '..', or contain control characters or '/' (it is part of the post's API URLs)",
}


def whole_number(value: Any) -> Any:
    """5.0 is the integer 5 in JSON (and in the document's `integer`); 5.5, "5" and true are not."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


# An integer as JSON and the document's `integer` have it: 5 or 5.0, never "5" or true. Constraints go
# before the validator (`Annotated[StrictInt, Field(ge=1), BeforeValidator(whole_number)]`), or the
# document shows them as pydantic's keywords instead of JSON Schema's.
WholeNumber = Annotated[StrictInt, BeforeValidator(whole_number)]
Count = Annotated[StrictInt, Field(ge=0, le=MAX_COUNT), BeforeValidator(whole_number)]
Timestamp = Annotated[AwareDatetime, WithJsonSchema({
    "type": "string", "pattern": TIMESTAMP,
    "description": "ISO 8601 with a timezone offset (-12:00 to +14:00), from 2000-01-01 to a day ahead of now.",
})]


def _blank_if_none(value: Any) -> Any:
    return "" if value is None else value


def _real_timestamp(value: datetime) -> datetime:
    problem = timestamp_problem(value, now=timezone.now())
    if problem:
        raise ValueError(problem)
    return value


class PageIn(BaseModel):
    external_id: ExternalId
    name: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=300, pattern=NOT_BLANK)]
    is_politician: StrictBool = False


def _https(value: str, *, optional: bool = False) -> str:
    """A media address: Django's URL rule and the document's pattern both, so that what is accepted is what the
    document says: an ASCII host name (no look-alike or direction-reversing characters to misread), and no user
    name or password (a media address is shown to reviewers and published in MediaReview)."""
    value = value.strip()
    if value or not optional:
        try:
            https_url(value)
        except DjangoValidationError:
            raise ValueError("must be an https:// URL") from None
        if not re.fullmatch(HTTPS_URL, value):
            raise ValueError("must be an https:// URL with an ASCII host name, a port that exists, and no user name or "
                             "password")
    return value


# What one item's kind rules out, said in the document as the server refuses it (JSON Schema's if/then).
_MEDIA_RULES = {"allOf": [
    {"if": {"properties": {"kind": {"const": MediaKind.VIDEO}}, "required": ["kind"]},
     "then": {"properties": {"pdq": {"maxLength": 0}, "quality": {"type": "null"}}}},
    {"if": {"properties": {"kind": {"const": MediaKind.IMAGE}}, "required": ["kind"]},
     "then": {"properties": {"still_url": {"pattern": r"^\s*$"}}}},
]}


class MediaIn(BaseModel):
    """One picture or video of the post, as the platform hashed it (Factdesk never fetches it)."""

    kind: MediaKind
    url: Annotated[str, Field(max_length=2000, description="Where the platform serves it: https only.",
                              json_schema_extra=documented(pattern=HTTPS_URL))]
    pdq: Annotated[str, Field(
        description="An image's PDQ hash, 64 hex characters (stored lower-case); not for a video.",
        json_schema_extra=null_is_blank(pattern=PDQ_HEX),
    )] = ""
    md5: Annotated[str, Field(
        description="The file's MD5, 32 hex characters (stored lower-case).",
        json_schema_extra=null_is_blank(pattern=MD5_HEX),
    )] = ""
    alt_text: Annotated[str, Field(max_length=MAX_ALT_TEXT, json_schema_extra=null_is_blank())] = ""
    quality: Annotated[StrictInt, Field(ge=0, le=100), BeforeValidator(whole_number)] | None = Field(
        None, description="PDQ's quality of `pdq` (0-100), as POST /api/v1/media/hash answers it; below 50 the "
        "hash is not matched. Not for a video.",
    )
    still_url: Annotated[str, Field(
        max_length=2000, description="A video's still image: https only; not for an image.",
        json_schema_extra=null_is_blank(pattern=HTTPS_URL_OR_EMPTY),
    )] = ""

    model_config = {"json_schema_extra": _MEDIA_RULES}

    @field_validator("pdq", "md5", "alt_text", "still_url", mode="before")
    @classmethod
    def blank_for_null(cls, value: Any) -> Any:
        return _blank_if_none(value)

    @field_validator("url")
    @classmethod
    def https_only(cls, value: str) -> str:
        return _https(value)

    @field_validator("pdq")
    @classmethod
    def pdq_hex(cls, value: str, info: ValidationInfo) -> str:
        if not re.fullmatch(PDQ_HEX, value):
            raise ValueError("must be a PDQ hash: 64 hex characters")
        if value and info.data.get("kind") == MediaKind.VIDEO:
            raise ValueError("only an image has a PDQ hash")
        return value.lower()

    @field_validator("md5")
    @classmethod
    def md5_hex(cls, value: str) -> str:
        if not re.fullmatch(MD5_HEX, value):
            raise ValueError("must be an MD5 hash: 32 hex characters")
        return value.lower()

    @field_validator("quality")
    @classmethod
    def image_quality(cls, value: int | None, info: ValidationInfo) -> int | None:
        if value is not None and info.data.get("kind") == MediaKind.VIDEO:
            raise ValueError("only an image's PDQ hash has a quality")
        return value

    @field_validator("still_url")
    @classmethod
    def video_still(cls, value: str, info: ValidationInfo) -> str:
        value = _https(value, optional=True)
        if value and info.data.get("kind") == MediaKind.IMAGE:
            raise ValueError("only a video has a still image")
        return value

    def to_input(self) -> MediaInput:
        return MediaInput(kind=self.kind.value, url=self.url, pdq=self.pdq, md5=self.md5, alt_text=self.alt_text,
                          quality=self.quality, still_url=self.still_url)


class PostIn(BaseModel):
    external_id: PostExternalId
    url: Annotated[
        str, Field(max_length=2000, json_schema_extra=null_is_blank(pattern=HTTP_URL_OR_EMPTY))
    ] = ""
    text: Annotated[str, Field(max_length=MAX_POST_TEXT, json_schema_extra=null_is_blank())] = ""
    language: str = Field(
        "", description="ISO 639-1, two letters; stored lower-case. A later flag without it keeps the post's.",
        json_schema_extra=null_is_blank(pattern=TWO_LETTERS),
    )
    country: str = Field(
        "", description="ISO 3166-1 alpha-2; stored upper-case. A later flag without it keeps the post's.",
        json_schema_extra=null_is_blank(pattern=TWO_LETTERS),
    )
    media_type: MediaType = MediaType.TEXT
    topic: Annotated[str, Field(
        max_length=MAX_TOPIC, description="Optional: what the post is about (e.g. `health`); stored lower-case.",
        json_schema_extra=null_is_blank(),
    )] = ""
    posted_at: Timestamp
    views: Count = 0
    shares: Count = 0
    page: PageIn
    media: Annotated[list[MediaIn], Field(max_length=MAX_ITEMS)] | None = Field(
        None, description=f"Up to {MAX_ITEMS} pictures or videos, in the post's order. Omitted or null: the "
        "post's stored media stay as they are; a list (even empty) replaces them.",
    )

    @field_validator("url", "text", "language", "country", "topic", mode="before")
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

    @field_validator("topic")
    @classmethod
    def folded_topic(cls, value: str) -> str:
        return " ".join(value.split()).lower()

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
    category: FlagCategory = Field(
        FlagCategory.MISINFORMATION,
        description="What the flag reports: `misinformation` goes to fact-checkers; `violence`, `hate`, "
        "`harassment` and `imminent_harm` (misinformation that risks imminent physical harm) are reports of harm, "
        "decided by trust-and-safety staff.",
    )
    reason: Annotated[str, Field(max_length=MAX_REASON, json_schema_extra=null_is_blank())] = ""
    flagged_at: Timestamp | None = None
    post: PostIn

    @field_validator("reason", mode="before")
    @classmethod
    def blank_for_null(cls, value: Any) -> Any:
        return _blank_if_none(value)

    @field_validator("flagged_at")
    @classmethod
    def real_flagging_time(cls, value: datetime | None) -> datetime | None:
        return None if value is None else _real_timestamp(value)

    def _media_type(self) -> str:
        """The post's `media_type`; left out, it is the first media item's kind, else `text`."""
        post = self.post
        if "media_type" not in post.model_fields_set and post.media:
            return post.media[0].kind.value
        return post.media_type.value

    def to_input(self, *, now: datetime, clock_times: bool = False) -> FlagInput:
        """The flag for factcheck.ingest, with the fingerprint of its content as sent (`flagged_at` as given).
        `clock_times`: the times are an importer's clock, not the record's, and are left out of the fingerprint."""
        post, page = self.post, self.post.page
        flag = FlagInput(
            idempotency_key=self.idempotency_key,
            source=self.source.value,
            category=self.category.value,
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
                media_type=self._media_type(),
                topic=post.topic,
                views=post.views,
                shares=post.shares,
                media=None if post.media is None else tuple(item.to_input() for item in post.media),
            ),
        )
        sent = (None, None) if clock_times else (self.flagged_at, post.posted_at)
        return replace(flag, fingerprint=flag_fingerprint(flag, flagged_at=sent[0], posted_at=sent[1]))


class FlagBatchIn(BaseModel):
    """Up to 1,000 flags, stored all or none."""

    flags: Annotated[list[FlagIn], Field(min_length=1, max_length=MAX_BATCH)]


class FieldError(BaseModel):
    """One problem of one flag: the dotted field (`post.page.name`, "" for the whole flag) and the message."""

    field: str
    message: str


def _message(error: dict) -> str:
    if error["type"] == "string_pattern_mismatch" and error["ctx"]["pattern"] in PATTERN_MEANS:
        return PATTERN_MEANS[error["ctx"]["pattern"]]
    return error["msg"].removeprefix("Value error, ")


def _field(loc: tuple) -> str:
    return ".".join(str(part) for part in loc)


def validate_flag(item: Any) -> FlagIn | list[FieldError]:
    """One flag as decoded JSON: the valid flag, or its problems as the API reports them."""
    if not isinstance(item, dict):
        return [FieldError(field="", message="a flag must be a JSON object")]
    try:
        return FlagIn.model_validate(item)
    except PydanticValidationError as exc:
        return [FieldError(field=_field(e["loc"]), message=_message(e)) for e in exc.errors()]
