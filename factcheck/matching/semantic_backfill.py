"""The reconciler of semantic matching: embeds the posts that were matched without an embedding by the current
model (while FACTDESK_SEMANTIC was off, before semantic matching existed, or by an older encoder), and records
their semantic pairs, as the matching job would have (factcheck.matching.semantic_step.match_semantically).

A post whose job was lost is not this module's: it is not matched yet (`matched_at` NULL), and match_unmatched
runs its job again, which embeds it. What is left is found without a scan of every post: the posts are walked
in id order, SCAN a run, from where the last run stopped (SemanticBackfill, one row per model), so each run is a
range of the primary key and a lookup of those posts' embeddings. Once it has caught up, a run looks over the
posts that arrived in the last minute, which their jobs embedded already. The walk never passes a post that is
not matched yet: if semantic matching were off when its job runs at last, the walk must still come to it.
"""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.utils import timezone

from core.reconciling import past_grace, warn_redriven
from factcheck import semantic
from factcheck.matching.matcher import BATCH
from factcheck.matching.semantic_step import embed_and_match
from factcheck.models import Post
from factcheck.models_semantic import SemanticBackfill

# Posts looked over per run at most: at ~1.5 ms a text, embedding them all is a few seconds of a worker.
SCAN = 2000


def embed_missed_posts(*, limit: int = SCAN, now: datetime | None = None) -> int:
    """Embed the next `limit` matched posts that have no embedding by the current model, and record their semantic
    pairs, BATCH at a time (each embedded outside its transaction); returns how many were embedded, and warns of
    those matched a while ago once (core.reconciling), with how long the oldest had waited."""
    if not (settings.FACTDESK_MATCHING and settings.FACTDESK_SEMANTIC):
        return 0
    now = now or timezone.now()
    start = (SemanticBackfill.objects.filter(model=semantic.MODEL_NAME)
             .values_list("through_post", flat=True).first()) or 0
    walked: dict[int, datetime] = {}
    for pk, matched_at in (Post.objects.filter(id__gt=start).order_by("id")
                           .values_list("id", "matched_at")[:limit]):
        if matched_at is None:
            break  # its job, or match_unmatched, embeds it (see the module's docstring)
        walked[pk] = matched_at
    embedded: list[int] = []
    ids = list(walked)
    for first in range(0, len(ids), BATCH):
        embedded += embed_and_match(ids[first : first + BATCH], now=now).embedded_ids
    if ids:
        progress, _ = SemanticBackfill.objects.get_or_create(model=semantic.MODEL_NAME,
                                                             defaults={"updated_at": now})
        # Forward only: a run that started behind another one does not take the walk back.
        SemanticBackfill.objects.filter(pk=progress.pk, through_post__lt=ids[-1]).update(
            through_post=ids[-1], updated_at=now)
    # One its own job was embedding meanwhile (its matching commits, then it embeds) is not counted.
    after = settings.FACTDESK_RECONCILE_AFTER_SECONDS
    warn_redriven(past_grace(f"posts still without an embedding {after} s after they were matched",
                             [walked[pk] for pk in embedded], now=now, grace=after),
                  now=now, why="matched while FACTDESK_SEMANTIC was off or by another encoder, or their jobs were lost")
    return len(embedded)
