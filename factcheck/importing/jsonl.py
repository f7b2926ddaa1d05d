"""`--format jsonl`: one flag per line, the JSON object POST /api/v1/flags takes for one flag.

Each line is read and refused as the API reads and refuses a request body (size, nesting,
JSON, NUL and unpaired surrogates, with the API's messages), then validated by the API's own
schema (factcheck.flag_input). Only text that is not UTF-8 fails the whole file; a line that is
not valid JSON is one rejection among the rest. Blank lines are skipped.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from typing import BinaryIO

from django.conf import settings

from core.api_errors import MAX_JSON_DEPTH, NUL_MESSAGE, SURROGATE_MESSAGE, holds_nul, nesting_depth
from factcheck.importing.records import Record, check_utf8, valid_flag

UNIT = "line"
CHUNK = 1 << 16


def check(stream: BinaryIO) -> None:
    check_utf8(stream)


def _lines(stream: BinaryIO, *, most: int) -> Iterator[tuple[int, bytes | None]]:
    """(number, line) with None for a line longer than `most` bytes, which is skipped unread.

    A line is read at most `most` bytes at a time, so one huge line cannot fill the memory.
    """
    number = 0
    while True:
        raw = stream.readline(most + 1)
        if not raw:
            return
        number += 1
        if len(raw) > most and not raw.endswith(b"\n"):
            while raw and not raw.endswith(b"\n"):
                raw = stream.readline(CHUNK)
            yield number, None
            continue
        yield number, raw


def parse_line(raw: bytes, *, now: datetime):
    """One line's flag, or why it is refused (the API's messages for the same body)."""
    if nesting_depth(raw, most=MAX_JSON_DEPTH) > MAX_JSON_DEPTH:
        return f"The JSON is nested more than {MAX_JSON_DEPTH} levels deep."
    try:
        data = json.loads(raw)
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, an integer over 4,300 digits
        return f"not valid JSON: {exc}"
    if not isinstance(data, dict):
        return "a flag must be a JSON object"
    try:
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return SURROGATE_MESSAGE
    if holds_nul(raw):
        return NUL_MESSAGE
    return valid_flag(data, now=now)


def read(stream: BinaryIO, *, now: datetime) -> Iterator[Record]:
    most = settings.API_MAX_BODY_BYTES
    for number, raw in _lines(stream, most=most):
        if raw is None:
            yield number, f"the line is longer than {most:,} bytes, the API's limit for one request"
            continue
        raw = raw.removeprefix(b"\xef\xbb\xbf") if number == 1 else raw
        if raw.strip():
            yield number, parse_line(raw, now=now)
