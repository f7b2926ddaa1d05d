"""`--format csv`: one post and its flag per row, under a header naming the columns.

The columns (docs/importing.md; an example in docs/examples/posts.csv) are the API's flag
fields, the post's and its page's flattened. Required: source, external_id, posted_at,
page_external_id, page_name. Optional: idempotency_key, category (what the flag reports:
`misinformation` when absent, or a report of harm), reason, flagged_at, url, text, language, country,
media_type, topic, views, shares, page_is_politician. Any other column refuses the file: a
misspelt column would otherwise drop its data without a word. An empty cell is an absent field
(the API's default applies); an empty idempotency_key is derived from the row, so re-importing the
same row finds it again. Each row becomes the JSON object the API takes and is validated by the
same schema, its errors naming the CSV column.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator
from datetime import datetime
from typing import Any, BinaryIO

from factcheck.importing.records import FileProblem, Record, decoded_lines, digest, unstorable, valid_flag

UNIT = "line"
# Column -> where it goes in the API's flag object.
COLUMNS: dict[str, tuple[str, ...]] = {
    "idempotency_key": ("idempotency_key",),
    "source": ("source",),
    "category": ("category",),
    "reason": ("reason",),
    "flagged_at": ("flagged_at",),
    "external_id": ("post", "external_id"),
    "url": ("post", "url"),
    "text": ("post", "text"),
    "language": ("post", "language"),
    "country": ("post", "country"),
    "media_type": ("post", "media_type"),
    "topic": ("post", "topic"),
    "posted_at": ("post", "posted_at"),
    "views": ("post", "views"),
    "shares": ("post", "shares"),
    "page_external_id": ("post", "page", "external_id"),
    "page_name": ("post", "page", "name"),
    "page_is_politician": ("post", "page", "is_politician"),
}
REQUIRED = ("source", "external_id", "posted_at", "page_external_id", "page_name")
# An API field error ("post.page.name") names its column ("page_name").
_COLUMN_OF = {".".join(path): column for column, path in COLUMNS.items()}
_INTEGER = re.compile(r"^\s*[+-]?\d+\s*$")
_BOOLEANS = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}


def _rows(stream: BinaryIO) -> Iterator[tuple[int, list[str]]]:
    """(first line, cells) of each record; strict, so a quote left open is a broken file."""
    reader = csv.reader(decoded_lines(stream), strict=True)
    line = 1
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise FileProblem(f"line {line}: {_what_broke(exc)}") from None
        if cells:  # a blank line is no record
            yield line, cells
        line = reader.line_num + 1


def _what_broke(exc: csv.Error) -> str:
    """The csv module's error as the person with the file can act on it."""
    said = str(exc)
    if "field larger than field limit" in said:
        return f"a cell is longer than {csv.field_size_limit():,} characters, more than any field of a flag can hold"
    if "new-line character seen in unquoted field" in said:
        return ("a line ends with a carriage return alone (an old Mac \"CSV (Macintosh)\" file?): save it with "
                "Windows or Unix line endings")
    return f"the CSV is broken ({said}); is the file cut short?"


def _header(rows: Iterator[tuple[int, list[str]]]) -> list[str]:
    first = next(rows, None)
    if first is None:
        raise FileProblem("the file is empty: a CSV import needs a header line")
    header = [cell.strip() for cell in first[1]]
    missing = [c for c in REQUIRED if c not in header]
    unknown = [c for c in header if c not in COLUMNS]
    repeated = sorted({c for c in header if header.count(c) > 1})
    problems = []
    if missing:
        problems.append(f"missing required column(s): {', '.join(missing)}")
    if unknown:
        problems.append(f"unknown column(s): {', '.join(unknown)} (the columns are: {', '.join(COLUMNS)})")
    if repeated:
        problems.append(f"repeated column(s): {', '.join(repeated)}")
    if problems:
        raise FileProblem("the header is not an import header: " + "; ".join(problems))
    return header


def check(stream: BinaryIO) -> None:
    rows = _rows(stream)
    _header(rows)
    for _ in rows:
        pass


def _value(column: str, cell: str) -> Any:
    if column in ("views", "shares") and _INTEGER.match(cell):
        try:
            return int(cell)
        except ValueError:  # longer than Python converts (4,300 digits): the schema refuses the text
            return cell
    if column == "page_is_politician":
        # Anything else stays text, and the API's schema refuses it with its own message.
        return _BOOLEANS.get(cell.strip().lower(), cell)
    return cell


def flag_object(header: list[str], cells: list[str]) -> dict[str, Any]:
    """The row as the API's flag object; empty cells are left out, so the API's defaults apply."""
    flag: dict[str, Any] = {"post": {"page": {}}}
    for column, cell in zip(header, cells, strict=True):
        if cell == "":
            continue
        *parents, field = COLUMNS[column]
        target = flag
        for parent in parents:
            target = target[parent]
        target[field] = _value(column, cell)
    if "idempotency_key" not in flag:
        flag["idempotency_key"] = "csv:" + digest(*cells)
    return flag


def read(stream: BinaryIO, *, now: datetime) -> Iterator[Record]:
    rows = _rows(stream)
    header = _header(rows)
    for line, cells in rows:
        if len(cells) != len(header):
            yield line, f"has {len(cells)} field(s); the header has {len(header)}"
            continue
        problem = unstorable(*cells)
        if problem:
            yield line, problem
            continue
        yield line, valid_flag(flag_object(header, cells), now=now, names=lambda f: _COLUMN_OF.get(f, f))
