"""Sending statements of reasons to the EU Transparency Database (`POST /api/v1/statements`).

`submit_statements` sends, in batches of at most 100, every stored statement whose puid is not yet
settled at that endpoint, and records what the database answered (moderation.models.submissions):

- 2xx: the puids the answer names as stored are accepted. One it does not name is not: an endpoint that answers
  200 with a web page (a proxy, a wrong path) had every statement recorded as accepted and never sent again.
- 422: the database refused the whole batch. The puids it names are taken out: `existing_puids`
  means the database has them already (accepted earlier: recorded as such), `statement_N` errors
  mean statement N broke its rules (recorded as rejected, with the reason; stored statements are
  append-only, so it is reported, not fixed). The rest of the batch is sent again.
- 5xx, 429, a time-out or no connection: the batch is tried again with exponential back-off,
  then left for the next run. 401 and 403 stop the run: the token is wrong for every batch.

A settled puid is never sent to that endpoint again. Runs are serialised by a PostgreSQL advisory
lock held for the whole run (docs/concurrency.md), so two overlapping runs cannot both send one.
"""

from __future__ import annotations

import json
import re
import time
import urllib.parse
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from core import outbound
from core.outbound import Answer
from moderation.models import (
    AttemptOutcome,
    StatementSubmission,
    StatementSubmissionAttempt,
    SubmissionOutcome,
)
from moderation.statements.export import outgoing_statements, stored_between
from moderation.statements.transparency import MAX_BATCH

# pg_advisory_lock key of submission runs: any fixed 64-bit number no other lock in the project uses.
SUBMISSION_LOCK = 0x46445F534F52  # "FD_SOR"
LOOPBACK = {"127.0.0.1", "::1", "localhost"}
STATEMENT_INDEX = re.compile(r"^statement_(\d+)$")


Post = Callable[[str, bytes, dict[str, str], float], Answer]


def http_post(url: str, body: bytes, headers: dict[str, str], timeout: float) -> Answer:
    # The endpoint is the operator's own choice (checked by check_endpoint), so any address may be used.
    return outbound.post(url, body, headers, timeout=timeout, allow_private=True)


class SubmissionRefused(ValueError):
    """The submission's endpoint would send the token where it should not go."""


def check_endpoint(endpoint: str) -> None:
    """HTTPS only; plain HTTP only to this machine (a local test receiver); a port that is a port."""
    parts = urllib.parse.urlsplit(endpoint)
    try:
        parts.port  # noqa: B018  (urllib checks the port only when it is read)
    except ValueError:
        raise SubmissionRefused(f"{endpoint!r} has no valid port (1-65535).") from None
    if parts.scheme == "https" and parts.hostname:
        return
    if parts.scheme == "http" and parts.hostname in LOOPBACK:
        return
    raise SubmissionRefused(f"{endpoint!r} is not an https:// URL; the token is sent only over HTTPS.")


def normalised_endpoint(endpoint: str) -> str:
    """The endpoint as its settled puids are recorded: scheme and host in lower case, no default port, no fragment
    and no credentials (they name no endpoint, and are not stored). HTTPS://DB.example:443/api and
    https://db.example/api are one endpoint, so a puid it accepted is not sent again because the operator typed it
    differently."""
    parts = urllib.parse.urlsplit(endpoint.strip())
    scheme, host = parts.scheme.lower(), (parts.hostname or "")
    host = f"[{host}]" if ":" in host else host  # an IPv6 address keeps its brackets
    port = parts.port if parts.port not in (None, {"https": 443, "http": 80}.get(scheme)) else None
    return urllib.parse.urlunsplit((scheme, host + (f":{port}" if port else ""), parts.path, parts.query, ""))


@dataclass
class Submitted:
    """What one run did, puid by puid."""

    accepted: list[str] = field(default_factory=list)
    already_accepted: list[str] = field(default_factory=list)
    rejected: dict[str, str] = field(default_factory=dict)
    failed: list[str] = field(default_factory=list)
    invalid: dict[str, list[str]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.rejected or self.failed or self.invalid)


