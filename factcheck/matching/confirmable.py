"""Whether a suggested pair can be confirmed, and which way round: the one home of that rule.

A suggestion (a Match in state `suggested`) says that `post` may copy `source`, as matching found it when
`source` was a claim's first post. By the time a fact-checker looks, either post may have been rated, linked
into a group, removed or claimed. Confirming links one of them (the copy) to the other (the root), as
`matcher.confirm_match` does, and it works only when:

- neither post is on a politician's page (their posts are not fact-checked) and they do not both have a
  current rating (neither takes the other's);
- the way round: as stored (`post` copies `source`), unless `post` has a rating of its own and `source` has
  none; then `source` is the copy and takes the rated post's rating (a `matched_rating`, by propagation);
- the copy is not a copy already, has no copies of its own, is not removed, and no other reviewer holds it;
- the root is not a copy itself (a group is a star) and, while unrated, is not removed (its copies would
  wait for a review that cannot come);
- the reviewer's organisation covers the copy and, when the root is rated, made that rating; except for a
  `semantic` pair (the same claim in other words, often in another language) whose copy is outside the rating
  organisation's coverage: the organisations that cover the copy decide it (PRODUCT.md, "Same claim, other
  words, other languages"), and confirming gives the copy the rating as for any match.

`confirmation` answers for one pair from its posts' facts (`facts_of` reads them in one query for a page of
pairs, or under the pair's locks); `confirmable_by` is the same rule as a query condition on matches, for an
organisation (selectors.waiting_suggestions_everywhere counts it, in two halves: confirmable_ways). A change
to the rule is made here, in both.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.db import connection
from django.db.models import Exists, F, JSONField, OuterRef, Q, Subquery
from django.db.models.lookups import Exact

from core.refusals import Refusal
from factcheck.claims import NotClaimable, OutsideCoverage, require_coverage
from factcheck.coverage import covered_by, covers, covers_in_sql
from factcheck.eligibility import removed_posts
from factcheck.members import organisation_id_of
from factcheck.models import Claim, MatchMethod, MatchState, Organisation, Post, Rating


class MatchRefused(Refusal):
    """The suggestion cannot be confirmed or rejected (decided already, a post rated, a copy or claimed)."""

    code = "match_refused"


class NotYourClaimsMatch(Refusal):
    """The claim is rated by another organisation: only its fact-checkers confirm copies of it."""

    code = "not_your_rating"


@dataclass(frozen=True)
class PairPost:
    """What confirming depends on, of one post of a pair."""

    id: int
    external_id: str
    language: str
    country: str
    duplicate_of_id: int | None
    politician: bool
    removed: bool  # eligibility.is_removed
    has_copies: bool  # some post is linked to it as its claim's first post
    rating_organisation_id: int | None  # of its current rating; None: it has none
    rating_organisation: str
    # What confirming gives the copy, named beside the Confirm button (factcheck.views_matches): the verdict, and
    # when the rating was recorded here and, for an imported one, published by its organisation.
    rating_verdict: str
    rating_recorded_at: datetime | None
    rating_published_at: datetime | None
    # What that organisation covers (its languages and countries; empty lists cover all).
    rating_languages: list[str]
    rating_countries: list[str]
    holder_id: int | None  # the reviewer whose claim holds it now

    @property
    def rated(self) -> bool:
        return self.rating_organisation_id is not None

    def rater_covers(self, other: PairPost) -> bool:
        """Whether the organisation of this post's rating covers the other post (factcheck.coverage.covers)."""
        coverage = Organisation(languages=self.rating_languages, countries=self.rating_countries)
        return covers(coverage, language=other.language, country=other.country)


@dataclass(frozen=True)
class Confirmation:
    """The answer for one pair and one reviewer: which post would be the copy and which the root, why
    confirming cannot work (None: it can), why rejecting cannot (decided already, not this reviewer's to
    decide), and whether the refusal to confirm is `lasting`: it holds for everyone until one of the posts
    changes (a post rated, linked, removed), so the pair is not offered at all, not even for rejecting."""

    copy: PairPost
    root: PairPost
    stored_post_id: int
    refusal: Refusal | None
    reject_refusal: Refusal | None
    lasting: bool

    @property
    def confirmable(self) -> bool:
        return self.refusal is None

    @property
    def offers_reject(self) -> bool:
        return self.reject_refusal is None and not self.lasting

    @property
    def turned(self) -> bool:
        """The stored `source` would become the copy (the stored `post` has a rating of its own)."""
        return self.copy.id != self.stored_post_id


