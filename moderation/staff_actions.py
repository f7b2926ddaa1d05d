"""Trust-and-safety decisions: removal, lifting and overriding actions, restoring a rating's effect, always with a
reason.

Removal is never a fact-check outcome: it is for violence, hate, harassment and
misinformation that risks imminent physical harm. A removed post has distribution 0 and
its page gets a community-standards strike, counted apart from fact-check strikes.

Restoring a rating's effect takes back a lift or an override made by mistake: the post gets again what the rating
it carries does under the policy, without anyone re-rating it (staff never rate).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Literal

from django.db import transaction
from django.utils import timezone

from core.formatting import clock
from core.reasons import OWNER_READS, label_problem, reason_problem, written
from core.refusals import Refusal
from factcheck.models import Post, Rating
from moderation.appeal_states import (
    grant_removal_appeal,
    held_by_a_colleague,
    open_matched_appeal,
    open_removal_appeal,
    outcome_notice,
    transition,
)
from moderation.enforcement import action_for
from moderation.models import (
    Action,
    ActionKind,
    Appeal,
    DecisionOutcome,
    EndReason,
    RatingDecision,
    RemovalGround,
    StrikeKind,
)
from moderation.notices import Notice
from moderation.pipeline import Change, Ending, NewAction, active_post_actions, carry_out, lock_action, lock_post
from moderation.publishing import publish_appeal
from moderation.selectors import active_removal, fact_check_decision, rating_carried


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
    if problem := label_problem((label or "").strip()):
        raise RemovalRefused(f"The label: {problem}")
    now = now or timezone.now()
    post, action = _lock_active_action(action_id)
    if action.kind == ActionKind.REMOVAL:
        raise RemovalRefused("A removal is lifted, not overridden.")
    override = NewAction(
        kind=ActionKind.OVERRIDE, rating=action.rating, verdict=action.verdict, feed_multiplier=multiplier,
        label=(label or "").strip(), reason=reason.strip(), created_by=staff, audit_data={"overrides": action.pk},
    )
    decision = fact_check_decision(post)
    outcome = carry_out(
        Change(
            post=post, actor=staff, cause="staff override", end=[Ending(action, EndReason.OVERRIDDEN, reason.strip())],
            create=[override], notice=Notice("overridden"),
            # Appeals are against the rating (a copy's, the match), so their window is that decision's.
            notice_at=decision.notice_at if decision is not None else None,
        ),
        now=now,
    )
    return outcome.created[0]


@dataclass(frozen=True)
class Restoration:
    """What restoring a post's rating's effect does: the rating the post carries (its own, or as a copy its claim's),
    the action the policy gives that rating now, the staff overrides standing in its place (they end), and the
    rating's decision on the post (its time: the new strike counts from it)."""

    rating: Rating
    action: NewAction
    replaces: list[Action]
    decision: RatingDecision

    @property
    def matched(self) -> bool:
        return self.action.kind == ActionKind.MATCHED_RATING


def restoration_of(post: Post) -> Restoration:
    """What restoring the rating's effect on this post would do, or the refusal saying why there is nothing to
    restore. Reads no lock: `restore_rating_effect` asks again under the post's lock; the admin asks to offer it."""
    if active_removal(post) is not None:
        raise RemovalRefused("This post is removed: restore the post first (lift its removal); its rating's effect "
                             "can be restored after, if it was lifted.")
    rating = rating_carried(post)
    if rating is None:
        raise RemovalRefused("This post carries no rating now: there is no rating's effect to restore.")
    named = f"{rating.organisation.name}'s {rating.get_verdict_display()} rating"
    decision = RatingDecision.objects.filter(rating=rating, post=post, outcome=DecisionOutcome.APPLIED).first()
    if decision is None:
        raise RemovalRefused(f"{named} has not been applied to this post yet: Factdesk applies it on its own "
                             "within minutes.")
    if decision.action_id is None:
        raise RemovalRefused(f"{named} did not demote or label this post when it was applied: there is no effect "
                             "to restore.")
    standing = active_post_actions(post)
    if any(action.rating_id == rating.pk and action.kind != ActionKind.OVERRIDE for action in standing):
        raise RemovalRefused(f"The effect of {named} already stands on this post (restored meanwhile, or never "
                             "lifted): there is nothing to restore.")
    kind = ActionKind.FACT_CHECK if rating.post_id == post.pk else ActionKind.MATCHED_RATING
    action = action_for(rating, kind=kind)
    if action is None:
        raise RemovalRefused(f"Under the enforcement policy today a {rating.get_verdict_display()} rating does not "
                             "demote or label a post: there is no effect to restore.")
    return Restoration(rating=rating, action=action, replaces=standing, decision=decision)


@transaction.atomic(durable=True)
def restore_rating_effect(*, staff, post_id: int, reason: str, now: datetime | None = None) -> Action:
    """Give a post again the effect of the rating it carries, after staff lifted or overrode it by mistake.

    The action, label and strike are the enforcement policy's today (`action_for`, as for any decision made now;
    docs/architecture.md says why not the policy at the rating), marked `restored`: the rating's decision again,
    not a new one of its kind. The strike counts from the rating's decision: taking back a mistake never lengthens a
    page's time as a repeat offender. The owner's appeal window counts from this restore, as its notice says
    (moderation.selectors.FactCheckDecision.notice_at): the post is restricted anew, perhaps after the first window
    closed while it was not. An override standing in the rating's place ends (lifted, with this reason), and a copy's
    open appeal of its match is against the match as restored. Takes the post's lock, then reads what to restore
    under it: a second restore is refused.
    """
    _require_staff(staff)
    reason = _clean_reason(reason, missing="Restoring a rating's effect needs a reason.").strip()
    now = now or timezone.now()
    post = lock_post(post_id)
    restoration = restoration_of(post)
    rating = restoration.rating
    action = replace(
        restoration.action, created_by=staff, audit_reason=reason, strike_since=restoration.decision.decided_at,
        restored=True, audit_data={**restoration.action.audit_data, "restores": rating.pk,
                                   "ends": [old.pk for old in restoration.replaces]},
    )
    outcome = carry_out(
        Change(
            post=post, actor=staff, cause=f"{rating.get_verdict_display()} rating's effect restored by staff",
            end=[Ending(old, EndReason.LIFTED, reason) for old in restoration.replaces], create=[action],
            notice=Notice("rating_restored", {"rating": rating, "reason": reason, "matched": restoration.matched}),
        ),
        now=now,
    )
    restored = outcome.created[0]
    if restoration.matched:
        _appeal_against_restored_match(post, restored, actor=staff, now=now)
    return restored


def _appeal_against_restored_match(post: Post, restored: Action, *, actor, now: datetime) -> None:
    """The copy's open appeal of its match ("not the same claim") was filed against the matched action staff lifted
    or overrode: it is against the match as restored now, so that its owner and its deciders read the action in force
    (the event says so, in the timeline). Under the post's lock, as every appeal transition is."""
    appeal = open_matched_appeal(post)
    if appeal is None or appeal.action_id == restored.pk:
        return
    appeal.action = restored
    transition(appeal, to=appeal.status, actor=actor, now=now,
               reason="Trust and safety restored the match's effect, which they had lifted or overridden: this "
                      "appeal is now against the match as restored.")
    appeal.save(update_fields=["action", "status", "version"])
