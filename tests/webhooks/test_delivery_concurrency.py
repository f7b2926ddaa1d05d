"""Real concurrency: two changes of one post racing, two workers delivering them, a worker killed mid-POST.

These commit for real (transactional tests): the after-commit jobs go to Redis and a real worker, or a
real `manage.py rqworker` process, takes them.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from moderation.feed import append_and_publish
from moderation.models import DistributionChange
from tests.factories import PostFactory
from tests.pg import Backend, wait_until_blocked
from webhooks.delivery import deliver, deliver_batch
from webhooks.models import AttemptOutcome, Delivery, DeliveryAttempt, DeliveryStatus
from webhooks.schedule import due_deliveries

ROOT = Path(__file__).resolve().parents[2]
transactional = pytest.mark.django_db(transaction=True, serialized_rollback=True)


def change(post, cause: str) -> DistributionChange:
    return DistributionChange(post=post, multiplier=Decimal("0.2"), cause=cause, created_at=timezone.now())


@transactional
def test_two_racing_changes_of_one_post_are_delivered_in_commit_order_by_two_workers(register, receiver, run_worker):
    register(receiver.url)
    post = PostFactory()

    def changer(backend: Backend) -> int:
        with transaction.atomic():
            [appended] = append_and_publish([change(post, backend.name)])
            backend.reached("appended")
            backend.wait_for("commit")
        return appended.pk

    first, second = Backend(changer, name="first"), Backend(changer, name="second")
    try:
        first.start()
        first.wait_until_reached("appended")
        second.start()
        # PostgreSQL shows the second change waiting for the first's lock: it will draw its ids after it.
        wait_until_blocked(second, by=first, before="appended")
        first.release("commit")
        first.join()
        second.wait_until_reached("appended")
        second.release("commit")
        second.join()
    finally:
        first.stop()
        second.stop()
    early, late = Delivery.objects.order_by("id")
    assert (early.event.data["cause"], late.event.data["cause"]) == ("first", "second")

    # Two workers at once: the receiver holds the first POST open while the other worker is given the second.
    hold = threading.Event()
    receiver.plan.hold = hold
    one = Backend(lambda b: deliver(delivery_id=early.pk), name="worker one")
    try:
        one.start()
        receiver.wait_for(1)
        # The other worker must not overtake it: the earlier delivery of this post is still pending.
        assert deliver(delivery_id=late.pk) == "waiting for an earlier delivery"
        assert len(receiver.received) == 1
        hold.set()
        assert one.join() == AttemptOutcome.DELIVERED
    finally:
        hold.set()
        one.stop()
    # Settling the first started the second (its after-commit job), which a real worker delivers.
    assert run_worker() >= 1
    assert [r.json["data"]["cause"] for r in receiver.wait_for(2)] == ["first", "second"]
    assert set(Delivery.objects.values_list("status", flat=True)) == {DeliveryStatus.DELIVERED}


def _worker_env() -> dict[str, str]:
    db = connection.settings_dict
    return {
        **os.environ,
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "REDIS_URL": settings.REDIS_URL,
        "FACTDESK_WEBHOOKS_ALLOW_PRIVATE": "1",
        "FACTDESK_WEBHOOK_TIMEOUT": str(settings.FACTDESK_WEBHOOK_TIMEOUT),
    }


@transactional
def test_an_event_is_kept_across_a_worker_killed_mid_delivery_and_delivered_again(register, receiver):
    register(receiver.url)
    hold = threading.Event()
    receiver.plan.hold = hold  # the POST arrives and is never answered while the worker lives
    post = PostFactory()
    with transaction.atomic():
        append_and_publish([change(post, "removed")])  # commits; its job is now on the webhooks queue in Redis
    delivery = Delivery.objects.get()

    worker = subprocess.Popen(
        [sys.executable, "manage.py", "rqworker", "webhooks", "--burst"], cwd=ROOT, env=_worker_env(),
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        [first] = receiver.wait_for(1, timeout=60)
        worker.send_signal(signal.SIGKILL)  # mid-delivery: the POST is sent, no answer has come
        worker.wait(10)
    finally:
        if worker.poll() is None:
            worker.kill()
        hold.set()

    # No transaction was open during the POST: the delivery is still pending, no attempt recorded, and
    # leased for the time-out and a margin (nobody else takes it up while the attempt might be alive).
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.PENDING and delivery.attempts == 0
    assert not DeliveryAttempt.objects.exists()
    now = timezone.now()
    assert now < delivery.next_attempt_at <= now + timedelta(seconds=settings.FACTDESK_WEBHOOK_TIMEOUT + 15)
    assert due_deliveries(now=now) == []

    # Once the lease has run out the periodic sweep finds it (its job is gone) and delivers it: the same id.
    receiver.plan.hold = None
    later = delivery.next_attempt_at + timedelta(seconds=30)
    assert due_deliveries(now=later) == [delivery.pk]
    assert deliver_batch([delivery.pk], now=later) == {AttemptOutcome.DELIVERED: 1}
    second = receiver.wait_for(2)[1]
    assert second.delivery_id == first.delivery_id and second.json == first.json
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.DELIVERED and delivery.attempts == 1
