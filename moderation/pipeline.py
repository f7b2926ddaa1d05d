"""The one consequence pipeline: every change to a post's actions goes through `carry_out`.

A caller (a rating applied, a re-rating, an appeal reversed, a removal, a restore, a lift, an
override, a matched rating on a copy or its end when the copy is unlinked) locks the post with
`lock_post`, decides *what* changes and *why* as a `Change`, and hands it here. In the caller's
transaction and in the one lock order (docs/concurrency.md: post, then actions, then the page's standing, then the feed
sequence) `carry_out_many` then takes these steps, each one set-based for all the posts:

1. `_end_actions`: ends the actions named, and with each its strike;
2. `_create_actions`: creates the new actions, with their strikes;
3. `_record_decisions`: records each rating's decision on its post (keyed by rating and post);
4. `follow_decisions` (moderation.report_outcomes): answers the flags the change answers (a removal: every
   open flag of the post; a rating: its misinformation flags), with their `report.decided` events, and moves
   the post out of the fact-checkers' queue on a removal, back when the removal is lifted;
5. stores the audit events of steps 1 to 3;
6. `recompute_standings`: the pages' standings (repeat offender or not), under their row locks;
7. `_store_statements`: each restricting action's statement of reasons;
8. `recompute_distributions`: each post's distribution, and the feed entries of those that changed;
9. `_send_notices`: renders the owners' notices (templates) and stores them, e-mailed after commit, with those of
   step 6 (a page that became or stopped being a repeat offender) after them;
10. `append_to_feed`: takes the decisions feed's global lock, the last lock, and appends the entries;
11. `publish_changes`: puts the same entries in the webhook outbox, under that lock.

The feed's lock is global (every decision takes it), so it comes after all the work that can take
long, the notices' templates included, and is held only for the two inserts before commit. No
caller writes an action, a strike, a feed entry, a statement, a notice or an outbox event itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from decimal import Decimal

from django.db.models import OuterRef, Q, Subquery

from audit.models import AuditEvent, AuditVerb
from audit.services import build_event
from core.bulk import update_rows
from factcheck.eligibility import COUNTED_FLAGS, REVIEW_FLAGS, asks_for_fact_check
from factcheck.models import HARM_CATEGORIES, Flag, Post, Rating
from factcheck.models_media import PostMedia
from factcheck.waiting import left_queue
from moderation.distribution import recompute_distributions
from moderation.feed import append_to_feed
from moderation.models import (
    FACT_CHECK_KINDS,
    Action,
    ActionKind,
    DecisionOutcome,
    NotificationKind,
    PageStanding,
    RatingDecision,
    StatementOfReasons,
    new_puid,
)
from moderation.notice_delivery import record_notifications
from moderation.notices import Notice, notice_rows, owners_of_pages
from moderation.policy import restricts
from moderation.publishing import publish_changes
from moderation.report_outcomes import follow_decisions
from moderation.standing import end_strikes_of, give_strikes, recompute_standings
from moderation.statements.reasons import build_statement


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
    action = (
        Action.objects.select_for_update(no_key=True, of=("self",)).select_related("rating__organisation")
        .get(pk=action_id)
    )
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
    # When the strike counts from (it ages out from then); the action's own time when None. A rating's effect
    # restored by staff strikes from the rating's decision (moderation.staff_actions.restore_rating_effect).
    strike_since: datetime | None = None
    restored: bool = False  # a rating's effect restored by staff (Action.restored)
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
    return carry_out_many([change], now=now)[0]


def carry_out_many(changes: Sequence[Change], *, now: datetime) -> list[Outcome]:
    """Carry out changes on several posts, one each, whose row locks the caller holds (in id order).

    The steps (the module's list) are each a few set-based statements for all the posts: a claim's
    rating reaching a thousand copies is a few dozen statements, not a few dozen per copy. Every post
    ends up as one carry_out of its own change would leave it.
    """
    if not changes:
        return []
    events: list[AuditEvent] = []
    ended = _end_actions(changes, now=now, events=events)
    created = _create_actions(changes, now=now, events=events)
    decisions = _record_decisions(changes, created, now=now, events=events)
    follow_decisions(changes, created, ended, now=now)
    AuditEvent.objects.bulk_create(events)
    causes = {c.post.pk: c.cause for c in changes}
    ratings = {c.post.page_id: c.decides for c in reversed(changes) if c.decides is not None}
    standings = recompute_standings(page_ids=[c.post.page_id for c in changes], now=now, causes=causes,
                                    ratings=ratings)
    statements = _store_statements(changes, created)
    feed = standings.feed + recompute_distributions(causes=causes, now=now)
    _send_notices(changes, created, statements, now=now, then=standings.notices)
    publish_changes(append_to_feed(feed))
    return [
        Outcome(created=made, ended=gone, decision=decision, standing_changed=change.post.page_id in standings.flipped)
        for change, made, gone, decision in zip(changes, created, ended, decisions, strict=True)
    ]


def _end_actions(changes: Sequence[Change], *, now: datetime, events: list) -> list[list[Action]]:
    """Step 1: end the actions named, and with each its strike."""
    ended = []
    for change in changes:
        system = "enforcement" if change.actor is None else "factdesk"
        for ending in change.end:
            action = ending.action
            action.ended_at, action.end_reason, action.ended_by = now, ending.reason, change.actor
            events.append(build_event(
                actor=change.actor, verb=AuditVerb.ACTION_ENDED, target=action, post_id=action.post_id,
                reason=ending.note or ending.reason, data={"end_reason": ending.reason}, system=system,
            ))
        ended.append([ending.action for ending in change.end])
    # update_rows, not bulk_update: Django's CASE WHEN per row cost 1.6 of 2.8 s for 250 copies.
    update_rows(Action, ["ended_at", "end_reason", "ended_by"], [
        (ending.action.pk, now, ending.reason, getattr(change.actor, "pk", None))
        for change in changes for ending in change.end
    ])
    events += end_strikes_of(
        [(ending.action, ending.reason, change.actor) for change in changes for ending in change.end], now=now
    )
    return ended


def _create_actions(changes: Sequence[Change], *, now: datetime, events: list) -> list[list[Action]]:
    """Step 2: create the new actions, with their strikes."""
    specs = [(change, spec) for change in changes for spec in change.create]
    actions = Action.objects.bulk_create([
        Action(
            puid=new_puid(), post=change.post, kind=spec.kind, rating=spec.rating, verdict=spec.verdict,
            feed_multiplier=spec.feed_multiplier, label=spec.label, warn_sharers=spec.warn_sharers,
            ground=spec.ground, reason=spec.reason, created_at=now, created_by=spec.created_by,
            restored=spec.restored,
        )
        for change, spec in specs
    ])
    struck = []
    for (change, spec), action in zip(specs, actions, strict=True):
        events.append(build_event(
            actor=spec.created_by, verb=AuditVerb.ACTION_CREATED, target=action, post_id=change.post.pk,
            reason=spec.audit_reason or spec.reason,
            data={"kind": action.kind, "multiplier": str(action.feed_multiplier), "label": action.label,
                  **spec.audit_data},
            system="enforcement" if change.actor is None else "factdesk",
        ))
        if spec.strike is not None:
            struck.append((action, spec.strike, spec.strike_since or now))
    events += give_strikes(struck)
    by_change = {id(change): [] for change in changes}
    for (change, _), action in zip(specs, actions, strict=True):
        by_change[id(change)].append(action)
    return [by_change[id(change)] for change in changes]


def _record_decisions(
    changes: Sequence[Change], created: list[list[Action]], *, now: datetime, events: list
) -> list[RatingDecision | None]:
    """Step 3: record each rating's decision on its post, keyed by rating and post."""
    decided = [
        (change, RatingDecision(rating=change.decides, post=change.post, outcome=DecisionOutcome.APPLIED,
                                action=next((a for a in made if a.kind in FACT_CHECK_KINDS), None), decided_at=now))
        for change, made in zip(changes, created, strict=True) if change.decides is not None
    ]
    RatingDecision.objects.bulk_create([decision for _, decision in decided])
    left_queue((decision.post_id for _, decision in decided), now=now)  # they carry a rating now
    events += [_decision_event(decision) for _, decision in decided]
    by_change = {id(change): decision for change, decision in decided}
    return [by_change.get(id(change)) for change in changes]


def record_decision(
    *, rating: Rating, post: Post, outcome: str, now: datetime, action: Action | None = None
) -> RatingDecision:
    decision = RatingDecision.objects.create(rating=rating, post=post, outcome=outcome, action=action, decided_at=now)
    if outcome == DecisionOutcome.APPLIED:
        _decision_event(decision).save()
    return decision


def _decision_event(decision: RatingDecision):
    return build_event(
        actor=None, verb=AuditVerb.DECISION_APPLIED, target=decision.rating, post_id=decision.post_id,
        data={"action": decision.action_id, "verdict": decision.rating.verdict}, system="enforcement",
    )


def _store_statements(changes: Sequence[Change], created: list[list[Action]]) -> dict[int, StatementOfReasons]:
    """Step 6: store each restricting action's statement of reasons; returns them by action id."""
    restricting = [(change, action) for change, made in zip(changes, created, strict=True)
                   for action in made if restricts(action)]
    if not restricting:
        return {}
    post_ids = {change.post.pk for change, _ in restricting}
    # The flags that started each kind of action: a fact-check, those routed to fact-checkers; a removal, the
    # reports of harm (all the post's flags if none: staff may remove a post only misinformation flags named).
    # Only flags that still count: a withdrawn flag started nothing (a classifier's false positive is no detection).
    review: dict[int, set[str]] = {pk: set() for pk in post_ids}
    harm: dict[int, set[str]] = {pk: set() for pk in post_ids}
    every: dict[int, set[str]] = {pk: set() for pk in post_ids}
    for post_id, source, category, outcome, status in (
            Flag.objects.filter(COUNTED_FLAGS, post_id__in=post_ids)
            .values_list("post_id", "source", "category", "outcome", "status").distinct()):
        every[post_id].add(source)
        if asks_for_fact_check(category=category, outcome=outcome, status=status):
            review[post_id].add(source)
        if category in HARM_CATEGORIES:
            harm[post_id].add(source)

    # And the source of the first of them: what started the case (a classifier's flag: automated detection).
    first = {pk: (review_first, harm_first, every_first) for pk, review_first, harm_first, every_first in (
        Post.objects.filter(pk__in=post_ids)
        .annotate(review=_first_source(REVIEW_FLAGS), harm=_first_source(Q(category__in=HARM_CATEGORIES)),
                  every=_first_source(Q()))
        .values_list("pk", "review", "harm", "every"))}

    def flag_sources(action: Action, post_id: int) -> set[str]:
        if action.kind == ActionKind.REMOVAL:
            return harm[post_id] or every[post_id]
        return review[post_id]

    def started_by(action: Action, post_id: int) -> str | None:
        review_first, harm_first, every_first = first[post_id]
        return (harm_first or every_first) if action.kind == ActionKind.REMOVAL else review_first

    page_ids = {change.post.page_id for change, _ in restricting}
    standings = {s.page_id: s for s in PageStanding.objects.filter(page_id__in=page_ids)}
    # The kinds of each post's media (the statement's content_type), read once for the chunk.
    media_kinds: dict[int, set[str]] = {pk: set() for pk in post_ids}
    for post_id, kind in PostMedia.objects.filter(post_id__in=post_ids).values_list("post_id", "kind").distinct():
        media_kinds[post_id].add(kind)
    statements = StatementOfReasons.objects.bulk_create([
        build_statement(
            action=action, post=change.post, flag_sources=flag_sources(action, change.post.pk),
            started_by=started_by(action, change.post.pk),
            standing=standings.get(change.post.page_id), notice_at=change.notice_at or action.created_at,
            media_kinds=media_kinds[change.post.pk],
        )
        for change, action in restricting
    ])
    return {statement.action_id: statement for statement in statements}


def _first_source(flags: Q) -> Subquery:
    """The source of a post's first flag (by `flagged_at`) among `flags` that still count, or None."""
    return Subquery(Flag.objects.filter(COUNTED_FLAGS, flags, post=OuterRef("pk"))
                    .order_by("flagged_at", "id").values("source")[:1])


def _send_notices(
    changes: Sequence[Change], created: list[list[Action]], statements: dict[int, StatementOfReasons], *,
    now: datetime, then: Sequence = (),
) -> None:
    """Step 8: each change's notice to its page's owners, with the statement of reasons of its new action; `then`,
    the notices of the pages whose standing the changes flipped (moderation.standing), after them.

    Rendered here, before the feed's lock is taken: a chunk of 250 copies renders 250 templates.
    """
    notifications = []
    owners = owners_of_pages({c.post.page_id for c in changes if c.notice is not None})
    for change, made in zip(changes, created, strict=True):
        if change.notice is None:
            continue
        statement = next((statements[a.pk] for a in made if a.pk in statements), None)
        context = {"statement": statement, "action": made[0] if made else None, **change.notice.context}
        notice = replace(change.notice, context=context)
        # A rating's decision notices are e-mailed together with its copies' (moderation.notice_delivery); an appeal's
        # outcome, whose recipients are not told of the copies again, goes at once.
        rating = change.decides if notice.kind == NotificationKind.DECISION else None
        notifications += notice_rows(notice, users=owners[change.post.page_id], post=change.post, now=now,
                                     rating=rating)
    record_notifications([*notifications, *then])
