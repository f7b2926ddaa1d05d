"""Turning ratings into distribution actions, by the enforcement policy.

`apply_rating` is the one place a rating becomes a decision. It is idempotent and order-safe:
run twice, it does nothing the second time; run for a rating that was superseded before its
job ran, it records that and leaves the newer rating's actions alone. The job after commit
and the periodic reconciler both call it.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from audit.models import AuditVerb
from audit.services import record_event
from factcheck.models import Post, Rating, Verdict
from moderation.distribution import refresh_distributions
from moderation.models import (
    FACT_CHECK_KINDS,
    Action,
    ActionKind,
    DecisionOutcome,
    EndReason,
    EnforcementPolicy,
    NotificationKind,
    RatingDecision,
    StrikeKind,
)
from moderation.notifications import notify, page_owners
from moderation.standing import end_strike_of, give_strike, recompute_standing

logger = logging.getLogger(__name__)

# Verdicts that never restrict a post: `true` lifts earlier fact-check actions, `not_eligible`
# only takes the post out of the queue.
NO_ACTION_VERDICTS = (Verdict.TRUE, Verdict.NOT_ELIGIBLE)


def policy_for(verdict: str) -> EnforcementPolicy | None:
    return EnforcementPolicy.objects.filter(verdict=verdict).first()


def end_action(*, action: Action, reason: str, now: datetime, actor=None, note: str = "") -> None:
    action.ended_at = now
    action.end_reason = reason
    action.ended_by = actor
    action.save(update_fields=["ended_at", "end_reason", "ended_by"])
    record_event(
        actor=actor, verb=AuditVerb.ACTION_ENDED, target=action, post_id=action.post_id,
        reason=note or reason, data={"end_reason": reason}, system="enforcement",
    )
    end_strike_of(action, now=now, reason=reason, actor=actor)


def _action_for(rating: Rating, policy: EnforcementPolicy, now: datetime) -> Action | None:
    if rating.verdict in NO_ACTION_VERDICTS:
        return None
    if policy.feed_multiplier >= 1 and not policy.label:
        return None
    action = Action.objects.create(
        post=rating.post, kind=ActionKind.FACT_CHECK, rating=rating, verdict=rating.verdict,
        feed_multiplier=policy.feed_multiplier, label=policy.label, warn_sharers=policy.warn_sharers,
        reason=rating.rationale, created_at=now,
    )
    record_event(
        actor=None, verb=AuditVerb.ACTION_CREATED, target=action, post_id=rating.post_id,
        reason=f"rated {rating.get_verdict_display()}",
        data={"kind": action.kind, "multiplier": str(action.feed_multiplier), "label": action.label,
              "rating": rating.pk, "policy": {"verdict": policy.verdict, "page_strike": policy.page_strike}},
        system="enforcement",
    )
    if policy.page_strike:
        give_strike(action=action, kind=StrikeKind.FACT_CHECK, now=now)
    return action


@transaction.atomic
def apply_rating(*, rating_id: int, now: datetime | None = None) -> RatingDecision:
    now = now or timezone.now()
    # Lock order everywhere on the decision side: post, then page standing, then feed.
    rating = Rating.objects.select_related("post__page", "organisation").get(pk=rating_id)
    Post.objects.select_for_update(of=("self",)).get(pk=rating.post_id)
    existing = RatingDecision.objects.filter(rating_id=rating_id).first()
    if existing is not None:
        return existing
    rating.refresh_from_db(fields=["is_current"])
    if not rating.is_current:
        return RatingDecision.objects.create(rating=rating, outcome=DecisionOutcome.SUPERSEDED, decided_at=now)

    for old in Action.objects.filter(post_id=rating.post_id, kind__in=FACT_CHECK_KINDS, ended_at__isnull=True):
        end_action(action=old, reason=EndReason.SUPERSEDED, now=now, note=f"superseded by rating {rating.pk}")
    policy = policy_for(rating.verdict)
    action = _action_for(rating, policy, now) if policy is not None else None
    decision = RatingDecision.objects.create(
        rating=rating, outcome=DecisionOutcome.APPLIED, action=action, decided_at=now
    )
    record_event(
        actor=None, verb=AuditVerb.DECISION_APPLIED, target=rating, post_id=rating.post_id,
        data={"action": action.pk if action else None, "verdict": rating.verdict}, system="enforcement",
    )
    page = rating.post.page
    recompute_standing(page=page, now=now)
    refresh_distributions(
        post_ids=[rating.post_id], page=page, cause=f"rated {rating.get_verdict_display()}", now=now
    )
    if action is not None:
        _notify_owners(rating=rating, action=action, now=now)
    return decision


def _notify_owners(*, rating: Rating, action: Action, now: datetime) -> None:
    post = rating.post
    effect = [f"its feed distribution is multiplied by {action.feed_multiplier.normalize()}"] if action.feed_multiplier < 1 else []
    if action.label:
        effect.append(f'it carries the label "{action.label}"')
    notify(
        users=page_owners(post), kind=NotificationKind.DECISION, post=post, now=now,
        subject=f"Your post {post.external_id} was rated {rating.get_verdict_display()}",
        body=(f"{rating.organisation.name}, an independent fact-checker, rated your post {post.external_id} on "
              f"{post.page.name} {rating.get_verdict_display()}. Your post stays up, but {' and '.join(effect)}.\n\n"
              f"Their rationale: {rating.rationale}\n\n"
              "You can dispute the rating or tell them you corrected the post, within 6 months, from the Factdesk portal."),
    )


def undecided_ratings(*, now: datetime | None = None):
    """Ratings committed a while ago that still have no decision: their job was lost."""
    now = now or timezone.now()
    cutoff = now - timedelta(seconds=settings.FACTDESK_RECONCILE_AFTER_SECONDS)
    return Rating.objects.filter(decision__isnull=True, created_at__lte=cutoff).order_by("id")


def reconcile_decisions(*, now: datetime | None = None, limit: int = 1000) -> int:
    """Apply every rating whose decision is missing; returns how many were applied.

    One rating that fails (and is logged) does not hold back the others behind it.
    """
    applied = 0
    for rating_id in undecided_ratings(now=now).values_list("id", flat=True)[:limit]:
        try:
            apply_rating(rating_id=rating_id)
        except Exception:
            logger.exception("reconciler could not apply rating %s; it stays undecided and is retried", rating_id)
            continue
        applied += 1
    return applied
