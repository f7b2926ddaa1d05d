"""The API's request limits, answered in its error shape: URLs (414), headers (431), chunked bodies (413).

Through Django's test client; tests/test_gunicorn_limits.py sends the same requests to gunicorn.
"""

from __future__ import annotations

import io
import json

import pytest
from django.test import Client

from factcheck.models import Flag
from tests.api.helpers import flag_payload
from tests.api.test_errors import assert_error
from tests.conftest import bearer_client
from tests.factories import PlatformUserFactory, PostFactory

pytestmark = pytest.mark.django_db


def url_of_length(prefix: str, length: int) -> str:
    return prefix + "x" * (length - len(prefix))


# URLs


def test_an_api_url_at_the_limit_reaches_the_api_and_one_byte_more_is_a_json_414(platform_client, settings):
    at_limit = url_of_length("/api/v1/posts/", settings.API_MAX_URL_BYTES)

    assert_error(platform_client.get(at_limit), 404, "not_found")  # the endpoint looked the post up
    error = assert_error(platform_client.get(at_limit + "x"), 414, "uri_too_long")
    assert error["details"] == {"limit_bytes": 8000, "url_bytes": 8001}


def test_the_query_string_counts_towards_the_url_limit(platform_client):
    error = assert_error(platform_client.get("/api/v1/decisions?after=" + "1" * 8000), 414, "uri_too_long")
    assert error["details"]["url_bytes"] == len("/api/v1/decisions?after=") + 8000


def test_the_url_is_measured_as_sent_with_non_ascii_percent_encoded(platform_client):
    # 2,000 "é" are 12,000 bytes on the wire (%C3%A9 each), though 2,000 characters.
    assert_error(platform_client.get("/api/v1/posts/" + "é" * 2000), 414, "uri_too_long")


def test_a_url_over_the_limit_is_refused_before_authentication(client):
    # No token at all: the size is refused first, so nothing reads the database for it.
    assert_error(client.get(url_of_length("/api/v1/posts/", 9000)), 414, "uri_too_long")


def test_long_urls_outside_the_api_are_left_to_the_site(login, factchecker):
    response = login(factchecker).get("/queue/?q=" + "x" * 9000)

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/html")


# Headers


def test_headers_over_the_limit_are_a_json_431(platform_client, settings):
    response = platform_client.get("/api/v1/tokens", headers={"X-Padding": "x" * 20_000})

    error = assert_error(response, 431, "headers_too_large")
    assert error["details"]["limit_bytes"] == settings.API_MAX_HEADER_BYTES
    assert error["details"]["header_bytes"] > 20_000


def test_headers_just_under_the_limit_are_served(platform_client, settings):
    padding = settings.API_MAX_HEADER_BYTES - 1000  # room for the test client's own headers and the token
    assert platform_client.get("/api/v1/tokens", headers={"X-Padding": "x" * padding}).status_code == 200


def test_more_header_fields_than_the_limit_are_a_json_431(platform_client, settings):
    headers = {f"X-Field-{n}": "1" for n in range(settings.API_MAX_HEADER_FIELDS)}

    error = assert_error(platform_client.get("/api/v1/tokens", headers=headers), 431, "headers_too_large")
    assert error["details"]["limit_fields"] == settings.API_MAX_HEADER_FIELDS


# Chunked bodies (no Content-Length; the server promises the stream ends with the body)


class Stream(io.RawIOBase):
    """A request body as a WSGI server hands it over, counting how much of it was read."""

    def __init__(self, data: bytes) -> None:
        self.data = io.BytesIO(data)
        self.bytes_read = 0

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        chunk = self.data.read(size)
        self.bytes_read += len(chunk)
        return chunk

    def readline(self, size: int = -1) -> bytes:
        line = self.data.readline(size)
        self.bytes_read += len(line)
        return line


def post_chunked(
    client: Client, path: str, body: bytes, *, terminated: bool = True, content_type: str = "application/json"
):
    stream = Stream(body)
    environ = {"wsgi.input": stream, "HTTP_TRANSFER_ENCODING": "chunked", "CONTENT_TYPE": content_type}
    if terminated:
        environ["wsgi.input_terminated"] = True
    response = client.generic("POST", path, **environ)
    assert "CONTENT_LENGTH" not in response.wsgi_request.META
    return response, stream


def test_a_chunked_body_within_the_limit_is_processed(platform_client):
    response, _ = post_chunked(platform_client, "/api/v1/flags", json.dumps(flag_payload()).encode())

    assert response.status_code == 201, response.content
    assert Flag.objects.count() == 1


def test_a_chunked_body_over_djangos_limit_is_a_json_413_read_no_further_than_one_byte_past_it(
    platform_client, settings
):
    settings.API_MAX_BODY_BYTES = 10_000
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 11_024

    response, stream = post_chunked(platform_client, "/api/v1/flags", b'{"flags": [' + b" " * 50_000 + b"]}")

    assert_error(response, 413, "payload_too_large")
    assert stream.bytes_read == settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1
    assert not Flag.objects.exists()


def test_a_chunked_body_over_the_api_limit_but_under_djangos_is_a_json_413(platform_client, settings):
    settings.API_MAX_BODY_BYTES = 10_000
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 11_024
    flag = flag_payload(reason="r" * 10_100)  # a valid flag would be stored but for its size

    response, _ = post_chunked(platform_client, "/api/v1/flags", json.dumps(flag).encode())

    assert_error(response, 413, "payload_too_large")
    assert not Flag.objects.exists()


def test_a_chunked_rating_is_processed_by_the_same_parser(factchecker_client):
    post = PostFactory()
    body = {"verdict": "false", "rationale": "Invented.", "sources": ["https://evidence.example/1"]}

    url = f"/api/v1/posts/{post.external_id}/ratings"
    response, _ = post_chunked(factchecker_client, url, json.dumps(body).encode())

    assert response.status_code == 201, response.content


def test_without_the_servers_promise_a_body_of_unknown_length_is_not_waited_for(platform_client):
    # A server that does not set wsgi.input_terminated may leave the stream open past the body:
    # nothing reads it, and the API says the body is missing instead of hanging.
    response, stream = post_chunked(platform_client, "/api/v1/flags", b'{"a": 1}', terminated=False)

    assert_error(response, 400, "empty_body")
    assert stream.bytes_read == 0


def test_a_chunked_body_to_a_page_over_djangos_limit_is_refused_not_an_error(settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1_000
    client = Client()

    response, stream = post_chunked(
        client, "/accounts/login/", b"username=" + b"x" * 5_000, content_type="application/x-www-form-urlencoded"
    )

    assert response.status_code == 400  # Django's RequestDataTooBig: a client error, not a 500
    assert stream.bytes_read == 1_001


def test_every_api_user_gets_the_same_limits(settings):
    # The limits hold before authentication: a holder of any role, or none, is answered alike.
    for client in (Client(), bearer_client(PlatformUserFactory())):
        assert_error(client.get("/api/v1/tokens", headers={"X-Padding": "x" * 20_000}), 431, "headers_too_large")
