"""Job entry points of the review side: thin, idempotent, safe to run twice."""

from factcheck import drafts
from factcheck.claims import expire_claims as _expire_claims
from factcheck.matching import matcher, semantic_backfill, sweep
from factcheck.queue import refresh_priorities as _refresh_priorities


def expire_claims() -> int:
    return _expire_claims()


def refresh_priorities() -> int:
    return _refresh_priorities()


def match_new_posts(post_ids: list[int]) -> int:
    """Match an ingest batch's new posts to every post (grouping copies of waiting claims)."""
    result = matcher.match_new_posts(post_ids=post_ids)
    return len(result.linked) + len(result.grouped)


def match_unmatched() -> int:
    """The reconciler of matching: posts whose job was lost, or that arrived while matching was off."""
    return matcher.match_unmatched()


def embed_missed_posts() -> int:
    """The reconciler of semantic matching: posts matched without an embedding (semantic matching was off)."""
    return semantic_backfill.embed_missed_posts()


def sweep_rated_media(post_ids: list[int]) -> int:
    """A rating reaches the posts that already carry its post's images (linked if altered, else suggested)."""
    result = sweep.sweep_rated_media(post_ids=post_ids)
    return len(result.linked) + result.suggested


def reconcile_media_sweeps() -> int:
    """The reconciler of the media sweep: rated posts whose sweep's job was lost, or whose worker died."""
    return sweep.reconcile_media_sweeps()


def delete_forgotten_drafts() -> int:
    """Daily: rating drafts nobody saved for FACTDESK_RATING_DRAFT_DAYS are deleted."""
    return drafts.delete_forgotten_drafts()
