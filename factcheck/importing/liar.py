"""`--format liar`: the LIAR benchmark's TSV (Wang, 2017): PolitiFact statements with their labels.

14 tab-separated columns, no header: id, label, statement, subjects, speaker, speaker's job,
state, party, five counts of the speaker's earlier labels, context. No quoting: quotes are part
of the statement. Each row is a post rated by PolitiFact:

- the post: `liar:<id>`, the statement as its text (tags dropped, entities unescaped), English,
  US; its page is the speaker's (`liar-speaker:<speaker>`), not marked a politician's page: the
  platform, not a dataset, says which pages are politicians';
- posted at the time of the import: LIAR carries no dates;
- the rating: PolitiFact's (https://www.politifact.com), its label mapped by
  factcheck.importing.verdicts (true -> true; mostly-true, half-true, barely-true -> partly_false;
  false, pants-fire -> false), with PolitiFact's site as the source: the dataset has no URLs.

A row with another number of columns, an unknown label or no statement is a rejection.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import BinaryIO

from factcheck.importing.records import (
    RatedPost,
    RatingInput,
    Record,
    check_utf8,
    decoded_lines,
    plain_text,
    unstorable,
    valid_flag,
)
from factcheck.importing.verdicts import verdict_for_name

UNIT = "line"
COLUMNS = 14
LABELS = ("pants-fire", "false", "barely-true", "half-true", "mostly-true", "true")
ORGANISATION = "PolitiFact"
ORGANISATION_URL = "https://www.politifact.com"
SOURCE = "https://www.politifact.com/"


def check(stream: BinaryIO) -> None:
    check_utf8(stream)


def _rated_post(cells: list[str], *, now: datetime) -> RatedPost | str:
    liar_id, label, statement, speaker, context = (cells[0].strip(), cells[1].strip(), plain_text(cells[2]),
                                                   cells[4].strip(), plain_text(cells[13]))
    if label not in LABELS:
        return f"unknown LIAR label {label[:40]!r}: the labels are {', '.join(LABELS)}"
    if not liar_id:
        return "no id in the first column"
    if not statement:
        return "no statement in the third column"
    problem = unstorable(*cells)
    if problem:
        return problem
    speaker = speaker or "unknown"
    flag = valid_flag({
        "idempotency_key": f"liar:{liar_id}",
        "source": "partner",
        "reason": f"imported from the LIAR benchmark, rated by {ORGANISATION}",
        "flagged_at": now.isoformat(),
        "post": {
            "external_id": f"liar:{liar_id}", "text": statement, "language": "en", "country": "US",
            "posted_at": now.isoformat(),
            "page": {"external_id": f"liar-speaker:{speaker}", "name": speaker.replace("-", " ").title()},
        },
    }, now=now, clock_times=True)  # LIAR has no dates: both are the import's clock
    if isinstance(flag, str):
        return flag
    said = f"; said in: {context}" if context else ""
    return RatedPost(flag=flag, rating=RatingInput(
        organisation=ORGANISATION, organisation_url=ORGANISATION_URL,
        verdict=verdict_for_name(label) or "",
        rationale=f"Rated {label} by {ORGANISATION} (LIAR benchmark, statement {liar_id}{said}).",
        sources=[SOURCE], article_url=SOURCE, published_at=None, via="LIAR",
    ))


def read(stream: BinaryIO, *, now: datetime) -> Iterator[Record]:
    # Split by hand, not with the csv module: with no quoting a row is its tabs, and the csv module
    # would end the import with a traceback at a field over 128 KiB or a carriage return inside a row.
    for line, text in enumerate(decoded_lines(stream), start=1):
        cells = text.removesuffix("\n").removesuffix("\r").split("\t")
        if cells == [""]:
            continue
        if len(cells) != COLUMNS:
            yield line, f"has {len(cells)} column(s); a LIAR row has {COLUMNS}"
            continue
        yield line, _rated_post(cells, now=now)
