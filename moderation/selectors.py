"""Reads of the decision side that the portal, the desks, the API and the admin share.

"Which decisions can this owner appeal", "what is this post's distribution as its owner reads
it", "which statements of reasons stand": each is computed here, once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from functools import cached_property

from django.db import DEFAULT_DB_ALIAS
from django.db.models import (
    BooleanField,
    Count,
    Exists,
    ExpressionWrapper,
    F,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    TextChoices,
)

from factcheck.claimreview import PUBLISHED_VERDICTS
from factcheck.members import organisation_id_of
from factcheck.models import Page, Post, Rating
from factcheck.ratings import carried_rating
from moderation.distribution import current_distribution
from moderation.models import (
    Action,
    ActionKind,
    Appeal,
    AppealKind,
    PageStanding,
    RatingDecision,
    RepeatOffenderPolicy,
    StatementOfReasons,
    Strike,
    StrikeKind,
)
from moderation.models.appeals import filing_closes_at
from moderation.policy import NO_EFFECT, Effect, current_effect, restricting_actions, restricts
from moderation.strikes import ages_out, counts_toward_standing

ONE = Decimal("1")


def current_ratings() -> QuerySet[Rating]:
    return Rating.objects.filter(is_current=True).select_related("organisation")


def active_removals() -> QuerySet[Action]:
    """Removals while they stand: what "a post is removed" means, written once."""
    return Action.objects.filter(kind=ActionKind.REMOVAL, ended_at__isnull=True)


def removals_standing_at(moment: datetime) -> QuerySet[Action]:
    """Removals that stood at `moment` (made before it, not ended by then): active_removals at a past moment."""
    return Action.objects.filter(Q(ended_at__isnull=True) | Q(ended_at__gte=moment), kind=ActionKind.REMOVAL,
                                 created_at__lt=moment)


def _active_removal() -> QuerySet[Action]:
    """The outer row's post's standing removal, for an Exists() (removed content is not republished)."""
    return active_removals().filter(post=OuterRef("post_id"))


def active_removal(post: Post) -> Action | None:
    """The post's removal, while it stands (at most one: moderation.staff_actions refuses a second), with who
    made it (the admin's banner names them; the join costs no query of its own). Reads no lock:
    a caller that decides on the answer holds the post's lock (moderation.pipeline.lock_post)."""
    return active_removals().filter(post=post).select_related("created_by").first()


def published_ratings() -> QuerySet[Rating]:
    """The ratings the public may read (ClaimReview, `/claims/{id}/`): current, with a verdict on a
    claim (not Not eligible), on a post that is not removed (removed content is not republished)."""
    return (
        Rating.objects.filter(is_current=True, verdict__in=PUBLISHED_VERDICTS)
        .filter(~Exists(_active_removal()))
        .select_related("organisation", "post__page")
    )


@dataclass(frozen=True)
class PublicRating:
    rating: Rating
    stands: bool  # the post's current rating: the one published as ClaimReview
    replaced_by: Rating | None  # when superseded: the post's published rating now, if it has one

    @property
    def withdrawn(self) -> bool:
        """Its organisation withdrew it (factcheck.withdrawals): no longer current, and no rating replaced it."""
        return not self.rating.is_current and self.rating.superseded_by_id is None


def published_rating(rating_id: int) -> PublicRating | None:
    """A rating as its public page shows it; None when it was never public or its post was removed.

    A superseded or withdrawn rating keeps its page (links to it were shared), says so, and points to the post's
    published rating now, if it has one."""
    rating = (
        Rating.objects.filter(pk=rating_id, verdict__in=PUBLISHED_VERDICTS)
        .filter(~Exists(_active_removal()))
        .select_related("organisation", "post__page")
        .first()
    )
    if rating is None:
        return None
    if rating.is_current:
        return PublicRating(rating=rating, stands=True, replaced_by=None)
    return PublicRating(
        rating=rating, stands=False, replaced_by=published_ratings().filter(post_id=rating.post_id).first()
    )


def active_actions() -> QuerySet[Action]:
    """Active actions, oldest first, each with the statement of reasons stored when it was taken."""
    return Action.objects.filter(ended_at__isnull=True).select_related("statement").order_by("created_at", "id")


def statements(actions: list[Action]) -> list[StatementOfReasons]:
    """The stored statements of the restricting ones (an action that restricts nothing has none)."""
    return [action.statement for action in actions if hasattr(action, "statement")]


@dataclass(frozen=True)
class FactCheckDecision:
    """The fact-check rating a post carries: its own current rating, with its recorded decision on the
    post (None until the rating's job has run), or, for a matched copy, the rating of the claim it
    copies, with the `matched_rating` action that its decision on the copy took (the latest: a restore's) and the
    action standing for it now (that one, or staff's override of it)."""

    rating: Rating
    matched: Action | None = None
    decided: RatingDecision | None = None
    # For a copy: when the claim's rating was decided on it (its match made).
    matched_at: datetime | None = None
    # For a copy: what carries the claim's rating on it now, the matched action or staff's override of it.
    standing: Action | None = None
    # When staff last restored the rating's effect on the post (Action.restored), if they did.
    restored_at: datetime | None = None

    @property
    def source(self) -> Post | None:
        """The rated post this copy was matched to."""
        return self.rating.post if self.matched is not None else None

    @cached_property
    def effect(self) -> Effect:
        """What the decision does to the post: for its own rating, the action it took (whatever staff did to that
        action since: an overridden rating still stands, published, and can be disputed), none, or, before the
        rating's job ran, what the policy gives its verdict now; for a copy, what carries the claim's rating on it now
        (a match is appealed for what it does to the copy: an override that leaves it unrestricted leaves nothing
        to appeal)."""
        if self.matched is not None:
            return self.standing or self.matched
        if self.decided is None:
            return current_effect(self.rating.verdict)
        return self.decided.action if self.decided.action_id is not None else NO_EFFECT

    @property
    def overridden(self) -> bool:
        """A copy whose match staff overrode: the claim's rating carried by their override."""
        return self.matched is not None and self.standing is not None and self.standing.kind == ActionKind.OVERRIDE

    @property
    def notice_at(self) -> datetime:
        """When the owner was told of the decision (their appeal window opens, FILING_WINDOW): when it was made, or
        the rating's own time while its job has not run yet; when staff restored its effect, if they did since: the
        restore restricts the post anew with a statement and a notice of its own, and an owner who had nothing to
        appeal while it was lifted must be able to appeal it for six months (DSA Art. 20). Staff's override keeps
        the window of what it overrides (moderation.staff_actions)."""
        if self.restored_at is not None:
            return self.restored_at
        if self.matched is not None:
            return self.matched_at or self.matched.created_at
        return self.decided.decided_at if self.decided is not None else self.rating.created_at

    @property
    def restricts(self) -> bool:
        """Whether there is something to dispute or correct: a True rating, say, restricts nothing."""
        return restricts(self.effect)


def carried(post: Post) -> QuerySet[Action]:
    """The actions a copy carries for its claim's rating, active now: its matched rating (the one confirmed, or the one
    a re-rating of the claim put in its place), or staff's override of it (which keeps the claim's rating)."""
    return carried_by([post.pk])


def carried_by(post_ids: list[int]) -> QuerySet[Action]:
    """`carried` of several copies in one query (a claim's rating withdrawn ends what all its copies carry:
    moderation.withdrawal)."""
    return Action.objects.filter(post_id__in=post_ids, ended_at__isnull=True).filter(
        Q(kind=ActionKind.MATCHED_RATING) | Q(kind=ActionKind.OVERRIDE, rating__isnull=False)
    ).exclude(rating__post_id=F("post_id"))


def _restored_at() -> Subquery:
    """When staff last restored the effect of the outer row's rating on its post (Action.restored), or NULL."""
    return Subquery(Action.objects.filter(rating_id=OuterRef("rating_id"), post_id=OuterRef("post_id"), restored=True)
                    .order_by("-created_at").values("created_at")[:1])


def fact_check_decision(post: Post) -> FactCheckDecision | None:
    """What a `dispute` or `correction` of this post is against (PRODUCT.md: the fact-check rating or
    the matched rating), or None. A copy's match counts while the claim's rating is carried on it (`carried`): by its
    matched action, or by staff's override of it; it restricts the copy as that action does."""
    own = current_ratings().filter(post=post).first()
    if own is not None:
        decided = (RatingDecision.objects.filter(rating=own, post=post).annotate(restored_at=_restored_at())
                   .select_related("action").first())
        return FactCheckDecision(rating=own, decided=decided,
                                 restored_at=decided.restored_at if decided is not None else None)
    decided = RatingDecision.objects.filter(rating_id=OuterRef("rating_id"), post_id=OuterRef("post_id"))
    standing = (carried(post).annotate(decided_at=Subquery(decided.values("decided_at")[:1]),
                                       restored_at=_restored_at())
                .select_related("rating__organisation", "rating__post").order_by("-id").first())
    # Overridden: the match is the latest matched action the override stands in for.
    matched = standing if standing is None or standing.kind == ActionKind.MATCHED_RATING else (
        Action.objects.filter(post=post, rating_id=standing.rating_id, kind=ActionKind.MATCHED_RATING)
        .order_by("-id").first())
    if matched is None:
        return None
    return FactCheckDecision(rating=standing.rating, matched=matched, matched_at=standing.decided_at,
                             standing=standing, restored_at=standing.restored_at)


def same_decision(*, post: Post, rating: Rating | None, action: Action | None) -> Q:
    """The post's appeals against the decision an appeal of (rating, action) is against (moderation.appeals finds
    them): one may be open at a time, and the portal offers no form for a decision with one open. A matched copy's
    "not the same claim" is one question while its matched action is replaced under it (the claim re-rated, the
    match's effect lifted and restored by staff)."""
    if action is not None and action.kind == ActionKind.MATCHED_RATING:
        return Q(post=post, action__kind=ActionKind.MATCHED_RATING)
    return Q(post=post, rating=rating, action=action)


def rating_carried(post: Post, *, decision: FactCheckDecision | None = None) -> Rating | None:
    """The rating a post carries now, whatever it does to the post: its own current rating or, while it is a
    linked copy, its claim's current one (factcheck.ratings.carried_rating); None when it carries none. An appeal's
    outcome is told against it (moderation.appeal_states.outcome_now): a rating that was replaced does not "stand".
    `decision`: the post's `fact_check_decision`, when the caller has read it already (its own rating is that one)."""
    if decision is not None:
        return decision.rating if decision.matched is None else carried_rating(post)
    return current_ratings().filter(post=post).first() or carried_rating(post)


def _appealable(decision: FactCheckDecision | None, actions: list[Action]) -> list[tuple[list[str], str, datetime]]:
    """The post's decisions an owner could appeal, window aside: (the kinds of appeal against it, what the portal
    calls it, when the owner was told of it). The fact-check decision while it restricts the post; an active
    removal."""
    found = []
    if decision is not None and decision.restricts:
        found.append(([AppealKind.DISPUTE, AppealKind.CORRECTION], "match" if decision.matched is not None
                      else "rating", decision.notice_at))
    removal = next((action for action in actions if action.kind == ActionKind.REMOVAL), None)
    if removal is not None:
        found.append(([AppealKind.REMOVAL], "removal", removal.created_at))
    return found


def appealable_kinds(decision: FactCheckDecision | None, actions: list[Action], *, now: datetime) -> list[str]:
    """What an owner may appeal on a post now: each decision's kinds while its window is open (filing_closes_at).
    The portal offers exactly these, and filing checks them."""
    return [str(kind) for kinds, _, told in _appealable(decision, actions) if now < filing_closes_at(told)
            for kind in kinds]


def closed_windows(decision: FactCheckDecision | None, actions: list[Action], *,
                   now: datetime) -> list[tuple[str, datetime]]:
    """The post's decisions an owner could appeal but for their window (what, and when they were told of it)."""
    return [(what, told) for _, what, told in _appealable(decision, actions) if now >= filing_closes_at(told)]


def owner_distribution(post: Post) -> dict[str, object]:
    """The post's current distribution as an owner reads it."""
    current = current_distribution(post)
    return {
        "multiplier": f"{current.multiplier.normalize():f}",
        "percent_less": round((1 - float(current.multiplier)) * 100),
        "full": not current.removed and current.multiplier == ONE,
        "removed": current.removed,
        "labels": current.labels,
    }


# --- The owners' portal: what each page has restricted, struck and under appeal now -------------

class PostState(TextChoices):
    """The portal's filter of decided posts."""

    RESTRICTED = "restricted", "Restricted now"
    APPEALED = "appealed", "Under appeal"
    ALL = "all", "All"


@dataclass
class PageSummary:
    """One page of an owner as the portal sums it up: posts restricted now (demoted, labelled, removed; a
    post may be more than one), active strikes, repeat-offender standing and until when, appeals open."""

    page: Page
    standing: PageStanding | None
    threshold: int  # the policy's strike threshold
    restricted: int = 0
    demoted: int = 0
    labelled: int = 0
    removed: int = 0
    open_appeals: int = 0
    fact_check_strikes: list[dict] = field(default_factory=list)  # counted ones, oldest first, with `ages_out`
    community_strikes: list[dict] = field(default_factory=list)

    @property
    def repeat_offender_until(self) -> datetime | None:
        """The day the page stops being a repeat offender if it gets no new strike: when so many of its
        counted strikes have aged out that fewer than the threshold are left; None when not one."""
        if self.standing is None or not self.standing.is_repeat_offender:
            return None
        over = len(self.fact_check_strikes) - self.threshold
        return self.fact_check_strikes[over]["ages_out"] if over >= 0 else None


def page_summaries(*, owner, policy: RepeatOffenderPolicy, now: datetime) -> list[PageSummary]:
    """The owner's pages by name, each summed up, in four queries whatever the number of pages and posts. Which
    pages are the owner's is who is asking and what they may see: read on the primary even where the rest may come
    from a replica (core.replicas), so that an owner removed from a page a moment ago sees none of it."""
    pages = list(Page.objects.using(DEFAULT_DB_ALIAS).filter(owners=owner).select_related("standing")
                 .order_by("name", "id"))
    summaries = {page.pk: PageSummary(page=page, standing=getattr(page, "standing", None),
                                      threshold=policy.strike_threshold) for page in pages}
    counts = (
        restricting_actions().filter(post__page_id__in=list(summaries)).values("post__page_id")
        .annotate(restricted=Count("post_id", distinct=True),
                  removed=Count("post_id", distinct=True, filter=Q(kind=ActionKind.REMOVAL)),
                  demoted=Count("post_id", distinct=True,
                                filter=Q(feed_multiplier__lt=ONE) & ~Q(kind=ActionKind.REMOVAL)),
                  labelled=Count("post_id", distinct=True, filter=~Q(label="")))
    )
    for row in counts:
        summary = summaries[row.pop("post__page_id")]
        for name, value in row.items():
            setattr(summary, name, value)
    appeals = (Appeal.objects.open().filter(post__page_id__in=list(summaries)).values("post__page_id")
               .annotate(n=Count("id")).values_list("post__page_id", "n"))
    for page_id, n in appeals:
        summaries[page_id].open_appeals = n
    strikes = (
        Strike.objects.filter(page_id__in=list(summaries), ended_at__isnull=True)
        .annotate(counted=ExpressionWrapper(counts_toward_standing(now=now, policy=policy),
                                            output_field=BooleanField()))
        .select_related("action__post").order_by("created_at", "id")
    )
    for strike in strikes:
        summary = summaries[strike.page_id]
        if strike.kind == StrikeKind.COMMUNITY_STANDARDS:
            summary.community_strikes.append({"strike": strike, "post": strike.action.post})
        elif strike.counted:
            summary.fact_check_strikes.append({"strike": strike, "post": strike.action.post,
                                               "verdict": strike.action.get_verdict_display(),
                                               "ages_out": ages_out(strike, policy=policy)})
    return list(summaries.values())


def portal_posts(owner) -> QuerySet[Post]:
    """The posts a page owner can open in their portal (`/appeals/posts/{id}/`): those of the pages they own now.
    Anyone else's answer 404, so an owner who has left a page (an appeal they filed for it is decided later) can no
    longer open its posts."""
    if not getattr(owner, "is_page_owner", False):
        return Post.objects.none()
    return Post.objects.filter(page__owners=owner)


def owner_posts(*, page_ids: list[int], state: str) -> QuerySet[Post]:
    """The posts of these pages that carry a rating or an action, newest first, in the state asked for."""
    posts = Post.objects.filter(page_id__in=page_ids).filter(
        Exists(Rating.objects.filter(post=OuterRef("pk"), is_current=True))
        | Exists(Action.objects.filter(post=OuterRef("pk")))
    )
    if state == PostState.RESTRICTED:
        posts = posts.filter(Exists(restricting_actions().filter(post=OuterRef("pk"))))
    elif state == PostState.APPEALED:
        posts = posts.filter(Exists(Appeal.objects.open().filter(post=OuterRef("pk"))))
    return posts.order_by("-posted_at", "-id")


# Which appeals each desk holds: its queue, its CSV and the navigation's count (moderation.workday).
FACT_CHECK_APPEALS = (AppealKind.DISPUTE, AppealKind.CORRECTION)


def organisation_appeals(*, organisation_id: int | None) -> QuerySet[Appeal]:
    """Disputes and corrections of an organisation's ratings (a matched copy's too: they name the claim's
    rating): what its fact-checkers decide, and all they may see of appeals."""
    return Appeal.objects.filter(kind__in=FACT_CHECK_APPEALS, rating__organisation_id=organisation_id)


def removal_appeals() -> QuerySet[Appeal]:
    """Every removal appeal: trust-and-safety staff decide them."""
    return Appeal.objects.filter(kind=AppealKind.REMOVAL)


def desk_appeals(user, *, removal: bool) -> QuerySet[Appeal]:
    """The appeals a desk opens for this person (moderation.views_appeals): staff's desk every removal appeal to
    trust-and-safety staff, the fact-checkers' desk their organisation's disputes and corrections to a
    fact-checker; nothing to anyone else (the desk's 403)."""
    if removal:
        return removal_appeals() if getattr(user, "is_trust_safety", False) else Appeal.objects.none()
    if not getattr(user, "is_factchecker", False):
        return Appeal.objects.none()
    return organisation_appeals(organisation_id=organisation_id_of(user))


def appeals_read_by_factcheckers_of(organisation_id: int | None, *, post: Post) -> QuerySet[Appeal]:
    """A post's appeals as a fact-checker of this organisation reads them: those against its own ratings (none
    without an organisation). Another organisation's appeals (the owner's statement, the reason given to them) and
    removal appeals are not theirs, as the appeal desks refuse them (moderation.views_appeals): the post page's
    story (moderation.timeline) and GET /api/v1/posts/{external_id} (moderation.api) both read this."""
    if not organisation_id:
        return Appeal.objects.none()
    return Appeal.objects.filter(post=post, rating__organisation_id=organisation_id)
