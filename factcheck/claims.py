"""Claims: a reviewer's lease on a post, so that two reviewers never work the same post.

The guarantee comes from PostgreSQL, not from Python: a claim locks the post row
(`FOR UPDATE`, or `FOR UPDATE SKIP LOCKED` when taking the next best post so reviewers do
not queue behind each other), and a partial unique index allows one active claim per post.

A claim is held only by someone who may still review its post (`require_coverage`): when staff change a
reviewer's access (deactivate them, change their role, move them, narrow their organisation's coverage) the
claims they may no longer hold end at once (`end_claims_beyond_reach`), and an extension is refused.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import QuerySet
from django.utils import timezone

from accounts.models import User
from audit.models import AuditVerb
from audit.services import event_row, insert_event_sql, record_event
from core.place_names import language_and_country
from core.refusals import Refusal
from factcheck.coverage import covers, describe_coverage, listed_codes
from factcheck.eligibility import is_removed, left_by_withdrawal, may_be_fact_checked
from factcheck.members import NoOrganisation, organisation_to_act_for
from factcheck.models import Claim, ClaimStatus, Post, QueueState
from factcheck.queue import QueueFilters, QueueSort, queued_posts


class ClaimError(Refusal):
    """A claim was refused; the message is shown to the reviewer."""

    code = "not_claimable"


class AlreadyClaimed(ClaimError):
    """Another reviewer holds a live claim on the post."""

    code = "already_claimed"


class NotClaimable(ClaimError):
    """The post cannot be claimed (rated, not eligible, not flagged) or the user is no fact-checker."""

    code = "not_claimable"


class OutsideCoverage(ClaimError):
    """The post's language or country is not one the reviewer's organisation covers."""

    code = "outside_coverage"


class PostRemoved(ClaimError):
    """Trust and safety removed the post: it is out of the fact-checkers' hands (factcheck.routing)."""

    code = "post_removed"


REMOVED_MESSAGE = "Trust and safety removed this post, so it has left the queue: it cannot be claimed or rated."


class FlagsWithdrawn(ClaimError):
    """The platform withdrew the flags that asked for the post's review: it left the queue (factcheck.withdrawal)."""

    code = "flags_withdrawn"


WITHDRAWN_MESSAGE = ("The platform withdrew the flags that asked for a fact-check of this post, so it has left the "
                     "queue and any claim on it ended: it cannot be claimed or rated unless it is flagged again.")


def require_coverage(reviewer, post: Post) -> None:
    """Acting on a post (claiming, holding and extending a claim, rating, confirming a match) needs it to be in the
    coverage of the reviewer's organisation, and so an organisation (NoOrganisation otherwise)."""
    organisation = organisation_to_act_for(reviewer)
    if not covers(organisation, language=post.language, country=post.country):
        where = language_and_country(post.language, post.country)
        raise OutsideCoverage(
            f"This post ({where}) is outside what {organisation.name} covers "
            f"({describe_coverage(organisation)}); it can be read but not claimed or rated."
        )


def lease_length() -> timedelta:
    return timedelta(minutes=settings.FACTDESK_CLAIM_LEASE_MINUTES)


# How far ahead of now a claim may run, in leases: extensions add a lease each, up to this, so a double click (or
# a script) cannot hold a post for a day while the queue waits.
MOST_LEASES_AHEAD = 2


