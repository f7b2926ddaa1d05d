"""Claims: a reviewer's lease on a post, so that two reviewers never work the same post.

The guarantee comes from PostgreSQL, not from Python: a claim locks the post row
(`FOR UPDATE`, or `FOR UPDATE SKIP LOCKED` when taking the next best post so reviewers do
not queue behind each other), and a partial unique index allows one active claim per post.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from functools import lru_cache

from django.conf import settings
from django.db import connection, transaction
from django.db.models.expressions import RawSQL
from django.utils import timezone

from audit.models import AuditVerb
from audit.services import record_event
from core.refusals import Refusal
from core.statements import preparing_cursor
from factcheck.models import Claim, ClaimStatus, Post, QueueState
from factcheck.queue import QUEUE_ORDER, QueueFilters, covering, covers, describe_coverage


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


def require_coverage(reviewer, post: Post) -> None:
    """Acting on a post (claiming, rating, confirming a match) needs it to be in the organisation's coverage."""
    organisation = reviewer.organisation
    if not covers(organisation, language=post.language, country=post.country):
        where = ", ".join(filter(None, [post.language.upper(), post.country])) or "no language or country"
        raise OutsideCoverage(
            f"This post ({where}) is outside what {organisation.name} covers "
            f"({describe_coverage(organisation)}); it can be read but not claimed or rated."
        )


def lease_length() -> timedelta:
    return timedelta(minutes=settings.FACTDESK_CLAIM_LEASE_MINUTES)


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


# How many best candidates per covered language the PostgreSQL claim looks at; more reviewers
# than this claiming one language at the same instant fall back to the plain query.
CANDIDATES_PER_LANGUAGE = 16


@transaction.atomic
def claim_next(*, reviewer, filters: QueueFilters = QueueFilters(), now: datetime | None = None) -> Claim | None:
    """Claim the best queued post the reviewer's organisation covers, or None if none is free."""
    _require_factchecker(reviewer)
    now = now or timezone.now()
    organisation = reviewer.organisation
    languages, countries = tuple(organisation.languages or ()), tuple(organisation.countries or ())
    if connection.vendor == "postgresql":
        return _claim_next_in_one_statement(
            reviewer=reviewer, statements=_claim_statements(languages, countries, filters), now=now
        )
    candidates = filters.apply(Post.objects.filter(covering(languages=languages, countries=countries),
                                                   queue_state=QueueState.QUEUED))
    # SKIP LOCKED: a post another reviewer is claiming right now is passed over, not waited on.
    post = candidates.select_for_update(skip_locked=True, no_key=True, of=("self",)).order_by(*QUEUE_ORDER).first()
    if post is None:
        return None
    return take_claim(post=post, reviewer=reviewer, now=now)


@lru_cache(maxsize=512)
def _pick_statements(
    languages: tuple[str, ...], countries: tuple[str, ...], filters: QueueFilters
) -> tuple[tuple[str, tuple], ...]:
    """The SELECT ... FOR UPDATE SKIP LOCKED statements that pick the post, best attempt first.

    Compiled once per coverage and filters: building them through the ORM costs more than
    running them. When the organisation covers some languages only, the first attempt takes
    the best few posts of each covered language from the per-language index, so the claim
    does not walk past the queued posts of languages nobody in the organisation reads; if
    all of those are being claimed at this instant, the second attempt scans the whole queue.
    """
    candidates = filters.apply(
        Post.objects.filter(covering(languages=languages, countries=countries), queue_state=QueueState.QUEUED)
    )

    def pick(qs) -> tuple[str, tuple]:
        return qs.select_for_update(skip_locked=True, no_key=True, of=("self",)).order_by(*QUEUE_ORDER).values("id")[
            :1
        ].query.sql_with_params()

    attempts = []
    if languages and not filters.language:
        parts, part_params = [], []
        for language in languages:
            sql, params = candidates.filter(language=language).order_by(*QUEUE_ORDER).values("id")[
                :CANDIDATES_PER_LANGUAGE
            ].query.sql_with_params()
            parts.append(f"({sql})")
            part_params.extend(params)
        attempts.append(pick(candidates.filter(id__in=RawSQL(" UNION ALL ".join(parts), part_params))))
    attempts.append(pick(candidates))
    return tuple(attempts)


