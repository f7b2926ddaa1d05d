"""Finding 18: clients that send their bodies slowly do not stop gunicorn answering everyone else.

gunicorn runs as bin/run starts it (its worker class and limits read from bin/run), with 2 workers.
Four connections send their headers and then trickle their bodies; each is known to be in the app,
reading its body, when gunicorn has sent it `100 Continue` (which it does as it hands the request
to Django). /healthz is then answered while all four are still open and unanswered; they are
answered once their bodies are complete. With sync workers the first two held both workers, and
/healthz waited until the worker time-out killed them.
"""

from __future__ import annotations

import json
import socket

import pytest

from accounts.models import ApiToken
from tests.factories import PlatformUserFactory
from tests.test_gunicorn_limits import request, serving

SLOW_CLIENTS = 4
BODY = b" " * 1_000 + json.dumps({"flags": []}).encode()  # leading spaces: valid JSON sent a bit at a time
SAFETY_TIMEOUT = 90  # seconds: only so that a broken server fails the test instead of hanging it


def start_slow_post(port: int, token: str) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=SAFETY_TIMEOUT)
    head = (
        f"POST /api/v1/flags HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(BODY)}\r\nExpect: 100-continue\r\n\r\n"
    )
    sock.sendall(head.encode())
    assert read_head(sock).startswith(b"HTTP/1.1 100 Continue"), "gunicorn did not hand the request to the app"
    sock.sendall(BODY[:10])  # and the rest much later
    return sock


def read_head(sock: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        assert chunk, f"connection closed after {data!r}"
        data += chunk
    return data


def unanswered_and_open(sock: socket.socket) -> bool:
    sock.setblocking(False)
    try:
        sock.recv(1)
    except BlockingIOError:
        return True  # nothing sent back yet, and not closed
    finally:
        sock.setblocking(True)
        sock.settimeout(SAFETY_TIMEOUT)
    return False  # an answer, or the connection closed (b"")


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_slow_bodies_do_not_hold_the_workers_and_healthz_answers_while_they_are_still_sending(tmp_path):
    _, token = ApiToken.issue(user=PlatformUserFactory())
    with serving(tmp_path, workers=2) as port:
        slow = [start_slow_post(port, token) for _ in range(SLOW_CLIENTS)]
        try:
            health = request(port, "GET", "/healthz")

            assert health.status == 200
            assert all(unanswered_and_open(sock) for sock in slow)
            for sock in slow:
                sock.sendall(BODY[10:])
                status_line = read_head(sock).split(b"\r\n", 1)[0]
                assert status_line.split()[1] in (b"201", b"422"), status_line  # answered by the API
        finally:
            for sock in slow:
                sock.close()
