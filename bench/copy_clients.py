"""The outside parts of the copy-heavy figures (bench/copy_load.py): ingest clients POSTing flag batches,
a poller of the decisions feed, ratings timed from their 201 to their feed entry, and the RQ backlog.

Everything here talks to the app over HTTP with bearer tokens, as a platform and a fact-checker would;
only `decided_after_ms` and `backlog` read the database and Redis, to explain the figures.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import random
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import django_rq
import requests
from django.db import connections
from django.db.models import F

from bench.app_processes import App
from bench.data import VOCABULARY, make_pages
from bench.report import percentile

POLL_SECONDS = 0.02  # the feed poller's pause when caught up: 50 polls/s, under the API's 6,000/min per token
GIVE_UP_SECONDS = 60.0  # a rating not in the feed by then is counted as this long
MAX_MISSED = 2  # the phase stops after this many: every later rating waits behind the same backlog
VERDICT = "false"  # an action, a strike and a notice: the decision side's full work, and a feed entry
PREFIXES = ("", "BREAKING: ", "Share this: ", "WOW ", "Read this!! ", "Pass it on: ", "Unbelievable. ")
SUFFIXES = ("", " #share", " #viral", " !!!", " please share", " #truth", " (copied)")
CONTEXT = mp.get_context("fork")


def claim_text(rng: random.Random) -> str:
    """A rated claim: 25 to 40 words of the bench vocabulary, long enough that light edits match automatically."""
    return " ".join(rng.choices(VOCABULARY[:5000], k=rng.randint(25, 40)))


def copy_of(text: str, rng: random.Random) -> str:
    prefix, suffix = rng.choice(PREFIXES), rng.choice(SUFFIXES)
    return f"{prefix}{text}{suffix}" if prefix or suffix else f"{text} #repost"


def flag_json(*, label: str, text: str, page: dict, now: datetime, rng: random.Random) -> dict:
    posted = now - timedelta(minutes=rng.randint(5, 600))
    return {
        "idempotency_key": f"bench-copyload-flag-{label}", "source": "user_report",
        "flagged_at": (posted + timedelta(minutes=1)).isoformat(), "reason": "Reported as false information",
        "post": {"external_id": f"bench-copyload-{label}", "url": f"https://social.example/c/{label}", "text": text,
                 "language": "en", "country": "GB", "posted_at": posted.isoformat(), "page": page,
                 "views": int(rng.lognormvariate(7, 2)), "shares": int(rng.lognormvariate(4, 2))},
    }


def make_batch(*, label: str, size: int, claims: list[str], share: float, pages: list[dict],
               rng: random.Random) -> bytes:
    now = datetime.now(UTC)
    flags = []
    for n in range(size):
        copy = rng.random() < share
        text = copy_of(rng.choice(claims), rng) if copy else claim_text(rng)
        flags.append(flag_json(label=f"{label}-{n}", text=text, page=rng.choice(pages), now=now, rng=rng))
    return json.dumps({"flags": flags}).encode()


@dataclass
class ClientRun:
    """What one ingest client did: batches answered 201/200, failures, and each batch's time."""

    batches: int = 0
    flags: int = 0
    seconds: float = 0.0
    batch_ms: list[float] = field(default_factory=list)
    failures: int = 0
    first_failure: str = ""