@lru_cache(maxsize=512)
def _claim_statements(languages: tuple[str, ...], countries: tuple[str, ...], filters: QueueFilters) -> tuple[str, ...]:
    """The claim statement of each pick attempt: the pick and the constants written in as literals, the
    per-call values named (%(now)s, %(reviewer)s, %(expires_at)s, %(actor)s, %(data)s), run on
    core.statements.preparing_cursor so that each connection prepares it at its second claim.

    Literals, not parameters, for the pick: a prepared statement's generic plan can only use the
    partial queue indexes (`WHERE queue_state = 'queued'`) if the state is spelled out in it.
    """
    statements = []
    for pick_sql, pick_params in _pick_statements(languages, countries, filters):
        pick = connection.ops.compose_sql(pick_sql, pick_params)
        # Percent signs of the pick's literals are doubled twice: once for the compose below, once for the
        # values bound at each run; the values' names are doubled once, so that the compose leaves them.
        statements.append(connection.ops.compose_sql(
            f"""
            WITH picked AS ({pick.replace("%", "%%%%")}),
            marked AS (
                UPDATE factcheck_post AS p SET queue_state = %s, updated_at = %%(now)s::timestamptz
                FROM picked WHERE p.id = picked.id RETURNING p.id
            ),
            claimed AS (
                INSERT INTO factcheck_claim (post_id, reviewer_id, status, claimed_at, expires_at)
                SELECT id, %%(reviewer)s::bigint, %s, %%(now)s::timestamptz, %%(expires_at)s::timestamptz
                FROM marked RETURNING id, post_id
            ),
            audited AS (
                INSERT INTO audit_auditevent
                    (created_at, actor_id, actor_label, verb, target_type, target_id, post_id, reason, data)
                SELECT %%(now)s::timestamptz, %%(reviewer)s::bigint, %%(actor)s::varchar, %s, 'factcheck.claim',
                    claimed.id::text, claimed.post_id, '', %%(data)s::jsonb
                FROM claimed
            )
            SELECT id, post_id FROM claimed
            """,
            [QueueState.CLAIMED, ClaimStatus.ACTIVE, AuditVerb.CLAIM_CREATED],
        ))
    return tuple(statements)


def _claim_next_in_one_statement(*, reviewer, statements: tuple[str, ...], now: datetime) -> Claim | None:
    """PostgreSQL: pick, lock, mark, insert the claim and its audit event in one round trip.

    claim_next is the hottest write in the app (every reviewer, every few minutes, all at
    once at shift start); doing it as one statement keeps the row lock as short as possible.
    The statement is prepared on each connection (core.statements): parsing and planning its
    five-way UNION cost more than running it. Prepared, the database's CPU per claim fell from
    2.8 to 1.6 ms and the client's from 1.1 to 0.7 ms (100,000 posts), and 4 reviewers on 2 CPUs
    went from about 270 to about 430 claims/s (`make bench`, a busy machine).
    """
    expires_at = now + lease_length()
    values = {"now": now, "reviewer": reviewer.pk, "expires_at": expires_at, "actor": reviewer.get_username(),
              "data": json.dumps({"expires_at": expires_at.isoformat()})}
    for sql in statements:
        with preparing_cursor() as cursor:
            cursor.execute(sql, values)
            row = cursor.fetchone()
        if row is not None:
            return Claim(
                id=row[0], post_id=row[1], reviewer=reviewer, status=ClaimStatus.ACTIVE, claimed_at=now,
                expires_at=expires_at,
            )
    return None


@transaction.atomic
def claim_post(*, reviewer, post_id: int, now: datetime | None = None) -> Claim:
    """Claim a chosen post. Refused if someone else holds it or it cannot be reviewed."""
    _require_factchecker(reviewer)
    now = now or timezone.now()
    # Lock the post so that a concurrent claim of the same post waits and then sees ours.
    post = Post.objects.select_for_update(no_key=True, of=("self",)).select_related("page").get(pk=post_id)
    if post.page.is_politician or post.queue_state == QueueState.NOT_ELIGIBLE:
        raise NotClaimable("Posts from politicians' pages are not fact-checked.")
    if post.queue_state == QueueState.RATED:
        raise NotClaimable("This post already has a current rating.")
    if post.queue_state == QueueState.UNFLAGGED:
        raise NotClaimable("This post has not been flagged.")
    if post.queue_state in (QueueState.GROUPED, QueueState.MATCHED):
        raise NotClaimable("This post is a copy of a claim that is reviewed with its first post: claim that one.")
    require_coverage(reviewer, post)
    current = post.claims.filter(status=ClaimStatus.ACTIVE).first()
    if current is not None:
        if current.reviewer_id == reviewer.pk and current.expires_at > now:
            return current
        if current.expires_at > now:
            raise AlreadyClaimed("Another reviewer is working on this post.")
        expire_claim(current, now=now)
        post.queue_state = QueueState.QUEUED
    return take_claim(post=post, reviewer=reviewer, now=now)


