"""Registering, listing and deleting endpoints through the API, and the address guard (SSRF)."""

from __future__ import annotations

import re
import socket

import pytest

from audit.models import AuditEvent, AuditVerb
from core.outbound import UnsafeTarget, parse_target
from tests.conftest import bearer_client
from tests.factories import FactCheckerFactory, PlatformUserFactory, StaffFactory, UserFactory
from webhooks.api import WEBHOOK_URL
from webhooks.models import Delivery, DeliveryStatus, Endpoint

pytestmark = pytest.mark.django_db

EVENTS = ["distribution.changed", "appeal.decided"]


def create(client, url: str, events=None):
    return client.post("/api/v1/webhooks", {"url": url, "events": events or EVENTS}, content_type="application/json")


def url_errors(response) -> list[str]:
    assert response.status_code == 422, response.content
    return [e["message"] for e in response.json()["error"]["details"]["errors"] if e["field"] == "url"]


def test_a_platform_registers_an_endpoint_and_sees_its_secret_once(platform_client, platform_user):
    response = create(platform_client, "https://93.184.216.34/hooks")
    assert response.status_code == 201
    body = response.json()
    assert body["secret"].startswith("whsec_") and len(body["secret"]) > 40
    assert body["events"] == EVENTS and body["status"] == "healthy"
    endpoint = Endpoint.objects.get(pk=body["id"])
    assert endpoint.owner == platform_user and endpoint.secret == body["secret"]
    listed = platform_client.get("/api/v1/webhooks").json()["webhooks"]
    assert [w["id"] for w in listed] == [body["id"]]
    assert "secret" not in listed[0]
    assert AuditEvent.objects.filter(verb=AuditVerb.WEBHOOK_REGISTERED, target_id=str(endpoint.pk)).exists()


def test_each_platform_account_sees_and_deletes_only_its_own_endpoints(platform_client):
    mine = create(platform_client, "https://93.184.216.34/mine").json()
    other = bearer_client(PlatformUserFactory())
    theirs = create(other, "https://93.184.216.34/theirs").json()
    assert [w["id"] for w in platform_client.get("/api/v1/webhooks").json()["webhooks"]] == [mine["id"]]
    refused = platform_client.delete(f"/api/v1/webhooks/{theirs['id']}")
    assert refused.status_code == 404 and refused.json()["error"]["code"] == "not_found"
    assert Endpoint.objects.get(pk=theirs["id"]).deleted_at is None
    assert platform_client.delete(f"/api/v1/webhooks/{mine['id']}").status_code == 204
    assert platform_client.get("/api/v1/webhooks").json()["webhooks"] == []
    assert platform_client.delete(f"/api/v1/webhooks/{mine['id']}").status_code == 404


@pytest.mark.parametrize("factory", [FactCheckerFactory, UserFactory, StaffFactory])
def test_only_the_platform_role_manages_webhooks(factory):
    client = bearer_client(factory())
    assert create(client, "https://93.184.216.34/x").status_code == 403
    assert client.get("/api/v1/webhooks").status_code == 403
    assert not Endpoint.objects.exists()


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("http://93.184.216.34/hook", "http://"),
        ("https://127.0.0.1/hook", "127.0.0.1"),
        ("https://[::1]/hook", "::1"),
        ("https://10.1.2.3/hook", "10.1.2.3"),
        ("https://192.168.0.10/hook", "192.168.0.10"),
        ("https://172.16.5.4/hook", "172.16.5.4"),
        ("https://169.254.169.254/latest/meta-data", "169.254.169.254"),  # the cloud metadata service
        ("https://[fe80::1]/hook", "fe80::1"),
        ("https://[::ffff:127.0.0.1]/hook", "::ffff:127.0.0.1"),
        ("https://100.64.0.1/hook", "100.64.0.1"),  # carrier-grade NAT, shared
        ("https://[64:ff9b::7f00:1]/hook", "64:ff9b::7f00:1"),  # NAT64 of 127.0.0.1
        ("https://[2002:7f00:1::]/hook", "2002:7f00:1::"),  # 6to4 of 127.0.0.1
        ("https://2130706433/hook", "not public"),  # 127.0.0.1 written as one decimal number
        ("https://0x7f.1/hook", "not public"),  # and in hex and short form
        ("https://0.0.0.0/hook", "0.0.0.0"),
        ("https://localhost/hook", "'localhost' resolves to an address that is not public"),  # a name
        ("https://user:pw@93.184.216.34/hook", "user name or password"),
        ("ftp://93.184.216.34/hook", "https://"),
        ("https:///nohost", "no host"),
        ("https://93.184.216.34/événements", "percent-encode"),
        ("https://93.184.216.34/a b", "percent-encode"),
    ],
)
def test_urls_that_are_not_public_https_are_refused(platform_client, url, says):
    messages = url_errors(create(platform_client, url))
    assert messages and says in messages[0], messages
    assert not Endpoint.objects.exists()


