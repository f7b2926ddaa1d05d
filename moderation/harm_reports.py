"""Trust-and-safety staff's decisions on reports of harm: claim a post's reports, release them, decide them.

A post's open reports of harm (violence, hate, harassment, imminent harm) wait in the staff's queue
(moderation.report_queue). Staff work them as fact-checkers work theirs:

- `claim_report`: a lease on the post's reports (as long as a fact-checker's claim: factcheck.claims),
  never held by two staff at once; separate from the fact-checkers' claim, since a post with both kinds
  of flags is in both queues. The post's row lock (moderation.pipeline.lock_post, the first lock of every
  decision) serialises claims and decisions of one post: a second claim waits, then sees the first.
- `decide_report`, by the lease's holder: **remove** under a ground (the existing removal through
  moderation.staff_actions and the pipeline, with its strike, statement of reasons and notice; the
  pipeline answers the reports: moderation.report_outcomes), **no violation** (with a reason), or
  **send to fact-checkers** (the reports count as the post's flags for review: it joins their queue).

A decision closes every open report of harm of the post the holder saw (`up_to_flag`: reports that
arrive while they decide open the next round instead), and ends the lease. Every step is audited.

A decision made by mistake is corrected, not rewritten (`reopen_report`, from the post's page on the desk): its
reports open again, their reporters are told (moderation.report_outcomes.reopen_flags), and anyone claims and
decides them anew. A removal is corrected by lifting it in the admin, which reopens the reports it answered.
Reports the platform withdrew are never reopened: a decision whose reports were all withdrawn has nothing left to
correct (what it did went with them: factcheck.eligibility.REVIEW_FLAGS), and the desk says so
(`withdrawn_since_decision`) instead of offering a reopening that could only be refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from audit.models import AuditEvent, AuditVerb
from audit.services import record_event
from core.formatting import clock
from core.reasons import FACT_CHECKERS_READ, KEPT_FOR_GOOD, OWNER_READS, reason_problem, written
from core.refusals import Refusal
from factcheck.claims import lease_length
from factcheck.models import HARM_CATEGORIES, Flag, Post, ReportOutcome, ReportStatus
from factcheck.routing import recall_from_fact_checkers, send_to_fact_checkers
from moderation.models import RemovalGround, ReportedPost
from moderation.pipeline import lock_post
from moderation.report_outcomes import close_flags, reopen_flags
from moderation.report_queue import refresh_rows
from moderation.selectors import active_removal
from moderation.staff_actions import remove_post

# What staff may decide: the outcomes a decision gives the reports (a rating gives `rated`, never staff).
DECISIONS = (ReportOutcome.REMOVED, ReportOutcome.NO_VIOLATION, ReportOutcome.SENT_TO_FACT_CHECKERS)
# Who reads each decision's reason word for word: a removal's is quoted to the page owner, a note to the fact-checkers
# is shown on the post's page on their desk (moderation.report_forms says so beside each field).
READ_BY = {
    ReportOutcome.REMOVED: OWNER_READS,
    ReportOutcome.NO_VIOLATION: KEPT_FOR_GOOD,
    ReportOutcome.SENT_TO_FACT_CHECKERS: FACT_CHECKERS_READ,
}


class ReportRefused(Refusal):
    """The claim or decision cannot be made as asked; the message says why."""

    code = "report_refused"


class ReportClaimed(ReportRefused):
    """Another staff member holds the lease on the post's reports."""

    code = "report_claimed"


class ReportClaimRequired(ReportRefused):
    """Deciding needs the live lease on the post's reports, held by whoever decides."""

    code = "claim_required"


class NothingToDecide(ReportRefused):
    """The post has no open reports of harm (someone decided them, or the platform withdrew them)."""

    code = "no_open_reports"


class ReportsAlreadyDecided(ReportRefused):
    """Every report the decider saw was decided by someone else; the ones open now arrived after their page."""

    code = "reports_already_decided"


class DecisionChanged(ReportRefused):
    """The decision the page showed was reopened, or another took its place, since the page was loaded."""

    code = "decision_changed"


def _require_staff(user) -> None:
    if not (getattr(user, "is_trust_safety", False) or getattr(user, "is_superuser", False)):
        raise ReportRefused("Only trust-and-safety staff decide reports of harm.", code="forbidden")


def _locked_row(post_id: int) -> tuple[Post, ReportedPost]:
    """Lock the post (the decision side's first lock), then read its queue row; refuse if nothing is open."""
    post = lock_post(post_id)
    row = ReportedPost.objects.select_related("holder").filter(post=post).first()
    if row is None or not row.open_reports:
        raise NothingToDecide(_nothing_open(post))
    return post, row


