"""CSV downloads of list pages: streamed row by row, every cell safe to open in a spreadsheet.

A cell that starts with `=`, `+`, `-`, `@`, a tab or a carriage return is read by Excel, LibreOffice and
Google Sheets as a formula (CSV injection, OWASP): a post's text or an owner's statement could then run
one in the reader's spreadsheet. Such a cell gets a leading apostrophe, which the spreadsheet shows as
text, as OWASP advises; every cell is quoted. A number is written as it is (a negative figure is a number,
not a formula). `safe_cell` is the one rule: the dashboard's CSV files (reports.charts) use it too.
The page's own view decides who may download and which rows: the CSV of a page is that page's rows, with
its filters, unpaged.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from decimal import Decimal

from django.http import HttpResponse, StreamingHttpResponse
from django.utils import timezone

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
# Excel reads a UTF-8 file as such only when it starts with a byte-order mark.
BOM = "\ufeff"


def safe_cell(value: object) -> str:
    """The value as CSV text that no spreadsheet evaluates."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, datetime):
        return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    if isinstance(value, int | float | Decimal):
        return str(value)  # "-3" is a figure: escaping it would turn it into text in the spreadsheet
    text = str(value)
    return f"'{text}" if text.startswith(FORMULA_STARTS) else text


class _Line:
    """A file-like object whose write() returns the line, so csv.writer can feed a streaming response."""

    def write(self, value: str) -> str:
        return value


def csv_rows(header: Sequence[str], rows: Iterable[Sequence[object]]) -> Iterable[str]:
    writer = csv.writer(_Line(), quoting=csv.QUOTE_ALL)
    yield BOM + writer.writerow(header)
    for row in rows:
        yield writer.writerow([safe_cell(value) for value in row])


def csv_file(text: str, *, filename: str) -> HttpResponse:
    """CSV text written whole (the dashboard's charts, the DSA report) as an attachment named `filename`, with the
    byte-order mark every download starts with."""
    response = HttpResponse(BOM + text, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def csv_download(*, name: str, header: Sequence[str], rows: Iterable[Sequence[object]]) -> StreamingHttpResponse:
    """A streamed CSV attachment `name-YYYY-MM-DD.csv`; `rows` is read lazily, one row at a time."""
    response = StreamingHttpResponse(csv_rows(header, rows), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{name}-{timezone.now().date().isoformat()}.csv"'
    response["Cache-Control"] = "private, no-store"
    return response

