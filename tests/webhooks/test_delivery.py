"""Delivering events to a real local receiver: signed, at least once, retried with back-off, in order, never lost.

Time is controlled: an attempt is made with `now=` and the sweep is asked what is due at a given
moment, so 24 hours of back-off take no time. The only waits are for the receiver's own thread.
"""

from __future__ import annotations

import socket
import time
from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import transaction
from django.utils import timezone

from core.outbound import Answer
from moderation.appeals import decide_appeal, file_appeal
from moderation.feed import append_and_publish
from moderation.models import DistributionChange
from moderation.staff_actions import remove_post
from tests.factories import PostFactory, StaffFactory, UserFactory
from tests.webhooks.receiver import Receiver, verify
from webhooks import jobs
from webhooks.delivery import deliver, deliver_batch
from webhooks.models import AttemptOutcome, Delivery, DeliveryAttempt, DeliveryStatus, Endpoint, Event
from webhooks.schedule import FIRST_RETRY, LONGEST_WAIT, due_deliveries

pytestmark = pytest.mark.django_db


def sweep(now) -> dict[str, int]:
    """What the periodic job does at `now`, with the attempts made at `now` too."""
    return deliver_batch(due_deliveries(now=now), now=now)


def two_changes_of(post) -> list[Delivery]:
    """Two distribution changes of one post, each its own transaction: their deliveries, in order."""
    for multiplier in ("0.2", "0.5"):
        append_and_publish([DistributionChange(post=post, multiplier=Decimal(multiplier), cause=f"x{multiplier}",
                                           created_at=timezone.now())])
    return list(Delivery.objects.filter(post=post).order_by("id"))


def remove(post=None):
    post = post or PostFactory()
    remove_post(staff=StaffFactory(), post_id=post.pk, ground="violence", reason="Threatens a named person.")
    return post


def test_a_distribution_change_reaches_the_receiver_signed_with_its_headers_through_a_real_worker(
    register, receiver, platform_client, run_worker, django_capture_on_commit_callbacks
):
    hook = register(receiver.url)
    with django_capture_on_commit_callbacks(execute=True):
        post = remove()
    assert run_worker() == 1
    [got] = receiver.wait_for(1)

    event = Event.objects.get()
    assert got.headers["X-Factdesk-Event"] == "distribution.changed"
    assert got.headers["X-Factdesk-Delivery"] == str(event.uid)
    assert got.headers["Content-Type"] == "application/json"
    assert verify(hook["secret"], got.headers, got.body, now=time.time())
    assert not verify("whsec_someone-else", got.headers, got.body, now=time.time())
    assert not verify(hook["secret"], got.headers, got.body + b" ", now=time.time())  # the raw body is signed
    assert not verify(hook["secret"], got.headers, got.body, now=time.time() + 301)  # older than five minutes

    body = got.json
    assert set(body) == {"id", "type", "created_at", "data"}
    assert body["id"] == str(event.uid) and body["type"] == "distribution.changed"
    # The data is the decisions feed's entry for that change, exactly.
    [entry] = platform_client.get("/api/v1/decisions").json()["decisions"]
    assert body["data"] == entry
    assert entry["post"] == post.external_id and entry["distribution"]["removed"] is True

    delivery = Delivery.objects.get()
    assert delivery.status == DeliveryStatus.DELIVERED and delivery.attempts == 1
    [attempt] = DeliveryAttempt.objects.all()
    assert attempt.outcome == AttemptOutcome.DELIVERED and attempt.status_code == 200
    assert attempt.response_excerpt == "answer 200 to request 1"


def test_appeal_filed_and_decided_are_delivered_to_an_endpoint_that_wants_only_them(
    register, receiver, run_worker, django_capture_on_commit_callbacks
):
    register(receiver.url, events=["appeal.filed", "appeal.decided"])
    owner = UserFactory()
    post = PostFactory()
    post.page.owners.add(owner)
    remove(post)  # a distribution change: not subscribed, so nothing is written for it
    assert not Event.objects.exists()
    with django_capture_on_commit_callbacks(execute=True):
        appeal = file_appeal(owner=owner, post_id=post.pk, kind="removal", statement="It was a quote from a film.")
    with django_capture_on_commit_callbacks(execute=True):
        decide_appeal(appeal_id=appeal.pk, reviewer=StaffFactory(), outcome="upheld", reason="The threat is real.")
    run_worker()
    filed, decided = (r.json for r in receiver.wait_for(2))
    assert filed["type"] == "appeal.filed" and decided["type"] == "appeal.decided"
    assert filed["data"]["post"] == post.external_id
    assert filed["data"]["appeal"] | {"created_at": None} == {
        "id": appeal.pk, "kind": "removal", "status": "open", "created_at": None, "decided_at": None,
        "outcome_reason": "",
    }
    assert decided["data"]["appeal"]["status"] == "upheld"
    assert decided["data"]["appeal"]["outcome_reason"] == "The threat is real."
    assert decided["data"]["appeal"]["decided_at"] is not None


