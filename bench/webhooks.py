"""Webhook figures: change-to-delivery latency with one worker, and deliveries per second with one and two.

A receiver runs in the bench process (a threaded http.server on 127.0.0.1 that answers 200 at once and
notes the wall-clock time each event arrives). The workers are `manage.py rqworker` subprocesses on the
app's own settings, with FACTDESK_WEBHOOKS_ALLOW_PRIVATE on (the receiver is on loopback, plain http).

- Latency: a distribution change is committed (the decisions feed append, as every decision makes it),
  the time is noted right after the commit, and the clock stops when its event reaches the receiver;
  one change at a time, with one long-running worker listening on `default webhooks matching` as in
  bin/run. Floor, in the same run: a job that only POSTs a body to the same receiver (no database),
  enqueued the same way, so the floor is the RQ hop plus one HTTP request.
- Throughput: a backlog of deliveries is committed with no worker running (their jobs wait on the
  queue, put there by the outbox after each commit), then 1 (later 2) burst workers drain it; the
  clock runs from their start until the receiver has every event.
"""

from __future__ import annotations

import json
import os
import statistics
import threading
import time
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import django_rq
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from bench import processes
from bench.report import Figure
from core import outbound
from core.jobs import WEBHOOKS, enqueue
from factcheck.models import Post
from moderation.feed import append_and_publish
from moderation.models import DistributionChange
from webhooks.endpoints import register_endpoint
from webhooks.models import Delivery, DeliveryStatus, Endpoint

GIVE_UP_SECONDS = 300.0
POLL_SECONDS = 0.002


class Arrivals:
    def __init__(self) -> None:
        self.times: dict[str, float] = {}
        self.condition = threading.Condition()

    def note(self, key: str) -> None:
        with self.condition:
            self.times.setdefault(key, time.time())
            self.condition.notify_all()

    def wait(self, key: str, timeout: float = 30.0) -> float:
        with self.condition:
            if not self.condition.wait_for(lambda: key in self.times, timeout):
                raise RuntimeError(f"{key} did not arrive within {timeout:.0f} s; worker logs in {processes.LOG_DIR}")
            return self.times[key]

    def count(self) -> int:
        with self.condition:
            return len(self.times)


def start_receiver(arrivals: Arrivals) -> tuple[ThreadingHTTPServer, str]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            key = self.headers.get("X-Factdesk-Delivery") or json.loads(body)["floor"]
            arrivals.note(key)
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/hook"


def floor_post(url: str, key: str) -> None:
    """The floor's job: one POST to the receiver, nothing else (runs in the RQ worker)."""
    outbound.post(url, json.dumps({"floor": key}).encode(), {"Content-Type": "application/json"}, timeout=5)


def change_posts(post_ids: list[int], *, cause: str) -> None:
    """One committed distribution change per post, in one feed append (one transaction)."""
    with transaction.atomic():
        now = timezone.now()
        append_and_publish([
            DistributionChange(post_id=pk, multiplier=Decimal("0.2"), labels=["bench"], cause=cause, created_at=now)
            for pk in post_ids
        ])


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def latency(
    url: str, arrivals: Arrivals, post_ids: list[int], *, samples: int, warmup: int
) -> tuple[list[float], list[float]]:
    worker = processes.start_rqworker(90)
    try:
        changes: list[float] = []
        floors: list[float] = []
        for n in range(warmup + samples):
            post_id = post_ids[n % len(post_ids)]
            with transaction.atomic():
                append_and_publish([DistributionChange(post_id=post_id, multiplier=Decimal("0.2"), cause=f"latency {n}",
                                                   created_at=timezone.now())])
                delivery = Delivery.objects.order_by("-id").select_related("event").first()
            committed = time.time()
            arrived = arrivals.wait(str(delivery.event.uid))
            key = f"floor-{n}"
            sent = time.time()
            enqueue(floor_post, url, key, queue="webhooks")
            floor = arrivals.wait(key) - sent
            if n >= warmup:
                changes.append(arrived - committed)
                floors.append(floor)
        return changes, floors
    finally:
        processes.stop(worker)