def test_a_name_that_resolves_to_a_private_address_is_refused(platform_client, monkeypatch):
    real = socket.getaddrinfo

    def fake_dns(host, *args, **kwargs):
        if host == "hooks.partner.example":  # one public and one private answer: refused all the same
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.216.34", 443)),
                    (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.0.0.7", 443))]
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", fake_dns)
    messages = url_errors(create(platform_client, "https://hooks.partner.example/in"))
    assert "'hooks.partner.example' resolves to an address that is not public" in messages[0]
    assert "10.0.0.7" not in messages[0]  # a platform token learns nothing of the internal network's names


def test_a_name_that_does_not_resolve_is_refused(platform_client):
    messages = url_errors(create(platform_client, "https://no-such-host.invalid/hook"))
    assert "does not resolve" in messages[0]


def test_private_addresses_and_http_are_allowed_when_the_setting_is_on(platform_client, settings):
    settings.FACTDESK_WEBHOOKS_ALLOW_PRIVATE = True
    assert create(platform_client, "http://127.0.0.1:9/hook").status_code == 201


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"url": "https://93.184.216.34/", "events": []}, "events"),
        ({"url": "https://93.184.216.34/", "events": ["rating.recorded"]}, "events"),
        ({"url": "https://93.184.216.34/" + "a" * 2000, "events": EVENTS}, "url"),
        ({"events": EVENTS}, "url"),
        ({"url": "https://93.184.216.34/"}, "events"),
    ],
)
def test_bad_fields_get_a_422_naming_them_and_nothing_is_registered(platform_client, payload, field):
    response = platform_client.post("/api/v1/webhooks", payload, content_type="application/json")
    assert response.status_code == 422
    assert field in str(response.json()["error"]["details"])
    assert not Endpoint.objects.exists()


def test_deleting_an_endpoint_cancels_what_was_pending_and_keeps_the_record(platform_client, settings):
    from moderation.staff_actions import remove_post
    from tests.factories import PostFactory

    settings.FACTDESK_WEBHOOKS_ALLOW_PRIVATE = True
    hook = create(platform_client, "http://127.0.0.1:9/hook").json()
    remove_post(staff=StaffFactory(), post_id=PostFactory().pk, ground="violence", reason="threats")
    assert Delivery.objects.get().status == DeliveryStatus.PENDING
    assert platform_client.delete(f"/api/v1/webhooks/{hook['id']}").status_code == 204
    delivery = Delivery.objects.get()
    assert delivery.status == DeliveryStatus.CANCELLED and delivery.last_error == "endpoint deleted"
    assert AuditEvent.objects.filter(verb=AuditVerb.WEBHOOK_DELETED).count() == 1


def test_any_port_from_1_to_65535_is_taken_as_the_openapi_document_says(platform_client):
    """The document's pattern took ports 1 to 9999 only, so a client checking its requests against it could not
    register a receiver on 10443; port 0 was taken and sent to 443."""
    pattern = re.compile(WEBHOOK_URL)
    for url in ("https://93.184.216.34:10443/hook", "https://93.184.216.34:65535/hook"):
        assert pattern.match(url)
        assert create(platform_client, url).status_code == 201
    for url in ("https://93.184.216.34:0/hook", "https://93.184.216.34:65536/hook"):
        assert not pattern.match(url)
        assert create(platform_client, url).status_code == 422
    assert Endpoint.objects.count() == 2
    with pytest.raises(UnsafeTarget, match="1 to 65535"):  # what the admin's form checks the URL with
        parse_target("https://93.184.216.34:0/hook")