@dataclass
class _Run:
    url: str  # where the batches go, as the operator typed it
    endpoint: str  # what the settled puids are recorded under (normalised_endpoint)
    headers: dict[str, str]
    post: Post
    attempts: int
    backoff: float
    timeout: float
    sleep: Callable[[float], None]
    summary: Submitted
    id: uuid.UUID = field(default_factory=uuid.uuid4)
    stopped: str = ""


@contextmanager
def submission_lock() -> Iterator[None]:
    """One submission run at a time, across processes and hosts (waits for a running one to end).

    Session-level, so it spans the run's many short transactions. SQLite (the embedded default)
    has no such lock and needs none: one process writes to it.
    """
    if connection.vendor != "postgresql":
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_lock(%s)", [SUBMISSION_LOCK])
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [SUBMISSION_LOCK])


def submit_statements(
    *, endpoint: str, token: str, since: date | None = None, batch_size: int = MAX_BATCH, attempts: int = 4,
    backoff: float = 1.0, timeout: float = 60.0, post: Post = http_post, sleep: Callable[[float], None] = time.sleep,
) -> Submitted:
    """Send every unsettled statement (created since `since`, if given) to `endpoint`; see the module."""
    check_endpoint(endpoint)
    as_typed, endpoint = endpoint, normalised_endpoint(endpoint)
    if not 1 <= batch_size <= MAX_BATCH:
        raise ValueError(f"a batch holds 1 to {MAX_BATCH} statements, not {batch_size}")
    run = _Run(
        url=as_typed, endpoint=endpoint, post=post, attempts=max(1, attempts), backoff=backoff, timeout=timeout,
        sleep=sleep,
        headers={"Authorization": f"Bearer {token}", "Accept": "application/json",
                 "Content-Type": "application/json"},
        summary=Submitted(),
    )
    with submission_lock():
        # Read under the lock: whatever an earlier (or overlapping) run settled is never sent again.
        # Also under the endpoint as typed: rows recorded before endpoints were normalised keep their spelling.
        settled = set(StatementSubmission.objects.filter(endpoint__in={endpoint, as_typed})
                      .values_list("puid", flat=True))
        batch: list[tuple[str, dict[str, Any]]] = []
        for puid, data, problems in outgoing_statements(stored_between(since=since)):
            if puid in settled:
                continue
            if problems:
                run.summary.invalid[puid] = problems
                continue
            batch.append((puid, data))
            if len(batch) == batch_size:
                _send(batch, run)
                batch = []
        if batch:
            _send(batch, run)
    return run.summary


def _send(batch: list[tuple[str, dict[str, Any]]], run: _Run) -> None:
    """One batch, until it is accepted, emptied by 422s, or given up on."""
    if run.stopped:
        run.summary.failed += [puid for puid, _ in batch]
        return
    pending = list(batch)
    failures = 0
    while pending:
        puids = [puid for puid, _ in pending]
        body = json.dumps({"statements": [data for _, data in pending]}, ensure_ascii=False).encode("utf-8")
        answer = run.post(run.url, body, run.headers, run.timeout)
        parsed = _json(answer.body)
        if answer.status is not None and 200 <= answer.status < 300:
            unnamed = _accept(pending, parsed, answer, run)
            if unnamed:
                detail = (f"HTTP {answer.status} without naming {len(unnamed)} of the {len(pending)} statements as "
                          "stored (is --endpoint the Transparency Database's POST /api/v1/statements?): "
                          f"{_excerpt(answer.body, 200)}")
                _attempt(run, unnamed, answer, AttemptOutcome.FAILED, detail)
                run.summary.errors.append(f"a batch of {len(unnamed)} from {unnamed[0]} was not accepted: {detail}")
                run.summary.failed += unnamed
            return
        if answer.status == 422:
            named = _named_in_422(parsed, pending)
            if named:
                _settle_named(named, puids, answer, run)
                pending = [(puid, data) for puid, data in pending if puid not in named]
                continue
        retryable = answer.status is None or answer.status == 429 or answer.status >= 500
        error = answer.error or f"HTTP {answer.status}"
        detail = f"{error}: {_excerpt(answer.body)}" if answer.body else error
        _attempt(run, puids, answer, AttemptOutcome.FAILED, detail)
        failures += 1
        if retryable and failures < run.attempts:
            run.sleep(run.backoff * 2 ** (failures - 1))
            continue
        if answer.status in (401, 403):
            run.stopped = f"the Transparency Database refused the token ({detail}); the run stopped"
            run.summary.errors.append(run.stopped)
        else:
            run.summary.errors.append(f"a batch of {len(puids)} from {puids[0]} was not sent: {detail}")
        run.summary.failed += puids
        return


