"""A failed webhook attempt is a warning in the log: which endpoint, which delivery and event, what the receiver
answered (or why nothing answered), and what happens next. The admin showed it; the logs said only "Job OK".
Never the endpoint's secret, nor the body sent.
"""

from __future__ import annotations

import logging

import pytest

from moderation.staff_actions import remove_post
from tests.factories import PostFactory, StaffFactory
from tests.webhooks.receiver import Receiver
from webhooks.delivery import deliver_batch
from webhooks.models import AttemptOutcome, Delivery, Endpoint

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

