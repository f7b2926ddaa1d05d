"""The semantic step of the matching job (factcheck.matching.matcher.match_new_posts) and of its reconciler
(factcheck.matching.semantic_backfill): posts the lexical step left unlinked are embedded outside any transaction,
then their semantic pairs recorded under their locks, always as suggestions (factcheck.matching.semantic)."""

from __future__ import annotations

from datetime import datetime
from typing import NamedTuple

from django.db import transaction
from django.utils import timezone

from factcheck.matching.recording import new_match, record_matches
from factcheck.matching.semantic import (
    Embedded,
    detect_copy_languages,
    embed_posts,
    semantic_pairs,
    store_detected_languages,
    store_embeddings,
)
from factcheck.models import MatchState, Post


class SemanticStep(NamedTuple):
    embedded: int  # posts embedded
    suggested: int  # semantic pairs recorded
    embedded_ids: tuple[int, ...] = ()


def embed_and_match(post_ids: list[int], *, now: datetime | None = None) -> SemanticStep:
    """Embed these posts (those with no embedding by the current model, not linked copies) outside any transaction,
    so that no lock is held while the encoder runs, then record their semantic pairs under their locks (id order,
    as the matching job takes them)."""
    found = embed_posts(post_ids=post_ids)
    languages = detect_copy_languages(post_ids=post_ids)
    if not found and not languages:
        return SemanticStep(0, 0)
    with transaction.atomic(durable=True):
        locked = list(Post.objects.select_for_update(no_key=True, of=("self",))
                      .filter(id__in_array=sorted({e.post_id for e in found} | set(languages)))
                      .order_by("id").values_list("id", flat=True))
        store_detected_languages({pk: languages[pk] for pk in locked if pk in languages})
        return SemanticStep(len(found), match_semantically(found, post_ids=locked, now=now) if found else 0,
                            tuple(e.post_id for e in found))


def match_semantically(embedded: list[Embedded], *, post_ids: list[int], now: datetime | None = None,
                       system: str = "matching") -> int:
    """Store the embeddings of these posts (computed by embed_posts, before the transaction) and record their
    semantic pairs, always as suggestions; returns how many. In the caller's transaction, which holds the locks
    of `post_ids` (those of `embedded` outside it are left to the run that locks them)."""
    now, locked = now or timezone.now(), set(post_ids)
    # Not the posts the lexical step just linked: a copy is its claim's, and thousands of a viral claim's copies
    # would fill the candidates of every retelling of it.
    linked = set(Post.objects.filter(id__in_array=sorted(locked), duplicate_of__isnull=False)
                 .values_list("id", flat=True))
    stored = store_embeddings([e for e in embedded if e.post_id in locked and e.post_id not in linked], now=now)
    pairs = semantic_pairs(stored)
    record_matches([new_match(post_id, root_id, judgement, MatchState.SUGGESTED, now)
                     for post_id, root_id, judgement in pairs], system=system)
    return len(pairs)
