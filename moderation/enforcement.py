"""Turning ratings into distribution actions, by the enforcement policy.

`apply_rating` is the one place a rating becomes a decision; the consequences are the
pipeline's (moderation.pipeline). It is idempotent and order-safe:
run twice, it does nothing the second time; run for a rating that was superseded before its
job ran, it records that and leaves the newer rating's actions alone. The job after commit
and the periodic reconciler both call it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Literal

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from core.reconciling import Redriven, warn_redriven
from factcheck.models import Rating, Verdict
from moderation.models import Action, ActionKind, DecisionOutcome, EndReason, RatingDecision, StrikeKind
from moderation.notices import Notice
from moderation.pipeline import Change, Ending, NewAction, active_post_actions, carry_out, lock_post, record_decision
from moderation.policy import current_effect

logger = logging.getLogger(__name__)


def action_for(rating: Rating, *, kind: str = ActionKind.FACT_CHECK) -> NewAction | None:
    """The action the policy gives a rating's verdict now (moderation.policy.effect_of), or None when
    that effect restricts nothing (True, Not eligible, a policy row without effect)."""
    effect = current_effect(rating.verdict)
    if not effect.restricts:
        return None
    return NewAction(
        kind=kind, rating=rating, verdict=rating.verdict, feed_multiplier=effect.feed_multiplier,
        label=effect.label, warn_sharers=effect.warn_sharers, reason=rating.rationale,
        strike=StrikeKind.FACT_CHECK if effect.strike else None,
        audit_reason=f"rated {rating.get_verdict_display()}",
        audit_data={"rating": rating.pk, "policy": {"verdict": rating.verdict, "page_strike": effect.strike}},
    )


def replaced_verdict(ending: Sequence[Action]) -> str:
    """The verdict (its label) of the fact-check action a new rating ends, for the owner's notice to name what
    the new rating replaces ("changed from False to Missing context"): the post's own rating's, the claim's it
    carried as a copy, or the one staff overrode; "" when the rating ends none."""
    verdict = next((action.verdict for action in ending if action.verdict), "")
    return Verdict(verdict).label if verdict else ""


def _verdict_before(rating: Rating, *, ending: Sequence[Action]) -> str:
    """What the post was rated before `rating`: the action it ends says (`replaced_verdict`), else the rating it
    supersedes, which restricted nothing or whose action staff lifted; "" for the post's first rating."""
    if replaced := replaced_verdict(ending):
        return replaced
    before = rating.supersedes.values_list("verdict", flat=True).first()
    return Verdict(before).label if before else ""


@transaction.atomic
def apply_rating(
    *, rating_id: int, now: datetime | None = None, end_reason: str = EndReason.SUPERSEDED,
    notice: Notice | None | Literal["rated"] = "rated",
) -> RatingDecision:
    """Turn a rating into its decision on its post, through the pipeline.

    `end_reason`: why the post's earlier actions end (superseded, or reversed on appeal).
    `notice`: the owner's notice; by default the "rated" notice when the rating restricts the
    post; an appeal's decision passes its own (one notice per outcome, not two).

    Not durable: an appeal's reversal and the demo seed apply a rating inside their own transaction; the
    job and the reconciler, its other callers, open a durable one around it. Takes the post's lock first.
    """
    now = now or timezone.now()
    rating = Rating.objects.select_related("organisation").get(pk=rating_id)
    post = lock_post(rating.post_id)
    existing = RatingDecision.objects.filter(rating_id=rating_id, post=post).first()
    if existing is not None:
        return existing
    rating.refresh_from_db(fields=["is_current"])
    if not rating.is_current:
        return record_decision(rating=rating, post=post, outcome=DecisionOutcome.SUPERSEDED, now=now)
    new = action_for(rating)
    ending = active_post_actions(post)
    if notice == "rated":
        # The owner hears of a new restriction, and of an earlier one this rating lifts, with what it replaces.
        # What it replaces is read only when a notice goes (a first rating that restricts nothing sends none).
        told = "rated" if new is not None else "rating_cleared" if ending else None
        notice = Notice(told, {"rating": rating, "previous": _verdict_before(rating, ending=ending)}) if told else None
    outcome = carry_out(
        Change(
            post=post, cause=f"rated {rating.get_verdict_display()}", decides=rating,
            end=[Ending(old, end_reason, f"superseded by rating {rating.pk}") for old in ending],
            create=[new] if new is not None else [], notice=notice,
        ),
        now=now,
    )
    return outcome.decision


def undecided_ratings(*, now: datetime | None = None):
    """Ratings committed a while ago that still have no decision: their job was lost."""
    now = now or timezone.now()
    cutoff = now - timedelta(seconds=settings.FACTDESK_RECONCILE_AFTER_SECONDS)
    # A rating's decision on its own post; decisions on matched copies do not count here.
    decided = RatingDecision.objects.filter(rating=OuterRef("pk"), post=OuterRef("post_id"))
    return Rating.objects.filter(~Exists(decided), created_at__lte=cutoff).order_by("id")


def reconcile_decisions(*, now: datetime | None = None, limit: int = 1000) -> int:
    """Apply every rating whose decision is missing; returns how many were applied.

    One rating that fails (and is logged) does not hold back the others behind it. Those it applied are logged as
    one warning (core.reconciling): normally there are none (the job after commit decides each rating within a
    second), so any is a lost or late job that the team should hear of (Redis down, a worker killed, the decisions
    queue behind).
    """
    now = now or timezone.now()
    applied: list[int] = []
    made_at: list[datetime] = []
    for rating_id, made in undecided_ratings(now=now).values_list("id", "created_at")[:limit]:
        try:
            with transaction.atomic(durable=True):
                apply_rating(rating_id=rating_id)
        except Exception:
            logger.exception("reconciler could not apply rating %s; it stays undecided and is retried", rating_id)
            continue
        applied.append(rating_id)
        made_at.append(made)
    after = settings.FACTDESK_RECONCILE_AFTER_SECONDS
    warn_redriven(Redriven(f"ratings still without a decision {after} s after they were made", len(applied),
                           min(made_at, default=None), ids=applied, id_label="rating ids"), now=now)
    return len(applied)
