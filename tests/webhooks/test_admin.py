"""Staff see and fix deliveries in the admin: health, filters, every attempt, redeliver and enable (audited)."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from audit.models import AuditEvent, AuditVerb
from moderation.staff_actions import remove_post
from tests.factories import PostFactory, StaffFactory
from webhooks.delivery import deliver_batch
from webhooks.models import AttemptOutcome, Delivery, DeliveryStatus, Endpoint

pytestmark = pytest.mark.django_db

DELIVERIES = "/admin/webhooks/delivery/"
ENDPOINTS = "/admin/webhooks/endpoint/"


@pytest.fixture
def staff(ts_user):
    """The trust-and-safety member signed in as staff_client (tests/conftest.py)."""
    return ts_user


def removed_post():
    post = PostFactory()
    remove_post(staff=StaffFactory(), post_id=post.pk, ground="hate", reason="A slur against a group.")
    return post


@pytest.fixture
def failed_delivery(register, receiver):
    """A delivery that failed for 24 hours: the endpoint was disabled with it."""
    hook = register(receiver.url)
    receiver.plan.statuses = [500]
    post = removed_post()
    delivery = Delivery.objects.get(post=post)
    deliver_batch([delivery.pk], now=delivery.created_at)
    deliver_batch([delivery.pk], now=delivery.deadline)
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.FAILED
    assert Endpoint.objects.get(pk=hook["id"]).health == "disabled"
    return delivery


def test_staff_find_failed_deliveries_by_endpoint_and_by_post_and_read_every_attempt(
    staff_client, failed_delivery, receiver
):
    healthy_post = PostFactory()
    listing = staff_client.get(DELIVERIES, {"status__exact": "failed"}).content.decode()
    assert f"{DELIVERIES}{failed_delivery.pk}/change/" in listing
    by_endpoint = staff_client.get(DELIVERIES, {"endpoint__id__exact": failed_delivery.endpoint_id}).content.decode()
    assert f"{DELIVERIES}{failed_delivery.pk}/change/" in by_endpoint
    by_post = staff_client.get(DELIVERIES, {"q": failed_delivery.post.external_id}).content.decode()
    assert f"{DELIVERIES}{failed_delivery.pk}/change/" in by_post
    other = staff_client.get(DELIVERIES, {"q": healthy_post.external_id}).content.decode()
    assert f"{DELIVERIES}{failed_delivery.pk}/change/" not in other
    by_event_id = staff_client.get(DELIVERIES, {"q": str(failed_delivery.event.uid)}).content.decode()
    assert f"{DELIVERIES}{failed_delivery.pk}/change/" in by_event_id

    page = staff_client.get(f"{DELIVERIES}{failed_delivery.pk}/change/").content.decode()
    assert page.count("answer 500 to request") == 2  # both attempts, with the start of each answer
    assert "Redeliver" in page
    endpoint_page = staff_client.get(f"{ENDPOINTS}{failed_delivery.endpoint_id}/change/").content.decode()
    assert "disabled" in endpoint_page and "Enable again" in endpoint_page
    assert failed_delivery.endpoint.secret not in endpoint_page  # never shown


def test_staff_enable_the_endpoint_and_redeliver_with_a_reason_and_both_are_audited(
    staff_client, staff, failed_delivery, receiver
):
    endpoint = failed_delivery.endpoint
    refused = staff_client.post(f"{DELIVERIES}{failed_delivery.pk}/redeliver/", {"reason": "Receiver fixed."},
                                follow=True)
    assert "enable it again before redelivering" in refused.content.decode()
    assert Delivery.objects.get(pk=failed_delivery.pk).status == DeliveryStatus.FAILED

    no_reason = staff_client.post(f"{ENDPOINTS}{endpoint.pk}/enable/", {"reason": ""})
    assert no_reason.status_code == 200 and "A reason is required" in no_reason.content.decode()
    assert Endpoint.objects.get(pk=endpoint.pk).disabled_at is not None

    enabled = staff_client.post(f"{ENDPOINTS}{endpoint.pk}/enable/", {"reason": "The platform fixed its receiver."})
    assert enabled.status_code == 302
    assert Endpoint.objects.get(pk=endpoint.pk).health == "healthy"
    assert AuditEvent.objects.get(verb=AuditVerb.WEBHOOK_ENABLED).actor == staff

    receiver.plan.statuses = [200]
    before = len(receiver.received)
    response = staff_client.post(f"{DELIVERIES}{failed_delivery.pk}/redeliver/", {"reason": "Receiver fixed."})
    assert response.status_code == 302
    delivery = Delivery.objects.get(pk=failed_delivery.pk)
    assert delivery.status == DeliveryStatus.PENDING
    assert delivery.deadline >= timezone.now() + timedelta(hours=23)  # another 24 hours of retries
    event = AuditEvent.objects.get(verb=AuditVerb.WEBHOOK_REDELIVERED)
    assert (event.actor, event.reason, event.post_id) == (staff, "Receiver fixed.", delivery.post_id)
    assert event.data["previous_status"] == "failed"

    assert deliver_batch([delivery.pk]) == {AttemptOutcome.DELIVERED: 1}
    assert len(receiver.received) == before + 1
    assert receiver.received[-1].delivery_id == str(delivery.event.uid)  # the same event id as before


def test_staff_redeliver_in_bulk_from_the_list(staff_client, register, receiver):
    register(receiver.url)
    for _ in range(2):
        removed_post()
    ids = list(Delivery.objects.values_list("pk", flat=True))
    deliver_batch(ids)  # both delivered
    response = staff_client.post(DELIVERIES, {"action": "redeliver", "_selected_action": ids,
                                              "confirm": "1", "reason": "The platform lost a day of events."},
                                 follow=True)
    assert "done for 2 of 2" in response.content.decode()
    assert set(Delivery.objects.values_list("status", flat=True)) == {DeliveryStatus.PENDING}
    assert AuditEvent.objects.filter(verb=AuditVerb.WEBHOOK_REDELIVERED).count() == 2


def test_the_endpoint_list_shows_each_endpoints_health(staff_client, register, receiver, failed_delivery):
    healthy = register(receiver.url)
    listing = staff_client.get(ENDPOINTS).content.decode()
    assert "disabled" in listing and "healthy" in listing
    only_disabled = staff_client.get(ENDPOINTS, {"health": "disabled"}).content.decode()
    assert f"{ENDPOINTS}{failed_delivery.endpoint_id}/change/" in only_disabled
    assert f"{ENDPOINTS}{healthy['id']}/change/" not in only_disabled


def test_redelivering_to_an_endpoint_its_owner_deleted_says_it_cannot_be_sent_again(staff_client, failed_delivery):
    """It had said "enable it again", which the enable button then refused for a deleted endpoint."""
    Endpoint.objects.filter(pk=failed_delivery.endpoint_id).update(deleted_at=timezone.now())
    refused = staff_client.post(f"{DELIVERIES}{failed_delivery.pk}/redeliver/", {"reason": "Receiver fixed."},
                                follow=True).content.decode()
    assert "was deleted; nothing is sent to it again" in refused
    assert "enable it again" not in refused
    assert Delivery.objects.get(pk=failed_delivery.pk).status == DeliveryStatus.FAILED


def test_the_list_reads_each_deliverys_last_answer_by_one_probe_of_its_attempts(staff_client, failed_delivery):
    """The list's "last answer" is each delivery's newest attempt (a subquery by delivery, newest id first). With the
    attempts indexed by (delivery, id), webhook_attempt_delivery (webhooks 0008), each row of the list is one probe
    of each month's index; by the delivery alone, while the statistics of a burst of attempts were not gathered yet,
    PostgreSQL walked the attempts backwards by id until it met one of the delivery's."""
    with connection.cursor() as cursor:
        # A burst: 2,000 more deliveries like the failed one, five attempts each, and no ANALYZE since.
        columns = [f.column for f in Delivery._meta.concrete_fields if f.column != "id"]
        names = ", ".join(f'"{column}"' for column in columns)
        cursor.execute(f"INSERT INTO webhooks_delivery ({names}) SELECT {names} FROM webhooks_delivery, "
                       "generate_series(1, 2000) WHERE id = %s", [failed_delivery.pk])
        cursor.execute("""
            INSERT INTO webhooks_deliveryattempt (delivery_id, delivery_created_at, number, started_at, latency_ms,
                                                  outcome, status_code, response_excerpt)
            SELECT d.id, d.created_at, n, d.created_at, 40, 'http_error', 500, 'Internal Server Error'
            FROM webhooks_delivery d, generate_series(1, 5) n WHERE d.id <> %s""", [failed_delivery.pk])
        cursor.execute("SELECT indexrelid::regclass::text FROM pg_index WHERE indexrelid IN "
                       "(SELECT relid FROM pg_partition_tree(to_regclass('webhook_attempt_delivery')))")
        index = {row[0] for row in cursor.fetchall()}  # the table's index and each month's

    with CaptureQueriesContext(connection) as queries:
        listing = staff_client.get(DELIVERIES).content.decode()
    assert listing.count("HTTP 500") > 1  # the column the subquery fills
    [sql] = [query["sql"] for query in queries if '"last_outcome"' in query["sql"]]
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN {sql}")
        plan = [row[0] for row in cursor.fetchall()]
    subplan = plan[next(n for n, line in enumerate(plan) if "SubPlan" in line):]
    scans = [line for line in subplan if " on webhooks_deliveryattempt" in line]
    used = {match[1] for line in scans if (match := re.search(r"Index Scan Backward using (\S+) on ", line))}
    assert scans and len(used) == len(scans) and used <= index, "\n".join(plan)
    assert not any(re.search(r"Sort\s+\(cost", line) for line in subplan), "\n".join(plan)  # no sort of attempts
