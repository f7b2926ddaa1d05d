"""Strikes and repeat offenders.

A page with `strike_threshold` or more fact-check strikes in the last `window_days` is a
repeat offender: all its posts get the page multiplier and it loses monetisation, until
enough strikes age out. A strike ends with the action that made it.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from audit.models import AuditVerb
from audit.services import record_event
from factcheck.models import Page, Post
from moderation.distribution import page_post_ids, refresh_distributions, refresh_posts
from moderation.models import Action, PageStanding, RepeatOffenderPolicy, Strike, StrikeKind


def give_strike(*, action: Action, kind: str, now: datetime) -> Strike:
    strike = Strike.objects.create(page_id=action.post.page_id, action=action, kind=kind, created_at=now)
    record_event(
        actor=action.created_by, verb=AuditVerb.STRIKE_CREATED, target=strike, post_id=action.post_id,
        data={"page": action.post.page_id, "kind": kind, "action": action.pk}, system="enforcement",
    )
    return strike


def end_strike_of(action: Action, *, now: datetime, reason: str, actor=None) -> None:
    strike = Strike.objects.filter(action=action, ended_at__isnull=True).first()
    if strike is None:
        return
    strike.ended_at = now
    strike.save(update_fields=["ended_at"])
    record_event(
        actor=actor, verb=AuditVerb.STRIKE_ENDED, target=strike, post_id=action.post_id, reason=reason,
        data={"page": strike.page_id, "action": action.pk}, system="enforcement",
    )


def active_fact_check_strikes(page: Page, *, now: datetime, policy: RepeatOffenderPolicy) -> int:
    since = now - timedelta(days=policy.window_days)
    return Strike.objects.filter(
        page=page, kind=StrikeKind.FACT_CHECK, ended_at__isnull=True, created_at__gt=since
    ).count()


def recompute_standing(*, page: Page, now: datetime) -> bool:
    """Update the page's standing; if its repeat-offender state flips, redo all its posts.

    Runs inside the caller's transaction, which holds the page's standing row lock.
    Returns whether the repeat-offender state changed.
    """
    policy = RepeatOffenderPolicy.current()
    standing, _ = PageStanding.objects.select_for_update().get_or_create(page=page)
    count = active_fact_check_strikes(page, now=now, policy=policy)
    repeat = count >= policy.strike_threshold
    flipped = repeat != standing.is_repeat_offender
    multiplier_changed = repeat and standing.page_multiplier != policy.page_multiplier
    standing.active_strikes = count
    standing.is_repeat_offender = repeat
    standing.page_multiplier = policy.page_multiplier if repeat else 1
    if flipped:
        standing.since = now if repeat else None
    standing.save()
    if flipped:
        record_event(
            actor=None, verb=AuditVerb.STANDING_CHANGED, target=page,
            reason=(f"{count} strikes in the last {policy.window_days} days"
                    f" ({'at or over' if repeat else 'under'} the threshold of {policy.strike_threshold})"),
            data={"repeat_offender": repeat, "active_strikes": count}, system="standing",
        )
    if flipped or multiplier_changed:
        refresh_distributions(
            post_ids=page_post_ids(page), page=page,
            cause="page became a repeat offender" if repeat else "page is no longer a repeat offender", now=now,
        )
    return flipped


def refresh_standings(*, now: datetime | None = None) -> int:
    """Let strikes age out: recompute every page that has strikes counted. Returns flips.

    Also the reconciler of new posts on repeat offenders' pages whose job was lost: any such post
    without a distribution of its own gets one.
    """
    now = now or timezone.now()
    flips = 0
    page_ids = list(PageStanding.objects.filter(active_strikes__gt=0).values_list("page_id", flat=True))
    for page in Page.objects.filter(pk__in=page_ids).order_by("pk"):
        with transaction.atomic():
            flips += recompute_standing(page=page, now=now)
    missing = list(
        Post.objects.filter(page__standing__is_repeat_offender=True, distribution__isnull=True)
        .order_by("id").values_list("id", flat=True)[:10_000]
    )
    if missing:
        refresh_posts(post_ids=missing, now=now)
    return flips
