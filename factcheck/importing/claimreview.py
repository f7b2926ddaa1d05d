"""`--format claimreview`: schema.org ClaimReview, as fact-checkers, Google's Fact Check Tools and
Data Commons publish it: one ClaimReview object, a JSON list of them, or a `DataFeed` whose
`dataFeedElement` holds ClaimReviews or `DataFeedItem`s with ClaimReview(s) as their `item`.

Read with ijson, one element at a time, so a feed of millions of reviews stays flat in memory. A
file that is not one complete JSON document (cut short, trailing garbage, not UTF-8) or whose
`@context` is not schema.org fails whole; a review that cannot be imported is a rejection named
by its item number (its place in the list or feed, from 1). Each review becomes a rated post:

- the post: `claimReviewed` as its text; `itemReviewed.identifier` as its id, else
  `claimreview:<sha1 of url and claim>`; `itemReviewed.firstAppearance` or the first
  `appearance` as its URL (dropped unless http/https); `inLanguage` when it is a two-letter code;
  posted at `itemReviewed.datePublished`, else the review's `datePublished`;
- its images: `itemReviewed.firstAppearance` and `appearance` entries that are images (an `ImageObject`, by
  its `contentUrl` else `url`, or any entry whose `contentUrl` or `url` path ends in .jpg, .jpeg, .png,
  .gif or .webp), each once, in that order, at most 10, as image media items with their URL alone; an
  entry that is not an https URL the API takes is skipped, as a non-http URL is for the post. They are
  left out of the flag's fingerprint (and the post's `media_type` is then `image`): a review imported
  before media is the same flag, a duplicate, when it is imported again, not a conflict of its key;
- its page: `itemReviewed.author` (`claimreview-author:<its url>`, else `<slug of its name>`;
  "Unknown author" when none is named), never marked a politician's page;
- the flag: source `partner`, key `claimreview:<sha1 of url and claim>`;
- the rating: `author` is the organisation (found or created by name), `reviewRating` the
  verdict (factcheck.importing.verdicts), `url` the article and the one source, `reviewBody` or
  `description` the rationale (else "Rated <rating> by <org>: <url>"; cut at 5,000 characters),
  `datePublished` its publication time (Rating.published_at).

Every text is taken as HTML: tags (and scripts) dropped, entities unescaped. Dates are ISO 8601
dates (midnight UTC) or datetimes (UTC when they name no offset), from 2000 to now.
"""

from __future__ import annotations

import decimal
import re
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime
from typing import Any, BinaryIO
from urllib.parse import urlsplit

import ijson
from django.utils.text import slugify
from pydantic import ValidationError

from factcheck.flag_input import MediaIn
from factcheck.importing.records import (
    FileProblem,
    RatedPost,
    RatingInput,
    Record,
    digest,
    parse_timestamp,
    plain_text,
    unstorable,
    valid_flag,
)
from factcheck.importing.verdicts import verdict_for_name, verdict_for_value
from factcheck.media import MAX_ITEMS, MediaInput
from factcheck.models_media import MediaKind
from factcheck.ratings import MAX_RATIONALE

UNIT = "item"
_SCHEMA_ORG = re.compile(r"^https?://schema\.org/?$")
_HTTP = re.compile(r"^https?://\S+$", re.IGNORECASE)
_OPENING = ("start_map", "start_array")
_CLOSING = ("end_map", "end_array")
PAGE_PREFIX = "claimreview-author:"
_IMAGE_FILE = re.compile(r"\.(?:jpe?g|png|gif|webp)$", re.IGNORECASE)


def _one_line(exc: Exception) -> str:
    text = exc.args[0] if exc.args else str(exc)
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    return str(text).strip().splitlines()[0] if str(text).strip() else type(exc).__name__


def _schema_org(context: Any) -> bool:
    contexts = context if isinstance(context, list) else [context]
    return any(isinstance(c, str) and _SCHEMA_ORG.match(c.strip()) for c in contexts)


def _skip_bom(stream: BinaryIO) -> BinaryIO:
    """A UTF-8 byte order mark (Windows editors write one) is read past, as the other formats' readers do."""
    if stream.peek(3)[:3] == b"\xef\xbb\xbf":  # type: ignore[attr-defined]  (runner._open: a BufferedReader)
        stream.read(3)
    return stream


def check(stream: BinaryIO) -> None:
    """Parse the whole document (events only, nothing kept) and its top-level @context."""
    depth, key = 0, None
    try:
        events = ijson.basic_parse(_skip_bom(stream))
        first = next(events, None)
        if first is None:
            raise FileProblem("the file is empty: expected a ClaimReview, a list of them or a DataFeed")
        if first[0] not in _OPENING:
            raise FileProblem("expected a ClaimReview object, a list of them or a DataFeed, not a single value")
        depth = 1
        for event, value in events:
            if depth == 1 and event == "map_key":
                key = value
            elif depth == 1 and key == "@context" and event == "string" and not _schema_org(value):
                raise FileProblem(f"@context {value[:80]!r} is not schema.org")
            if event in _OPENING:
                depth += 1
            elif event in _CLOSING:
                depth -= 1
    except ijson.JSONError as exc:
        raise FileProblem(f"not valid JSON ({_one_line(exc)}): is the file cut short or not UTF-8?") from None
    except (ValueError, SystemError, decimal.InvalidOperation):
        # Python reads no integer of more than 4,300 digits (ijson's C parser raises it as a SystemError), and no
        # Decimal of an exponent past its range (1e99999999999999999999).
        raise FileProblem("a number in the file is too long or too large to read") from None