def _client(n: int, url: str, token: str, label: str, claims: list[str], share: float, size: int, pages: list[dict],
            limit: int, started, stop, results) -> None:
    """One ingest client (a forked process, no database): batches until `stop`, or `limit` batches."""
    session = requests.Session()
    session.headers.update({"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    rng = random.Random(f"copyload-{label}-{n}")
    run, began = ClientRun(), time.perf_counter()
    while not stop.is_set() and (not limit or run.batches < limit):
        body = make_batch(label=f"{label}-{n}-{run.batches + run.failures}", size=size, claims=claims, share=share,
                          pages=pages, rng=rng)
        sent = time.perf_counter()
        try:
            response = session.post(f"{url}/api/v1/flags", data=body, timeout=120)
            ok, why = response.status_code in (200, 201), f"{response.status_code} {response.text[:200]}"
        except requests.RequestException as exc:
            ok, why = False, f"{type(exc).__name__}: {exc}"
        if not ok:
            run.failures += 1
            run.first_failure = run.first_failure or why
            if run.failures > 20:
                break
            continue
        run.batch_ms.append((time.perf_counter() - sent) * 1000)
        run.batches += 1
        run.flags += size
        with started.get_lock():
            started.value += 1
    run.seconds = time.perf_counter() - began
    results.put(run)


class Clients:
    """The ingest clients as forked processes; `start()` returns once each has had a batch answered."""

    def __init__(self, *, app: App, tokens: list[str], label: str, claims: list[str], share: float, size: int,
                 limit: int = 0) -> None:
        pages = [{"external_id": p.external_id, "name": p.name, "is_politician": p.is_politician}
                 for p in make_pages(2_000, random.Random(7))]  # the bench's pages, as make_load_batch sends them
        self.stop, self.results = CONTEXT.Event(), CONTEXT.Queue()
        self.done = [CONTEXT.Value("i", 0) for _ in tokens]
        connections.close_all()  # never share a socket with a forked child
        self.procs = [CONTEXT.Process(target=_client, daemon=True, args=(
            n, app.url, token, label, claims, share, size, pages, limit, self.done[n], self.stop, self.results))
            for n, token in enumerate(tokens)]

    def start(self, *, wait_first: bool = True) -> float:
        began = time.perf_counter()
        for p in self.procs:
            p.start()
        deadline = time.monotonic() + 180
        while wait_first and any(d.value < 1 for d in self.done):
            if time.monotonic() > deadline or not all(p.is_alive() for p in self.procs):
                self.finish()
                raise RuntimeError("the ingest clients did not get going")
            time.sleep(0.05)
        return began

    def batches(self) -> int:
        return sum(d.value for d in self.done)

    def finish(self, timeout: float = 300) -> list[ClientRun]:
        self.stop.set()
        runs = []
        try:
            runs = [self.results.get(timeout=timeout) for _ in self.procs]
        finally:
            for p in self.procs:
                p.join(timeout=10)
                if p.is_alive():
                    p.terminate()
        return runs


class FeedPoller:
    """GET /api/v1/decisions by cursor in a thread, noting when each awaited post's first entry is seen."""

    def __init__(self, url: str, token: str) -> None:
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Bearer {token}"
        self.url, self.cursor = url, "0"
        self.seen: dict[str, float] = {}
        self.awaited: set[str] = set()
        self.entries = self.polls = 0
        self.condition = threading.Condition()
        self.stopped = threading.Event()
        self.error = ""
        self._page()  # skip what is in the feed already
        while self._page() == 1000:
            pass
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _page(self) -> int:
        response = self.session.get(f"{self.url}/api/v1/decisions", params={"after": self.cursor, "limit": 1000},
                                    timeout=60)
        response.raise_for_status()
        at, body = time.perf_counter(), response.json()
        self.polls += 1
        with self.condition:
            for entry in body["decisions"]:
                self.entries += 1
                if entry["post"] in self.awaited and entry["post"] not in self.seen:
                    self.seen[entry["post"]] = at
                    self.condition.notify_all()
            self.cursor = body["next_cursor"]
        return len(body["decisions"])

    def _run(self) -> None:
        while not self.stopped.is_set():
            try:
                if self._page() < 1000:
                    time.sleep(POLL_SECONDS)
            except Exception as exc:  # noqa: BLE001 - reported by wait()
                self.error = f"{type(exc).__name__}: {exc}"
                time.sleep(0.2)

    def expect(self, external_id: str) -> None:
        with self.condition:
            self.awaited.add(external_id)

    def wait(self, external_id: str, timeout: float = GIVE_UP_SECONDS) -> float:
        with self.condition:
            if not self.condition.wait_for(lambda: external_id in self.seen, timeout):
                raise TimeoutError(f"{external_id} not in the decisions feed after {timeout:.0f} s ({self.error})")
            return self.seen[external_id]

    def close(self) -> None:
        self.stopped.set()
        self.thread.join(timeout=60)


@dataclass
class Latencies:
    feed_ms: list[float] = field(default_factory=list)  # 201 -> first feed entry (the figure)
    post_ms: list[float] = field(default_factory=list)  # the rating POST's own round trip
    external_ids: list[str] = field(default_factory=list)
    missed: int = 0  # measured ratings not in the feed within GIVE_UP_SECONDS, or not sent (counted as that long)
    stopped_after: int = 0  # ratings posted before the phase gave up (MAX_MISSED misses), 0 if it did not
    out_of_time: int = 0  # ratings posted before the phase's time budget ran out, 0 if it did not

    def p95(self) -> float:
        return percentile(self.feed_ms, 95)


def time_ratings(*, app: App, poller: FeedPoller, token: str, external_ids: list[str], warmup: int,
                 desc: str, budget: float = 0) -> Latencies:
    """Rate each post over the API, one at a time; the clock runs from the 201 to the post's feed entry.

    `budget`: seconds after which no further rating is sent (once 10 were measured); 0 for none."""
    session = requests.Session()
    session.headers.update({"Authorization": f"Bearer {token}"})
    body = {"verdict": VERDICT, "rationale": "Checked against the original source; the claim does not hold.",
            "sources": ["https://example.org/source"]}
    out, misses, began = Latencies(), 0, time.perf_counter()
    for n, external_id in enumerate(external_ids):
        if budget and time.perf_counter() - began > budget and len(out.feed_ms) >= 10:
            out.out_of_time = n
            print(f"  {desc}: {budget:.0f} s spent, stopping after {n} ratings", flush=True)
            break
        poller.expect(external_id)
        sent = time.perf_counter()
        response = session.post(f"{app.url}/api/v1/posts/{external_id}/ratings", json=body, timeout=120)
        answered = time.perf_counter()
        if response.status_code != 201:
            raise RuntimeError(f"rating {external_id}: {response.status_code} {response.text[:300]}")
        try:
            seen = poller.wait(external_id)
        except TimeoutError:
            # A backlog this deep only grows: count it as GIVE_UP_SECONDS, and after MAX_MISSED stop the phase.
            seen, misses = answered + GIVE_UP_SECONDS, misses + 1
            out.missed += n >= warmup
            if misses >= MAX_MISSED:
                out.stopped_after = n + 1
        if n >= warmup:
            out.feed_ms.append((seen - answered) * 1000)
            out.post_ms.append((answered - sent) * 1000)
            out.external_ids.append(external_id)
        if out.stopped_after:
            print(f"  {desc}: {misses} ratings not in the feed within {GIVE_UP_SECONDS:.0f} s; stopping", flush=True)
            # The ratings not sent would have waited behind the same backlog: each counts as GIVE_UP_SECONDS.
            unsent = len(external_ids) - max(n + 1, warmup)
            out.feed_ms += [GIVE_UP_SECONDS * 1000] * unsent
            out.missed += unsent
            break
        if (n + 1) % 20 == 0:
            print(f"  {desc}: {n + 1}/{len(external_ids)} ratings", flush=True)
    return out


def decided_after_ms(external_ids: list[str]) -> list[float]:
    """From the database: each rating's created_at to its decision's decided_at (the job's start: time in
    the queue plus the worker's pick-up), the part of the figure the RQ queue accounts for."""
    from moderation.models import RatingDecision

    rows = RatingDecision.objects.filter(post__external_id__in=external_ids, rating__post_id=F("post_id")).values_list(
        "decided_at", "rating__created_at")
    return [(decided - created).total_seconds() * 1000 for decided, created in rows]


def backlog() -> dict[str, int]:
    """Jobs waiting per RQ queue, and the started ones."""
    from rq.registry import StartedJobRegistry

    out = {}
    for name in django_rq.settings.QUEUES:
        queue = django_rq.get_queue(name)
        out[name] = queue.count
        out[f"{name} started"] = len(StartedJobRegistry(queue=queue))
    return out


def backlog_text(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v:,}" for k, v in counts.items())


def wait_drained(timeout: float) -> tuple[float, dict[str, int]]:
    """Wait until no job waits or runs (at most `timeout` s); returns (seconds waited, backlog left)."""
    began = time.perf_counter()
    while any(backlog().values()) and time.perf_counter() - began < timeout:
        time.sleep(0.5)
    return time.perf_counter() - began, backlog()
