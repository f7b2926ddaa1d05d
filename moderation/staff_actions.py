"""Trust-and-safety decisions: removal, lifting and overriding actions, always with a reason.

Removal is never a fact-check outcome: it is for violence, hate, harassment and
misinformation that risks imminent physical harm. A removed post has distribution 0 and
its page gets a community-standards strike, counted apart from fact-check strikes.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Literal

from django.db import transaction
from django.utils import timezone

from core.formatting import clock
from core.reasons import OWNER_READS, control_problem, reason_problem, written
from core.refusals import Refusal
from factcheck.models import Post
from moderation.appeal_states import grant_removal_appeal, held_by_a_colleague, open_removal_appeal, outcome_notice
from moderation.models import Action, ActionKind, Appeal, EndReason, RemovalGround, StrikeKind
from moderation.notices import Notice
from moderation.pipeline import Change, Ending, NewAction, carry_out, lock_action, lock_post
from moderation.publishing import publish_appeal
from moderation.selectors import active_removal


class RemovalRefused(Refusal):
    """The removal, lift or override cannot be done; the message says why."""

    code = "removal_refused"


def _clean_reason(reason: str, *, missing: str) -> str:
    """A removal's, lift's or override's reason: the owner's notice quotes it (and a removal's or override's statement
    of reasons)."""
    reason = written(reason)
    if not reason:
        raise RemovalRefused(missing)
    if message := reason_problem(reason, read_by=OWNER_READS):
        raise RemovalRefused(message)
    return reason


def _require_staff(user) -> None:
    if not (getattr(user, "is_trust_safety", False) or getattr(user, "is_superuser", False)):
        raise RemovalRefused("Only trust-and-safety staff remove posts or lift actions.", code="forbidden")


@transaction.atomic
def remove_post(*, staff, post_id: int, ground: str, reason: str, now: datetime | None = None) -> Action:
    """Staff remove a post. Not durable: deciding a harm report (durable) and the demo seed remove inside their
    own transaction; takes the post's lock."""
    _require_staff(staff)
    if ground not in RemovalGround.values:
        raise RemovalRefused(f"Choose a ground: {', '.join(RemovalGround.values)}.")
    reason = _clean_reason(reason, missing="A removal needs a reason.")
    now = now or timezone.now()
    post = lock_post(post_id)
    if active_removal(post) is not None:
        raise RemovalRefused("This post is already removed.")
    removal = NewAction(
        kind=ActionKind.REMOVAL, ground=ground, reason=reason.strip(), feed_multiplier=Decimal("0"),
        created_by=staff, strike=StrikeKind.COMMUNITY_STANDARDS, audit_data={"ground": ground},
    )
    outcome = carry_out(
        Change(
            post=post, actor=staff, cause=f"removed ({RemovalGround(ground).label})", create=[removal],
            notice=Notice("removed"),
        ),
        now=now,
    )
    return outcome.created[0]


def _lock_active_action(action_id: int) -> tuple[Post, Action]:
    """Lock the action's post, then the action (the decision side's lock order); refuse an ended one."""
    post, action = lock_action(action_id)
    if action.ended_at is not None:
        # Whoever ended it, and when: a second lift from a page loaded before the first is told what happened.
        by = f" ({action.ended_by.get_username()})" if action.ended_by is not None else ""
        raise RemovalRefused(f"This {action.get_kind_display().lower()} has already ended: "
                             f"{action.get_end_reason_display().lower()}{by} at {clock(action.ended_at)}.")
    return post, action


