"""Job entry points of webhooks: thin, idempotent (a settled delivery is skipped, a locked one left alone)."""

from __future__ import annotations

import logging

from django.conf import settings
from django.core.mail import EmailMessage
from django.db import transaction
from django.utils import timezone

from core import mailing
from core.formatting import moment
from core.reconciling import past_grace, warn_redriven
from webhooks import delivery, retention, schedule
from webhooks.models import Endpoint

logger = logging.getLogger(__name__)


def deliver(delivery_ids: list[int]) -> dict[str, int]:
    return delivery.deliver_batch(delivery_ids)


def deliver_due() -> int:
    """Periodic: retries that are due, and deliveries whose job was lost."""
    return schedule.enqueue_due()


def keep_history_months() -> int:
    """Periodic: drop the months past the retention period (PostgreSQL); audit.jobs.make_history_months makes the
    coming ones, of every partitioned table."""
    return len(retention.drop_expired_months())


def notify_disabled_endpoints() -> int:
    """E-mail the owners of endpoints disabled since they were last told (periodic, and after each disabling); a
    deactivated account is not e-mailed (staff disable a retired account's endpoints: nobody there reads it), and is
    told if it is reactivated. Warns
    (core.reconciling) of those told FACTDESK_RECONCILE_AFTER_SECONDS or more after their disabling: the job after
    it was lost or late, and the periodic run made it good."""
    told = []
    waiting = Endpoint.objects.filter(
        disabled_at__isnull=False, owner_notified_at__isnull=True, deleted_at__isnull=True, owner__is_active=True
    )
    for endpoint_id, disabled_at in waiting.order_by("id").values_list("id", "disabled_at"):
        try:
            if _tell_owner(endpoint_id):
                told.append(disabled_at)
        except mailing.EmailNotSent:
            # That owner's address refused (it rolled their claim back, for the next run): not everyone after them.
            logger.exception("could not tell the owner of webhook endpoint %s it was disabled; tried again next run",
                             endpoint_id)
    after = settings.FACTDESK_RECONCILE_AFTER_SECONDS
    warn_redriven(past_grace(f"owners of webhook endpoints still not told {after} s after their disabling", told,
                             now=timezone.now(), grace=after))
    return len(told)


@transaction.atomic(durable=True)
def _tell_owner(endpoint_id: int) -> bool:
    """E-mail the endpoint's owner that it was disabled; False when another run told them, or they have no address.
    Claimed before sending, in the transaction that sends: two runs never both send it, and a failed send
    (EmailNotSent) leaves it to the next run."""
    if not Endpoint.objects.filter(pk=endpoint_id, owner_notified_at__isnull=True).update(
        owner_notified_at=timezone.now()
    ):
        return False
    endpoint = Endpoint.objects.select_related("owner").get(pk=endpoint_id)
    if not endpoint.owner.email:
        return False
    mailing.send(EmailMessage(
        subject=f"Factdesk disabled your webhook endpoint #{endpoint.pk}",
        body=(
            f"Factdesk stopped sending to {endpoint.url} on {moment(endpoint.disabled_at)}: "
            f"{endpoint.disabled_reason or 'its deliveries failed'}.\n\nThe events it missed are kept. "
            "Once the receiver works again, ask Factdesk's trust-and-safety staff to enable the endpoint and "
            "redeliver them; meanwhile GET /api/v1/decisions has every distribution change.\n"
        ),
        from_email=settings.DEFAULT_FROM_EMAIL, to=[endpoint.owner.email],
    ), recipient=f"user {endpoint.owner_id}, owner of webhook endpoint {endpoint.pk}")
    return True
