"""A webhook receiver on 127.0.0.1 that a test starts: it records every request and answers as told."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Received:
    headers: dict[str, str]
    body: bytes
    at: float  # time.monotonic() when the request arrived

    @property
    def json(self) -> dict[str, Any]:
        return json.loads(self.body)

    @property
    def delivery_id(self) -> str:
        return self.headers["X-Factdesk-Delivery"]


@dataclass
class Plan:
    """How to answer the next requests: status codes in order (the last repeats), optional holds and delays."""

    statuses: list[int] = field(default_factory=lambda: [200])
    delay: float = 0.0  # seconds before answering
    hold: threading.Event | None = None  # wait for this before answering
    location: str = ""  # Location header of a 3xx


class Receiver:
    def __init__(self) -> None:
        self.received: list[Received] = []
        self.plan = Plan()
        self.arrived = threading.Condition()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with receiver.arrived:
                    receiver.received.append(Received(dict(self.headers), body, time.monotonic()))
                    index = len(receiver.received) - 1
                    receiver.arrived.notify_all()
                plan = receiver.plan
                if plan.hold is not None:
                    plan.hold.wait(30)
                if plan.delay:
                    time.sleep(plan.delay)
                status = plan.statuses[min(index, len(plan.statuses) - 1)]
                try:
                    self.send_response(status)
                    if plan.location:
                        self.send_header("Location", plan.location)
                    answer = f"answer {status} to request {index + 1}".encode()
                    self.send_header("Content-Length", str(len(answer)))
                    self.end_headers()
                    self.wfile.write(answer)
                except (BrokenPipeError, ConnectionResetError):  # the sender gave up (time-out) or died
                    pass

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def start(self) -> Receiver:
        self.thread.start()
        return self

    def stop(self) -> None:
        if self.plan.hold is not None:
            self.plan.hold.set()
        self.server.shutdown()
        self.server.server_close()

    def wait_for(self, count: int, timeout: float = 10.0) -> list[Received]:
        with self.arrived:
            self.arrived.wait_for(lambda: len(self.received) >= count, timeout)
        assert len(self.received) >= count, f"{len(self.received)} request(s) arrived, not {count}"
        return self.received


def verify(secret: str, headers: dict[str, str], body: bytes, *, now: float, tolerance: int = 300) -> bool:
    """What docs/webhooks.md tells receivers to do, written independently of webhooks.delivery."""
    parts = dict(item.split("=", 1) for item in headers["X-Factdesk-Signature"].split(","))
    timestamp = int(parts["t"])
    if abs(now - timestamp) > tolerance:
        return False
    expected = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, parts["v1"])
