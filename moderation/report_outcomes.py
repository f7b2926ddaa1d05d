"""What answers a flag, and what a decision does to the queues: one step of the consequence pipeline.

A flag is answered once (its status goes from open to decided, with an outcome: PRODUCT.md, "Feedback to
the reporter"), in the transaction of the decision that answers it, with an audit event per post and a
`report.decided` webhook per flag (moderation.publishing), so a decision and its event commit together:

- a removal answers every open flag of the post (`removed`), whatever it reported; the post leaves the
  fact-checkers' hands at once (factcheck.routing.withdraw_for_removal); lifting the last removal puts it
  back where its flags say (restore_after_removal);
- a rating applied to a post (its own, or a claim's rating reaching a copy) answers its open misinformation
  flags (`rated`);
- staff deciding reports of harm without a removal answer them `no_violation` or `sent_to_fact_checkers`
  (moderation.harm_reports calls `close_flags` itself).

`follow_decisions` is the pipeline's step for the first two (moderation.pipeline lists it); `close_flags` is
the one writer of an outcome after arrival (factcheck.ingest writes those answered on arrival, whose senders
moderation.receivers tells).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime

from django.db.models import Q

from audit.models import AuditEvent, AuditVerb
from audit.services import build_event
from factcheck.models import HARM_CATEGORIES, Flag, FlagCategory, Post, ReportOutcome, ReportStatus
from factcheck.routing import restore_after_removal, withdraw_for_removal
from moderation.models import Action, ActionKind
from moderation.publishing import publish_report_outcomes
from moderation.report_queue import refresh_rows
from moderation.selectors import active_removal


def close_flags(
    *, flags: Q, outcome: str, actor, now: datetime, reason: str = "", system: str = "reports",
) -> list[int]:
    """Answer the open flags matching `flags` (a condition naming their posts, whose row locks the caller holds)
    with `outcome`, now; returns their ids. Each post's queue row is counted again if reports of harm closed."""
    closed = list(Flag.objects.filter(flags, status=ReportStatus.OPEN).order_by("id")
                  .values_list("id", "post_id", "category"))
    if not closed:
        return []
    ids = [flag_id for flag_id, _, _ in closed]
    Flag.objects.filter(pk__in=ids).update(status=ReportStatus.DECIDED, outcome=outcome, decided_at=now)
    by_post: dict[int, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    for flag_id, post_id, category in closed:
        by_post[post_id][category].append(flag_id)
    AuditEvent.objects.bulk_create([
        build_event(actor=actor, verb=AuditVerb.REPORTS_DECIDED, target=Post(pk=post_id), post_id=post_id,
                    reason=reason[:1000], data={"outcome": outcome, "flags": dict(categories)}, system=system)
        for post_id, categories in by_post.items()
    ])
    refresh_rows(post_ids=[post_id for post_id, categories in by_post.items()
                           if any(category in HARM_CATEGORIES for category in categories)], now=now)
    publish_report_outcomes(ids)
    return ids


def follow_decisions(
    changes: Sequence, created: Sequence[Sequence[Action]], ended: Sequence[Sequence[Action]], *, now: datetime,
) -> None:
    """The pipeline's step: the flags and the fact-checkers' queue follow each post's change of actions.

    Runs in the pipeline's transaction, after the actions were ended and created and before the standings and
    the feed are locked; the caller holds every post's row lock (a removal's copies, released from waiting
    with it, are locked here in id order: factcheck.matching.release_group)."""
    rated = [change.post.pk for change in changes if change.decides is not None]
    if rated:
        close_flags(flags=Q(post_id__in=rated, category=FlagCategory.MISINFORMATION), outcome=ReportOutcome.RATED,
                    actor=None, now=now, system="enforcement")
    for change, made, gone in zip(changes, created, ended, strict=True):
        if any(action.kind == ActionKind.REMOVAL for action in made):
            close_flags(flags=Q(post=change.post), outcome=ReportOutcome.REMOVED, actor=change.actor, now=now,
                        reason=change.cause)
            withdraw_for_removal(post=change.post, actor=change.actor, now=now)
        elif any(action.kind == ActionKind.REMOVAL for action in gone) and active_removal(change.post) is None:
            restore_after_removal(post=change.post, actor=change.actor, now=now)

