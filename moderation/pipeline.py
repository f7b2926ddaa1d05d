"""The one consequence pipeline: every change to a post's actions goes through `carry_out`.

A caller (a rating applied, a re-rating, an appeal reversed, a removal, a restore, a lift, an
override, a matched rating on a copy) locks the post with `lock_post`, decides *what* changes
and *why* as a `Change`, and hands it here. In the caller's transaction and in the one lock
order (docs/concurrency.md: post, then actions, then the page's standing, then the feed
sequence) this module then:

1. ends the actions named, and with each its strike;
2. creates the new actions, with their strikes;
3. records the rating's decision on this post, if the change is one (keyed by rating and post);
4. recomputes the page's standing (repeat offender or not);
5. stores each restricting action's statement of reasons;
6. derives the post's distribution and appends any change to the decisions feed;
7. writes the audit events of all of it, and
8. sends the owner's notice (a template, e-mailed after commit).

So no caller writes an action, a strike, a feed entry, a statement or a notice itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal

from audit.models import AuditVerb
from audit.services import record_event
from factcheck.models import Post, Rating
from moderation.distribution import refresh_distributions
from moderation.models import (
    FACT_CHECK_KINDS,
    Action,
    DecisionOutcome,
    PageStanding,
    RatingDecision,
    StatementOfReasons,
)
from moderation.notices import Notice, send_notice
from moderation.notifications import page_owners
from moderation.reasons import build_statement, restricts
from moderation.standing import end_strike_of, give_strike, recompute_standing


def lock_post(post_id: int) -> Post:
    """Lock the post row: the first lock of every decision (see docs/concurrency.md).

    NO KEY: other transactions only insert rows that reference the post (flags, actions,
    statements), and those need not wait for a decision; a second decision on the same post does.
    """
    return Post.objects.select_for_update(no_key=True, of=("self",)).select_related("page").get(pk=post_id)


def lock_action(action_id: int) -> tuple[Post, Action]:
    """Lock an action's post, then the action (the lock order)."""
    post_id = Action.objects.values_list("post_id", flat=True).get(pk=action_id)
    post = lock_post(post_id)
    action = Action.objects.select_for_update(no_key=True, of=("self",)).select_related("rating__organisation").get(pk=action_id)
    return post, action


def active_post_actions(post: Post) -> list[Action]:
    """The post's active post-level actions (fact-check, matched rating, override): what a new rating ends."""
    return list(Action.objects.filter(post=post, kind__in=FACT_CHECK_KINDS, ended_at__isnull=True).order_by("id"))


@dataclass(frozen=True)
class NewAction:
    """An action to create on the post."""

    kind: str
    feed_multiplier: Decimal
    label: str = ""
    warn_sharers: bool = False
    verdict: str = ""
    rating: Rating | None = None
    ground: str = ""
    reason: str = ""
    created_by: object | None = None
    strike: str | None = None  # a StrikeKind, when the action strikes the page
    audit_reason: str = ""
    audit_data: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Ending:
    """An active action to end, with an EndReason and the note the audit log keeps."""

    action: Action
    reason: str
    note: str = ""


@dataclass(frozen=True)
class Change:
    """What changes on one locked post, and why."""

    post: Post
    cause: str  # as the decisions feed shows it
    actor: object | None = None  # the person who decided; None for the enforcement policy
    end: Sequence[Ending] = ()
    create: Sequence[NewAction] = ()
    # A rating's decision on this post: recorded so the reconciler knows it is done.
    decides: Rating | None = None
    notice: Notice | None = None
    # When the owner was told of the decision the new actions rest on (their appeal window opens);
    # the actions' own time when None.
    notice_at: datetime | None = None


@dataclass
class Outcome:
    created: list[Action]
    ended: list[Action]
    decision: RatingDecision | None
    standing_changed: bool


def carry_out(change: Change, *, now: datetime) -> Outcome:
    """Carry out a change on a post whose row lock the caller holds (`lock_post`), in its transaction."""
    post = change.post
    system = "enforcement" if change.actor is None else "factdesk"
    ended = []
    for ending in change.end:
        _end(ending, actor=change.actor, now=now, system=system)
        ended.append(ending.action)
    created = [_create(spec, post=post, now=now, system=system) for spec in change.create]
    decision = None
    if change.decides is not None:
        decision = record_decision(
            rating=change.decides, post=post, outcome=DecisionOutcome.APPLIED, now=now,
            action=next((a for a in created if a.kind in FACT_CHECK_KINDS), None),
        )
    standing_changed = recompute_standing(page=post.page, now=now)
    restricting = [action for action in created if restricts(action)]
    statements = _store_statements(restricting, post=post, notice_at=change.notice_at)
    refresh_distributions(post_ids=[post.pk], page=post.page, cause=change.cause, now=now)
    if change.notice is not None:
        context = {
            "statement": statements[0] if statements else None,
            "action": created[0] if created else None,
            **change.notice.context,
        }
        notice = Notice(change.notice.template, context, kind=change.notice.kind, appeal=change.notice.appeal)
        send_notice(notice, users=page_owners(post), post=post, now=now)
    return Outcome(created=created, ended=ended, decision=decision, standing_changed=standing_changed)


def record_decision(
    *, rating: Rating, post: Post, outcome: str, now: datetime, action: Action | None = None
) -> RatingDecision:
    decision = RatingDecision.objects.create(rating=rating, post=post, outcome=outcome, action=action, decided_at=now)
    if outcome == DecisionOutcome.APPLIED:
        record_event(
            actor=None, verb=AuditVerb.DECISION_APPLIED, target=rating, post_id=post.pk,
            data={"action": action.pk if action else None, "verdict": rating.verdict}, system="enforcement",
        )
    return decision


def _end(ending: Ending, *, actor, now: datetime, system: str) -> None:
    action = ending.action
    action.ended_at = now
    action.end_reason = ending.reason
    action.ended_by = actor
    action.save(update_fields=["ended_at", "end_reason", "ended_by"])
    record_event(
        actor=actor, verb=AuditVerb.ACTION_ENDED, target=action, post_id=action.post_id,
        reason=ending.note or ending.reason, data={"end_reason": ending.reason}, system=system,
    )
    end_strike_of(action, now=now, reason=ending.reason, actor=actor)


def _create(spec: NewAction, *, post: Post, now: datetime, system: str) -> Action:
    action = Action.objects.create(
        post=post, kind=spec.kind, rating=spec.rating, verdict=spec.verdict, feed_multiplier=spec.feed_multiplier,
        label=spec.label, warn_sharers=spec.warn_sharers, ground=spec.ground, reason=spec.reason,
        created_at=now, created_by=spec.created_by,
    )
    record_event(
        actor=spec.created_by, verb=AuditVerb.ACTION_CREATED, target=action, post_id=post.pk,
        reason=spec.audit_reason or spec.reason,
        data={"kind": action.kind, "multiplier": str(action.feed_multiplier), "label": action.label, **spec.audit_data},
        system=system,
    )
    if spec.strike is not None:
        give_strike(action=action, kind=spec.strike, now=now)
    return action


def _store_statements(actions: list[Action], *, post: Post, notice_at: datetime | None) -> list[StatementOfReasons]:
    if not actions:
        return []
    flag_sources = set(post.flags.values_list("source", flat=True).distinct())
    standing = PageStanding.objects.filter(page_id=post.page_id).first()
    statements = [
        build_statement(
            action=action, post=post, flag_sources=flag_sources, standing=standing,
            notice_at=notice_at or action.created_at,
        )
        for action in actions
    ]
    return StatementOfReasons.objects.bulk_create(statements)
