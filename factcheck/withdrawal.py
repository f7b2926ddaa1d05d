"""Withdrawing a flag: the platform takes back a flag it sent by mistake (a classifier's false positive, a person who
retracted their report, a duplicate sent under another key).

The flag is kept, as history: it is marked withdrawn (when, by whom, audited with the reason given) and from then on
counts for nothing. What follows is eligibility's (factcheck.eligibility.withdrawn_state, moved by
factcheck.routing.follow_withdrawal): the post's flag figures and priority are counted again without it, and a post
that waited for a review and has no flag left asking for one leaves the fact-checkers' queue as if never flagged (a
claim on it ends; the reviewer's draft is kept). A report of harm withdrawn leaves the staff's queue with it
(`flags_withdrawn`: moderation.receivers counts the post's open reports again and ends a staff lease on a post left
with none). A decision never changes: a rated, matched or removed post keeps its rating or removal, and a flag that
a decision had answered keeps that outcome beside its withdrawal. Staff sending reports of harm to fact-checkers only
routed them: withdrawn, they ask for a review no more than a withdrawn misinformation flag does.

A flag belongs to the platform account that sent it: another account's key is not found, as GET /api/v1/flags/{key}
says. Withdrawing is idempotent: a flag withdrawn already is answered as it stands, and nothing is written again.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from audit.models import AuditVerb
from audit.services import record_event
from core.reasons import KEPT_FOR_GOOD, reason_problem, written
from factcheck.models import Flag, Post, ReportStatus
from factcheck.routing import follow_withdrawal
from factcheck.signals import flags_withdrawn

# Most characters of a withdrawal's reason: a short note for the record (the audit log), sent in the URL's query.
MAX_WITHDRAWAL_REASON = 500


@dataclass(frozen=True)
class Withdrawal:
    """A flag as its withdrawal left it, and its post (queue state as now)."""

    flag: Flag
    post: Post
    withdrawn_now: bool  # False: it had been withdrawn before, and nothing changed


def find_sent_flag(*, sender, idempotency_key: str) -> Flag | None:
    """The flag `sender` sent under this key (the key as sent, surrounding white space aside), or None: another
    account's flag is none of theirs, as GET /api/v1/flags/{key} says."""
    return Flag.objects.filter(idempotency_key=idempotency_key.strip(), submitted_by=sender).first()


def clean_withdrawal_reason(reason: str) -> str:
    """A withdrawal's reason as the record keeps it ("" for none), or ValidationError keyed `reason`: at most
    MAX_WITHDRAWAL_REASON characters, no control characters, and no personal data such as an e-mail address or a
    telephone number (it is kept for good in the post's audit log), as the undo and reopening reasons are checked."""
    reason = written(reason)
    if len(reason) > MAX_WITHDRAWAL_REASON:
        raise ValidationError({"reason": [f"Keep the reason to {MAX_WITHDRAWAL_REASON:,} characters "
                                          f"(it has {len(reason):,})."]})
    if problem := reason_problem(reason, read_by=KEPT_FOR_GOOD):
        raise ValidationError({"reason": [problem]})
    return reason


@transaction.atomic(durable=True)
def withdraw_flag(*, sender, idempotency_key: str, reason: str = "", now: datetime | None = None) -> Withdrawal | None:
    """Withdraw the flag `sender` sent under this key; None if they sent none. `reason` (optional; refused by
    `clean_withdrawal_reason` before anything is read) is kept in the audit event.

    Takes the post's row lock first, as every claim, rating, decision and ingest batch of the post does
    (docs/concurrency.md): a withdrawal waits for a rating or a claim of the post in progress, then sees what it
    left (a rated post keeps its rating), and a claim or rating that comes after sees the post as it left it."""
    reason = clean_withdrawal_reason(reason)
    now = now or timezone.now()
    found = find_sent_flag(sender=sender, idempotency_key=idempotency_key)
    if found is None:
        return None
    # NO KEY, as claims and ratings lock the post: others only insert rows that reference it.
    post = (Post.objects.select_for_update(no_key=True, of=("self",)).select_related("page")
            .get(pk=found.post_id))
    flag = Flag.objects.get(pk=found.pk)  # read again under the post's lock: a decision may have answered it
    if flag.status == ReportStatus.WITHDRAWN:
        return Withdrawal(flag=flag, post=post, withdrawn_now=False)
    before = flag.status
    flag.status, flag.withdrawn_at, flag.withdrawn_by = ReportStatus.WITHDRAWN, now, sender
    flag.save(update_fields=["status", "withdrawn_at", "withdrawn_by"])
    record_event(actor=sender, verb=AuditVerb.FLAG_WITHDRAWN, target=flag, post_id=post.pk, reason=reason,
                 data={"idempotency_key": flag.idempotency_key, "category": flag.category, "source": flag.source,
                       "status_before": before, "outcome": flag.outcome or None},
                 system="flags")
    follow_withdrawal(post=post, actor=sender, now=now)
    flags_withdrawn.send(sender=Flag, post_id=post.pk, actor=sender, reason=reason, now=now)
    return Withdrawal(flag=flag, post=post, withdrawn_now=True)
