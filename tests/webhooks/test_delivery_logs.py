"""A failed webhook attempt is a warning in the log: which endpoint, which delivery and event, what the receiver
answered (or why nothing answered), and what happens next. The admin showed it; the logs said only "Job OK".
Never the endpoint's secret, nor the body sent. The sweep behind the jobs warns of the jobs it found lost, as every
reconciler does (core.reconciling).
"""

from __future__ import annotations

import logging
from datetime import timedelta

import pytest
from django.utils import timezone

from moderation.staff_actions import lift_action, remove_post
from tests.factories import PostFactory, StaffFactory
from tests.jobs_support import redriven
from tests.webhooks.receiver import Receiver
from webhooks import jobs
from webhooks.delivery import deliver_batch
from webhooks.models import AttemptOutcome, Delivery, DeliveryStatus, Endpoint
from webhooks.schedule import due_deliveries, enqueue_due

pytestmark = pytest.mark.django_db


def one_delivery(caplog) -> tuple[Delivery, str]:
    """A removed post's delivery, attempted once: the delivery as then, and the warnings logged."""
    post = PostFactory()
    remove_post(staff=StaffFactory(), post_id=post.pk, ground="violence", reason="Threatens a named person.")
    delivery = Delivery.objects.select_related("event").get()
    with caplog.at_level(logging.INFO):
        deliver_batch([delivery.pk], now=delivery.created_at)
    delivery.refresh_from_db()
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1, warnings
    # Nothing of the secret or of the body: the event's data names the post.
    assert delivery.endpoint.secret not in caplog.text and post.external_id not in caplog.text
    return delivery, warnings[0]


def test_a_500_is_logged_with_its_endpoint_delivery_answer_and_next_attempt(register, receiver, caplog):
    hook = register(receiver.url)
    receiver.plan.statuses = [500, 200]
    delivery, warning = one_delivery(caplog)
    assert warning == (
        f"webhook delivery {delivery.pk} (event {delivery.event.uid}) to endpoint {hook['id']} failed at attempt 1: "
        f"HTTP 500; retried at {delivery.next_attempt_at.isoformat(timespec='seconds')}"
    )
    caplog.clear()
    assert deliver_batch([delivery.pk], now=delivery.next_attempt_at) == {AttemptOutcome.DELIVERED: 1}
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]  # a success is no warning


def test_a_refused_connection_is_logged_with_its_error(register, caplog):
    dead = Receiver().start()
    dead.stop()  # nothing listens there any more
    hook = register(dead.url)
    delivery, warning = one_delivery(caplog)
    assert f"to endpoint {hook['id']} failed at attempt 1: no answer: ConnectionRefusedError" in warning
    assert warning.endswith(f"; retried at {delivery.next_attempt_at.isoformat(timespec='seconds')}")


def test_an_endpoint_disabled_after_410_is_logged_as_disabled(register, receiver, caplog):
    hook = register(receiver.url)
    receiver.plan.statuses = [410]
    delivery, warning = one_delivery(caplog)
    assert Endpoint.objects.get(pk=hook["id"]).disabled_at is not None
    assert warning == (
        f"webhook delivery {delivery.pk} (event {delivery.event.uid}) to endpoint {hook['id']} failed at attempt 1: "
        f"HTTP 410; endpoint {hook['id']} disabled (the receiver answered 410 Gone), its pending deliveries given up"
    )



def test_the_sweep_warns_of_a_delivery_whose_job_was_lost_and_not_of_a_retry_falling_due(register, receiver, caplog):
    register(receiver.url)
    receiver.plan.statuses = [500, 200]
    remove_post(staff=StaffFactory(), post_id=PostFactory().pk, ground="violence", reason="Threatens a named person.")
    delivery = Delivery.objects.get()  # its job after commit never ran: the test's transaction never commits
    assert enqueue_due(now=delivery.created_at) == 0  # its own job may still come
    later = delivery.created_at + timedelta(minutes=1)
    assert enqueue_due(now=later) == 1
    assert redriven(caplog) == ["reconciler re-drove webhook deliveries whose job was lost or late: 1, the oldest "
                                "waiting 1 min - Redis down, a worker killed, or the webhooks queue behind"]

    caplog.clear()
    deliver_batch([delivery.pk], now=later)  # HTTP 500: retried later, by the sweep
    delivery.refresh_from_db()
    assert enqueue_due(now=delivery.next_attempt_at) == 1
    assert redriven(caplog) == []  # the sweep's own work, nothing lost