def drain(*, deliveries: int, post_ids: list[int], workers: int, arrivals: Arrivals) -> tuple[float, float]:
    """Commit `deliveries` changes with no worker running, then drain them; (seconds, deliveries/s)."""
    queue = django_rq.get_queue("webhooks")
    queue.connection.flushdb()
    last = Delivery.objects.order_by("-id").values_list("id", flat=True).first() or 0
    for start in range(0, deliveries, 250):
        change_posts(post_ids[start:start + 250], cause=f"throughput {workers}")
    ids = list(Delivery.objects.filter(id__gt=last).values_list("id", flat=True))
    before = arrivals.count()
    started = time.perf_counter()
    procs = [processes.start_rqworker(80 + n, burst=True, queues=(WEBHOOKS,)) for n in range(workers)]
    try:
        while arrivals.count() - before < len(ids):
            if time.perf_counter() - started > GIVE_UP_SECONDS:
                raise RuntimeError(
                    f"{arrivals.count() - before} of {len(ids)} deliveries after {GIVE_UP_SECONDS:.0f} s"
                )
            if all(p.poll() is not None for p in procs) and arrivals.count() - before < len(ids):
                pending = Delivery.objects.filter(pk__in=ids).exclude(status=DeliveryStatus.DELIVERED).count()
                raise RuntimeError(
                    f"burst workers exited with {pending} deliveries not delivered; logs in {processes.LOG_DIR}"
                )
            time.sleep(0.01)
        seconds = time.perf_counter() - started
    finally:
        for proc in procs:
            processes.stop(proc)
    return seconds, len(ids) / seconds


def bench_webhooks(*, platform, samples: int, warmup: int, deliveries: int) -> list[Figure]:
    os.environ["FACTDESK_WEBHOOKS_ALLOW_PRIVATE"] = "1"  # the workers' settings: the receiver is on loopback
    settings.FACTDESK_WEBHOOKS_ALLOW_PRIVATE = True
    arrivals = Arrivals()
    server, url = start_receiver(arrivals)
    endpoint, _ = register_endpoint(owner=platform, url=url, events=["distribution.changed"])
    post_ids = list(Post.objects.order_by("-id").values_list("id", flat=True)[: max(deliveries * 2, samples)])
    try:
        print(f"  latency: {samples} changes one at a time, 1 worker", flush=True)
        changes, floors = latency(url, arrivals, post_ids, samples=samples, warmup=warmup)
        rates = []
        for workers in (1, 2):
            print(f"  throughput: {deliveries:,} deliveries, {workers} burst worker(s)", flush=True)
            offset = 0 if workers == 1 else deliveries
            rates.append(drain(deliveries=deliveries, post_ids=post_ids[offset:offset + deliveries], workers=workers,
                               arrivals=arrivals))
    finally:
        Endpoint.objects.filter(pk=endpoint.pk).update(deleted_at=timezone.now())
        server.shutdown()
    p50, p95 = percentile(changes, 0.5) * 1000, percentile(changes, 0.95) * 1000
    floor95 = percentile(floors, 0.95) * 1000
    (one_s, one), (two_s, two) = rates
    return [
        Figure(
            name="webhook change-to-delivery p95, 1 RQ worker", value=p95, unit="ms", floor=floor95,
            floor_name="RQ hop + one POST, p95", ratio=p95 / floor95, target="p95 <= 500 ms", passed=p95 <= 500,
            notes=[
                f"{samples} distribution changes (after {warmup} unmeasured), each committed alone and timed from just "
                "after its commit to its arrival at a local receiver (threaded http.server, answers 200 at once); one "
                "`manage.py rqworker` subprocess on every queue in urgency order, as `manage.py jobworker` takes them.",
                f"p50 {p50:,.1f} ms, p95 {p95:,.1f} ms, max {max(changes) * 1000:,.1f} ms; the floor (a job that only "
                f"POSTs to the same receiver, enqueued the same way) p50 {percentile(floors, 0.5) * 1000:,.1f} ms, "
                f"p95 {floor95:,.1f} ms.",
                "Median of the difference: "
                f"{statistics.median(c - f for c, f in zip(changes, floors, strict=True)) * 1000:,.1f} ms "
                "(the delivery's own work: the row lock, the order check, signing, the attempt row and the commit).",
            ],
        ),
        Figure(name="webhook deliveries/s, 1 RQ worker", value=one, unit="deliveries/s", target="none (reported)",
               informational=True, notes=[
                   f"{deliveries:,} deliveries (one per post, changes committed 250 per transaction with no worker "
                   f"running), drained by one `rqworker webhooks --burst` subprocess in {one_s:.1f} s including its "
                   "start-up."]),
        Figure(name="webhook deliveries/s, 2 RQ workers", value=two, unit="deliveries/s", floor=one,
               floor_name="1 worker", ratio=two / one, target="none (reported; ratio = 2/1 scaling)",
               informational=True, notes=[f"The same with two burst workers on fresh posts: {two_s:.1f} s."]),
    ]
