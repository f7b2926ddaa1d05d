"""Two registrations of one owner's twentieth endpoint at once (two tabs, a script retrying): the second waits for
the first on the owner's row (webhooks.endpoints.register_endpoint, docs/concurrency.md), then counts its endpoint
and is refused. Each counted nineteen before, and both made a twentieth, so an owner could pass the limit."""

from __future__ import annotations

import threading

import pytest

from tests.factories import PlatformUserFactory
from tests.pg import Backend, wait_until_blocked
from webhooks import endpoints
from webhooks.endpoints import MAX_ENDPOINTS, EndpointRefused, register_endpoint
from webhooks.models import Endpoint

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

URL = "http://127.0.0.1:9/hook-{}"


def test_a_second_registration_waits_for_the_first_then_finds_the_limit_reached(settings, monkeypatch):
    settings.FACTDESK_WEBHOOKS_ALLOW_PRIVATE = True
    owner = PlatformUserFactory()
    for n in range(MAX_ENDPOINTS - 1):
        register_endpoint(owner=owner, url=URL.format(n), events=["distribution.changed"])
    runs: dict[str, Backend] = {}
    record_event = endpoints.record_event

    def paused_record_event(**kwargs):  # the first registration's endpoint is made, not yet committed
        if threading.current_thread().name == "first tab":
            runs["first"].reached("made")
            runs["first"].wait_for("go")
        return record_event(**kwargs)

    monkeypatch.setattr(endpoints, "record_event", paused_record_event)
    runs["first"] = Backend(lambda backend: register_endpoint(owner=owner, url=URL.format("a"),
                                                              events=["distribution.changed"]), name="first tab")
    runs["first"].start().wait_until_reached("made")
    second = Backend(lambda backend: register_endpoint(owner=owner, url=URL.format("b"),
                                                       events=["distribution.changed"]), name="second tab").start()
    try:
        wait_until_blocked(second, by=runs["first"], statement="accounts_user")
        runs["first"].release("go")
        made, _ = runs["first"].join()
        with pytest.raises(EndpointRefused, match=f"You have {MAX_ENDPOINTS} endpoints already"):
            second.join()
    finally:
        runs["first"].stop()
        second.stop()
    assert Endpoint.objects.filter(owner=owner, deleted_at__isnull=True).count() == MAX_ENDPOINTS
    assert Endpoint.objects.filter(owner=owner).latest("id").pk == made.pk