def _accept(pending: list[tuple[str, dict]], parsed: Any, answer: Answer, run: _Run) -> list[str]:
    """Record the puids a 2xx answer names as stored as accepted; returns the batch's puids it does not name."""
    created = parsed.get("statements") if isinstance(parsed, dict) else None
    by_puid = {
        item.get("puid"): {key: item.get(key) for key in ("uuid", "permalink", "self") if item.get(key)}
        for item in (created if isinstance(created, list) else []) if isinstance(item, dict)
    }
    puids = [puid for puid, _ in pending if puid in by_puid]
    if puids:
        with transaction.atomic(durable=True):
            attempt = _attempt(run, puids, answer, AttemptOutcome.ACCEPTED, "")
            StatementSubmission.objects.bulk_create([
                StatementSubmission(puid=puid, endpoint=run.endpoint, outcome=SubmissionOutcome.ACCEPTED,
                                    recorded_at=attempt.sent_at, answer=by_puid[puid], attempt=attempt)
                for puid in puids
            ])
        run.summary.accepted += puids
    return [puid for puid, _ in pending if puid not in by_puid]


def _named_in_422(parsed: Any, pending: list[tuple[str, dict]]) -> dict[str, tuple[str, str, Any]]:
    """The puids of this batch a 422 names: puid -> (outcome, reason, the database's words)."""
    errors = parsed.get("errors") if isinstance(parsed, dict) else None
    if not isinstance(errors, dict):
        return {}
    in_batch = {puid for puid, _ in pending}
    named: dict[str, tuple[str, str, Any]] = {}
    existing = errors.get("existing_puids")
    existing_one = parsed.get("existing", {}).get("puid") if isinstance(parsed.get("existing"), dict) else None
    for puid in [*(existing if isinstance(existing, list) else []), existing_one]:
        if isinstance(puid, str) and puid in in_batch:
            named[puid] = (SubmissionOutcome.ALREADY_ACCEPTED, "The database already holds this puid.",
                           {"existing_puids": [puid]})
    for key, fields in errors.items():
        match = STATEMENT_INDEX.match(str(key))
        if match is None or int(match[1]) >= len(pending) or not isinstance(fields, dict):
            continue
        puid = pending[int(match[1])][0]
        reason = "; ".join(
            f"{name}: {' '.join(map(str, messages if isinstance(messages, list) else [messages]))}"
            for name, messages in fields.items()
        )
        named.setdefault(puid, (SubmissionOutcome.REJECTED, reason or "refused", fields))
    return named


def _settle_named(named: dict[str, tuple[str, str, Any]], puids: list[str], answer: Answer, run: _Run) -> None:
    with transaction.atomic(durable=True):
        attempt = _attempt(run, puids, answer, AttemptOutcome.REJECTED, _excerpt(answer.body))
        StatementSubmission.objects.bulk_create([
            StatementSubmission(puid=puid, endpoint=run.endpoint, outcome=outcome, reason=reason[:2000],
                                answer={"errors": words}, recorded_at=attempt.sent_at, attempt=attempt)
            for puid, (outcome, reason, words) in named.items()
        ])
    for puid, (outcome, reason, _) in named.items():
        if outcome == SubmissionOutcome.ALREADY_ACCEPTED:
            run.summary.already_accepted.append(puid)
        else:
            run.summary.rejected[puid] = reason


def _attempt(run: _Run, puids: list[str], answer: Answer, outcome: str, error: str) -> StatementSubmissionAttempt:
    return StatementSubmissionAttempt.objects.create(
        endpoint=run.endpoint, run=run.id, sent_at=timezone.now(), puids=puids, http_status=answer.status,
        outcome=outcome, error=error,
    )


def _json(body: bytes) -> Any:
    try:
        return json.loads(body) if body else None
    except (ValueError, UnicodeDecodeError):
        return None


def _excerpt(body: bytes, most: int = 2000) -> str:
    return body[:most].decode("utf-8", errors="replace")