def most_ahead_minutes() -> int:
    return int(MOST_LEASES_AHEAD * lease_length().total_seconds() // 60)


def _require_factchecker(reviewer) -> None:
    if not getattr(reviewer, "is_factchecker", False):
        raise NotClaimable("Only fact-checkers can claim posts.")


def take_claim(*, post: Post, reviewer, now: datetime) -> Claim:
    """Claim a post whose row lock the caller holds (claim_post, claim_next, an API rating)."""
    claim = Claim.objects.create(
        post=post, reviewer=reviewer, claimed_at=now, expires_at=now + lease_length(), status=ClaimStatus.ACTIVE
    )
    post.queue_state = QueueState.CLAIMED
    post.updated_at = now
    post.save(update_fields=["queue_state", "updated_at"])
    record_event(
        actor=reviewer, verb=AuditVerb.CLAIM_CREATED, target=claim, post_id=post.pk,
        data={"expires_at": claim.expires_at.isoformat()},
    )
    return claim


def _end(claim: Claim, *, status: str, now: datetime, actor, reason: str, return_to_queue: bool = True) -> None:
    claim.status = status
    claim.ended_at = now
    claim.save(update_fields=["status", "ended_at"])
    if return_to_queue:
        Post.objects.filter(pk=claim.post_id, queue_state=QueueState.CLAIMED).update(
            queue_state=QueueState.QUEUED, updated_at=now
        )
    verb = AuditVerb.CLAIM_EXPIRED if status == ClaimStatus.EXPIRED else AuditVerb.CLAIM_RELEASED
    if status != ClaimStatus.COMPLETED:
        record_event(actor=actor, verb=verb, target=claim, post_id=claim.post_id, reason=reason, system="claims")


def withdraw_claim(claim: Claim, *, now: datetime, actor, reason: str) -> None:
    """End a claim because its post left the fact-checkers' hands (a removal: factcheck.routing); the caller
    holds the post's row lock. Audited as released, with who and why; the post does not return to the queue."""
    _end(claim, status=ClaimStatus.RELEASED, now=now, actor=actor, reason=reason, return_to_queue=False)


def _why_it_cannot_hold(reviewer, post: Post) -> str:
    """Why `reviewer` may no longer hold a claim on `post` ("" if they may): an account still active, of a
    fact-checker, whose organisation covers the post (`require_coverage`, the rule of claiming it)."""
    if not reviewer.is_active:
        return "the account was deactivated"
    if not getattr(reviewer, "is_factchecker", False):
        return f"the account's role is no longer fact-checker ({reviewer.get_role_display() or 'no role'} now)"
    try:
        require_coverage(reviewer, post)
    except NoOrganisation:
        return "the account belongs to no organisation"
    except OutsideCoverage as refusal:
        return refusal.message
    return ""


def lock_claimed_posts(*, reviewer_ids: list[int]) -> list[Post]:
    """Lock the posts of these reviewers' active claims, in id order (NO KEY, as `take_out_of_queue`). Staff's change
    of their access takes these first, before it writes the user or organisation row (factcheck.member_changes): a
    rating or claim in flight on one of those posts holds its lock and, as it commits, checks its foreign keys to
    that row (FOR KEY SHARE); a change of the row's unique name (a username, an organisation's name) takes it FOR
    UPDATE, so locking the posts after writing the row deadlocked with the rating (found by review), which was lost."""
    return list(Post.objects.select_for_update(no_key=True, of=("self",))
                .filter(pk__in=Claim.objects.filter(reviewer_id__in=reviewer_ids, status=ClaimStatus.ACTIVE)
                        .values("post_id")).order_by("id"))


@transaction.atomic
def end_claims_beyond_reach(*, reviewer_ids: list[int], actor, now: datetime | None = None) -> int:
    """End the active claims of these reviewers that they may no longer hold (`_why_it_cannot_hold`): staff
    deactivated one, changed their role, moved them to another organisation or left them with none, or narrowed
    what their organisation covers. Each post returns to the queue at once for a colleague (a claim kept its post
    out of it until the lease ran out, and told colleagues "Another reviewer holds the claim"); audited as released,
    by `actor` with the reason; the reviewer's draft is kept. Returns how many ended.

    Not durable: factcheck.member_changes calls it inside the transaction of staff's change (the admin's save), so
    the access and the claims change together. Locks the claims' posts (`lock_claimed_posts`): the change locked
    them already, before writing the user, membership or organisation rows; a claim taken since is locked here."""
    now = now or timezone.now()
    held = Claim.objects.filter(reviewer_id__in=reviewer_ids, status=ClaimStatus.ACTIVE)
    posts = {post.pk: post for post in lock_claimed_posts(reviewer_ids=reviewer_ids)}
    reviewers = {user.pk: user for user in User.objects.filter(pk__in=reviewer_ids)
                 .select_related("membership__organisation")}
    ended = 0
    # Read again under the posts' locks: a claim rated or released meanwhile is not ended twice.
    for claim in held.filter(post_id__in=list(posts)).order_by("id"):
        reviewer = reviewers[claim.reviewer_id]
        why = _why_it_cannot_hold(reviewer, posts[claim.post_id])
        if why:
            _end(claim, status=ClaimStatus.RELEASED, now=now, actor=actor,
                 reason=f"{reviewer.get_username()} may no longer review this post: {why}")
            ended += 1
    return ended


# How many best posts of each covered language claim_next looks at first. The queue's best posts pile up in the
# languages that an organisation covering some languages only does not read (nobody of theirs claims them):
# walking past them to the first covered one read 5,246 posts, 13.7 ms a claim, after 8,000 claims on the bench's
# 100,000 posts, where the best few of each covered language, from its own index, took 2.8 ms. More reviewers than
# this claiming one language at the same instant fall back to the whole queue.
CANDIDATES_PER_LANGUAGE = 16


@transaction.atomic(durable=True)
def claim_next(*, reviewer, filters: QueueFilters | None = None, now: datetime | None = None) -> Claim | None:
    """Claim the best queued post the reviewer's organisation covers, or None if none is free.

    SKIP LOCKED: a post another reviewer is claiming right now is passed over, not waited on. The pick, the
    claim, the post's new state and the audit row are one statement (`_claim_statement`), one round trip: claim_next
    is the hottest write of the app (every reviewer, every few minutes, all at once at shift start). Written as
    the ORM's four (the pick, then `take_claim`) it made 81-94 claims/s with 4 reviewers, far under the 500/s
    asked of the ORM path; as one, 120-176/s, taking turns with it (`make bench --only claims`, 100,000 posts,
    2 CPUs at a load average of 4 to 8 from other work). The program's peak need is about 100/s.
    """
    _require_factchecker(reviewer)
    # Never None here: a fact-checker of no organisation would be offered the whole queue (`covered_by(None)`).
    organisation = organisation_to_act_for(reviewer)
    now = now or timezone.now()
    filters = filters or QueueFilters()
    candidates = queued_posts(organisation=organisation, filters=filters, sort=QueueSort.PRIORITY)
    if connection.vendor != "postgresql":  # SQLite, the embedded default: one writer at a time, no WITH that writes
        post = candidates.select_for_update(skip_locked=True, no_key=True, of=("self",)).first()
        return take_claim(post=post, reviewer=reviewer, now=now) if post is not None else None
    languages = listed_codes(organisation, "languages") or []
    attempts = [candidates]
    if len(languages) > 1 and not filters.language:
        best = [candidates.filter(language=language).values("id")[:CANDIDATES_PER_LANGUAGE] for language in languages]
        attempts.insert(0, candidates.filter(id__in=best[0].union(*best[1:], all=True)))
    for attempt in attempts:
        pick = attempt.select_for_update(skip_locked=True, no_key=True, of=("self",)).values("id")[:1]
        claim = _claim_statement(pick, reviewer=reviewer, now=now)
        if claim is not None:
            return claim
    return None


def _claim_statement(pick: QuerySet[Post], *, reviewer, now: datetime) -> Claim | None:
    """Lock the post `pick` selects, mark it claimed, insert its claim and the claim's audit row (through
    audit.services.insert_event_sql, with the claim's id and post from the statement itself): what
    `take_claim` does in four statements, in one. None if `pick` found no free post."""
    expires_at = now + lease_length()
    audit_sql, audit_params = insert_event_sql(
        event_row(at=now, actor=reviewer, verb=AuditVerb.CLAIM_CREATED, target_type=Claim._meta.label_lower,
                  target_id="", data={"expires_at": expires_at.isoformat()}),
        source="claimed", computed={"target_id": "claimed.id::text", "post_id": "claimed.post_id"},
    )
    pick_sql, pick_params = pick.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            WITH picked AS ({pick_sql}),
            marked AS (
                UPDATE {Post._meta.db_table} AS p SET queue_state = %s, updated_at = %s
                FROM picked WHERE p.id = picked.id RETURNING p.id
            ),
            claimed AS (
                INSERT INTO {Claim._meta.db_table} (post_id, reviewer_id, status, claimed_at, expires_at)
                SELECT id, %s, %s, %s, %s FROM marked RETURNING id, post_id
            ),
            audited AS ({audit_sql})
            SELECT id, post_id FROM claimed
            """,
            [*pick_params, QueueState.CLAIMED, now, reviewer.pk, ClaimStatus.ACTIVE, now, expires_at, *audit_params],
        )
        row = cursor.fetchone()
    if row is None:
        return None
    return Claim(id=row[0], post_id=row[1], reviewer=reviewer, status=ClaimStatus.ACTIVE, claimed_at=now,
                 expires_at=expires_at)


def unflagged_refusal(post: Post) -> ClaimError | None:
    """Why a post that waits for no fact-check (never flagged for one, reported for harm only, or its flags withdrawn)
    cannot be claimed, or None: claiming it in the browser, and rating it through the API (factcheck.ratings), which
    claims the post it rates."""
    if post.queue_state != QueueState.UNFLAGGED:
        return None
    if left_by_withdrawal(post=post):
        return FlagsWithdrawn(WITHDRAWN_MESSAGE)
    return NotClaimable("This post has not been flagged for a fact-check: it is not in the review queue.")


@transaction.atomic
def claim_post(*, reviewer, post_id: int, now: datetime | None = None) -> Claim:
    """Claim a chosen post. Refused if someone else holds it or it cannot be reviewed.

    Not durable: the demo seed claims inside its own transaction, as a reviewer would before rating."""
    _require_factchecker(reviewer)
    now = now or timezone.now()
    # Lock the post so that a concurrent claim of the same post waits and then sees ours.
    post = Post.objects.select_for_update(no_key=True, of=("self",)).select_related("page").get(pk=post_id)
    # A removed post that kept its state (grouped, on a politician's page) is refused as removed too.
    if is_removed(post=post):
        raise PostRemoved(REMOVED_MESSAGE)
    if not may_be_fact_checked(post=post):
        raise NotClaimable("Posts from politicians' pages are not fact-checked.")
    if post.queue_state in (QueueState.RATED, QueueState.NOT_ELIGIBLE):  # Not eligible is a rating's verdict too
        raise NotClaimable("This post already has a current rating.")
    if refusal := unflagged_refusal(post):
        raise refusal
    if post.queue_state in (QueueState.GROUPED, QueueState.MATCHED):
        raise NotClaimable("This post is a copy of a claim that is reviewed with its first post: claim that one.")
    require_coverage(reviewer, post)
    current = post.claims.filter(status=ClaimStatus.ACTIVE).first()
    if current is not None:
        if current.reviewer_id == reviewer.pk and current.is_live(now):
            return current
        if current.is_live(now):
            raise AlreadyClaimed("Another reviewer is working on this post.")
        expire_claim(current, now=now)
        post.queue_state = QueueState.QUEUED
    return take_claim(post=post, reviewer=reviewer, now=now)


@transaction.atomic(durable=True)
def release_claim(
    *, claim_id: int, reviewer, reason: str = "released by reviewer", now: datetime | None = None
) -> bool:
    """Whether the claim was released: False when it had ended meanwhile (its post rated in another tab, the
    claim expired), which changes nothing."""
    now = now or timezone.now()
    Post.objects.select_for_update(no_key=True, of=("self",)).filter(claims__pk=claim_id).first()
    claim = Claim.objects.get(pk=claim_id)
    if claim.reviewer_id != reviewer.pk:
        raise NotClaimable("You can only release your own claims.")
    if claim.status != ClaimStatus.ACTIVE:
        return False
    _end(claim, status=ClaimStatus.RELEASED, now=now, actor=reviewer, reason=reason)
    return True


class ClaimLapsed(ClaimError):
    """The claim to extend is no longer live (released, expired, or the post was rated)."""

    code = "claim_lapsed"


class ClaimAtMost(ClaimError):
    """The claim already runs as far ahead as a claim may (MOST_LEASES_AHEAD)."""

    code = "claim_at_most"


@transaction.atomic(durable=True)
def extend_claim(*, post_id: int, reviewer, now: datetime | None = None) -> Claim:
    """Give the reviewer's live claim on the post one more lease length, counted from when it would end, but never
    more than MOST_LEASES_AHEAD leases ahead of now.

    Only the holder extends, only a live claim (a lapsed one may already be someone else's to take), and only while
    they may still review the post (`require_coverage`, the rule of claiming it: moved to an organisation that does
    not cover it, or left with none, they may not keep it). A refusal changes nothing: the reviewer's draft is kept.
    Audited (who, the old and new end) like every other change of a claim.
    """
    _require_factchecker(reviewer)
    now = now or timezone.now()
    # The post row first, as claims and ratings lock it (docs/concurrency.md): an extension waits for a
    # rating or an expiry of the same post in progress, then sees what it left.
    post = Post.objects.select_for_update(no_key=True, of=("self",)).filter(pk=post_id).first()
    if post is not None:
        try:
            require_coverage(reviewer, post)
        except (OutsideCoverage, NoOrganisation) as refusal:
            raise type(refusal)(f"{refusal.message} Your claim was not extended; anything you typed stays saved as "
                                "your draft.") from refusal
    claim = Claim.objects.filter(post_id=post_id, status=ClaimStatus.ACTIVE).first()
    if claim is None and post is not None and left_by_withdrawal(post=post):
        raise FlagsWithdrawn(f"{WITHDRAWN_MESSAGE} Anything you typed stays saved as your draft.")
    if claim is None or not claim.is_live(now):
        raise ClaimLapsed("Your claim on this post has ended; claim it again if it is still waiting.")
    if claim.reviewer_id != reviewer.pk:
        raise NotClaimable("You can only extend your own claims.")
    before = claim.expires_at
    most = now + MOST_LEASES_AHEAD * lease_length()
    if most - before < timedelta(minutes=1):
        raise ClaimAtMost(f"Your claim already runs until {timezone.localtime(before):%H:%M}, as far ahead as a claim "
                          f"may ({most_ahead_minutes()} minutes): extend it again nearer its end.")
    claim.expires_at = min(before + lease_length(), most)
    claim.save(update_fields=["expires_at"])
    record_event(
        actor=reviewer, verb=AuditVerb.CLAIM_EXTENDED, target=claim, post_id=post_id,
        reason="extended by the reviewer",
        data={"expires_at_before": before.isoformat(), "expires_at": claim.expires_at.isoformat()},
    )
    return claim


# The states in which a lapsed claim may be taken again: the post is still waiting for a rating (a lapsed lease
# keeps `claimed` until the expiry job returns it). Never a copy (grouped, matched), a rated or removed post.
RECLAIMABLE_STATES = (QueueState.QUEUED, QueueState.CLAIMED)


def lapsed_claim_of(*, reviewer, post: Post, now: datetime) -> Claim | None:
    """The reviewer's claim on the post that ran out with nobody holding the post since, or None: the post is
    still waiting (RECLAIMABLE_STATES) and its newest claim is theirs, no longer live (`Claim.is_live`) for
    at most one lease length, and neither released nor completed. Their post page then keeps the form, and
    the browser's save takes the claim again under the post's lock (factcheck.ratings.record_rating,
    `reclaim_lapsed`)."""
    if post.queue_state not in RECLAIMABLE_STATES:
        return None
    newest = post.claims.order_by("-claimed_at", "-id").first()
    if newest is None or newest.reviewer_id != reviewer.pk or newest.is_live(now):
        return None
    if now - newest.expires_at > lease_length():  # lapsed long ago: a new claim, not the same work resumed
        return None
    return newest if newest.status in (ClaimStatus.ACTIVE, ClaimStatus.EXPIRED) else None


def shown_state(post: Post, *, live_claim: Claim | None) -> str:
    """The post's queue state as a page shows it: a claimed post whose claim lapsed reads as waiting, before
    the periodic expiry reaches it (`live_claim`: its claim if still live, else None)."""
    return QueueState.QUEUED if post.queue_state == QueueState.CLAIMED and live_claim is None else post.queue_state


def seconds_left(claim: Claim, *, now: datetime) -> int:
    """Whole seconds until the claim runs out (0 once it has), rounded up: what the page's countdown starts from.
    So the page never says the claim has run out while it still holds: its "Claim again" would get back the claim
    that ends a moment later (factcheck.claims.claim_post keeps a reviewer's live claim) instead of a new one."""
    return max(0, math.ceil((claim.expires_at - now).total_seconds()))


def expire_claim(claim: Claim, *, now: datetime, return_to_queue: bool = True) -> None:
    """End a claim whose lease ran out (the caller holds the post's row lock)."""
    _end(claim, status=ClaimStatus.EXPIRED, now=now, actor=None, reason="lease ran out",
         return_to_queue=return_to_queue)


def complete_claim(claim: Claim, *, now: datetime) -> None:
    """The lease ends because the post was rated (in record_rating's transaction, which holds the post's row lock)."""
    _end(claim, status=ClaimStatus.COMPLETED, now=now, actor=None, reason="rated", return_to_queue=False)


@transaction.atomic(durable=True)
def expire_claims(*, now: datetime | None = None, limit: int = 500) -> int:
    """Return posts whose lease ran out to the queue; safe to run from several workers."""
    now = now or timezone.now()
    # Lock posts first, as claims and ratings do (post, then claim): the other order deadlocks
    # with a reviewer rating the post at the moment its lease runs out. SKIP LOCKED leaves a post
    # that is being rated right now to that rating.
    post_ids = list(
        Post.objects.select_for_update(skip_locked=True, no_key=True, of=("self",))
        .filter(pk__in=Claim.objects.lapsed(now).values("post_id"))
        .order_by("id")
        .values_list("id", flat=True)[:limit]
    )
    due = list(Claim.objects.lapsed(now).filter(post_id__in=post_ids).order_by("id"))
    for claim in due:
        expire_claim(claim, now=now)
    return len(due)
