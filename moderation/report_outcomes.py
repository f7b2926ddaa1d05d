"""What answers a flag, and what a decision does to the queues: one step of the consequence pipeline.

A flag is answered (its status goes from open to decided, with an outcome: PRODUCT.md, "Feedback to the
reporter") in the transaction of the decision that answers it, with an audit event per post and a
`report.decided` webhook per flag (moderation.publishing), so a decision and its event commit together:

- a removal answers every open flag of the post (`removed`), whatever it reported, and turns the post's reports
  of harm that staff had decided otherwise (no violation, sent to fact-checkers) into `removed`: the removal
  shows those decisions were wrong, and their reporters are told (the event names the `previous_outcome`). The
  post leaves the fact-checkers' hands at once (factcheck.routing.withdraw_for_removal);
- lifting a removal (staff in the admin, or a removal appeal reversed) undoes what it answered: the flags it
  decided are answered again as if they arrived now (`reopen_flags`: reports of harm open again, back on the
  staff's desk; a misinformation flag waits for a rating, or is `rated` if the post carries one), and the post
  goes back where its flags say (restore_after_removal: a withdrawn flag, sent to fact-checkers or not, says nothing);
- a rating applied to a post (its own, or a claim's rating reaching a copy) answers its open misinformation
  flags (`rated`); withdrawn by its organisation (moderation.withdrawal), it undoes those answers as lifting a
  removal does (`reopen_rated`: on the post and on the copies that carried it, the flags wait again for a rating,
  or are `removed` on a removed post), so a later rating answers them truly; so does a copy taken off its claim
  (moderation.unlinking: a fact-checker's unlinking, a reversed "not the same claim" appeal);
- staff deciding reports of harm without a removal answer them `no_violation` or `sent_to_fact_checkers`
  (moderation.harm_reports calls `close_flags` itself), and may reopen such a decision (`reopen_flags`).

`follow_decisions` is the pipeline's step for the first three (moderation.pipeline lists it); `close_flags` and
`reopen_flags` are the writers of an outcome after arrival (factcheck.ingest writes those answered on arrival,
whose senders moderation.receivers tells). A flag answered again, or opened again, is published again as
`report.decided` with its status now and what it said before. Every answer is also kept (`ReportAnswer`, by
`record_answers`: the figures count a decision on its day and a correction as one), never overwritten.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from datetime import datetime

from django.db.models import Max, Q

from audit.models import AuditEvent, AuditVerb
from audit.services import build_event
from factcheck.eligibility import removed_posts
from factcheck.models import HARM_CATEGORIES, Flag, FlagCategory, Post, ReportOutcome, ReportStatus
from factcheck.routing import arrival_outcome, recount_review_flags, restore_after_removal, withdraw_for_removal
from moderation.models import Action, ActionKind, ReportAnswer
from moderation.publishing import publish_report_outcomes
from moderation.report_queue import refresh_rows
from moderation.selectors import active_removal

# Staff's decisions on reports of harm that a later removal of the post overrules: it answers them `removed`.
OVERRULED_BY_REMOVAL = (ReportOutcome.NO_VIOLATION, ReportOutcome.SENT_TO_FACT_CHECKERS)
# (flag id, post id, category, outcome before): what `_answer` changes.
FLAG_COLUMNS = ("id", "post_id", "category", "outcome")


def close_flags(
    *, flags: Q, outcome: str, actor, now: datetime, reason: str = "", system: str = "reports",
    overruling: Sequence[str] = (),
) -> list[int]:
    """Answer the open flags matching `flags` (a condition naming their posts, whose row locks the caller holds)
    with `outcome`, now, and those answered before with one of `overruling` (staff's decisions a removal
    overrules); returns their ids. Each post's queue row is counted again if reports of harm closed."""
    answered = Q(status=ReportStatus.OPEN)
    if overruling:
        answered |= Q(status=ReportStatus.DECIDED, outcome__in=overruling)
    rows = list(Flag.objects.filter(flags).filter(answered).order_by("id").values_list(*FLAG_COLUMNS))
    return _answer(rows, outcome=outcome, actor=actor, now=now, reason=reason, system=system)