def test_a_rolled_back_change_writes_no_event_and_sends_nothing(
    register, receiver, run_worker, django_capture_on_commit_callbacks
):
    register(receiver.url)
    post = PostFactory()
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        with pytest.raises(RuntimeError), transaction.atomic():
            remove(post)
            assert Delivery.objects.count() == 1  # written in the change's own transaction...
            raise RuntimeError("the request failed after the change")
    assert callbacks == []
    assert not Event.objects.exists() and not Delivery.objects.exists()  # ...and gone with it
    assert not DistributionChange.objects.exists()
    assert run_worker() == 0
    assert due_deliveries(now=timezone.now() + timedelta(days=1)) == []
    assert receiver.received == []


def test_nothing_is_written_when_no_endpoint_is_subscribed():
    remove()
    assert not Event.objects.exists() and not Delivery.objects.exists()


def test_a_500_is_retried_within_30_seconds_then_with_back_off_until_it_is_delivered(register, receiver):
    register(receiver.url)
    receiver.plan.statuses = [500, 500, 200]
    remove()
    delivery = Delivery.objects.get()
    t0 = delivery.created_at

    assert deliver_batch([delivery.pk], now=t0) == {AttemptOutcome.HTTP_ERROR: 1}
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.PENDING and delivery.attempts == 1
    assert delivery.next_attempt_at - t0 == FIRST_RETRY <= timedelta(seconds=30)
    assert delivery.last_status_code == 500
    assert Endpoint.objects.get().failing_since == t0

    assert sweep(t0 + FIRST_RETRY - timedelta(seconds=1)) == {}  # not due yet
    assert sweep(t0 + FIRST_RETRY) == {AttemptOutcome.HTTP_ERROR: 1}
    delivery.refresh_from_db()
    assert delivery.next_attempt_at - (t0 + FIRST_RETRY) == FIRST_RETRY * 3  # exponential: x3

    assert sweep(delivery.next_attempt_at) == {AttemptOutcome.DELIVERED: 1}
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.DELIVERED and delivery.attempts == 3
    assert [(a.number, a.status_code, a.response_excerpt) for a in DeliveryAttempt.objects.all()] == [
        (1, 500, "answer 500 to request 1"), (2, 500, "answer 500 to request 2"), (3, 200, "answer 200 to request 3"),
    ]
    assert Endpoint.objects.get().failing_since is None  # healthy again
    # Every attempt carried the same event id: the receiver dedupes by it.
    assert len({r.delivery_id for r in receiver.received}) == 1 and len(receiver.received) == 3


def test_a_time_out_is_retried_and_the_receiver_dedupes_the_second_copy_by_its_id(register, receiver, settings):
    settings.FACTDESK_WEBHOOK_TIMEOUT = 0.3
    register(receiver.url)
    receiver.plan.delay = 1.0  # the first request is handled, but answered too late
    remove()
    delivery = Delivery.objects.get()
    t0 = delivery.created_at
    started = time.monotonic()
    assert deliver_batch([delivery.pk], now=t0) == {AttemptOutcome.TIMEOUT: 1}
    assert time.monotonic() - started < 0.9  # the time-out cut it short
    [attempt] = DeliveryAttempt.objects.all()
    assert attempt.outcome == AttemptOutcome.TIMEOUT and attempt.status_code is None and attempt.latency_ms >= 300
    assert "no answer within 0.3 s" in attempt.response_excerpt
    delivery.refresh_from_db()
    assert delivery.next_attempt_at - t0 <= timedelta(seconds=30)

    receiver.plan.delay = 0
    assert sweep(delivery.next_attempt_at) == {AttemptOutcome.DELIVERED: 1}
    copies = receiver.wait_for(2)
    assert copies[0].delivery_id == copies[1].delivery_id
    assert copies[0].json == copies[1].json
    deduped = {r.delivery_id: r.json for r in copies}  # what a receiver keeps
    assert len(deduped) == 1


