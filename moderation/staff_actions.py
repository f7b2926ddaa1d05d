"""Trust-and-safety decisions: removal, lifting and overriding actions, always with a reason.

Removal is never a fact-check outcome: it is for violence, hate, harassment and
misinformation that risks imminent physical harm. A removed post has distribution 0 and
its page gets a community-standards strike, counted apart from fact-check strikes.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal, InvalidOperation

from django.db import transaction
from django.utils import timezone

from audit.models import AuditVerb
from audit.services import record_event
from factcheck.models import Post
from moderation.distribution import refresh_distributions
from moderation.enforcement import end_action
from moderation.models import Action, ActionKind, EndReason, NotificationKind, RemovalGround, StrikeKind
from moderation.notifications import notify, page_owners
from moderation.standing import give_strike, recompute_standing


class RemovalRefused(Exception):
    """The removal or lift cannot be done; the message says why."""


def _require_staff(user) -> None:
    if not (getattr(user, "is_trust_safety", False) or getattr(user, "is_superuser", False)):
        raise RemovalRefused("Only trust-and-safety staff remove posts or lift actions.")


@transaction.atomic
def remove_post(*, staff, post_id: int, ground: str, reason: str, now: datetime | None = None) -> Action:
    _require_staff(staff)
    if ground not in RemovalGround.values:
        raise RemovalRefused(f"Choose a ground: {', '.join(RemovalGround.values)}.")
    if not (reason or "").strip():
        raise RemovalRefused("A removal needs a reason.")
    now = now or timezone.now()
    post = Post.objects.select_for_update(of=("self",)).select_related("page").get(pk=post_id)
    if Action.objects.filter(post=post, kind=ActionKind.REMOVAL, ended_at__isnull=True).exists():
        raise RemovalRefused("This post is already removed.")
    action = Action.objects.create(
        post=post, kind=ActionKind.REMOVAL, ground=ground, reason=reason.strip(), feed_multiplier=0,
        created_at=now, created_by=staff,
    )
    record_event(
        actor=staff, verb=AuditVerb.ACTION_CREATED, target=action, post_id=post.pk, reason=action.reason,
        data={"kind": action.kind, "ground": ground},
    )
    give_strike(action=action, kind=StrikeKind.COMMUNITY_STANDARDS, now=now)
    recompute_standing(page=post.page, now=now)
    refresh_distributions(post_ids=[post.pk], page=post.page, cause=f"removed ({action.get_ground_display()})", now=now)
    notify(
        users=page_owners(post), kind=NotificationKind.DECISION, post=post, now=now,
        subject=f"Your post {post.external_id} was removed",
        body=(f"Your post {post.external_id} on {post.page.name} was removed under the community standards "
              f"({action.get_ground_display()}).\n\nReason: {action.reason}\n\n"
              "You can appeal this decision within 6 months from the Factdesk portal."),
    )
    return action


def _lock_active_action(action_id: int) -> tuple[Post, Action]:
    """Lock the action's post, then the action (the decision side's lock order); refuse an ended one."""
    post_id = Action.objects.values_list("post_id", flat=True).get(pk=action_id)
    post = Post.objects.select_for_update(of=("self",)).select_related("page").get(pk=post_id)
    action = Action.objects.select_for_update().get(pk=action_id)
    if action.ended_at is not None:
        raise RemovalRefused("This action has already ended.")
    return post, action


@transaction.atomic
def lift_action(
    *, actor, action_id: int, reason: str, end_reason: str = EndReason.LIFTED, now: datetime | None = None,
    notify_owners: bool = True,
) -> Action:
    """End an active action (restore a removed post, lift a label) and recompute at once.

    `notify_owners=False` when the caller tells the owners itself (a decided appeal does).
    """
    _require_staff(actor)
    if not (reason or "").strip():
        raise RemovalRefused("Lifting an action needs a reason.")
    now = now or timezone.now()
    post, action = _lock_active_action(action_id)
    end_action(action=action, reason=end_reason, now=now, actor=actor, note=reason.strip())
    recompute_standing(page=post.page, now=now)
    refresh_distributions(post_ids=[post.pk], page=post.page, cause=f"{action.get_kind_display().lower()} {end_reason}", now=now)
    if notify_owners:
        what = "restored" if action.kind == ActionKind.REMOVAL else f"no longer under its {action.get_kind_display().lower()} action"
        notify(
            users=page_owners(post), kind=NotificationKind.DECISION, post=post, now=now,
            subject=f"Your post {post.external_id} was {'restored' if action.kind == ActionKind.REMOVAL else 'cleared'}",
            body=f"Trust and safety reviewed your post {post.external_id} on {post.page.name}: it is {what}.\n\n"
                 f"Reason: {reason.strip()}",
        )
    return action


@transaction.atomic
def override_action(
    *, staff, action_id: int, feed_multiplier, label: str, reason: str, now: datetime | None = None
) -> Action:
    """Replace a fact-check action's multiplier and label with staff's own; the rating itself stays.

    The overridden action ends (and with it its strike); the override is a new action that a
    later rating of the post ends like any other post-level action.
    """
    _require_staff(staff)
    if not (reason or "").strip():
        raise RemovalRefused("An override needs a reason.")
    try:
        multiplier = Decimal(str(feed_multiplier))
    except InvalidOperation as exc:
        raise RemovalRefused("The multiplier must be a number between 0 and 1.") from exc
    if not Decimal("0") <= multiplier <= Decimal("1"):
        raise RemovalRefused("The multiplier must be between 0 and 1.")
    now = now or timezone.now()
    post, action = _lock_active_action(action_id)
    if action.kind == ActionKind.REMOVAL:
        raise RemovalRefused("A removal is lifted, not overridden.")
    end_action(action=action, reason=EndReason.OVERRIDDEN, now=now, actor=staff, note=reason.strip())
    override = Action.objects.create(
        post=post, kind=ActionKind.OVERRIDE, rating=action.rating, verdict=action.verdict, feed_multiplier=multiplier,
        label=(label or "").strip(), reason=reason.strip(), created_at=now, created_by=staff,
    )
    record_event(
        actor=staff, verb=AuditVerb.ACTION_CREATED, target=override, post_id=post.pk, reason=override.reason,
        data={"kind": override.kind, "multiplier": str(multiplier), "label": override.label, "overrides": action.pk},
    )
    recompute_standing(page=post.page, now=now)
    refresh_distributions(post_ids=[post.pk], page=post.page, cause="staff override", now=now)
    notify(
        users=page_owners(post), kind=NotificationKind.DECISION, post=post, now=now,
        subject=f"The distribution of your post {post.external_id} was changed",
        body=(f"Trust and safety changed how your post {post.external_id} on {post.page.name} is distributed: "
              f"feed distribution x{multiplier.normalize()}"
              + (f', label "{override.label}"' if override.label else ", no label")
              + f".\n\nReason: {override.reason}\n\nThe fact-checker's rating stands; you can still dispute it."),
    )
    return override