def test_an_owner_told_late_of_their_endpoints_disabling_is_warned_of_one_told_at_once_is_not(
    register, receiver, caplog, mailoutbox
):
    lost, prompt = register(receiver.url), register(f"{receiver.url}other/")
    # Disabled five minutes ago, its owner not told: the e-mail job after the disabling was lost.
    Endpoint.objects.filter(pk=lost["id"]).update(disabled_at=timezone.now() - timedelta(minutes=5),
                                                  disabled_reason="the receiver answered 410 Gone")
    assert jobs.notify_disabled_endpoints() == 1
    assert redriven(caplog) == ["reconciler re-drove owners of webhook endpoints still not told 30 s after their "
                                "disabling: 1, the oldest waiting 5 min - their jobs were lost or late"]

    caplog.clear()
    Endpoint.objects.filter(pk=prompt["id"]).update(disabled_at=timezone.now(), disabled_reason="410")  # its job now
    assert jobs.notify_disabled_endpoints() == 1
    assert len(mailoutbox) == 2 and redriven(caplog) == []


def test_the_sweep_does_not_warn_of_deliveries_held_back_on_purpose(register, receiver, caplog, settings):
    # Held back by design, each taken up by the sweep later as planned, none of them lost: deliveries a job left for
    # the sweep after a failed wave to their endpoint, and a post's later delivery waiting behind its earlier one.
    settings.FACTDESK_WEBHOOK_ENDPOINT_CONCURRENCY = 2
    register(receiver.url)
    receiver.plan.statuses = [500, 500, 200]
    staff, posts = StaffFactory(), [PostFactory() for _ in range(4)]
    for post in posts[1:]:
        remove_post(staff=staff, post_id=post.pk, ground="violence", reason="Threatens a named person.")
    removal = remove_post(staff=staff, post_id=posts[0].pk, ground="violence", reason="Threatens a named person.")
    lift_action(actor=staff, action_id=removal.pk, reason="Removed in error.")  # in line behind its removal
    first, second, *deferred, behind = Delivery.objects.order_by("id")
    t0 = behind.created_at
    # Their jobs after commit: one job of the four removals (a wave of 2 fails, the other 2 are left to the sweep),
    # and the restoration's, which finds the removal of its post still pending before it.
    assert deliver_batch([first.pk, second.pk, *(d.pk for d in deferred)], now=t0) == {
        AttemptOutcome.HTTP_ERROR: 2, "deferred": 2}
    assert deliver_batch([behind.pk], now=t0) == {"waiting for an earlier delivery": 1}

    now = t0
    while Delivery.objects.filter(status=DeliveryStatus.PENDING).exists() and now < t0 + timedelta(hours=1):
        now += timedelta(seconds=10)
        if due := due_deliveries(now=now):
            enqueue_due(now=now)
            deliver_batch(due, now=now)
    assert set(Delivery.objects.values_list("status", flat=True)) == {DeliveryStatus.DELIVERED}
    assert redriven(caplog) == []


def test_the_sweep_warns_of_a_delivery_whose_sweep_job_was_lost(register, receiver, caplog):
    register(receiver.url)
    receiver.plan.statuses = [500, 200]
    remove_post(staff=StaffFactory(), post_id=PostFactory().pk, ground="violence", reason="Threatens a named person.")
    delivery = Delivery.objects.get()
    deliver_batch([delivery.pk], now=delivery.created_at)  # its job after commit: HTTP 500, retried in 15 s
    delivery.refresh_from_db()
    assert enqueue_due(now=delivery.next_attempt_at) == 1 and redriven(caplog) == []  # a retry falling due
    # That sweep's job never ran: the next sweep after its minute sends it again, and says so.
    later = delivery.next_attempt_at + timedelta(seconds=70)
    assert enqueue_due(now=later) == 1
    assert redriven(caplog) == ["reconciler re-drove webhook deliveries whose job was lost or late: 1, the oldest "
                                "waiting 1 min - Redis down, a worker killed, or the webhooks queue behind"]


def test_the_sweep_warns_of_a_delivery_whose_turn_came_and_whose_job_never_did(
    register, receiver, caplog, django_capture_on_commit_callbacks
):
    register(receiver.url)
    receiver.plan.statuses = [500, 200]
    staff = StaffFactory()
    removal = remove_post(staff=staff, post_id=PostFactory().pk, ground="violence", reason="Threatens a named person.")
    lift_action(actor=staff, action_id=removal.pk, reason="Removed in error.")
    earlier, behind = Delivery.objects.order_by("id")
    deliver_batch([earlier.pk, behind.pk], now=behind.created_at)  # HTTP 500: the lifting waits behind the removal
    earlier.refresh_from_db()
    with django_capture_on_commit_callbacks(execute=True):  # delivered: the lifting's job is enqueued, and never runs
        assert deliver_batch([earlier.pk], now=earlier.next_attempt_at) == {AttemptOutcome.DELIVERED: 1}
    turn = timezone.now()
    assert enqueue_due(now=turn) == 0  # its job may still come
    assert enqueue_due(now=turn + timedelta(seconds=40)) == 1
    [warning] = redriven(caplog)
    assert warning.startswith("reconciler re-drove webhook deliveries whose job was lost or late: 1, ")
