"""Login lockout (django-axes) in the audit log, and unlocking by staff with a reason.

django-axes counts failed logins per username and address and refuses the pair after
AXES_FAILURE_LIMIT (settings). A lockout is an audit event; so is every unlock, which only
trust-and-safety staff may do, always with a reason.
"""

from __future__ import annotations

from axes.models import AccessAttempt
from axes.signals import user_locked_out
from axes.utils import reset
from django.db import transaction
from django.dispatch import receiver

from audit.models import AuditVerb
from audit.services import record_event
from core.reasons import written
from core.refusals import Refusal


class UnlockRefused(Refusal):
    code = "unlock_refused"


@receiver(user_locked_out, dispatch_uid="accounts.audit_lockout")
def audit_lockout(sender, request=None, username=None, ip_address=None, **kwargs) -> None:
    attempt = AccessAttempt.objects.filter(username=username, ip_address=ip_address).order_by("-id").first()
    record_event(
        actor=None, verb=AuditVerb.LOGIN_LOCKED, target=attempt or AccessAttempt(pk=0), system="axes",
        reason=f"too many failed sign-ins for {username!r} from {ip_address}",
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
