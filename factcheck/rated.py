"""The "Rated posts" list's reads beyond factcheck.selectors.rated_posts: which ratings are under appeal,
and the list's rows as CSV.

A rating is under appeal while an appeal against it is open (a dispute or correction naming it, not a
matched copy's appeal, which is against the match): factcheck.ratings.open_appeals_against, the rule a
re-rating is refused by too.
Appeals belong to the decision side; they are read through the rating's reverse relation `appeals` and its
manager's `open()`, the decision side's one definition of an open appeal, never imported (the layering
contract).
"""

from __future__ import annotations

from collections.abc import Iterator

from django.db.models import Exists, OuterRef, QuerySet

from factcheck.claimreview import PUBLISHED_VERDICTS, claim_page_url
from factcheck.models import Rating
from factcheck.ratings import open_appeals_against as open_appeals_against

CSV_HEADER = ("rating id", "post", "page", "verdict", "rated at (UTC)", "rated by", "under appeal", "changed",
              "article", "public page", "post text")
CSV_CHUNK = 1000


def with_appeal_state(ratings: QuerySet[Rating], *, under_appeal_only: bool = False) -> QuerySet[Rating]:
    """The ratings, each with `under_appeal` (one EXISTS per row, on the appeals' rating index); only
    those under appeal when `under_appeal_only`."""
    ratings = ratings.annotate(under_appeal=Exists(open_appeals_against(OuterRef("pk"))))
    return ratings.filter(under_appeal=True) if under_appeal_only else ratings


def csv_rows(ratings: QuerySet[Rating]) -> Iterator[tuple[object, ...]]:
    """The list's rows for its CSV, read in chunks while the download is written."""
    for rating in ratings.iterator(chunk_size=CSV_CHUNK):
        post = rating.post
        yield (rating.pk, post.external_id, post.page.name, rating.get_verdict_display(), rating.created_at,
               rating.reviewer.get_username(), rating.under_appeal, bool(rating.change_reason), rating.article_url,
               claim_page_url(rating) if rating.verdict in PUBLISHED_VERDICTS else "",
               post.text)
