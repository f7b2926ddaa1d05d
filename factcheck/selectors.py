"""Reads of the review side that pages, the API and the admin share: computed here, once.

Selectors only read; the rules that change state live in the domain modules beside them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple

from django.db.models import Case, Count, Exists, Min, OuterRef, Q, QuerySet, When
from django.utils import timezone

from accounts.models import Role, User
from accounts.password_reset import can_sign_in
from audit.models import AuditEvent, AuditVerb
from core.counting import capped_counts
from core.jit import reading_without_jit
from factcheck.coverage import covers_in_sql
from factcheck.eligibility import COUNTED_FLAGS
from factcheck.matching.confirmable import confirmable_by, confirmable_ways
from factcheck.models import (
    Claim,
    ClaimStatus,
    Flag,
    FlagSource,
    Match,
    MatchState,
    Organisation,
    Post,
    QueueState,
    Rating,
    ReportOutcome,
)
from factcheck.search import matching_text


def queued_nobody_covers() -> QuerySet[Post]:
    """Queued posts that no fact-checker may claim: outside the coverage (factcheck.coverage.covers_in_sql) of every
    organisation with a fact-checker someone can sign in as. Narrowing a coverage can leave some so, and they would
    wait unseen: the admin's index counts them, and saving an organisation says how many its change left.
    An organisation of nobody (an import's, or one whose members left) covers nothing here."""
    fact_checkers = User.objects.filter(can_sign_in(), role=Role.FACTCHECKER)
    covering = Organisation.objects.filter(
        covers_in_sql(organisation="", language=OuterRef("language"), country=OuterRef("country")),
        Exists(fact_checkers.filter(membership__organisation=OuterRef("pk"))),
    )
    # One query (the admin's index counts it among its others): each queued post against the few organisations.
    return Post.objects.filter(queue_state=QueueState.QUEUED).exclude(Exists(covering))


def may_read_post(user, post: Post) -> bool:
    """Whether an API caller may read this post and what was decided on it: page owners only their
    own pages' posts (to them any other post answers like a missing one), every other role any."""
    return user.role != Role.PAGE_OWNER or post.page.owners.filter(pk=user.pk).exists()


# Every flag that counts: all but those their sender withdrew (kept as history, counted nowhere).
EVERY_FLAG = COUNTED_FLAGS


def flag_counts(post: Post, *, flags: Q = EVERY_FLAG) -> dict[str, int]:
    """The post's flags (those `flags` picks: all that count by default) per source, every source present (0 where
    none), in FlagSource order."""
    counts = dict.fromkeys(FlagSource.values, 0)
    for row in Flag.objects.filter(flags, post=post).values("source").annotate(n=Count("id")).order_by():
        counts[row["source"]] = row["n"]
    return counts


class SourceCount(NamedTuple):
    n: int
    first: datetime  # when its first flag was flagged


def counted_flags_by_source(post: Post, *, keep: bool = False) -> dict[str, SourceCount]:
    """The post's flags that count (all but those withdrawn), per source present: how many, and when the first was
    flagged; one query. `keep`: kept on the instance for the next caller that asks with `keep` too, as the admin's
    post page does, which shows them in its flags table (factcheck.admin) and in its timeline
    (moderation.admin.post_story), both given the page's one instance. Opt-in, so that no other caller reads a count
    kept from before the flags changed (or a benchmark a query it skipped)."""
    if keep and (kept := post.__dict__.get("_counted_flags_by_source")) is not None:
        return kept
    rows = (Flag.objects.filter(COUNTED_FLAGS, post=post).values("source")
            .annotate(n=Count("id"), first=Min("flagged_at")).order_by())
    counted = {row["source"]: SourceCount(row["n"], row["first"]) for row in rows}
    if keep:
        post.__dict__["_counted_flags_by_source"] = counted
    return counted


def recent_flags(post: Post, *, limit: int, flags: Q = EVERY_FLAG) -> list[Flag]:
    return list(Flag.objects.filter(flags, post=post).order_by("-flagged_at", "-id")[:limit])


def sent_by_staff(post: Post) -> QuerySet[AuditEvent]:
    """Trust and safety's decisions to send the post to the fact-checkers (the reports desk), oldest first, each
    with the note they wrote for them (its reason, blank if none) and who sent it (its actor)."""
    return (AuditEvent.objects.filter(post_id=post.pk, verb=AuditVerb.REPORTS_DECIDED,
                                      data__outcome=ReportOutcome.SENT_TO_FACT_CHECKERS)
            .select_related("actor__membership__organisation").order_by("created_at", "id"))


def current_rating(post: Post) -> Rating | None:
    """The post's current rating with who made it, or None."""
    return Rating.objects.filter(post=post, is_current=True).select_related("organisation", "reviewer").first()


@dataclass(frozen=True)
class PostMatch:
    """One near-duplicate pair as seen from a post: the other post, and whether it is the source or a copy."""

    match: Match
    other: Post
    relation: str  # "source": this post copies `other`; "copy": `other` copies this post

    @property
    def external_id(self) -> str:
        return self.other.external_id


# A viral claim's first post has thousands of copies; pages and the API list the best of them.
MAX_MATCHES_SHOWN = 100


def post_matches(post: Post) -> list[PostMatch]:
    """The post's near-duplicate pairs, both ways, those waiting for a decision first, then best first (at most
    MAX_MATCHES_SHOWN): what the post page and the API list. Waiting pairs first, so that a claim's hundred
    automatic copies (score 1.0) never push the variants a reviewer must decide off its page."""
    waiting_first = Case(When(state=MatchState.SUGGESTED, then=0), default=1)
    pairs = (Match.objects.filter(Q(post=post) | Q(source=post))
             .select_related("post__page", "source__page", "decided_by")
             .order_by(waiting_first, "-score", "id")[:MAX_MATCHES_SHOWN])
    return [
        PostMatch(match=m, other=m.source, relation="source") if m.post_id == post.pk
        else PostMatch(match=m, other=m.post, relation="copy")
        for m in pairs
    ]


class PairCounts(NamedTuple):
    pairs: int  # the post's near-duplicate pairs, both ways
    copies: int  # the posts linked to it as their claim's first post: a rating of it reaches each


# Counted up to this (an index range each): a claim copied a million times is told as such, at most ~0.1 s.
PAIRS_COUNTED = 1_000_000


def pair_counts(post: Post) -> PairCounts:
    """How many pairs and linked copies the post has, counted in full (up to PAIRS_COUNTED), in one statement:
    `post_matches` lists at most MAX_MATCHES_SHOWN, and a page that counted its list told a reviewer a rating
    reached 79 copies of a claim with 2,400."""
    counted = capped_counts(cap=PAIRS_COUNTED, pairs=Match.objects.filter(Q(post=post) | Q(source=post)),
                            copies=Post.objects.filter(duplicate_of=post))
    return PairCounts(counted["pairs"], counted["copies"])


def active_claims_of(reviewer_id: int, *, now: datetime) -> list[dict[str, object]]:
    """The reviewer's live claims, soonest to expire first, with their posts' text and pages (claims past
    their time that the periodic expiry has not reached yet are left out)."""
    return list(
        Claim.objects.live(now).filter(reviewer_id=reviewer_id)
        .order_by("expires_at", "id")
        .values("post_id", "expires_at", "post__external_id", "post__text", "post__page__name")
    )


def active_claims() -> QuerySet[Claim]:
    """Active claims with their reviewers, live or past their time (the periodic expiry ends those)."""
    return Claim.objects.filter(status=ClaimStatus.ACTIVE).select_related("reviewer")


def active_claim(post: Post) -> Claim | None:
    """The post's active claim (`active_claims`), if any."""
    return active_claims().filter(post=post).first()


def post_history(post: Post) -> QuerySet[Rating]:
    """Ratings of the post's page, newest first: what the reviewer sees of its record."""
    return (
        Rating.objects.filter(post__page_id=post.page_id)
        .select_related("organisation", "post")
        .order_by("-created_at")
    )


def rated_posts(*, organisation_id: int, reviewer_id: int | None = None, query: str = "") -> QuerySet[Rating]:
    """The current ratings of an organisation (or of one of its reviewers), newest first, with their
    posts, pages and raters: the fact-checkers' list of rated posts. `query`: words of the post's
    text or external id (factcheck.search.matching_text)."""
    qs = Rating.objects.filter(is_current=True, organisation_id=organisation_id)
    if reviewer_id is not None:
        qs = qs.filter(reviewer_id=reviewer_id)
    qs = matching_text(qs, query, prefix="post__")
    return qs.select_related("post__page", "reviewer").order_by("-created_at", "-id")


def waiting_suggestions(*, organisation: Organisation | None, post_id: int) -> QuerySet[Match]:
    """The suggested pairs of one post (either way round) that a member of the organisation could confirm
    now, best first: the rule of factcheck.matching.confirmable."""
    confirmable = confirmable_by(organisation, now=timezone.now())
    return Match.objects.filter(confirmable, Q(post_id=post_id) | Q(source_id=post_id)).order_by("-score", "id")


def waiting_suggestions_everywhere(*, organisation: Organisation | None) -> tuple[QuerySet[Match], QuerySet[Match]]:
    """Every suggested pair a member of the organisation could confirm now, in its coverage (None: a
    fact-checker of no organisation), as two querysets that never share a pair (confirmable_ways: one
    query each stays an index walk): what the navigation counts and the notifications page lists."""
    stored, turned = confirmable_ways(organisation, now=timezone.now())
    return Match.objects.filter(stored), Match.objects.filter(turned)


@dataclass(frozen=True)
class WaitingPair:
    """A waiting suggestion as it would be confirmed: `copy` then the `claim` it copies (a pair stored the
    other way round, whose stored post was rated since, reads turned)."""

    match: Match
    copy: Post
    claim: Post


def newest_waiting_suggestions(
    *, organisation: Organisation | None, limit: int, before: int | None = None, after: int | None = None
) -> list[WaitingPair]:
    """The newest `limit` pairs of waiting_suggestions_everywhere, with their posts and pages, newest first: the newest
    of each half, then of both (two short walks of the matches' primary key, or of the organisation's own pairs'
    indexes, migration 0034; best score first would read every waiting pair: 0.5 s at 100,000 suggested pairs).
    Paged by a pair's id (the walks stay as short whatever the page): `before`, the `limit` pairs just older than
    it; `after`, the `limit` pairs just newer than it, still listed newest first.

    JIT off (core.jit): the halves' estimates pass `jit_above_cost`, and on the bench's 100,000 suggested pairs
    compiling the pairs turned round took 80 ms of a 147 ms statement; the notifications page of an organisation
    covering French in France took 226 ms p50 in process with it, 127 ms without."""
    stored, turned = waiting_suggestions_everywhere(organisation=organisation)
    if after is not None:
        window, nearest_first = Q(pk__gt=after), "id"
    else:
        window, nearest_first = (Q(pk__lt=before) if before is not None else Q()), "-id"
    with reading_without_jit():
        pairs = [
            WaitingPair(match, match.source, match.post) if turning else WaitingPair(match, match.post, match.source)
            for half, turning in ((stored, False), (turned, True))
            for match in half.filter(window).select_related("post__page", "source__page")
            .order_by(nearest_first)[:limit]
        ]
    nearest = sorted(pairs, key=lambda pair: pair.match.pk, reverse=after is None)[:limit]
    return sorted(nearest, key=lambda pair: -pair.match.pk)