def _nothing_open(post: Post) -> str:
    """Why a post has no open reports to claim or decide: decided, or withdrawn by the platform after the last
    decision (or with none), so that staff who were working on them know nothing of theirs was lost to a colleague."""
    if withdrawn_since_decision(post) is not None:
        return ("The platform withdrew this post's reports of harm, so it has left the reports queue: there is nothing "
                "to claim or decide, and a claim on it ended then. Nothing was saved.")
    return "This post has no open reports of harm: they have been decided."


def withdrawn_since_decision(post: Post) -> datetime | None:
    """When the platform last withdrew reports of harm of the post that no standing decision answers, or None: why a
    post with nothing open has nothing to decide, and nothing of theirs to reopen (withdrawn reports are never
    answered again). Those are the reports open after the latest decision still standing (or ever, if none stands),
    and those of a later decision: its whole, since a later decision with one report left standing would be the
    latest standing one. A report withdrawn from the standing decision, or from an older one, is not: that decision
    stands, and the page says so and offers to reopen it."""
    withdrawn = Flag.objects.filter(post=post, category__in=HARM_CATEGORIES, status=ReportStatus.WITHDRAWN)
    decided = last_decision(post)
    if decided is not None:
        withdrawn = withdrawn.filter(Q(decided_at__isnull=True) | Q(decided_at__gt=decided.decided_at),
                                     withdrawn_at__gt=decided.decided_at)
    return withdrawn.order_by("-withdrawn_at").values_list("withdrawn_at", flat=True).first()


def follow_withdrawn_reports(*, post_id: int, actor, reason: str, now: datetime) -> None:
    """Flags of the post were withdrawn by their sender (factcheck.withdrawal; the caller holds the post's row lock):
    its queue row counts its open reports of harm again (moderation.report_queue.refresh_rows), so a post left with
    none leaves the staff's queue, and a lease on it ends, audited as released with why. Nothing for a post that was
    never reported."""
    row = ReportedPost.objects.filter(post_id=post_id).first()
    if row is None:
        return
    refresh_rows(post_ids=[post_id], now=now)
    if row.holder_id is not None and not ReportedPost.objects.filter(post_id=post_id, open_reports__gt=0).exists():
        record_event(actor=actor, verb=AuditVerb.REPORT_RELEASED, target=Post(pk=post_id), post_id=post_id,
                     reason="the platform withdrew the reports" + (f": {reason}" if reason else ""),
                     data={"holder": row.holder_id})


def holds_lease(row: ReportedPost, user, *, now: datetime) -> bool:
    """Whether `user` holds the live lease on the row's reports (a lapsed lease is as good as none)."""
    return row.holder_id == getattr(user, "pk", None) and live_holder(row, now=now) is not None


def live_holder(row: ReportedPost, *, now: datetime):
    """Who holds the row's reports now, or None (nobody, or a lease that ran out)."""
    if not is_lease_live(holder_id=row.holder_id, lease_expires_at=row.lease_expires_at, now=now):
        return None
    return row.holder


def is_lease_live(*, holder_id: int | None, lease_expires_at: datetime | None, now: datetime) -> bool:
    """Whether a row's lease holds now: someone holds it and it has not run out (the queue's rows are plain
    values, not models: moderation.report_queue.queue_page)."""
    return holder_id is not None and lease_expires_at is not None and lease_expires_at > now


@transaction.atomic(durable=True)
def claim_report(*, staff, post_id: int, now: datetime | None = None) -> ReportedPost:
    """Take the lease on a post's open reports of harm (or renew one's own). Refused if another staff member
    holds it, or nothing is open."""
    _require_staff(staff)
    now = now or timezone.now()
    post, row = _locked_row(post_id)
    holder = live_holder(row, now=now)
    if holder is not None and holder.pk != staff.pk:
        raise ReportClaimed(f"{holder.get_username()} is deciding this post's reports (until "
                            f"{clock(row.lease_expires_at)}); it is theirs until then.")
    if holder is None:
        row.claimed_at = now
    row.holder, row.lease_expires_at = staff, now + lease_length()
    row.save(update_fields=["holder", "claimed_at", "lease_expires_at"])
    record_event(actor=staff, verb=AuditVerb.REPORT_CLAIMED, target=post, post_id=post.pk,
                 data={"open_reports": row.open_reports, "expires_at": row.lease_expires_at.isoformat()})
    return row