@transaction.atomic
def lift_action(
    *, actor, action_id: int, reason: str, end_reason: str = EndReason.LIFTED, now: datetime | None = None,
    notice: Notice | None | Literal["lifted"] = "lifted",
) -> Action:
    """End an active action (restore a removed post, lift a label) and recompute at once.

    `notice`: the owner's notice; a decided appeal passes its own, so the owner gets one.
    Staff lifting a removal grant its open removal appeal, if any (moderation.appeal_states): the owner
    reads that the appeal was accepted and the post restored, in that one notice, never "the removal stands".
    Not durable: a removal appeal's reversal lifts inside decide_appeal's transaction; takes the post's lock,
    then the action's.
    """
    _require_staff(actor)
    reason = _clean_reason(reason, missing="Lifting an action needs a reason.")
    now = now or timezone.now()
    post, action = _lock_active_action(action_id)
    granted = None
    lifts_removal = action.kind == ActionKind.REMOVAL and end_reason == EndReason.LIFTED
    appeal = open_removal_appeal(action) if lifts_removal else None
    if appeal is not None:
        _may_grant(appeal, actor=actor, now=now)
        granted = grant_removal_appeal(appeal, actor=actor, reason=reason, now=now)
    if granted is not None:
        notice = outcome_notice(granted)
    elif notice == "lifted":
        notice = Notice("lifted", {"action": action, "reason": reason.strip()})
    carry_out(
        Change(
            post=post, actor=actor, cause=f"{action.get_kind_display().lower()} {end_reason}",
            end=[Ending(action, end_reason, reason.strip())], notice=notice,
        ),
        now=now,
    )
    if granted is not None:
        publish_appeal(granted, external_id=post.external_id)
    return action


def _may_grant(appeal: Appeal, *, actor, now: datetime) -> None:
    """Lifting a removal decides its open appeal, so the appeal's rules hold: never by the person who removed the
    post, and not over a colleague who is reviewing it (unless they left, or let it go overdue)."""
    if appeal.action.created_by_id == actor.pk:
        raise RemovalRefused("You made this removal and the owner has appealed it: another member of trust and "
                             "safety decides the appeal (accepting it restores the post).")
    if held_by_a_colleague(appeal, actor, now=now):
        raise RemovalRefused(f"{appeal.reviewer} is reviewing the owner's appeal of this removal: they decide it "
                             "(accepting it restores the post).")


@transaction.atomic(durable=True)
def override_action(
    *, staff, action_id: int, feed_multiplier, label: str, reason: str, now: datetime | None = None
) -> Action:
    """Replace a fact-check action's multiplier and label with staff's own; the rating itself stays.

    The overridden action ends (and with it its strike); the override is a new action that a
    later rating of the post ends like any other post-level action.
    """
    _require_staff(staff)
    reason = _clean_reason(reason, missing="An override needs a reason.")
    try:
        multiplier = Decimal(str(feed_multiplier))
    except InvalidOperation as exc:
        raise RemovalRefused("The multiplier must be a number between 0 and 1.") from exc
    if not multiplier.is_finite() or not Decimal("0") <= multiplier <= Decimal("1"):
        raise RemovalRefused("The multiplier must be between 0 and 1.")
    multiplier = abs(multiplier)  # -0 is 0: the owner's notice had read "feed distribution ×-0"
    if problem := control_problem(label or ""):
        raise RemovalRefused(f"The label: {problem}")
    now = now or timezone.now()
    post, action = _lock_active_action(action_id)
    if action.kind == ActionKind.REMOVAL:
        raise RemovalRefused("A removal is lifted, not overridden.")
    override = NewAction(
        kind=ActionKind.OVERRIDE, rating=action.rating, verdict=action.verdict, feed_multiplier=multiplier,
        label=(label or "").strip(), reason=reason.strip(), created_by=staff, audit_data={"overrides": action.pk},
    )
    decision = action.rating.decisions.filter(post=post).first() if action.rating_id else None
    outcome = carry_out(
        Change(
            post=post, actor=staff, cause="staff override", end=[Ending(action, EndReason.OVERRIDDEN, reason.strip())],
            create=[override], notice=Notice("overridden"),
            # Appeals are against the rating, so their window counts from the rating's decision.
            notice_at=decision.decided_at if decision is not None else None,
        ),
        now=now,
    )
    return outcome.created[0]
