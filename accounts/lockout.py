"""Login lockout (django-axes) in the audit log, and unlocking by staff with a reason.

django-axes counts failed logins per username and address and refuses the pair after
AXES_FAILURE_LIMIT (settings). A lockout is an audit event, one per lockout, however many attempts it
refuses; so is every unlock, which only trust-and-safety staff may do, always with a reason.
"""

from __future__ import annotations

from axes.models import AccessAttempt
from axes.signals import user_locked_out
from axes.utils import reset
from django.db import transaction
from django.dispatch import receiver

from audit.models import AuditEvent, AuditVerb
from audit.services import record_event
from core.reasons import written
from core.refusals import Refusal


class UnlockRefused(Refusal):
    code = "unlock_refused"


@receiver(user_locked_out, dispatch_uid="accounts.audit_lockout")
def audit_lockout(sender, request=None, username=None, ip_address=None, **kwargs) -> None:
    """Audit a lockout once, when it begins.

    axes sends `user_locked_out` again on every attempt it refuses while the pair is locked: one event each
    let an anonymous client grow the append-only log without limit (40 posts of an unknown name in 3 s wrote
    36 events). A lockout lasts as long as the pair's attempt records (axes deletes them when the cool-off
    passes, and `unlock` does), so its event names the first of them, and an attempt whose records one
    already names writes nothing. A lockout kept up past the cool-off under new user agents (each a new
    record) is written again once its first record expires: at most once a cool-off.
    """
    with transaction.atomic():
        # Locked in id order so that two attempts crossing the limit at once write one event, not two: the
        # second waits here, then finds the first's. NO KEY: nothing references an attempt record, and the
        # attempts' own updates (axes, FOR UPDATE in their own transaction) wait a moment at most.
        attempts = list(AccessAttempt.objects.filter(username=username, ip_address=ip_address)
                        .select_for_update(no_key=True).order_by("id").only("id"))
        named = AuditEvent.objects.filter(
            verb=AuditVerb.LOGIN_LOCKED, target_type=AccessAttempt._meta.label_lower,
            target_id__in=[str(attempt.pk) for attempt in attempts],
        )
        if attempts and named.exists():
            return
        record_event(
            actor=None, verb=AuditVerb.LOGIN_LOCKED, target=attempts[0] if attempts else AccessAttempt(pk=0),
            system="axes", reason=f"too many failed sign-ins for {username!r} from {ip_address}",
            data={"username": username or "", "ip_address": ip_address or ""},
        )


@transaction.atomic(durable=True)
def unlock(*, staff, attempt_id: int, reason: str) -> int:
    """Clear the lockout of one username and address; returns how many attempt records were removed."""
    if not (getattr(staff, "is_trust_safety", False) or getattr(staff, "is_superuser", False)):
        raise UnlockRefused("Only trust-and-safety staff unlock sign-ins.", code="forbidden")
    if not written(reason):
        raise UnlockRefused("Unlocking needs a reason.")
    attempt = AccessAttempt.objects.filter(pk=attempt_id).first()
    if attempt is None:
        raise UnlockRefused("That sign-in is not locked any more.")
    username, ip_address = attempt.username, attempt.ip_address
    removed = reset(username=username, ip=ip_address)
    record_event(
        actor=staff, verb=AuditVerb.LOGIN_UNLOCKED, target=attempt, reason=reason.strip(),
        data={"username": username or "", "ip_address": ip_address or "", "records_removed": removed},
    )
    return removed