def test_a_redirect_is_not_followed_and_counts_as_a_failure(register, receiver):
    elsewhere = Receiver().start()
    try:
        register(receiver.url)
        receiver.plan.statuses, receiver.plan.location = [302], elsewhere.url
        remove()
        delivery = Delivery.objects.get()
        assert deliver_batch([delivery.pk], now=delivery.created_at) == {AttemptOutcome.REDIRECT: 1}
        assert elsewhere.received == []
        assert Delivery.objects.get().status == DeliveryStatus.PENDING
    finally:
        elsewhere.stop()


def test_after_24_hours_of_failures_the_delivery_fails_and_the_endpoint_is_disabled_and_its_owner_told(
    register, receiver, mailoutbox, platform_user
):
    register(receiver.url)
    receiver.plan.statuses = [503]
    remove()
    delivery = Delivery.objects.get()
    t0 = delivery.created_at
    deliver_batch([delivery.pk], now=t0)
    times = [t0]
    while True:
        delivery.refresh_from_db()
        if delivery.status != DeliveryStatus.PENDING:
            break
        times.append(delivery.next_attempt_at)
        sweep(delivery.next_attempt_at)
    gaps = [later - earlier for earlier, later in zip(times, times[1:], strict=False)]
    assert gaps[:4] == [FIRST_RETRY, FIRST_RETRY * 3, FIRST_RETRY * 9, FIRST_RETRY * 27]
    assert max(gaps) == LONGEST_WAIT
    assert times[-1] == t0 + timedelta(hours=24)  # a last attempt at the deadline
    assert delivery.status == DeliveryStatus.FAILED and delivery.failed_at == times[-1]
    assert delivery.attempts == len(times) == DeliveryAttempt.objects.count()

    endpoint = Endpoint.objects.get()
    assert endpoint.disabled_at == times[-1] and endpoint.health == "disabled"
    # Later changes are not sent to a disabled endpoint: they are kept as failed, for staff to redeliver.
    remove()
    later = Delivery.objects.latest("id")
    assert (later.status, later.last_error, later.attempts) == (DeliveryStatus.FAILED, "endpoint disabled", 0)
    assert len(receiver.received) == delivery.attempts
    assert jobs.notify_disabled_endpoints() == 1
    [mail] = mailoutbox
    assert mail.to == [platform_user.email] and endpoint.url in mail.body
    assert jobs.notify_disabled_endpoints() == 0  # told once


def test_a_failing_endpoint_is_sent_at_most_its_concurrency_per_sweep_not_everything(register, receiver, settings):
    settings.FACTDESK_WEBHOOK_ENDPOINT_CONCURRENCY = 2
    register(receiver.url)
    receiver.plan.statuses = [500]
    for _ in range(5):
        remove(PostFactory())
    deliveries = list(Delivery.objects.order_by("id"))
    t0 = deliveries[-1].created_at
    # One job: after a failed wave (2 at once) its other deliveries to that endpoint wait for the sweep.
    assert deliver_batch([d.pk for d in deliveries], now=t0) == {AttemptOutcome.HTTP_ERROR: 2, "deferred": 3}
    later = t0 + timedelta(minutes=5)
    assert len(due_deliveries(now=later)) == 2  # while the endpoint is failing: a wave, not its whole backlog
    receiver.plan.statuses = [200]
    sweep(later)
    assert Endpoint.objects.get().failing_since is None
    assert len(due_deliveries(now=later)) == 3  # healthy again: everything due goes
    sweep(later)
    assert set(Delivery.objects.values_list("status", flat=True)) == {DeliveryStatus.DELIVERED}


def test_the_address_is_checked_again_at_delivery_time(register, receiver, settings, monkeypatch):
    # Registered while private addresses were allowed; then the setting is turned off.
    register(receiver.url)
    settings.FACTDESK_WEBHOOKS_ALLOW_PRIVATE = False
    remove()
    delivery = Delivery.objects.get()
    assert deliver_batch([delivery.pk], now=delivery.created_at) == {AttemptOutcome.REFUSED_ADDRESS: 1}
    assert "http://" in DeliveryAttempt.objects.get().response_excerpt
    assert receiver.received == []


