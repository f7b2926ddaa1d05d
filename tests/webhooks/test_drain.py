"""Webhooks that drain (issue 28, finding 9): due retries go to an endpoint several at once, up to
FACTDESK_WEBHOOK_ENDPOINT_CONCURRENCY, each post's changes still in order; 410 Gone disables the endpoint at
once; other 4xx answers are not retried for 24 hours.

Time is controlled as in test_delivery.py: each sweep is made at a `now` 10 s after the last, as the periodic
job would. The receiver is a real HTTP server on 127.0.0.1.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from audit.models import AuditEvent, AuditVerb
from moderation.feed import append_and_publish
from moderation.models import DistributionChange
from tests.factories import PostFactory
from webhooks import jobs
from webhooks.delivery import deliver_batch
from webhooks.models import AttemptOutcome, Delivery, DeliveryStatus, Endpoint
from webhooks.schedule import due_deliveries

pytestmark = pytest.mark.django_db

SWEEP = timedelta(seconds=10)


def changes(posts, per_post: int) -> None:
    """`per_post` distribution changes of each post, one transaction each, interleaved across posts."""
    for round_ in range(per_post):
        for post in posts:
            append_and_publish([DistributionChange(post=post, multiplier=Decimal("0.5"), cause=f"change {round_}",
                                                   created_at=timezone.now())])


def drain(start, *, limit: int = 200) -> int:
    """Sweep every 10 s from `start` until nothing is pending; returns how many sweeps it took. Within a sweep,
    what a delivered delivery's successor job would send at once (webhooks.delivery._start_successor) is sent
    at the same moment."""
    now = start
    for sweeps in range(1, limit + 1):
        now += SWEEP
        while AttemptOutcome.DELIVERED in deliver_batch(due_deliveries(now=now), now=now):
            pass
        if not Delivery.objects.filter(status=DeliveryStatus.PENDING).exists():
            return sweeps
    pytest.fail(f"{Delivery.objects.filter(status=DeliveryStatus.PENDING).count()} still pending after {limit} sweeps")


def sweeps_to_drain_a_burst(register, receiver, *, failures: int) -> tuple[int, list]:
    register(receiver.url, events=["distribution.changed"])
    receiver.plan.statuses = [500] * failures + [200]
    posts = [PostFactory() for _ in range(7)]
    changes(posts, per_post=5)  # 35 events, as the fault probe sent
    assert Delivery.objects.count() == 35
    start = Delivery.objects.latest("id").created_at
    # The after-commit jobs: each batch meets the failing receiver.
    deliver_batch(list(Delivery.objects.order_by("id").values_list("id", flat=True)), now=start)
    return drain(start), posts


def test_a_burst_of_35_events_to_a_failing_endpoint_drains_in_a_few_sweeps_each_post_in_order(register, receiver):
    sweeps, posts = sweeps_to_drain_a_burst(register, receiver, failures=20)
    # One probe per sweep (the old sweep) needs more than 20 sweeps for the failures alone, and the probes'
    # back-off on top: 4 at once get through them in 5 sweeps, and the rest follow as their lines free.
    assert sweeps <= 12, sweeps
    assert set(Delivery.objects.values_list("status", flat=True)) == {DeliveryStatus.DELIVERED}
    # Per post, the receiver got each change only after the previous one was answered 200, in commit order.
    answered = {index: receiver.plan.statuses[min(index, len(receiver.plan.statuses) - 1)]
                for index in range(len(receiver.received))}
    by_post = defaultdict(list)
    for index, request in enumerate(receiver.received):
        by_post[request.json["data"]["post"]].append((request.json["data"]["cursor"], answered[index]))
    assert len(by_post) == len(posts)
    for post, seen in by_post.items():
        cursors = sorted({cursor for cursor, _ in seen}, key=int)
        delivered: list = []
        for cursor, status in seen:  # nothing sent before each earlier change of its post was answered 200
            assert [c for c in cursors if int(c) < int(cursor)] == delivered, (post, seen)
            if status == 200:
                delivered.append(cursor)
        assert delivered == cursors and len(cursors) == 5, post


def test_one_at_a_time_the_same_burst_takes_far_longer(register, receiver, settings):
    """The old behaviour, for the record: a concurrency of 1 is one probe per sweep."""
    settings.FACTDESK_WEBHOOK_ENDPOINT_CONCURRENCY = 1
    sweeps, _ = sweeps_to_drain_a_burst(register, receiver, failures=20)
    assert sweeps > 20


def test_due_retries_of_one_endpoint_are_sent_together_up_to_its_limit(register, receiver, settings):
    settings.FACTDESK_WEBHOOK_ENDPOINT_CONCURRENCY = 3
    register(receiver.url, events=["distribution.changed"])
    hold = threading.Event()
    receiver.plan.hold = hold
    seen_at_release: list[int] = []

    def release_once_three_are_in_flight() -> None:
        with receiver.arrived:
            receiver.arrived.wait_for(lambda: len(receiver.received) >= 3, 10)
            seen_at_release.append(len(receiver.received))
        hold.set()

    watcher = threading.Thread(target=release_once_three_are_in_flight)
    watcher.start()
    changes([PostFactory() for _ in range(6)], per_post=1)
    now = Delivery.objects.latest("id").created_at
    # Sent one after another, the first would wait on the receiver's hold past its 2 s time-out.
    assert deliver_batch(list(Delivery.objects.values_list("id", flat=True)), now=now) == {
        AttemptOutcome.DELIVERED: 6
    }
    watcher.join(10)
    assert seen_at_release == [3]  # three in flight together, and not a fourth while they were
    assert len(receiver.received) == 6


def test_410_gone_disables_the_endpoint_at_once_and_its_owner_is_told(register, receiver, mailoutbox):
    hook = register(receiver.url, events=["distribution.changed"])
    receiver.plan.statuses = [410]
    changes([PostFactory() for _ in range(3)], per_post=2)
    now = Delivery.objects.latest("id").created_at
    deliver_batch(list(Delivery.objects.values_list("id", flat=True)), now=now)
    endpoint = Endpoint.objects.get(pk=hook["id"])
    assert endpoint.disabled_at == now
    assert endpoint.disabled_reason == "the receiver answered 410 Gone"
    assert set(Delivery.objects.values_list("status", flat=True)) == {DeliveryStatus.FAILED}  # nothing pending
    assert due_deliveries(now=now + timedelta(hours=1)) == []
    assert AuditEvent.objects.filter(verb=AuditVerb.WEBHOOK_DISABLED, reason=endpoint.disabled_reason).count() == 1
    assert jobs.notify_disabled_endpoints() == 1
    [mail] = mailoutbox
    assert "410 Gone" in mail.body and receiver.url in mail.body
    # Later events are written as failed, for staff to redeliver once it is registered again.
    changes([PostFactory()], per_post=1)
    assert Delivery.objects.latest("id").status == DeliveryStatus.FAILED


@pytest.mark.parametrize("status", [400, 401, 403, 404, 408, 422, 429, 500])
def test_any_answer_but_410_is_retried_and_the_posts_next_event_waits_for_it(register, receiver, status):
    """PRODUCT.md: retried for 24 hours on any non-2xx. A receiver answering 404 during its own deploy loses
    nothing, and the post's next event does not overtake the one it refused."""
    register(receiver.url, events=["distribution.changed"])
    receiver.plan.statuses = [status, 200, 200]
    changes([PostFactory()], per_post=2)
    first, second = Delivery.objects.order_by("id")
    deliver_batch([first.pk, second.pk], now=second.created_at)
    first.refresh_from_db()
    second.refresh_from_db()
    assert (first.status, first.attempts, second.status, second.attempts) == (
        DeliveryStatus.PENDING, 1, DeliveryStatus.PENDING, 0)
    assert Endpoint.objects.get().disabled_at is None
    drain(second.created_at)
    first.refresh_from_db()
    second.refresh_from_db()
    assert first.status == second.status == DeliveryStatus.DELIVERED
    assert first.delivered_at <= second.delivered_at


def test_when_a_failing_endpoint_answers_again_what_waited_out_its_back_off_is_due_at_once(register, receiver):
    register(receiver.url, events=["distribution.changed"])
    receiver.plan.statuses = [500, 500, 500, 200]
    changes([PostFactory() for _ in range(2)], per_post=1)
    waiting, probe = Delivery.objects.order_by("id")
    now = probe.created_at
    for _ in range(3):  # three failures of the first: its next try is 2 min 15 s after the last
        deliver_batch([waiting.pk], now=now)
        waiting.refresh_from_db()
        now = waiting.next_attempt_at
    assert waiting.next_attempt_at - waiting.last_attempt_at == timedelta(minutes=2, seconds=15)
    receiver.plan.statuses = [200]
    deliver_batch([probe.pk], now=waiting.last_attempt_at + SWEEP)  # the receiver is back
    waiting.refresh_from_db()
    assert waiting.next_attempt_at == waiting.last_attempt_at + SWEEP
    assert waiting.pk in due_deliveries(now=waiting.last_attempt_at + SWEEP)
