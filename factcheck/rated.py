"""The "Rated posts" list's reads beyond factcheck.selectors.rated_posts: which ratings are under appeal,
and the list's rows as CSV.

A rating is under appeal while an appeal against it is open (a dispute or correction naming it, not a
matched copy's appeal, which is against the match): `open_appeals_against`, which factcheck.ratings applies
before a re-rating too.
Appeals belong to the decision side; they are read through the rating's reverse relation `appeals` and its
manager's `open()`, the decision side's one definition of an open appeal, never imported (the layering
contract).
"""

from __future__ import annotations

from collections.abc import Iterator

from django.db.models import Exists, OuterRef, QuerySet

from factcheck.claimreview import PUBLISHED_VERDICTS, public_url
from factcheck.models import Rating

CSV_HEADER = ("rating id", "post", "page", "verdict", "rated at (UTC)", "rated by", "under appeal", "changed",
              "article", "public page", "post text")
CSV_CHUNK = 1000


def open_appeals_against(rating: Rating | OuterRef) -> QuerySet:
    """The open appeals against a rating (a Rating, or `OuterRef` to one in a subquery): the one home of
    "under appeal", for the list's mark and for factcheck.ratings' refusal to re-rate. Not a matched copy's
    appeal, which names its matched action: that one is against the match, not this rating."""
    appeals = Rating._meta.get_field("appeals").related_model._default_manager
    return appeals.open().filter(rating=rating, action__isnull=True)


def with_appeal_state(ratings: QuerySet[Rating], *, under_appeal_only: bool = False) -> QuerySet[Rating]:
    """The ratings, each with `under_appeal` (one EXISTS per row, on the appeals' rating index); only
    those under appeal when `under_appeal_only`."""
    ratings = ratings.annotate(under_appeal=Exists(open_appeals_against(OuterRef("pk"))))
    return ratings.filter(under_appeal=True) if under_appeal_only else ratings


def csv_rows(ratings: QuerySet[Rating], *, claim_path: str) -> Iterator[tuple[object, ...]]:
    """The list's rows for its CSV, read in chunks while the download is written. `claim_path`: the public
    page's path with the marker `{id}`."""
    for rating in ratings.iterator(chunk_size=CSV_CHUNK):
        post = rating.post
        yield (rating.pk, post.external_id, post.page.name, rating.get_verdict_display(), rating.created_at,
               rating.reviewer.get_username(), rating.under_appeal, bool(rating.change_reason), rating.article_url,
               public_url(claim_path.replace("{id}", str(rating.pk))) if rating.verdict in PUBLISHED_VERDICTS else "",
               post.text)
