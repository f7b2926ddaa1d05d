"""Helpers of the statement export and submission tests: many stored statements fast, and a local
stand-in for the Transparency Database's `POST /api/v1/statements` (a real HTTP server in a thread)."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from django.utils import timezone

from factcheck.models import Verdict
from factcheck.ratings import record_rating
from moderation.enforcement import apply_rating
from moderation.models import Action, ActionKind, StatementOfReasons
from tests.factories import FactCheckerFactory, FlagFactory, PostFactory

TOKEN = "X|test-dsa-token"


def make_statements(count: int, *, start: datetime | None = None) -> list[str]:
    """`count` stored statements (one real one copied, each its own action and puid), oldest first."""
    post = PostFactory()
    FlagFactory(post=post)
    rating = record_rating(reviewer=FactCheckerFactory(), post_id=post.pk, verdict=Verdict.FALSE,
                           rationale="Invented.", sources=["https://evidence.example/1"], claim_if_unclaimed=True)
    apply_rating(rating_id=rating.pk)
    template = StatementOfReasons.objects.get(action__post=post)
    start = start or timezone.now() - timedelta(hours=1)
    actions = Action.objects.bulk_create([
        Action(puid=f"fd-test-{uuid.uuid4().hex}", post=post, kind=ActionKind.FACT_CHECK, verdict=Verdict.FALSE,
               feed_multiplier=0.2, created_at=start + timedelta(seconds=i), ended_at=start)
        for i in range(count - 1)
    ])
    StatementOfReasons.objects.bulk_create([
        StatementOfReasons(
            action=action, puid=action.puid, created_at=action.created_at, what=template.what,
            scope=template.scope, facts=template.facts, ground=template.ground, automation=template.automation,
            automated_detection=False, automated_decision=False, appeal_kinds=template.appeal_kinds,
            appeal_by=template.appeal_by, how_to_appeal=template.how_to_appeal,
            transparency={**template.transparency, "puid": action.puid},
        )
        for action in actions
    ])
    mine = StatementOfReasons.objects.filter(action__post=post)
    return list(mine.order_by("created_at", "puid").values_list("puid", flat=True))


@dataclass
class Receiver:
    """The Transparency Database's multi-statement endpoint, as its source behaves (StatementMultipleAPIController).

    It checks the Bearer token and the body, answers 422 `existing_puids` for a puid it holds, 422
    `statement_N` errors for a puid in `invalid`, and 500 while `fail(puids)` says so; otherwise 201
    with the statements created. Every request's puids are kept in `requests`.
    """

    invalid: set[str] = field(default_factory=set)
    held: set[str] = field(default_factory=set)  # already in the database
    fail: Callable[[list[str]], bool] = lambda puids: False
    delay: float = 0.0
    web_page: bytes | None = None  # answer every POST 200 with this page instead (a proxy, a wrong path)
    requests: list[list[str]] = field(default_factory=list)
    statuses: list[int] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self, headers: Any, raw: bytes) -> tuple[int, dict]:
        if headers.get("Authorization") != f"Bearer {TOKEN}":
            return 401, {"message": "Unauthenticated."}
        if headers.get("Content-Type") != "application/json" or headers.get("Accept") != "application/json":
            return 415, {"message": "JSON please."}
        body = json.loads(raw)
        statements = body.get("statements") if isinstance(body, dict) else None
        if not isinstance(statements, list) or not 1 <= len(statements) <= 100 or set(body) != {"statements"}:
            return 422, {"message": "The statements field must have between 1 and 100 items.",
                         "errors": {"statements": ["The statements field must have between 1 and 100 items."]}}
        puids = [s.get("puid") for s in statements]
        time.sleep(self.delay)
        with self.lock:
            self.requests.append(puids)
            errors = {f"statement_{i}": {"content_language": ["The selected content language is invalid."]}
                      for i, puid in enumerate(puids) if puid in self.invalid}
            if errors:
                return 422, {"errors": errors}
            existing = [puid for puid in puids if puid in self.held]
            if existing:
                message = "The platform identifier(s) are not all unique within this call."
                return 422, {"message": message, "errors": {"puid": [message], "existing_puids": existing}}
            if self.fail(puids):
                return 500, {"message": "Server Error"}
            self.held.update(puids)
        created = [{**s, "uuid": str(uuid.uuid4()), "permalink": f"https://tdb.example/statement/{s['puid']}"}
                   for s in statements]
        return 201, {"statements": created}

    def received(self) -> list[str]:
        return [puid for request in self.requests for puid in request]


class _Handler(BaseHTTPRequestHandler):
    receiver: Receiver

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        receiver = self.server.receiver  # type: ignore[attr-defined]
        if receiver.web_page is not None:
            status, payload, content_type = 200, receiver.web_page, "text/html"
        else:
            status, body = receiver.answer(self.headers, raw)
            payload, content_type = json.dumps(body).encode(), "application/json"
        receiver.statuses.append(status)
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: Any) -> None:
        pass


class ReceiverServer:
    """Serve a Receiver on 127.0.0.1 on a free port, in a thread, until stopped."""

    def __init__(self, receiver: Receiver) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.server.receiver = receiver  # type: ignore[attr-defined]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/api/v1/statements"

    def __enter__(self) -> ReceiverServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()
