"""What the readers hand the runner: records, rejections, file problems, and the text rules they share.

A reader yields `(where, item)`: `where` is the record's line (its first line, for a CSV record
over several lines) or, for ClaimReview, its item number; `item` is a FlagInput, a RatedPost, or
the reason the record is refused (a str). A file that cannot be read at all raises FileProblem.
"""

from __future__ import annotations

import codecs
import hashlib
import html
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from typing import BinaryIO, Protocol

from core.api_errors import NUL_MESSAGE, SURROGATE_MESSAGE
from factcheck.flag_input import FieldError, FlagIn, validate_flag
from factcheck.ingest import FlagInput
from factcheck.timestamps import timestamp_problem


class FileProblem(Exception):
    """The file cannot be imported at all (unreadable, not UTF-8, broken structure): nothing is written."""


@dataclass(frozen=True)
class RatingInput:
    """An organisation's published rating of an imported claim."""

    organisation: str
    organisation_url: str
    verdict: str
    rationale: str
    sources: list[str]
    article_url: str
    published_at: datetime | None
    via: str  # where it came from, for the reason of a changed rating: "ClaimReview", "LIAR"


@dataclass(frozen=True)
class RatedPost:
    """A claim that arrives already rated: its post as a partner flag, and the rating."""

    flag: FlagInput
    rating: RatingInput


Item = FlagInput | RatedPost | str
Record = tuple[int, Item]


class Reader(Protocol):
    """A format's module: `UNIT` names what `where` counts; `check` reads the whole file, `read` yields records."""

    UNIT: str

    def check(self, stream: BinaryIO) -> None: ...

    def read(self, stream: BinaryIO, *, now: datetime) -> Iterator[Record]: ...


def decoded_lines(stream: BinaryIO) -> Iterator[str]:
    """The file's lines as text, endings kept (as the csv module wants them), a leading BOM dropped.

    Raises FileProblem at the first line that is not UTF-8, naming it.
    """
    for number, raw in enumerate(stream, start=1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise FileProblem(f"line {number} is not UTF-8 text ({exc.reason} at byte {exc.start + 1})") from None
        yield line.removeprefix("\ufeff") if number == 1 else line


def check_utf8(stream: BinaryIO, *, chunk: int = 1 << 16) -> None:
    """Decode the whole file in fixed chunks (memory stays flat whatever its lines), raising FileProblem
    with the line of the first bad byte."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="strict")
    line = 1
    while True:
        data = stream.read(chunk)
        try:
            decoder.decode(data, final=not data)
        except UnicodeDecodeError as exc:
            line += data.count(b"\n", 0, max(exc.start, 0))
            raise FileProblem(f"line {line} is not UTF-8 text ({exc.reason})") from None
        if not data:
            return
        line += data.count(b"\n")


def flag_problems(errors: list[FieldError], *, names: Callable[[str], str] = str) -> str:
    """The API's field errors as one rejection reason: `post.posted_at: Field required; ...`."""
    return "; ".join(f"{names(e.field)}: {e.message}" if e.field else e.message for e in errors)


def valid_flag(
    data: dict, *, now: datetime, names: Callable[[str], str] = str, clock_times: bool = False
) -> FlagInput | str:
    """Validate one flag exactly as POST /api/v1/flags validates an item; the input or the reason.

    `clock_times`: the record has no flagging (or posting) time, so the import's clock gave them; they are
    left out of the flag's fingerprint, so that importing the same record again is the same flag."""
    checked = validate_flag(data)
    if not isinstance(checked, FlagIn):
        return flag_problems(checked, names=names)
    return checked.to_input(now=now, clock_times=clock_times)


def unstorable(*texts: str) -> str | None:
    """Why these texts cannot be stored (the API's own messages), or None."""
    for text in texts:
        if "\x00" in text:
            return NUL_MESSAGE
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return SURROGATE_MESSAGE
    return None


# Each written so that a file's field is read in time linear in its length: the plain patterns were tried again
# from every `<` (`<[^>]*>`) or every `<script` (`.*?</\1`) to the text's end when nothing closed it, 5-6 s for an
# 80,000-character field and minutes for a megabyte, and an import reads fields of any length.
_OPENING = re.compile(r"<(script|style)\b", re.IGNORECASE)
_SCRIPT = re.compile(r"<(script|style)\b.*?</\1\s*>", re.IGNORECASE | re.DOTALL)
# A tag, or (no `>` after it: `closed` is None) the rest of the text after a `<`, taken whole and left as it is.
_TAG = re.compile(r"<[^>]*+(?P<closed>>)?")
_SPACE = re.compile(r"\s+")


def plain_text(value: object) -> str:
    """Text published as HTML as plain text: scripts and tags dropped, entities unescaped, spaces collapsed.

    What is stored is text; pages escape it when they show it, so unescaped `<` is harmless.
    """
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return ""
    text = _TAG.sub(_tag_dropped, _without_scripts(str(value)))
    return _SPACE.sub(" ", html.unescape(text)).strip()


def _tag_dropped(tag: re.Match) -> str:
    """A tag as a space; a `<` that nothing closes (the rest of the text) as it is."""
    return " " if tag["closed"] is not None else tag[0]


def _without_scripts(text: str) -> str:
    """`text` with each script and style element, from its opening to its closing tag, as a space. Once an opening
    has no closing tag after it, no later opening of that name has one either: each name is searched to the text's
    end at most once."""
    parts, kept_from, at, unclosed = [], 0, 0, set()
    while (opening := _OPENING.search(text, at)) is not None:
        name = opening[1].lower()
        element = None if name in unclosed else _SCRIPT.match(text, opening.start())
        if element is None:
            unclosed.add(name)
            at = opening.start() + 1
            continue
        parts += [text[kept_from:element.start()], " "]
        kept_from = at = element.end()
    return "".join(parts) + text[kept_from:]


def parse_timestamp(value: object, *, what: str, now: datetime) -> datetime | str:
    """An ISO 8601 date (midnight UTC) or datetime (UTC when it names no offset), checked as the API checks.

    Returns the aware datetime, or the reason it is refused, naming `what`.
    """
    if value is None or isinstance(value, str) and not value.strip():
        return f"{what} is missing"
    if not isinstance(value, str):  # a number (20250101) or an object: said as what it is, not as missing
        return f"{what} {str(value)[:40]!r} is not an ISO 8601 date such as 2024-08-30 or 2024-08-30T12:00:00Z"
    text = value.strip()
    try:
        if len(text) == 10:  # a date alone: its midnight, UTC
            parsed = datetime.combine(date.fromisoformat(text), time(), UTC)
        else:
            parsed = datetime.fromisoformat(text)
    except ValueError:
        return f"{what} {text[:40]!r} is not an ISO 8601 date such as 2024-08-30 or 2024-08-30T12:00:00Z"
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    problem = timestamp_problem(parsed, now=now)
    return f"{what} {text[:40]} {problem}" if problem else parsed


def digest(*parts: str) -> str:
    """A deterministic short id for derived keys (the same record always gets the same key)."""
    return hashlib.sha1("\n".join(parts).encode("utf-8", "surrogatepass")).hexdigest()