def _build(event: str, value: Any, events: Iterator[tuple[str, Any]]) -> Any:
    """The whole value that starts with this event, built from the events that follow."""
    if event not in _OPENING:
        return value
    builder = ijson.ObjectBuilder()
    builder.event(event, value)
    depth = 1
    for event, value in events:
        builder.event(event, value)
        if event in _OPENING:
            depth += 1
        elif event in _CLOSING:
            depth -= 1
            if depth == 0:
                return builder.value
    raise FileProblem("the JSON ends inside a value")  # check() has ruled this out


def _elements(stream: BinaryIO) -> Iterator[Any]:
    """The top-level list's elements, a DataFeed's dataFeedElement one by one, or the single object."""
    events = ijson.basic_parse(_skip_bom(stream), use_float=True)
    event, value = next(events)
    if event == "start_array":
        for event, value in events:
            if event == "end_array":
                return
            yield _build(event, value, events)
        return
    top: dict[str, Any] = {}
    feed = False
    for event, value in events:
        if event == "end_map":
            break
        key = value
        event, value = next(events)
        if key == "dataFeedElement" and event == "start_array":
            feed = True
            for event, value in events:
                if event == "end_array":
                    break
                yield _build(event, value, events)
        elif key == "dataFeedElement" and event == "start_map":  # JSON-LD: one element may stand for a list of one
            feed = True
            yield _build(event, value, events)
        else:
            top[key] = _build(event, value, events)
    if not feed:
        yield top


def _is(obj: Any, kind: str) -> bool:
    types = obj.get("@type") if isinstance(obj, dict) else None
    return kind in (types if isinstance(types, list) else [types])


def _first(value: Any) -> dict[str, Any]:
    if isinstance(value, list):
        value = next((v for v in value if isinstance(v, dict)), None)
    return value if isinstance(value, dict) else {}


def _http(value: Any, *, most: int) -> str:
    if isinstance(value, dict):
        value = value.get("url")
    text = value.strip() if isinstance(value, str) else ""
    return text if _HTTP.match(text) and len(text) <= most else ""


def _reviews(element: Any) -> list[Any]:
    """The ClaimReview(s) of a feed element: itself, or a DataFeedItem's `item`(s). A MediaReview beside a
    ClaimReview (our own export publishes one for an Altered rating of a post with media) says nothing more
    to import: the ClaimReview carries the verdict, and the post's media come from its appearances."""
    if _is(element, "DataFeedItem"):
        item = element.get("item")
        return [each for each in (item if isinstance(item, list) else [item]) if not _is(each, "MediaReview")]
    return [element]


def _verdict(rating: dict[str, Any]) -> tuple[str, str] | str:
    """(verdict, the rating as published) or why it is refused."""
    name = plain_text(rating.get("alternateName")) or plain_text(rating.get("name"))
    verdict = verdict_for_name(name) if name else None
    if verdict is None:
        try:
            value = float(rating["ratingValue"])
            worst, best = float(rating.get("worstRating", 1)), float(rating.get("bestRating", 5))
        except (KeyError, TypeError, ValueError):
            value = None
        if value is not None:
            verdict = verdict_for_value(value, worst=worst, best=best)
            name = name or f"{value:g} of {worst:g} to {best:g}"
    if verdict is None:
        return f"unknown rating {name[:60]!r}: not in the rating table" if name else "reviewRating has no rating"
    return verdict, name


def _language(value: Any) -> str:
    if isinstance(value, dict):
        value = value.get("alternateName")
    text = value.strip() if isinstance(value, str) else ""
    return text.lower() if len(text) == 2 and text.isalpha() else ""


def _page(author: dict[str, Any]) -> tuple[str, str]:
    """(external_id, name) of the page of the claim's author: by its url, else its name."""
    name = plain_text(author.get("name")) or "Unknown author"
    url = _http(author.get("url"), most=200 - len(PAGE_PREFIX))
    slug = slugify(name)[:100]
    return PAGE_PREFIX + (url or slug or digest(name)), name


def _image_url(appearance: Any) -> str:
    """The URL of an appearance that is an image, or ""."""
    if isinstance(appearance, str):
        url, image = appearance, False
    elif isinstance(appearance, dict):
        url, image = appearance.get("contentUrl") or appearance.get("url"), _is(appearance, "ImageObject")
    else:
        return ""
    url = url.strip() if isinstance(url, str) else ""
    try:
        path = urlsplit(url).path
    except ValueError:  # a malformed URL (an unclosed IPv6 bracket): not an image anyone can load
        return ""
    return url if image or _IMAGE_FILE.search(path) else ""