@transaction.atomic(durable=True)
def release_report(*, staff, post_id: int, now: datetime | None = None) -> None:
    """Give up one's lease on a post's reports: they wait in the queue for anyone again."""
    _require_staff(staff)
    now = now or timezone.now()
    post, row = _locked_row(post_id)
    if row.holder_id != staff.pk:
        raise ReportRefused("You can only release the reports you claimed.")
    _end_lease(post_id=post.pk)
    record_event(actor=staff, verb=AuditVerb.REPORT_RELEASED, target=post, post_id=post.pk,
                 reason="released by staff")


def clean_decision(*, outcome: str, ground: str | None, reason: str) -> tuple[str, str]:
    """The ground and reason of a decision, checked: a removal names its ground and says why, "no violation"
    says why; sending to fact-checkers may add a note. Raises ReportRefused, naming the field in its details."""
    if outcome not in DECISIONS:
        raise ReportRefused(f"Decide one of: {', '.join(DECISIONS)}.")
    reason, ground = written(reason), ground or ""
    if outcome == ReportOutcome.REMOVED and ground not in RemovalGround.values:
        raise ReportRefused("Choose the community standard the post breaks.", details={"field": "ground"})
    if outcome in (ReportOutcome.REMOVED, ReportOutcome.NO_VIOLATION) and not reason:
        raise ReportRefused("Say why: the reason is kept with the decision.", details={"field": "reason"})
    if message := reason_problem(reason, read_by=READ_BY[outcome]):
        raise ReportRefused(message, details={"field": "reason"})
    return ground, reason


@transaction.atomic(durable=True)
def decide_report(
    *, staff, post_id: int, outcome: str, reason: str = "", ground: str | None = None,
    up_to_flag: int | None = None, now: datetime | None = None,
) -> ReportedPost:
    """Decide a post's open reports of harm, by the holder of their lease: a live one, or their own that ran out
    while nobody else took the post (as a fact-checker's save after a lapsed claim; the page they decided on
    named the reports they saw, `up_to_flag`).

    `outcome`: `removed` (with `ground`), `no_violation` or `sent_to_fact_checkers`. `up_to_flag`: the last
    report the holder saw (the newest id on their page); reports after it stay open as the next round. A
    removal answers every open flag of the post (moderation.report_outcomes); if the post is removed already,
    that removal answers these reports (no second removal). Refused (`ReportsAlreadyDecided`, the lease kept)
    if every report the holder saw was decided meanwhile. Returns the post's queue row as left.
    """
    _require_staff(staff)
    ground, reason = clean_decision(outcome=outcome, ground=ground, reason=reason)
    now = now or timezone.now()
    post, row = _locked_row(post_id)
    if not holds_lease(row, staff, now=now):
        holder = live_holder(row, now=now)
        if holder is not None:
            raise ReportClaimed(f"{holder.get_username()} holds this post's reports; your decision was not saved.")
        if row.holder_id != staff.pk:
            raise ReportClaimRequired("Claim this post's reports before you decide them.")
    seen = Q(post=post, category__in=HARM_CATEGORIES)
    if up_to_flag is not None:
        seen &= Q(pk__lte=up_to_flag)
        if not Flag.objects.filter(seen, status=ReportStatus.OPEN).exists():
            # A stale page: deciding nothing must not end the lease or say it worked.
            raise ReportsAlreadyDecided(f"These reports were decided by someone else; {row.open_reports} new "
                                        "report(s) arrived: reload.")
    if outcome == ReportOutcome.REMOVED and active_removal(post) is None:
        # The removal's pipeline answers the reports (and every other open flag of the post) as removed.
        remove_post(staff=staff, post_id=post.pk, ground=ground, reason=reason, now=now)
    elif outcome == ReportOutcome.REMOVED:
        close_flags(flags=seen, outcome=outcome, actor=staff, now=now,
                    reason=f"already removed; {reason}" if reason else "already removed")
    else:
        close_flags(flags=seen, outcome=outcome, actor=staff, now=now, reason=reason)
        if outcome == ReportOutcome.SENT_TO_FACT_CHECKERS:
            send_to_fact_checkers(post=post, actor=staff, now=now)
    _end_lease(post_id=post.pk, decided_at=now)
    return ReportedPost.objects.get(post=post)


def _end_lease(*, post_id: int, decided_at: datetime | None = None) -> None:
    ended = {"holder": None, "claimed_at": None, "lease_expires_at": None}
    if decided_at is not None:
        ended["last_decided_at"] = decided_at
    ReportedPost.objects.filter(post_id=post_id).update(**ended)


@dataclass(frozen=True)
class LastDecision:
    """A post's latest decision on reports of harm: when, what (the outcome most of its reports got) and how many."""

    decided_at: datetime
    outcome: str
    reports: int


