"""Where a flag goes, and what answers it: the review side's half of reports of harm.

A flag's category says who decides it (PRODUCT.md, "Reports of harm go to trust-and-safety staff"):
misinformation goes to the fact-checkers' queue, a report of harm to trust-and-safety staff (whose
queue, claims and decisions are moderation's: moderation.harm_reports). Which flags put a post in the
fact-checkers' queue, and that a removed post is out of it, are rules of eligibility
(factcheck.eligibility); this module moves posts by them when the decision side says so, inside its
transactions and under its post lock:

- `withdraw_for_removal`: a removal took effect, so the post leaves the fact-checkers' hands at once
  (its claim ends; a post that waited is REMOVED); `restore_after_removal` puts it back as its flags say;
- `send_to_fact_checkers`: staff sent reports of harm to fact-checkers, which now count as the post's
  flags for review; `recall_from_fact_checkers`: staff reopened that decision, so they count no more;
- `follow_withdrawal`: the platform withdrew flags of the post (factcheck.withdrawal), so they count no more, and a
  post that waited for them alone leaves the queue (its claim ends); a decided post keeps its decision.

It also holds what a flag's sender is told (`report_out`: the one shape of GET /api/v1/flags/{key} and
of the `report.decided` webhook) and which flags are answered the moment they arrive (`arrival_outcome`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db.models import Count, Min

from audit.models import AuditVerb
from audit.services import record_event
from factcheck.claims import withdraw_claim
from factcheck.eligibility import (
    LEAVES_ON_REMOVAL,
    REVIEW_FLAGS,
    WAITING_STATES,
    queue_state_for,
    restored_state,
    withdrawn_state,
)
from factcheck.matching.leaving import release_group
from factcheck.models import Claim, ClaimStatus, Flag, FlagCategory, Post, QueueState, ReportOutcome
from factcheck.priority import compute_priority, source_weight
from factcheck.timestamps import first_flagged
from factcheck.waiting import left_queue, waits_again

# A misinformation flag on a post in these states is answered at once by the rating the post carries.
CARRIES_A_RATING = (QueueState.RATED, QueueState.MATCHED, QueueState.NOT_ELIGIBLE)


def arrival_outcome(*, category: str, state: str, politician: bool, removed: bool) -> str:
    """The outcome of a flag that is answered the moment it arrives, or "" for one that waits for a decision.

    Every flag on a removed post (`removed`: eligibility.is_removed, whatever its queue state: a rated post
    keeps RATED when removed) is answered by the removal. A misinformation flag on
    a post that carries a rating already (rated, matched to a rated claim, or rated Not eligible: a
    politician's post is never rated, so its flags wait) is answered by that rating: the post is not
    reviewed again for it.
    """
    if removed:
        return ReportOutcome.REMOVED
    if category == FlagCategory.MISINFORMATION and state in CARRIES_A_RATING and not politician:
        return ReportOutcome.RATED
    return ""


def report_out(flag: Flag) -> dict[str, Any]:
    """What the flag's sender is told (DSA Art. 16(5)): GET /api/v1/flags/{key} and `report.decided`. A withdrawn
    flag adds when it was withdrawn (`withdrawn_at`); every other flag has exactly these five fields."""
    told = {
        "idempotency_key": flag.idempotency_key,
        "category": flag.category,
        "status": flag.status,
        "outcome": flag.outcome or None,
        "decided_at": flag.decided_at,
    }
    if flag.withdrawn_at is not None:
        told["withdrawn_at"] = flag.withdrawn_at
    return told


def withdraw_for_removal(*, post: Post, actor, now: datetime) -> None:
    """A removal took effect on `post` (the caller holds its row lock): it leaves the fact-checkers' hands.

    An active claim ends (audited as released, with the reason); a post that waited in the queue, was
    claimed or had no flag for fact-checkers becomes REMOVED, so it is never listed, claimed or rated, and
    a flag that arrives meanwhile does not queue it. A rated or matched post keeps its state (its rating
    stands; matching still reads it), and the rating refusals read its removal (eligibility.is_removed).
    Copies waiting with it as their claim's first post go back to the queue on their own: it will not be
    rated while removed.
    """
    for claim in Claim.objects.filter(post=post, status=ClaimStatus.ACTIVE):
        withdraw_claim(claim, now=now, actor=actor, reason="the post was removed by trust and safety")
    if post.queue_state in LEAVES_ON_REMOVAL:
        _move(post, to=QueueState.REMOVED, actor=actor, now=now, reason="removed by trust and safety")
        left_queue([post.pk], now=now)  # no longer waiting for a rating (the dashboard's queue: factcheck.waiting)
    release_group(root_ids=[post.pk], reason="the claim's first post was removed by trust and safety", now=now)


def restore_after_removal(*, post: Post, actor, now: datetime) -> None:
    """The removal of `post` was lifted (the caller holds its row lock): back where its flags say."""
    if post.queue_state != QueueState.REMOVED:
        return
    state = restored_state(politician=post.page.is_politician, flagged=post.flag_count > 0,
                           copy=post.duplicate_of_id is not None)
    _move(post, to=state, actor=actor, now=now, reason="the removal was lifted")
    waits_again([post.pk])


def send_to_fact_checkers(*, post: Post, actor, now: datetime) -> str:
    """Reports of harm of `post` were sent to fact-checkers (their outcome is written; the caller holds the
    post's row lock): they count as its flags for review now, so the post joins the fact-checkers' queue
    (unless it may not, or is already past it). Returns its queue state."""
    recount_review_flags(post=post, now=now)
    return _follow_flags(post, actor=actor, now=now, reason="sent to fact-checkers by trust and safety")


def recall_from_fact_checkers(*, post: Post, actor, now: datetime) -> str:
    """Reports of harm staff had sent to fact-checkers are open again (staff reopened that decision; the caller
    holds the post's row lock): they no longer count as its flags for review, so a post that waited for them
    alone leaves the fact-checkers' queue. One claimed, rated or grouped stays where it is: work on it stands.
    Returns its queue state."""
    recount_review_flags(post=post, now=now)
    return _follow_flags(post, actor=actor, now=now,
                         reason="trust and safety reopened the reports they had sent to fact-checkers")


# Why a claim ended when the flags that asked for its post's review were withdrawn (the claim's audit event).
WITHDRAWN_REASON = "the platform withdrew the flags that asked for its review"


def follow_withdrawal(*, post: Post, actor, now: datetime) -> str:
    """Flags of `post` were withdrawn by their sender (marked already; the caller holds the post's row lock): they
    no longer count as its flags for review, and the post goes where eligibility.withdrawn_state says. One that
    leaves the queue stops waiting for a rating, and a claim on it ends (audited as released, with the reason; the
    reviewer's draft is kept). Returns its queue state."""
    recount_review_flags(post=post, now=now)
    group_waits = Post.objects.filter(duplicate_of_id=post.pk, queue_state=QueueState.GROUPED).exists()
    state = withdrawn_state(state=post.queue_state, politician=post.page.is_politician, flagged=post.flag_count > 0,
                            copy=post.duplicate_of_id is not None, group_waits=group_waits)
    if state == post.queue_state:
        return state
    for claim in Claim.objects.filter(post=post, status=ClaimStatus.ACTIVE):
        withdraw_claim(claim, now=now, actor=actor, reason=WITHDRAWN_REASON)
    waited = post.queue_state in WAITING_STATES
    _move(post, to=state, actor=actor, now=now, reason=WITHDRAWN_REASON)
    if waited:
        left_queue([post.pk], now=now)
    return state


def _follow_flags(post: Post, *, actor, now: datetime, reason: str) -> str:
    """Move the post where its flags for review (counted) say, starting or stopping its wait for a rating."""
    state = queue_state_for(state=post.queue_state, politician=post.page.is_politician,
                            flagged=post.flag_count > 0, copy=post.duplicate_of_id is not None)
    if state == post.queue_state:
        return state
    waited = post.queue_state in WAITING_STATES
    _move(post, to=state, actor=actor, now=now, reason=reason)
    if waited and state not in WAITING_STATES:
        left_queue([post.pk], now=now)
    elif state in WAITING_STATES and not waited:
        waits_again([post.pk])
    return state


def recount_review_flags(*, post: Post, now: datetime) -> None:
    """Count the post's flags for review again (eligibility.REVIEW_FLAGS), with the priority they give it."""
    count, weight, first = 0, 0.0, None
    counted = (Flag.objects.filter(REVIEW_FLAGS, post=post).values("source")
               .annotate(n=Count("id"), earliest=Min("flagged_at")).order_by())
    for source, n, earliest in counted.values_list("source", "n", "earliest"):
        count, weight = count + n, weight + n * source_weight(source)
        first = earliest if first is None else min(first, earliest)
    first = first_flagged(first, now=now)
    post.flag_count, post.flag_weight, post.first_flagged_at = count, weight, first
    post.priority, post.velocity_score, post.flag_score, post.age_score = compute_priority(
        views=post.views, shares=post.shares, posted_at=post.posted_at, flag_weight=weight, first_flagged_at=first,
        now=now,
    ).stored
    post.updated_at = now
    post.save(update_fields=["flag_count", "flag_weight", "first_flagged_at", "priority", "velocity_score",
                             "flag_score", "age_score", "updated_at"])


def _move(post: Post, *, to: str, actor, now: datetime, reason: str) -> None:
    before = post.queue_state
    post.queue_state, post.updated_at = to, now
    post.save(update_fields=["queue_state", "updated_at"])
    record_event(actor=actor, verb=AuditVerb.POST_ROUTED, target=post, post_id=post.pk, reason=reason,
                 data={"from": before, "to": to}, system="routing")