def _images(item: dict[str, Any]) -> tuple[MediaInput, ...]:
    """The claim's appearances that are images, as the API's image media items (each URL once, at most 10)."""
    appearances = item.get("appearance")
    urls = dict.fromkeys(url for url in map(_image_url, [
        item.get("firstAppearance"), *(appearances if isinstance(appearances, list) else [appearances])]) if url)
    images = []
    for url in urls:
        try:
            images.append(MediaIn(kind=MediaKind.IMAGE, url=url).to_input())
        except ValidationError:  # not https, too long, not a URL: skipped, as a bad post URL is dropped
            continue
    return tuple(images[:MAX_ITEMS])


def rated_post(review: Any, *, now: datetime) -> RatedPost | str:
    """One ClaimReview as a rated post, or why it is refused."""
    if review is None:  # a DataFeedItem without its `item`
        return "is a DataFeedItem without an item: there is no ClaimReview in it"
    if not isinstance(review, dict) or not _is(review, "ClaimReview"):
        kind = review.get("@type") if isinstance(review, dict) else type(review).__name__
        return f"is not a ClaimReview (@type {str(kind)[:40]!r})"
    if "@context" in review and not _schema_org(review["@context"]):
        return f"@context {str(review['@context'])[:80]!r} is not schema.org"
    claim = plain_text(review.get("claimReviewed"))
    if not claim:
        return "claimReviewed is empty: there is no claim to import"
    url = _http(review.get("url"), most=2000)
    if not url:
        return "url is missing or not an http(s) URL: the rating needs its article as a source"
    author = _first(review.get("author"))
    organisation = plain_text(author.get("name"))
    if not organisation:
        return "author.name is missing: the fact-checking organisation is unknown"
    if len(organisation) > 200:
        return "author.name is longer than 200 characters"
    verdict = _verdict(_first(review.get("reviewRating")))
    if isinstance(verdict, str):
        return verdict
    item = _first(review.get("itemReviewed"))
    published_at = None
    if review.get("datePublished") is not None:
        published_at = parse_timestamp(review["datePublished"], what="datePublished", now=now)
        if isinstance(published_at, str):
            return published_at
    if item.get("datePublished") is not None:
        posted_at = parse_timestamp(item["datePublished"], what="itemReviewed.datePublished", now=now)
    else:
        posted_at = published_at or "itemReviewed.datePublished and datePublished are missing: when was it said?"
    if isinstance(posted_at, str):
        return posted_at
    page_id, page_name = _page(_first(item.get("author")))
    rationale = plain_text(review.get("reviewBody")) or plain_text(review.get("description"))
    rationale = rationale or f"Rated {verdict[1]} by {organisation}: {url}"
    if len(rationale) > MAX_RATIONALE:
        rationale = rationale[: MAX_RATIONALE - 1] + "…"
    problem = unstorable(claim, organisation, page_name, rationale)
    if problem:
        return problem
    key = "claimreview:" + digest(url, claim)
    identifier = item.get("identifier")
    if isinstance(identifier, dict):
        identifier = identifier.get("value")
    identifier = plain_text(identifier)
    flag = valid_flag({
        "idempotency_key": key,
        "source": "partner",
        "reason": f"imported from ClaimReview by {organisation}",
        # No "flagged_at": it is the import's time (the default), not the record's, and a second import of the
        # same record must be the same flag (factcheck.ingest.flag_fingerprint leaves a defaulted time out).
        "post": {
            # An identifier with "/" (a URL, say) cannot be a post's id (factcheck.flag_input.POST_ID).
            "external_id": identifier if identifier and "/" not in identifier else key,
            "url": _http(item.get("firstAppearance"), most=2000) or _http(_first(item.get("appearance")), most=2000)
            or _http(item.get("appearance"), most=2000),
            "text": claim, "language": _language(review.get("inLanguage")), "posted_at": posted_at.isoformat(),
            "page": {"external_id": page_id, "name": page_name},
        },
    }, now=now)
    if isinstance(flag, str):
        return flag
    images = _images(item)
    if images:  # after the fingerprint is taken (see the module's docstring)
        flag = replace(flag, post=replace(flag.post, media=images, media_type=images[0].kind))
    return RatedPost(flag=flag, rating=RatingInput(
        organisation=organisation, organisation_url=_http(author.get("url"), most=200), verdict=verdict[0],
        rationale=rationale, sources=[url], article_url=url, published_at=published_at, via="ClaimReview",
    ))


def read(stream: BinaryIO, *, now: datetime) -> Iterator[Record]:
    for number, element in enumerate(_elements(stream), start=1):
        for review in _reviews(element):
            yield number, rated_post(review, now=now)
