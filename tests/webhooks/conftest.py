"""Webhook fixtures: a local receiver, an endpoint registered through the API, a post to change."""

from __future__ import annotations

import pytest

from tests.webhooks.receiver import Receiver


@pytest.fixture
def receiver():
    server = Receiver().start()
    yield server
    server.stop()


@pytest.fixture
def allow_private(settings):
    # The receiver listens on 127.0.0.1 over plain http: allowed only with this setting on.
    settings.FACTDESK_WEBHOOKS_ALLOW_PRIVATE = True
    settings.FACTDESK_WEBHOOK_TIMEOUT = 2.0


@pytest.fixture
def register(platform_client, allow_private):
    """Register `url` for `events` through the API; returns the 201 body (with the secret)."""

    def go(url: str, events=("distribution.changed", "appeal.filed", "appeal.decided")) -> dict:
        response = platform_client.post("/api/v1/webhooks", {"url": url, "events": list(events)},
                                        content_type="application/json")
        assert response.status_code == 201, response.content
        return response.json()

    return go