def reopen_flags(*, flags: Q, actor, now: datetime, reason: str, system: str = "reports") -> list[int]:
    """Open again the decided flags matching `flags` (their posts' row locks held by the caller): status open,
    no outcome, no decision time, back on the staff's desk if they report harm (in the queue's order, which
    their categories and sources set; the 24-hour target runs from now: `Flag.reopened_at`). Audited
    (`report.reopened`) and published; returns their ids."""
    rows = list(Flag.objects.filter(flags, status=ReportStatus.DECIDED).order_by("id").values_list(*FLAG_COLUMNS))
    return _answer(rows, outcome="", actor=actor, now=now, reason=reason, system=system)


def _answer(
    rows: list[tuple[int, int, str, str]], *, outcome: str, actor, now: datetime, reason: str, system: str,
) -> list[int]:
    """Give the flags of `rows` (FLAG_COLUMNS) `outcome` now, or open them again when `outcome` is "", with an
    audit event per post (naming what they said before, if anything), the posts' queue rows counted again,
    and one `report.decided` event per flag (with `previous_outcome` for a flag that had one)."""
    if not rows:
        return []
    ids = [flag_id for flag_id, _, _, _ in rows]
    if outcome:
        Flag.objects.filter(pk__in=ids).update(status=ReportStatus.DECIDED, outcome=outcome, decided_at=now)
    else:
        # A reopened report waits from now for its decision (moderation.deadlines.waiting_since), not from its receipt.
        Flag.objects.filter(pk__in=ids).update(status=ReportStatus.OPEN, outcome="", decided_at=None, reopened_at=now)
    record_answers(ids, outcome=outcome, actor=actor, now=now)
    by_post: dict[int, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    before: dict[int, Counter] = defaultdict(Counter)
    for flag_id, post_id, category, previous in rows:
        by_post[post_id][category].append(flag_id)
        if previous:
            before[post_id][previous] += 1
    verb = AuditVerb.REPORTS_DECIDED if outcome else AuditVerb.REPORTS_REOPENED
    AuditEvent.objects.bulk_create([
        build_event(actor=actor, verb=verb, target=Post(pk=post_id), post_id=post_id, reason=reason[:1000],
                    data={"outcome": outcome or None, "flags": dict(categories),
                          **({"previous": dict(before[post_id])} if before[post_id] else {})},
                    system=system)
        for post_id, categories in by_post.items()
    ])
    refresh_rows(post_ids=[post_id for post_id, categories in by_post.items()
                           if any(category in HARM_CATEGORIES for category in categories)], now=now)
    publish_report_outcomes(ids, previous={flag_id: previous for flag_id, _, _, previous in rows if previous},
                            now=now)
    return ids


def record_answers(flag_ids: Sequence[int], *, outcome: str, actor, now: datetime) -> None:
    """Keep the answer the flags `flag_ids` were just given (`outcome`, or "" for reopened), each naming the flag's
    answer it replaces. In the answer's transaction, the flags' posts locked (or the flags new): a flag's answers
    are written one at a time, so its latest is the highest id."""
    latest = dict(ReportAnswer.objects.filter(flag_id__in=flag_ids).values("flag_id").annotate(last=Max("id"))
                  .values_list("flag_id", "last").order_by())
    ReportAnswer.objects.bulk_create([
        ReportAnswer(flag_id=flag_id, outcome=outcome, answered_at=now, actor=actor, replaces_id=latest.get(flag_id))
        for flag_id in flag_ids
    ])


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
            _answer_by_removal(change, now=now)
            withdraw_for_removal(post=change.post, actor=change.actor, now=now)
        elif removals := [action for action in gone if action.kind == ActionKind.REMOVAL]:
            if active_removal(change.post) is None:
                _reopen_after_lift(change, removal=removals[0], now=now)
                restore_after_removal(post=change.post, actor=change.actor, now=now)


def _answer_by_removal(change, *, now: datetime) -> None:
    """A removal answers every open flag of the post, and overrules staff's other decisions on its reports of harm
    (their reporters were right); reports sent to fact-checkers stop counting for review then."""
    post = change.post
    recount = Flag.objects.filter(post=post, outcome=ReportOutcome.SENT_TO_FACT_CHECKERS).exists()
    close_flags(flags=Q(post=post) & (Q(category__in=HARM_CATEGORIES) | Q(status=ReportStatus.OPEN)),
                outcome=ReportOutcome.REMOVED, actor=change.actor, now=now, reason=change.cause,
                overruling=OVERRULED_BY_REMOVAL)
    if recount:
        recount_review_flags(post=post, now=now)


def reopen_rated(posts: Sequence[Post], *, actor, now: datetime, why: str) -> list[int]:
    """The rating that answered the misinformation flags of `posts` no longer holds for them, and no verdict took its
    place: a rating withdrawn (moderation.withdrawal: the rated post and the copies that carried it), or a copy taken
    off the claim whose rating it carried (moderation.unlinking). Their flags answered `rated` (the posts locked by
    the caller, in their states after the change) are answered as if they arrived now: open again, waiting for the
    next rating, or `removed` on a removed post. Audited with `why` and published (`report.decided` naming the
    previous outcome); returns their ids."""
    answered = Q(category=FlagCategory.MISINFORMATION, status=ReportStatus.DECIDED, outcome=ReportOutcome.RATED)
    # Removed as eligibility reads it (a matched or rated post keeps its state when removed): one query for them all.
    removed = set(Post.objects.filter(removed_posts(), pk__in=[post.pk for post in posts]).values_list("pk", flat=True))
    by_outcome: dict[str, list[int]] = defaultdict(list)
    for post in posts:
        outcome = arrival_outcome(category=FlagCategory.MISINFORMATION, state=post.queue_state,
                                  politician=post.page.is_politician, removed=post.pk in removed)
        if outcome != ReportOutcome.RATED:  # still carrying a rating (never after a withdrawal or an unlinking) stands
            by_outcome[outcome].append(post.pk)
    # The posts answered alike in one go (a withdrawn claim's thousand copies: a read and a write each, not a thousand).
    reopened = []
    for outcome, post_ids in by_outcome.items():
        rows = list(Flag.objects.filter(answered, post_id__in=post_ids).order_by("id").values_list(*FLAG_COLUMNS))
        reopened += _answer(rows, outcome=outcome, actor=actor, now=now, reason=why, system="enforcement")
    return reopened


def _reopen_after_lift(change, *, removal: Action, now: datetime) -> None:
    """The post's removal was lifted (by staff, or on appeal): the flags it answered (when it was made, or since:
    on arrival, or staff's decisions it overruled) are answered as if they arrived now. Reports of harm open again
    for staff to decide; a misinformation flag waits for a rating, or is `rated` if the post carries one."""
    post = change.post
    # Decided, not withdrawn: a flag its sender withdrew keeps the removal's answer and is never answered again.
    answered = Q(post=post, status=ReportStatus.DECIDED, outcome=ReportOutcome.REMOVED,
                 decided_at__gte=removal.created_at)
    why = next((ending.note for ending in change.end if ending.action.pk == removal.pk), "") or change.cause
    reason = f"the removal was lifted: {why}"
    rated = arrival_outcome(category=FlagCategory.MISINFORMATION, state=post.queue_state,
                            politician=post.page.is_politician, removed=False)
    if rated:
        rows = list(Flag.objects.filter(answered, category=FlagCategory.MISINFORMATION).order_by("id")
                    .values_list(*FLAG_COLUMNS))
        _answer(rows, outcome=rated, actor=change.actor, now=now, reason=reason, system="enforcement")
        answered &= ~Q(category=FlagCategory.MISINFORMATION)
    reopen_flags(flags=answered, actor=change.actor, now=now, reason=reason)