def last_decision(post: Post) -> LastDecision | None:
    """The post's latest decision on its reports of harm still standing (its reports decided at one moment: a
    decision answers them in one statement), or None if none stands."""
    decided = Flag.objects.filter(post=post, category__in=HARM_CATEGORIES, status=ReportStatus.DECIDED)
    latest = decided.order_by("-decided_at").values_list("decided_at", flat=True).first()
    if latest is None:
        return None
    outcomes = dict(decided.filter(decided_at=latest).values_list("outcome").annotate(n=Count("id")).order_by())
    return LastDecision(decided_at=latest, outcome=max(outcomes, key=outcomes.__getitem__),
                        reports=sum(outcomes.values()))


def clean_reopening(reason: str) -> str:
    """A reopening's reason, checked: required, kept for good. Raises ReportRefused naming the field."""
    reason = written(reason)
    if not reason:
        raise ReportRefused("Say why you reopen the decision: the reason is kept with it.",
                            details={"field": "reason"})
    if message := reason_problem(reason, read_by=KEPT_FOR_GOOD):
        raise ReportRefused(message, details={"field": "reason"})
    return reason


@transaction.atomic(durable=True)
def reopen_report(*, staff, post_id: int, decided_at: datetime, reason: str, now: datetime | None = None) -> int:
    """Reopen the post's decision on reports of harm made at `decided_at` (the one the staff member's page showed):
    its reports are open again, on the desk for anyone to claim, and their reporters are told. Returns how many.

    A removal that stands is lifted instead (in the admin), which reopens what it answered; reports sent to
    fact-checkers stop counting for their queue (factcheck.routing.recall_from_fact_checkers). Refused if the
    decision changed meanwhile (`DecisionChanged`: reopened, or decided again), or another holds the post's
    reports now (a new round: their decision must not answer reports they never saw)."""
    _require_staff(staff)
    reason = clean_reopening(reason)
    now = now or timezone.now()
    post = lock_post(post_id)
    decision = last_decision(post)
    if decision is None or decision.decided_at != decided_at:
        raise DecisionChanged(_changed_since(post, decided_at, standing=decision))
    if decision.outcome == ReportOutcome.REMOVED and active_removal(post) is not None:
        raise ReportRefused("The post is removed: restore it in the admin (lift the removal), which reopens the "
                            "reports it answered and tells the page owner.", code="post_removed")
    row = ReportedPost.objects.select_related("holder").filter(post=post).first()
    holder = live_holder(row, now=now) if row is not None else None
    if holder is not None and holder.pk != staff.pk:
        raise ReportClaimed(f"{holder.get_username()} is deciding this post's new reports: reopen this decision once "
                            "they have.")
    reopened = reopen_flags(flags=Q(post=post, category__in=HARM_CATEGORIES, decided_at=decided_at), actor=staff,
                            now=now, reason=reason)
    if decision.outcome == ReportOutcome.SENT_TO_FACT_CHECKERS:
        recall_from_fact_checkers(post=post, actor=staff, now=now)
    return len(reopened)


DECIDED_AGAIN = "These reports were decided again since you loaded the page: reload it to see the decision that stands."


def _changed_since(post: Post, decided_at: datetime, *, standing: LastDecision | None) -> str:
    """Why a reopening is stale: the reports were decided again (`standing`, the post's latest decision that stands,
    is newer), who reopened the decision, or that the platform withdrew every report it answered. A newer decision
    is asked first: reports withdrawn from the old one say nothing of the one that stands now."""
    if standing is not None and standing.decided_at > decided_at:
        return DECIDED_AGAIN
    reopened = (AuditEvent.objects.filter(post_id=post.pk, verb=AuditVerb.REPORTS_REOPENED, created_at__gte=decided_at)
                .select_related("actor").order_by("-created_at", "-id").first())
    if reopened is not None:
        who = reopened.actor.get_username() if reopened.actor else "Factdesk"
        return (f"{who} reopened this decision already ({clock(reopened.created_at)}): its reports are open on the "
                "desk again.")
    withdrawn_at = (Flag.objects.filter(post=post, category__in=HARM_CATEGORIES, decided_at=decided_at,
                                        status=ReportStatus.WITHDRAWN)
                    .order_by("-withdrawn_at").values_list("withdrawn_at", flat=True).first())
    if withdrawn_at is not None:
        # Withdrawn reports count for nothing (factcheck.eligibility.REVIEW_FLAGS): the decision went with them.
        return (f"The platform withdrew the reports this decision answered ({clock(withdrawn_at)}): there is nothing "
                "left to reopen. Withdrawn reports count for nothing, so a post sent to fact-checkers on them alone "
                "has left their queue already. Nothing was saved.")
    return DECIDED_AGAIN
