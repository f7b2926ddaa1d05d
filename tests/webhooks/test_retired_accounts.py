"""A retired (deactivated) platform account hears nothing, and staff can stop its endpoints in the admin.

Deactivating an account refuses its token, so it cannot delete its own endpoints; before, they went on receiving
every decision and staff could only view and enable them.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core import mail

from audit.models import AuditEvent, AuditVerb
from factcheck.member_changes import change_user
from moderation.staff_actions import remove_post
from tests.conftest import bearer_client
from tests.factories import PlatformUserFactory, PostFactory, StaffFactory
from webhooks import jobs
from webhooks.delivery import OWNER_DEACTIVATED, deliver_batch
from webhooks.models import Delivery, DeliveryAttempt, DeliveryStatus, Endpoint
from webhooks.schedule import due_deliveries

pytestmark = pytest.mark.django_db

ENDPOINTS = "/admin/webhooks/endpoint/"
DELIVERIES = "/admin/webhooks/delivery/"


def remove():
    post = PostFactory()
    remove_post(staff=StaffFactory(), post_id=post.pk, ground="violence", reason="Threatens a named person.")
    return post


def set_active(user, active: bool) -> None:
    """What staff do on the admin's user page (factcheck.member_changes.change_user)."""
    change_user(user_id=user.pk, by=StaffFactory(is_superuser=True), values={"is_active": active},
                organisation=None, reason="The platform retired this integration.")


def test_a_deactivated_platform_accounts_endpoints_get_no_deliveries(register, receiver, platform_user):
    retired = register(receiver.url)
    other_account = PlatformUserFactory()
    live = bearer_client(other_account).post(
        "/api/v1/webhooks", {"url": receiver.url, "events": ["distribution.changed"]}, content_type="application/json"
    ).json()
    set_active(platform_user, False)

    remove()

    assert list(Delivery.objects.values_list("endpoint_id", flat=True)) == [live["id"]]
    assert not Delivery.objects.filter(endpoint_id=retired["id"]).exists()


def test_what_a_retired_account_had_pending_is_given_up_unsent_and_comes_back_only_by_redelivery(
    register, receiver, platform_user, staff_client
):
    hook = register(receiver.url)
    remove()
    delivery = Delivery.objects.get(endpoint_id=hook["id"])
    assert delivery.status == DeliveryStatus.PENDING
    set_active(platform_user, False)

    # The sweep's and a job's attempt alike: nothing is POSTed, the delivery says why it was given up.
    deliver_batch(due_deliveries(now=delivery.created_at + timedelta(minutes=1)),
                  now=delivery.created_at + timedelta(minutes=1))
    delivery.refresh_from_db()
    assert (delivery.status, delivery.last_error) == (DeliveryStatus.FAILED, OWNER_DEACTIVATED)
    assert receiver.received == [] and not DeliveryAttempt.objects.exists()

    refused = staff_client.post(f"{DELIVERIES}{delivery.pk}/redeliver/", {"reason": "Resend."}, follow=True)
    assert "whose account is deactivated; reactivate the account before redelivering" in refused.content.decode()
    assert Delivery.objects.get(pk=delivery.pk).status == DeliveryStatus.FAILED

    set_active(platform_user, True)
    assert staff_client.post(f"{DELIVERIES}{delivery.pk}/redeliver/", {"reason": "Account back."}).status_code == 302
    assert deliver_batch([delivery.pk]) == {"delivered": 1}
    assert len(receiver.received) == 1


def test_staff_disable_then_delete_a_retired_accounts_endpoint_in_the_admin_with_a_reason(
    register, receiver, platform_user, staff_client, ts_user
):
    hook = register(receiver.url)
    remove()
    set_active(platform_user, False)
    page = staff_client.get(f"{ENDPOINTS}{hook['id']}/change/").content.decode()
    assert f"{ENDPOINTS}{hook['id']}/disable/" in page and f"{ENDPOINTS}{hook['id']}/remove/" in page

    no_reason = staff_client.post(f"{ENDPOINTS}{hook['id']}/disable/", {"reason": ""})
    assert no_reason.status_code == 200 and "A reason is required" in no_reason.content.decode()
    assert Endpoint.objects.get(pk=hook["id"]).health == "healthy"

    disabled = staff_client.post(f"{ENDPOINTS}{hook['id']}/disable/", {"reason": "The platform retired feed2."})
    assert disabled.status_code == 302
    endpoint = Endpoint.objects.get(pk=hook["id"])
    assert endpoint.health == "disabled" and endpoint.disabled_reason == "trust-and-safety staff disabled it"
    event = AuditEvent.objects.get(verb=AuditVerb.WEBHOOK_DISABLED)
    assert (event.actor, event.reason) == (ts_user, "The platform retired feed2.")
    assert Delivery.objects.get().status == DeliveryStatus.FAILED
    jobs.notify_disabled_endpoints()
    assert mail.outbox == []  # the retired account is not e-mailed

    again = staff_client.post(f"{ENDPOINTS}{hook['id']}/disable/", {"reason": "Twice."}, follow=True)
    assert "This endpoint is disabled already." in again.content.decode()

    deleted = staff_client.post(f"{ENDPOINTS}{hook['id']}/remove/", {"reason": "The integration is gone for good."})
    assert deleted.status_code == 302
    assert Endpoint.objects.get(pk=hook["id"]).health == "deleted"
    event = AuditEvent.objects.get(verb=AuditVerb.WEBHOOK_DELETED)
    assert (event.actor, event.reason) == (ts_user, "The integration is gone for good.")
    page = staff_client.get(f"{ENDPOINTS}{hook['id']}/change/").content.decode()
    assert f"{ENDPOINTS}{hook['id']}/remove/" not in page and f"{ENDPOINTS}{hook['id']}/disable/" not in page


def test_staff_delete_endpoints_in_bulk_from_the_list_and_pending_deliveries_are_cancelled(
    register, receiver, staff_client
):
    first, second = register(receiver.url), register(receiver.url)
    remove()
    response = staff_client.post(ENDPOINTS, {"action": "remove", "_selected_action": [first["id"], second["id"]],
                                             "confirm": "1", "reason": "Retired integration."}, follow=True)
    assert "done for 2 of 2" in response.content.decode()
    assert Endpoint.objects.filter(deleted_at__isnull=False).count() == 2
    assert set(Delivery.objects.values_list("status", flat=True)) == {DeliveryStatus.CANCELLED}
    assert AuditEvent.objects.filter(verb=AuditVerb.WEBHOOK_DELETED, reason="Retired integration.").count() == 2