def test_a_name_that_resolves_to_a_private_address_after_registration_is_refused(
    platform_client, receiver, monkeypatch
):
    answers = {"hooks.partner.example": "93.184.216.34"}
    real = socket.getaddrinfo

    def fake_dns(host, port, *args, **kwargs):
        if host in answers:
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (answers[host], port))]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", fake_dns)
    port = receiver.server.server_address[1]
    created = platform_client.post("/api/v1/webhooks", {"url": f"https://hooks.partner.example:{port}/in",
                                                         "events": ["distribution.changed"]},
                                   content_type="application/json")
    assert created.status_code == 201
    answers["hooks.partner.example"] = "127.0.0.1"  # DNS rebinding: now it points at this machine
    remove()
    delivery = Delivery.objects.get()
    assert deliver_batch([delivery.pk], now=delivery.created_at) == {AttemptOutcome.REFUSED_ADDRESS: 1}
    assert "resolves to an address that is not public" in DeliveryAttempt.objects.get().response_excerpt
    assert receiver.received == []  # no connection was made to it


def test_a_settled_or_locked_delivery_is_not_sent_twice(register, receiver):
    register(receiver.url)
    remove()
    delivery = Delivery.objects.get()
    assert deliver(delivery_id=delivery.pk, now=delivery.created_at) == AttemptOutcome.DELIVERED
    assert deliver(delivery_id=delivery.pk, now=delivery.created_at) == "settled or in progress"
    assert len(receiver.received) == 1


def test_changes_of_one_post_are_delivered_in_order_and_a_later_one_waits_for_an_earlier_one(register, receiver):
    register(receiver.url)
    first, second = two_changes_of(PostFactory())
    receiver.plan.statuses = [500, 200]
    now = timezone.now()
    assert deliver(delivery_id=first.pk, now=now) == AttemptOutcome.HTTP_ERROR
    # The second is due, but the first is still pending: it waits, whatever asks for it.
    assert deliver(delivery_id=second.pk, now=now) == "waiting for an earlier delivery"
    assert due_deliveries(now=now + timedelta(hours=1)) == [first.pk]
    sweep(now + timedelta(hours=1))  # the first goes, and only then the second (started as its successor)
    assert deliver(delivery_id=second.pk, now=now + timedelta(hours=1)) == AttemptOutcome.DELIVERED
    causes = [r.json["data"]["cause"] for r in receiver.received]
    assert causes == ["x0.2", "x0.2", "x0.5"]


def test_an_answer_with_a_nul_byte_is_recorded_and_the_delivery_goes_on(register, receiver, monkeypatch):
    register(receiver.url)
    remove()
    delivery = Delivery.objects.get()

    def answers_nul(*args, **kwargs):
        return Answer(500, b"bad\x00answer")

    assert deliver_batch([delivery.pk], now=delivery.created_at, post=answers_nul) == {AttemptOutcome.HTTP_ERROR: 1}
    assert DeliveryAttempt.objects.get().response_excerpt == "bad\ufffdanswer"