def facts_of(post_ids: Iterable[int], *, now: datetime) -> dict[int, PairPost]:
    """The facts `confirmation` reads, of these posts, by id: one query."""
    ids = list(set(post_ids))
    current = Rating.objects.filter(post_id=OuterRef("pk"), is_current=True)
    rows = (
        Post.objects.filter(id__in=ids)
        .annotate(
            politician=F("page__is_politician"),
            removed_now=Exists(Post.objects.filter(removed_posts(), pk=OuterRef("pk"))),
            has_copies=Exists(Post.objects.filter(duplicate_of_id=OuterRef("pk"))),
            rating_organisation_id=Subquery(current.values("organisation_id")[:1]),
            rating_organisation=Subquery(current.values("organisation__name")[:1]),
            rating_verdict=Subquery(current.values("verdict")[:1]),
            rating_recorded_at=Subquery(current.values("created_at")[:1]),
            rating_published_at=Subquery(current.values("published_at")[:1]),
            rating_languages=Subquery(current.values("organisation__languages")[:1], output_field=JSONField()),
            rating_countries=Subquery(current.values("organisation__countries")[:1], output_field=JSONField()),
            holder_id=Subquery(Claim.objects.live(now).filter(post_id=OuterRef("pk")).values("reviewer_id")[:1]),
        )
        .values("id", "external_id", "language", "country", "duplicate_of_id", "politician", "removed_now",
                "has_copies", "rating_organisation_id", "rating_organisation", "rating_verdict", "rating_recorded_at",
                "rating_published_at", "rating_languages", "rating_countries", "holder_id")
    )
    return {
        row["id"]: PairPost(
            id=row["id"], external_id=row["external_id"], language=row["language"], country=row["country"],
            duplicate_of_id=row["duplicate_of_id"], politician=row["politician"], removed=row["removed_now"],
            has_copies=row["has_copies"], rating_organisation_id=row["rating_organisation_id"],
            rating_organisation=row["rating_organisation"] or "", rating_verdict=row["rating_verdict"] or "",
            rating_recorded_at=row["rating_recorded_at"], rating_published_at=row["rating_published_at"],
            rating_languages=row["rating_languages"] or [],
            rating_countries=row["rating_countries"] or [], holder_id=row["holder_id"],
        )
        for row in rows
    }


def confirmation(*, state: str, method: str, post: PairPost, source: PairPost, reviewer) -> Confirmation:
    """Whether `reviewer` can confirm the pair (`post` suggested as a copy of `source`, found by `method`), which
    way round, and whether they can reject it. The refusals are the ones `confirm_match` and `reject_match` raise."""
    copy, root = (source, post) if post.rated and not source.rated else (post, source)
    if state != MatchState.SUGGESTED:
        decided = MatchRefused(f"This suggestion was already {MatchState(state).label.lower()}.")
        return Confirmation(copy=copy, root=root, stored_post_id=post.id, refusal=decided, reject_refusal=decided,
                            lasting=True)
    decider = decider_refusal(reviewer=reviewer, copy=copy, root=root, method=method)
    lasting = _lasting_refusal(copy=copy, root=root)
    refusal = decider or lasting
    if refusal is None and copy.holder_id is not None and copy.holder_id != reviewer.pk:
        refusal = MatchRefused(f"Another reviewer holds the claim on post {copy.external_id}.")
    return Confirmation(copy=copy, root=root, stored_post_id=post.id, refusal=refusal, reject_refusal=decider,
                        lasting=lasting is not None)


def _lasting_refusal(*, copy: PairPost, root: PairPost) -> Refusal | None:
    """Why nobody can confirm the pair until one of its posts changes, or None."""
    if copy.politician or root.politician:
        return MatchRefused("Posts of politicians' pages are not fact-checked, so neither takes the other's rating.")
    if copy.rated and root.rated:
        return MatchRefused("Both posts have ratings of their own, so neither takes the other's.")
    if copy.duplicate_of_id is not None:
        return MatchRefused(f"Post {copy.external_id} is already a copy of another claim.")
    if copy.has_copies:
        return MatchRefused(f"Other posts are copies of post {copy.external_id}; rate it instead.")
    if copy.removed:
        return MatchRefused(f"Trust and safety removed post {copy.external_id}, so it takes no claim's rating.")
    if root.duplicate_of_id is not None:
        return MatchRefused(f"Post {root.external_id} has since become a copy of another claim.")
    if root.removed and not root.rated:
        return MatchRefused(f"Trust and safety removed post {root.external_id} before it was rated, "
                            "so it will have no rating to share.")
    return None


def decider_refusal(*, reviewer, copy: PairPost, root: PairPost, method: str) -> Refusal | None:
    """Why this reviewer may not decide the pair at all (confirm or reject), or None. Who may take a confirmation
    back reads it too (factcheck.matching.unlinkable)."""
    if not getattr(reviewer, "is_factchecker", False):
        return NotClaimable("Only fact-checkers can confirm or reject suggested copies.")
    try:
        require_coverage(reviewer, copy)  # reads the copy's language and country
    except OutsideCoverage as refusal:
        return refusal
    organisation_id = organisation_id_of(reviewer)
    if root.rated and root.rating_organisation_id != organisation_id:
        if method == MatchMethod.SEMANTIC and organisation_id is not None and not root.rater_covers(copy):
            return None  # the claim retold where its raters do not read: the organisations that cover it decide
        return NotYourClaimsMatch(
            f"The claim was rated by {root.rating_organisation}; only its fact-checkers can decide its copies."
        )
    return None


