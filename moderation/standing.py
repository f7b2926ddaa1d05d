"""Strikes and repeat offenders.

A page with `strike_threshold` or more fact-check strikes in the last `window_days` is a
repeat offender: all its posts get the page multiplier and it loses monetisation, until
enough strikes age out. A strike ends with the action that made it.

Which strikes count, and until when, is moderation.strikes' rule; the standing itself, the rating form's forecast
(moderation.effect_preview) and the owners' portal all count by it. A page whose standing flips has its owners told
(`_tell_owners`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from audit.models import AuditEvent, AuditVerb
from audit.services import build_event, record_event
from core.bulk import update_rows
from core.reconciling import past_grace, warn_redriven
from factcheck.models import Page, Post, Rating
from moderation.distribution import distribute_new_posts, page_post_ids, recompute_page_distributions
from moderation.feed import append_and_publish
from moderation.models import (
    Action,
    DistributionChange,
    Notification,
    NotificationKind,
    PageStanding,
    RepeatOffenderPolicy,
    Strike,
)
from moderation.notice_delivery import record_notifications
from moderation.notices import Notice, notice_rows, owners_of_pages
from moderation.strikes import ages_out, counts_toward_standing, strike_counts

logger = logging.getLogger(__name__)


def give_strikes(struck: list[tuple[Action, str, datetime]]) -> list[AuditEvent]:
    """Strike the pages of these new actions, each (action, StrikeKind, when the strike counts from); returns the
    audit events to store."""
    strikes = Strike.objects.bulk_create(
        [Strike(page_id=action.post.page_id, action=action, kind=kind, created_at=since)
         for action, kind, since in struck]
    )
    return [
        build_event(
            actor=action.created_by, verb=AuditVerb.STRIKE_CREATED, target=strike, post_id=action.post_id,
            data={"page": strike.page_id, "kind": strike.kind, "action": action.pk}, system="enforcement",
        )
        for (action, _, _), strike in zip(struck, strikes, strict=True)
    ]


def end_strikes_of(endings: list[tuple[Action, str, object]], *, now: datetime) -> list[AuditEvent]:
    """End the strikes of these ending actions, each (action, why, who); returns the audit events to store."""
    ending = {action.pk: (action, reason, actor) for action, reason, actor in endings}
    strikes = list(Strike.objects.filter(action_id__in=list(ending), ended_at__isnull=True).order_by("id"))
    Strike.objects.filter(pk__in=[strike.pk for strike in strikes]).update(ended_at=now)
    events = []
    for strike in strikes:
        action, reason, actor = ending[strike.action_id]
        events.append(build_event(
            actor=actor, verb=AuditVerb.STRIKE_ENDED, target=strike, post_id=action.post_id, reason=reason,
            data={"page": strike.page_id, "action": action.pk}, system="enforcement",
        ))
    return events


@dataclass
class StandingChanges:
    """What recomputing some pages' standings changed."""

    flipped: set[int] = field(default_factory=set)  # pages whose repeat-offender state flipped
    # The flipped pages' posts' new distributions, as feed entries not yet appended: the caller appends
    # them with its own, last (the feed's lock is the last of a decision, docs/concurrency.md).
    feed: list[DistributionChange] = field(default_factory=list)
    # The owners' notices of the flipped pages, not yet stored: the caller stores them after its own (the decision
    # that flipped a page is told first, then what it did to the page).
    notices: list[Notification] = field(default_factory=list)


def recompute_standings(
    *, page_ids: list[int], now: datetime, causes: dict[int, str] | None = None,
    ratings: dict[int, Rating] | None = None,
) -> StandingChanges:
    """Update these pages' standings in a fixed number of statements (one decision reaching the copies of
    a claim on hundreds of pages); a page whose repeat-offender state flips, or whose page multiplier the
    policy changed, has every post redistributed. The feed gives each post its cause: the caller's for the
    posts it is deciding (`causes`, post id -> cause), the page's for the rest. `ratings`: page id -> the rating
    whose decision is being carried out there, for the owners' notices of a flip (StandingChanges.notices).

    Runs in the caller's transaction, which holds the posts' locks; locks the pages' standings in page
    id order, after the posts (docs/concurrency.md). Appends nothing to the feed: see StandingChanges.
    """
    page_ids = sorted(set(page_ids))
    if not page_ids:
        return StandingChanges()
    policy = RepeatOffenderPolicy.current()
    PageStanding.objects.bulk_create([PageStanding(page_id=pk) for pk in page_ids], ignore_conflicts=True)
    standings = list(
        PageStanding.objects.select_for_update(no_key=True).filter(page_id__in=page_ids).order_by("page_id")
    )
    counts = strike_counts(page_ids=page_ids, now=now, policy=policy)
    changes, redo = StandingChanges(), []
    before = {standing.page_id: standing.page_multiplier for standing in standings}
    for standing in standings:
        count = counts.get(standing.page_id, 0)
        repeat = count >= policy.strike_threshold
        if repeat != standing.is_repeat_offender:
            changes.flipped.add(standing.page_id)
            standing.since = now if repeat else None
        if repeat != standing.is_repeat_offender or (repeat and standing.page_multiplier != policy.page_multiplier):
            redo.append(standing.page_id)
        standing.active_strikes = count
        standing.is_repeat_offender = repeat
        standing.page_multiplier = policy.page_multiplier if repeat else Decimal("1")
        standing.updated_at = timezone.now()  # what auto_now gives a save()
    fields = ["active_strikes", "is_repeat_offender", "page_multiplier", "since", "updated_at"]
    update_rows(PageStanding, fields, [(s.pk, *(getattr(s, f) for f in fields)) for s in standings])
    for standing in standings:
        if standing.page_id in changes.flipped:
            repeat = standing.is_repeat_offender
            record_event(
                actor=None, verb=AuditVerb.STANDING_CHANGED, target=Page(pk=standing.page_id),
                reason=(f"{standing.active_strikes} strikes in the last {policy.window_days} days"
                        f" ({'at or over' if repeat else 'under'} the threshold of {policy.strike_threshold})"),
                data={"repeat_offender": repeat, "active_strikes": standing.active_strikes}, system="standing",
            )
    # Told: the pages that flipped, and the repeat offenders whose multiplier the policy changed (redone, not flipped).
    changes.notices = _owners_told([(standing, before[standing.page_id], standing.page_id in changes.flipped)
                                    for standing in standings
                                    if standing.page_id in changes.flipped or standing.page_id in redo],
                                   policy=policy, now=now, ratings=ratings or {})
    repeat_now = {standing.page_id: standing.is_repeat_offender for standing in standings}
    for page in Page.objects.filter(pk__in=redo).order_by("pk"):  # rare: every post of the page changes
        if page.pk not in changes.flipped:
            page_cause = "the repeat-offender policy changed the page multiplier"
        elif repeat_now[page.pk]:
            page_cause = "page became a repeat offender"
        else:
            page_cause = "page is no longer a repeat offender"
        changes.feed += recompute_page_distributions(
            post_ids=page_post_ids(page), page=page, cause=page_cause, causes=causes, now=now,
        )
    return changes