def test_a_post_that_raises_is_a_recorded_failure_and_the_rest_of_the_batch_goes_on(register, receiver):
    register(receiver.url)
    for _ in range(2):
        remove()
    first, second = Delivery.objects.order_by("id")
    calls = []

    def flaky(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise UnicodeEncodeError("ascii", "é", 0, 1, "cannot encode")
        return Answer(200, b"ok")

    # Two endpoints would share the deferral; here the first failure defers the second (same endpoint),
    # so deliver them one job each, as two sweeps would.
    assert deliver_batch([first.pk], now=first.created_at, post=flaky) == {AttemptOutcome.NO_CONNECTION: 1}
    assert "UnicodeEncodeError" in DeliveryAttempt.objects.get().response_excerpt
    assert deliver_batch([second.pk], now=second.created_at, post=flaky) == {AttemptOutcome.DELIVERED: 1}


def test_a_delivery_waiting_behind_a_failing_one_past_its_events_24_hours_is_tried_once_at_its_turn(
    register, receiver
):
    register(receiver.url)
    first, second = two_changes_of(PostFactory())
    # The receiver chokes on the first payload only: another post's event goes through meanwhile.
    receiver.plan.statuses = [500, 200, 500, 503]
    t0 = first.created_at
    deliver(delivery_id=first.pk, now=t0)
    other = remove()
    deliver(delivery_id=Delivery.objects.get(post=other).pk, now=t0 + timedelta(hours=12))
    deliver(delivery_id=first.pk, now=t0 + timedelta(hours=24))  # its last attempt: given up
    assert Delivery.objects.get(pk=first.pk).status == DeliveryStatus.FAILED
    assert Endpoint.objects.get().health == "failing"  # not disabled: it worked at 12 h
    turn = t0 + timedelta(hours=25)
    # Its 24 hours ran out while it waited: one attempt at its turn, not another 24 hours from it (a line of
    # refused events would add up: test_refused_line.py). Refused too, it is given up.
    assert deliver(delivery_id=second.pk, now=turn) == AttemptOutcome.HTTP_ERROR
    second.refresh_from_db()
    assert (second.status, second.attempts, second.failed_at) == (DeliveryStatus.FAILED, 1, turn)
    assert second.deadline == second.created_at + timedelta(hours=24)


def test_a_redelivery_starts_its_back_off_again(register, receiver, staff_user):
    from webhooks.delivery import redeliver

    register(receiver.url)
    receiver.plan.statuses = [500]
    remove()
    delivery = Delivery.objects.get()
    t0 = delivery.created_at
    for step in (0, 15, 60, 195):
        deliver(delivery_id=delivery.pk, now=t0 + timedelta(seconds=step))
    delivery.refresh_from_db()
    assert delivery.attempts == 4 and delivery.next_attempt_at - delivery.last_attempt_at == FIRST_RETRY * 27
    deliver(delivery_id=delivery.pk, now=t0 + timedelta(hours=24))
    Endpoint.objects.update(disabled_at=None, failing_since=None)  # staff enabled it again (test_admin.py)
    redeliver(staff=staff_user, delivery_id=delivery.pk, reason="Receiver fixed.", now=t0 + timedelta(hours=30))
    deliver(delivery_id=delivery.pk, now=t0 + timedelta(hours=30))
    delivery.refresh_from_db()
    assert delivery.attempts == 6 and delivery.round_attempts == 1
    assert delivery.next_attempt_at - delivery.last_attempt_at == FIRST_RETRY  # within 30 s again
    assert delivery.deadline == t0 + timedelta(hours=30 + 24)  # a new round: 24 hours from the redelivery


def test_a_dead_endpoints_backlog_does_not_starve_another_endpoints_retry(platform_client, allow_private, receiver):
    dead = Receiver().start()
    dead.stop()  # nothing listens there any more: every attempt fails to connect
    for url in (dead.url, receiver.url):
        assert platform_client.post("/api/v1/webhooks", {"url": url, "events": ["distribution.changed"]},
                                    content_type="application/json").status_code == 201
    receiver.plan.statuses = [503, 200]
    for _ in range(5):
        remove()
    t0 = Delivery.objects.earliest("id").created_at
    deliver_batch(list(Delivery.objects.values_list("id", flat=True)), now=t0)
    live = Delivery.objects.filter(endpoint__url=receiver.url).order_by("id")
    later = t0 + timedelta(minutes=1)
    # The sweep: one wave for the dead endpoint (FACTDESK_WEBHOOK_ENDPOINT_CONCURRENCY, 4), and every due
    # delivery of the live one, capped or not.
    due = due_deliveries(now=later, limit=3)
    assert len([d for d in due if Delivery.objects.get(pk=d).endpoint.url == dead.url]) == 4
    assert live.first().pk in due


def test_the_sweep_does_not_enqueue_again_what_it_enqueued_a_moment_ago(register, receiver, run_worker):
    from webhooks.schedule import enqueue_due

    register(receiver.url)
    remove()
    delivery = Delivery.objects.get()
    later = delivery.created_at + timedelta(minutes=1)  # its after-commit job was lost
    assert enqueue_due(now=later) == 1
    assert enqueue_due(now=later + timedelta(seconds=10)) == 0  # still on the queue: not again
    assert run_worker() == 1
    assert Delivery.objects.get().status == DeliveryStatus.DELIVERED