# `confirmation` as a query condition on matches, for a member of an organisation who holds no claim.


def confirmable_by(organisation: Organisation | None, *, now: datetime) -> Q:
    """Suggested matches that a member of the organisation could confirm now (None: a fact-checker of no
    organisation, who covers everything and may confirm copies of no rated claim). A copy another reviewer
    holds counts when that reviewer is a member: they can confirm it. One condition, no query of its own: the
    organisation's coverage is read from the row the caller holds (loaded with the user)."""
    stored, turned = confirmable_ways(organisation, now=now)
    return stored | turned


def confirmable_ways(organisation: Organisation | None, *, now: datetime) -> tuple[Q, Q]:
    """`confirmable_by` as its two halves, which never overlap: pairs confirmed the way they are stored (the
    stored post is unrated) and pairs confirmed turned round (the stored post is rated, its source not).
    Queried apart, each half is planned as index probes a pair: counting 100,000 suggested pairs the whole
    condition took 0.7 s (2.1 s with PostgreSQL's JIT), as its ORs turn each NOT EXISTS into a hash of the
    whole posts table, and the two halves 4-15 ms together, for the navigation on every page."""
    post_rated, source_rated = _rated("post"), _rated("source")
    both_ways = (
        Q(state=MatchState.SUGGESTED, post__page__is_politician=False, source__page__is_politician=False)
        & ~(post_rated & source_rated)
    )
    stored = ~post_rated & _works(copy="post", root="source", organisation=organisation, now=now)
    turned = post_rated & ~source_rated & _works(copy="source", root="post", organisation=organisation, now=now)
    return both_ways & stored, both_ways & turned


def _rated(side: str) -> Exists:
    return Exists(Rating.objects.filter(post_id=OuterRef(f"{side}_id"), is_current=True))


def _decidable(*, copy: str, root: str, organisation_id: int) -> Exists:
    """The root's current rating is one the organisation decides copies of: its own, or, for a semantic pair, one
    by an organisation that does not cover the copy (`decider_refusal`). One EXISTS, as the organisation's own
    rating was before (the halves' plans stay an index probe a pair), with the pair's method and the rater's
    coverage tested on the rating's row: counting both halves for the bench's organisation over 25,000 suggested
    pairs took the same 235 ms as before semantic pairs had a rule of their own."""
    rater_elsewhere = Q(Exact(OuterRef("method"), MatchMethod.SEMANTIC)) & ~covers_in_sql(
        organisation="organisation__", language=OuterRef(f"{copy}__language"), country=OuterRef(f"{copy}__country"))
    return Exists(Rating.objects.filter(post_id=OuterRef(f"{root}_id"), is_current=True)
                  .filter(Q(organisation_id=organisation_id) | rater_elsewhere))


def _pair_covered(organisation: Organisation) -> Q:
    """The organisation covers the copy of a pair stored the way it is confirmed (its `post`), read on the pair's own
    row (Match.post_language, post_country, which PostgreSQL's triggers keep equal to the post's) beside the post's,
    so that an organisation's newest such pairs are read backwards from its language's or country's index (migration
    0035). Listing the newest ten for French in France on the bench's 100,000 suggested pairs walked 49,910 of them,
    each pair's post read: 189 ms, against 8.8 ms from the index. SQLite, which keeps no such copy, reads the post's
    alone. The pairs turned round are found from the current ratings, as before."""
    if connection.vendor != "postgresql":
        return Q()
    return covered_by(organisation, prefix="post_")


def _works(*, copy: str, root: str, organisation: Organisation | None, now: datetime) -> Q:
    organisation_id = organisation.pk if organisation is not None else None
    coverage = covered_by(organisation, prefix=f"{copy}__")
    if organisation is not None and copy == "post":
        coverage &= _pair_covered(organisation)
    rated_root = Q(_rated(root))
    root_ours = (Q(_decidable(copy=copy, root=root, organisation_id=organisation_id)) if organisation_id is not None
                 else Q(pk__in=[]))
    held_by_others = Claim.objects.live(now).filter(post_id=OuterRef(f"{copy}_id"))
    if organisation_id is not None:
        held_by_others = held_by_others.exclude(reviewer__membership__organisation_id=organisation_id)
    return (
        coverage
        & Q(**{f"{copy}__duplicate_of__isnull": True, f"{root}__duplicate_of__isnull": True})
        & ~Exists(Post.objects.filter(duplicate_of_id=OuterRef(f"{copy}_id")))
        & ~removed_posts(f"{copy}__")
        & (rated_root & root_ours | ~rated_root & ~removed_posts(f"{root}__"))
        & ~Exists(held_by_others)
    )