def _owners_told(
    changed: list[tuple[PageStanding, Decimal, bool]], *, policy: RepeatOffenderPolicy, now: datetime,
    ratings: dict[int, Rating],
) -> list[Notification]:
    """The notices (unsaved) that tell the owners of each page that became or stopped being a repeat offender,
    whatever did it (a decision's strike, a reversal, strikes ageing out, the repeat-offender policy changed), or
    whose page multiplier the policy changed while it is one. The standing is a restriction of the page's own (every
    post shown less, monetisation suspended) that a post's notice cannot tell in full, and its end is news the owner
    waits for. `changed`: each standing as it is now, with its page multiplier before and whether it flipped;
    `ratings`: page id -> the rating whose decision flipped it, whose notices its own is e-mailed with
    (moderation.notice_delivery)."""
    if not changed:
        return []
    standings = [standing for standing, _, _ in changed]
    pages = {page.pk: page for page in Page.objects.filter(pk__in=[s.page_id for s in standings])}
    # The day each new repeat offender recovers if no strike is added: when enough of its counted strikes have aged
    # out that fewer than the threshold are left (the owners' portal says the same: moderation.selectors).
    counted: dict[int, list[Strike]] = {}
    for strike in (Strike.objects.filter(counts_toward_standing(now=now, policy=policy),
                                         page_id__in=[s.page_id for s in standings if s.is_repeat_offender])
                   .order_by("page_id", "created_at", "id")):
        counted.setdefault(strike.page_id, []).append(strike)
    owners = owners_of_pages(pages)
    rows = []
    for standing, multiplier_before, did_flip in changed:
        strikes = counted.get(standing.page_id, [])
        over = len(strikes) - policy.strike_threshold
        notice = Notice("standing_changed", {
            "page": pages[standing.page_id], "standing": standing, "policy": policy, "before": multiplier_before,
            # Still a repeat offender, at another multiplier: the policy changed what the standing costs.
            "repriced": not did_flip,
            "until": ages_out(strikes[over], policy=policy) if standing.is_repeat_offender and over >= 0 else None,
        }, kind=NotificationKind.STANDING)
        rows += notice_rows(notice, users=owners[standing.page_id], post=None, now=now,
                            rating=ratings.get(standing.page_id))
    return rows


def age_out_strikes(*, now: datetime | None = None) -> int:
    """Let strikes age out: recompute every page that has strikes counted or counting, each in a transaction of
    its own that appends its posts' new distributions to the feed and publishes them. Returns flips.

    Also the reconciler of new posts on repeat offenders' pages whose job was lost: any such post
    without a distribution of its own gets one (moderation.distribution.distribute_new_posts), and those that
    waited past FACTDESK_RECONCILE_AFTER_SECONDS are warned of (core.reconciling).
    """
    now = now or timezone.now()
    flips = 0
    # Pages counted with strikes, and pages with strikes that count now but are not counted: a longer window (the
    # repeat-offender policy changed) brings back strikes a page's stored count had let go.
    counted = set(PageStanding.objects.filter(active_strikes__gt=0).values_list("page_id", flat=True))
    striking = set(Strike.objects.filter(counts_toward_standing(now=now, policy=RepeatOffenderPolicy.current()))
                   .values_list("page_id", flat=True).distinct())
    page_ids = sorted(counted | striking)
    for page_id in page_ids:
        try:
            with transaction.atomic(durable=True):
                changes = recompute_standings(page_ids=[page_id], now=now)
                record_notifications(changes.notices)
                append_and_publish(changes.feed)
        except Exception:  # one page's failure is logged and tried again next hour; the other pages age out now
            logger.exception("could not recompute the standing of page %s; tried again next run", page_id)
            continue
        flips += len(changes.flipped)
    missing = list(
        Post.objects.filter(page__standing__is_repeat_offender=True, distribution__isnull=True)
        .order_by("id").values_list("id", "created_at")[:10_000]
    )
    if missing:
        distribute_new_posts(post_ids=[pk for pk, _ in missing], now=now)
        after = settings.FACTDESK_RECONCILE_AFTER_SECONDS
        warn_redriven(past_grace(f"new posts of repeat offenders still without their page's multiplier {after} s "
                                 "after they arrived", [made for _, made in missing], now=now, grace=after), now=now)
    return flips
