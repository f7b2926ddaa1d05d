"""`manage.py export_claimreview --since DATE [--out FILE]`: published ratings as a schema.org DataFeed: each
rating's ClaimReview, with its MediaReview for an `altered` rating of a post with media (factcheck.claimreview)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from datetime import datetime, time
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db.models.functions import Coalesce
from django.utils import timezone

from core.files import whole_file
from core.replicas import reads_from_replica
from factcheck.claimreview import published_reviews, write_data_feed
from moderation.management.commands._dates import parse_past_day
from moderation.selectors import published_ratings


class Command(BaseCommand):
    help = "Write the published ratings since a date as a schema.org DataFeed of ClaimReview (JSON-LD)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--since", required=True, type=str, help="YYYY-MM-DD: ratings published on or after it.")
        parser.add_argument("--out", type=Path, help="File to write; standard output when absent.")

    @reads_from_replica
    def handle(self, *args, since: str, out: Path | None, **options) -> None:
        start = timezone.make_aware(datetime.combine(parse_past_day(since, option="--since"), time.min))
        ratings = (
            published_ratings()
            .annotate(published=Coalesce("published_at", "created_at"))
            .filter(published__gte=start)
            .order_by("published", "id")
        )
        media_reviews = 0

        def reviews() -> Iterator[list[dict[str, Any]]]:
            nonlocal media_reviews
            # The posts' media come in one query per chunk; only an altered rating's are read.
            for rating in ratings.prefetch_related("post__media").iterator(chunk_size=2000):
                published = published_reviews(rating, post=rating.post)
                media_reviews += len(published) - 1
                yield published

        if out is None:
            count = write_data_feed(reviews(), out=self.stdout, created=timezone.now())
        else:
            if out.is_dir():
                raise CommandError(f"Cannot write {out}: it is a directory; name the file to write.")
            try:
                with whole_file(out) as handle:  # readers never see half a feed
                    count = write_data_feed(reviews(), out=handle, created=timezone.now())
            except OSError as exc:
                raise CommandError(f"Cannot write {out}: {exc.strerror}.") from None
        summary = f"Exported {count} ClaimReview(s) published since {since}, with {media_reviews} MediaReview(s).\n"
        (sys.stderr if out is None else self.stdout).write(summary)
