"""Convert PolitiFact's claims CSV into a schema.org ClaimReview DataFeed, for `import_posts --format claimreview`.

    python -m bench.politifact_claimreview politifact_claims.csv > politifact.claimreview.json

Columns: statement_url, rating, statement_text, author_name, author_url, date_of_statement,
fact_checker_name, fact_check_date, issues; dates like "August 30, 2024". Each row becomes the
ClaimReview PolitiFact publishes itself: url = statement_url, claimReviewed = statement_text,
reviewRating.alternateName = rating, author = PolitiFact, datePublished = fact_check_date,
itemReviewed.author = author_name/author_url, itemReviewed.datePublished = date_of_statement.
Streams row by row (no third-party data is kept in the repository; the file is read where it is).
A date that does not parse is written as it is, so the importer rejects that row and says why.
"""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Iterator
from datetime import datetime
from typing import IO, Any

POLITIFACT = {"@type": "Organization", "name": "PolitiFact", "url": "https://www.politifact.com"}


def iso_date(text: str) -> str:
    try:
        return datetime.strptime(text.strip(), "%B %d, %Y").date().isoformat()
    except ValueError:
        return text


def claim_review(row: dict[str, str]) -> dict[str, Any]:
    return {
        "@type": "ClaimReview",
        "url": row["statement_url"],
        "claimReviewed": row["statement_text"],
        "datePublished": iso_date(row["fact_check_date"]),
        "author": POLITIFACT,
        "reviewRating": {"@type": "Rating", "alternateName": row["rating"]},
        "itemReviewed": {
            "@type": "Claim",
            "author": {"@type": "Person", "name": row["author_name"], "url": row["author_url"]},
            "datePublished": iso_date(row["date_of_statement"]),
        },
    }


def convert(rows: Iterator[dict[str, str]], out: IO[str]) -> int:
    out.write('{"@context": "https://schema.org", "@type": "DataFeed", "dataFeedElement": [\n')
    n = 0
    for n, row in enumerate(rows, start=1):
        out.write(("" if n == 1 else ",\n") + json.dumps(claim_review(row), ensure_ascii=False))
    out.write("\n]}\n")
    return n


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        sys.exit(__doc__)
    with open(argv[0], newline="", encoding="utf-8") as source:
        n = convert(csv.DictReader(source), sys.stdout)
    print(f"{n} ClaimReviews", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