@transaction.atomic
def release_claim(*, claim_id: int, reviewer, reason: str = "released by reviewer", now: datetime | None = None) -> None:
    now = now or timezone.now()
    Post.objects.select_for_update(no_key=True, of=("self",)).filter(claims__pk=claim_id).first()
    claim = Claim.objects.get(pk=claim_id)
    if claim.reviewer_id != reviewer.pk:
        raise NotClaimable("You can only release your own claims.")
    if claim.status != ClaimStatus.ACTIVE:
        return
    _end(claim, status=ClaimStatus.RELEASED, now=now, actor=reviewer, reason=reason)


class ClaimLapsed(ClaimError):
    """The claim to extend is no longer live (released, expired, or the post was rated)."""

    code = "claim_lapsed"


@transaction.atomic
def extend_claim(*, post_id: int, reviewer, now: datetime | None = None) -> Claim:
    """Give the reviewer's live claim on the post one more lease length, counted from when it would end.

    Only the holder extends, and only a live claim: a lapsed one may already be someone else's to take.
    Audited (who, the old and new end) like every other change of a claim.
    """
    _require_factchecker(reviewer)
    now = now or timezone.now()
    # The post row first, as claims and ratings lock it (docs/concurrency.md): an extension waits for a
    # rating or an expiry of the same post in progress, then sees what it left.
    Post.objects.select_for_update(no_key=True, of=("self",)).filter(pk=post_id).first()
    claim = Claim.objects.filter(post_id=post_id, status=ClaimStatus.ACTIVE).first()
    if claim is None or claim.expires_at <= now:
        raise ClaimLapsed("Your claim on this post has ended; claim it again if it is still waiting.")
    if claim.reviewer_id != reviewer.pk:
        raise NotClaimable("You can only extend your own claims.")
    before = claim.expires_at
    claim.expires_at = before + lease_length()
    claim.save(update_fields=["expires_at"])
    record_event(
        actor=reviewer, verb=AuditVerb.CLAIM_EXTENDED, target=claim, post_id=post_id,
        reason="extended by the reviewer",
        data={"expires_at_before": before.isoformat(), "expires_at": claim.expires_at.isoformat()},
    )
    return claim


def expire_claim(claim: Claim, *, now: datetime, return_to_queue: bool = True) -> None:
    """End a claim whose lease ran out (the caller holds the post's row lock)."""
    _end(claim, status=ClaimStatus.EXPIRED, now=now, actor=None, reason="lease ran out", return_to_queue=return_to_queue)


def complete_claim(claim: Claim, *, now: datetime) -> None:
    """Called inside the rating's transaction: the lease ends because the post was rated."""
    _end(claim, status=ClaimStatus.COMPLETED, now=now, actor=None, reason="rated", return_to_queue=False)


@transaction.atomic
def expire_claims(*, now: datetime | None = None, limit: int = 500) -> int:
    """Return posts whose lease ran out to the queue; safe to run from several workers."""
    now = now or timezone.now()
    # Lock posts first, as claims and ratings do (post, then claim): the other order deadlocks
    # with a reviewer rating the post at the moment its lease runs out. SKIP LOCKED leaves a post
    # that is being rated right now to that rating.
    post_ids = list(
        Post.objects.select_for_update(skip_locked=True, no_key=True, of=("self",))
        .filter(claims__status=ClaimStatus.ACTIVE, claims__expires_at__lte=now)
        .order_by("id")
        .values_list("id", flat=True)[:limit]
    )
    due = list(Claim.objects.filter(post_id__in=post_ids, status=ClaimStatus.ACTIVE, expires_at__lte=now).order_by("id"))
    for claim in due:
        expire_claim(claim, now=now)
    return len(due)
