"""Conflicting verdicts: the one home of what a conflict is, the reads of an organisation's conflicts and their
count, and marking a conflict's pair "not the same claim" (PRODUCT.md, "Same claim, other words, other
languages").

A conflict is a Match that is not rejected (suggested, auto or confirmed; found by any method) whose two posts
both have a current rating (`Rating.is_current`), made by two different organisations, whose verdicts disagree.
In practice the pair is a suggestion: a linked copy rated on its own leaves its group first
(factcheck.ratings.record_rating unlinks it), and confirming refuses two rated posts; the rule reads every
unrejected state all the same, so a pair that did stay linked would show.

Which verdicts disagree: their places on the truth scale our ClaimReview publishes (factcheck.claimreview
TRUTH_SCALE: 1 False and Altered, 2 Partly false, 3 Missing context, 4 True) are two or more steps apart. So
False or Altered against Missing context or True, and Partly false against True: one organisation says the claim
is false where the other says it is accurate, or at worst lacks context. Neighbours on the scale (False against
Partly false, Missing context against True) are a difference of degree a reader of both fact-checks would not
call a contradiction, and would bury the contradictions under them. Satire and Not eligible disagree with
nothing: Satire judges the post (the same words are a joke on one page and a lie on another) and Not eligible is
no judgement of the claim at all.

Each side of a conflict is its organisation's to resolve: re-rate its post (the verdicts then agree, and the
conflict is gone) or mark the pair "not the same claim" (`mark_not_same_claim`: rejected, audited, never
suggested again), which a fact-checker of either organisation may do, and nobody else.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from functools import reduce
from operator import or_

from django.core.cache import cache
from django.db import transaction
from django.db.models import FilteredRelation, Q, QuerySet
from django.utils import timezone

from audit.models import AuditVerb
from audit.services import record_event
from core.reasons import written
from core.refusals import Refusal
from factcheck.claimreview import TRUTH_SCALE
from factcheck.eligibility import rated_state
from factcheck.matching.leaving import stand_alone
from factcheck.members import organisation_id_of
from factcheck.models import LINKED_STATES, Match, MatchState, Post, Rating

# A pair in one of these states says its posts may be, or are, the same claim.
OPEN_STATES = (MatchState.SUGGESTED, *LINKED_STATES)
# Two steps apart on the truth scale, or more: see the module's docstring.
APART = 2
OPPOSED: dict[str, tuple[str, ...]] = {
    verdict: tuple(other for other, place in TRUTH_SCALE.items() if abs(place - TRUTH_SCALE[verdict]) >= APART)
    for verdict in TRUTH_SCALE
}
MAX_REASON = 2000


class ConflictResolved(Refusal):
    """The pair is no conflict now: it was marked not the same claim, or a side was re-rated to agree."""

    code = "conflict_resolved"


class NotYourConflict(Refusal):
    """Only fact-checkers of the two organisations whose ratings disagree decide what the pair is."""

    code = "not_your_conflict"


def disagree(verdict: str, other: str) -> bool:
    """Whether two verdicts contradict each other (the module's rule)."""
    return other in OPPOSED.get(verdict, ())


def is_conflict(*, state: str, rating: Rating | None, other: Rating | None) -> bool:
    """Whether a pair in `state` whose posts have these current ratings (None: none) is a conflict.
    `conflicts_of` is the same rule as a query: change both together."""
    return (state in OPEN_STATES and rating is not None and other is not None
            and rating.organisation_id != other.organisation_id and disagree(rating.verdict, other.verdict))


# The rule as a query, for one organisation: two halves, the organisation's rating on the pair's `post` and on its
# `source`. They never share a pair (the other side is always another organisation's). Each is a plain join from
# the organisation's current ratings (the ratings' organisation index) to the unrejected pairs and on to the other
# post's one current rating; PostgreSQL hashes the pairs or probes their (post, state) and (source, state)
# indexes, whichever it reckons cheaper (the figures: moderation.workday). One condition with an OR of the two
# sides would join every unrejected pair to both posts' ratings.


def _half(organisation_id: int, *, ours: str, theirs: str) -> QuerySet[Match]:
    disagreeing = reduce(or_, (Q(our_rating__verdict=verdict, their_rating__verdict__in=opposed)
                               for verdict, opposed in OPPOSED.items()))
    return (
        Match.objects.annotate(
            our_rating=FilteredRelation(f"{ours}__ratings", condition=Q(**{f"{ours}__ratings__is_current": True})),
            their_rating=FilteredRelation(f"{theirs}__ratings",
                                          condition=Q(**{f"{theirs}__ratings__is_current": True})),
        )
        # "Another organisation" as two ranges on the same joined row: a negated condition on a relation would
        # be a NOT EXISTS over every rating of the post.
        .filter(Q(their_rating__organisation_id__lt=organisation_id)
                | Q(their_rating__organisation_id__gt=organisation_id),
                disagreeing, state__in=OPEN_STATES, our_rating__organisation_id=organisation_id)
    )


def conflicts_of(*, organisation_id: int) -> tuple[QuerySet[Match], QuerySet[Match]]:
    """The organisation's conflicts (one side's current rating is its own) as two querysets of matches that never
    share a pair: its rating on the stored post, and on the stored source. What the navigation counts."""
    return (_half(organisation_id, ours="post", theirs="source"),
            _half(organisation_id, ours="source", theirs="post"))


def conflict_count_key(organisation_id: int) -> str:
    """Where the navigation keeps the organisation's count for a minute (moderation.workday)."""
    return f"conflicts:{organisation_id}"


@dataclass(frozen=True)
class ConflictSide:
    """One post of a conflict and its current rating."""

    post: Post
    rating: Rating
    ours: bool  # the rating is the viewer's organisation's


@dataclass(frozen=True)
class Conflict:
    """A conflicting pair as one organisation sees it: its own side first."""

    match: Match
    ours: ConflictSide
    theirs: ConflictSide


def newest_conflict_ids(*, organisation_id: int, limit: int) -> list[int]:
    """The ids of the organisation's newest `limit` conflicts (or more: up to `limit` of each half, so that the
    length says whether there are more), newest pair first: one query a half, of ids only."""
    halves = conflicts_of(organisation_id=organisation_id)
    return sorted((pk for half in halves for pk in half.order_by("-id").values_list("id", flat=True)[:limit]),
                  reverse=True)


def conflicts_by_ids(ids: list[int], *, organisation_id: int) -> list[Conflict]:
    """These conflicts (newest_conflict_ids) in this order, as `organisation_id` sees them, with both posts (and
    pages) and both current ratings (with organisation and reviewer): two queries. A pair that stopped being a
    conflict since its id was read is left out."""
    matches = Match.objects.filter(id__in=ids).select_related("post__page", "source__page").in_bulk()
    ratings = current_ratings({pk for match in matches.values() for pk in (match.post_id, match.source_id)})
    conflicts = []
    for pk in ids:
        match = matches.get(pk)
        if match is None or not is_conflict(state=match.state, rating=ratings.get(match.post_id),
                                            other=ratings.get(match.source_id)):
            continue
        sides = [ConflictSide(post=post, rating=ratings[post.pk],
                              ours=ratings[post.pk].organisation_id == organisation_id)
                 for post in (match.post, match.source)]
        ours, theirs = sorted(sides, key=lambda side: not side.ours)
        conflicts.append(Conflict(match=match, ours=ours, theirs=theirs))
    return conflicts


def current_ratings(post_ids: set[int]) -> dict[int, Rating]:
    """The current rating of each of these posts that has one, with organisation and reviewer: one query."""
    rows = Rating.objects.filter(post_id__in=sorted(post_ids), is_current=True).select_related("organisation",
                                                                                                "reviewer")
    return {rating.post_id: rating for rating in rows}


@transaction.atomic(durable=True)
def mark_not_same_claim(*, match_id: int, reviewer, reason: str = "", now: datetime | None = None) -> Match:
    """A fact-checker of one of the two organisations says the conflicting pair is two claims: the pair is rejected
    (never suggested or matched again), and the conflict leaves both organisations' pages. Refused, before
    anything is written, when the pair is no conflict now (ConflictResolved: a page read before someone resolved
    it) or the reviewer belongs to neither organisation (NotYourConflict).

    Locks both posts (id order), then the match, as the matcher's transitions of a pair do: a rating of either post
    takes its post's lock first, so the conflict is judged on the ratings as they stand."""
    now = now or timezone.now()
    pair = Match.objects.values_list("post_id", "source_id").get(pk=match_id)
    posts = Post.objects.select_for_update(no_key=True, of=("self",)).filter(pk__in=pair).order_by("id").in_bulk()
    # No row references a match: a full lock would keep nobody waiting either, but nothing here changes its key.
    match = Match.objects.select_for_update(no_key=True, of=("self",)).get(pk=match_id)
    ratings = current_ratings(set(pair))
    rating, other = ratings.get(match.post_id), ratings.get(match.source_id)
    # Who asks first: to anyone outside the two organisations, any pair is simply not theirs (whether it is a
    # live conflict of others is none of their business).
    raters = {r.organisation_id for r in (rating, other) if r is not None}
    if not getattr(reviewer, "is_factchecker", False) or organisation_id_of(reviewer) not in raters:
        raise NotYourConflict("Only fact-checkers of the two organisations whose ratings disagree can decide "
                              "whether the posts make the same claim.")
    if not is_conflict(state=match.state, rating=rating, other=other):
        raise ConflictResolved("This conflict was already resolved: the pair was marked not the same claim, or one "
                               "side was re-rated so that the verdicts agree. Nothing was changed.")
    linked = match.linked
    match.state, match.decided_by, match.decided_at = MatchState.REJECTED, reviewer, now
    match.reason = written(reason)[:MAX_REASON]
    match.save(update_fields=["state", "decided_by", "decided_at", "reason"])
    copy = posts[match.post_id]
    if linked and copy.duplicate_of_id == match.source_id:
        # Rated on its own, it keeps its own rating and leaves the group (it no longer copies the claim).
        stand_alone({copy.pk: rated_state(verdict=rating.verdict)}, now=now)
    record_event(actor=reviewer, verb=AuditVerb.MATCH_REJECTED, target=match, post_id=match.post_id,
                 reason=match.reason, data={
                     "source": match.source_id, "score": match.score, "conflict": True,
                     "verdicts": [rating.verdict, other.verdict],
                     "organisations": [rating.organisation_id, other.organisation_id],
                 })
    # Both organisations' badges count it no longer, now rather than within the minute.
    keys = [conflict_count_key(rating.organisation_id), conflict_count_key(other.organisation_id)]
    transaction.on_commit(lambda: cache.delete_many(keys))
    return match
