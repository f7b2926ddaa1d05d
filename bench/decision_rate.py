"""Figure 5: decisions applied per second from a backlog, by one RQ worker and by two.

The ratings are committed while no worker runs, so their apply_rating jobs wait on the Redis
queue, put there by the app itself after each commit. Then `manage.py rqworker --burst`
subprocesses start (core.worker.FactdeskWorker, jobs in the worker process; burst: they exit once
the queue is empty) and the clock runs from their start until every one of those ratings has its
RatingDecision row.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import django_rq
from django.db.models import Max, Min
from tqdm import tqdm

from bench import processes
from bench.decisions import ratable_posts, rate, rating_note
from bench.report import Figure
from core.jobs import DECISIONS
from moderation.models import RatingDecision

POLL_SECONDS = 0.02
GIVE_UP_SECONDS = 600.0


@dataclass
class Drain:
    ratings: int
    workers: int
    seconds: float  # worker start to the last decision visible
    to_first: float  # worker start to the first decision visible (the workers' start-up)
    steady_rate: float  # decisions/s between the first and the last decided_at

    @property
    def rate(self) -> float:
        return self.ratings / self.seconds


def queue_backlog(*, reviewer, count: int) -> list[int]:
    """Commit `count` ratings with no worker running; returns their ids (their jobs wait on the queue)."""
    queue = django_rq.get_queue(DECISIONS)
    queue.connection.flushdb()
    rating_ids = [
        rate(reviewer=reviewer, post_id=post_id)[0].pk
        for post_id in tqdm(ratable_posts(reviewer, count), desc="backlog ratings", unit="rating", leave=False)
    ]
    if queue.count != count:
        raise RuntimeError(f"{queue.count} jobs on the queue after {count} ratings; expected one apply_rating each")
    return rating_ids


def drain(*, rating_ids: list[int], workers: int) -> Drain:
    """Start `workers` burst workers; returns when every rating has its decision."""
    decisions = RatingDecision.objects.filter(rating_id__gte=min(rating_ids), rating_id__lte=max(rating_ids))
    started = time.perf_counter()
    procs = [processes.start_rqworker(n, burst=True) for n in range(workers)]
    first: float | None = None
    try:
        while (done := decisions.count()) < len(rating_ids):
            now = time.perf_counter()
            if done and first is None:
                first = now
            if all(p.poll() is not None for p in procs) and decisions.count() < len(rating_ids):
                failed = django_rq.get_queue(DECISIONS).failed_job_registry.count
                raise RuntimeError(
                    f"burst workers exited with {decisions.count()} of {len(rating_ids)} decisions "
                    f"({failed} failed jobs); logs in {processes.LOG_DIR}"
                )
            if now - started > GIVE_UP_SECONDS:
                raise RuntimeError(f"{done} of {len(rating_ids)} decisions after {GIVE_UP_SECONDS:.0f} s")
            time.sleep(POLL_SECONDS)
        seconds = time.perf_counter() - started
    finally:
        for proc in procs:
            processes.stop(proc)
    span = decisions.aggregate(first=Min("decided_at"), last=Max("decided_at"))
    steady = (span["last"] - span["first"]).total_seconds()
    return Drain(
        ratings=len(rating_ids), workers=workers, seconds=seconds, to_first=(first or seconds + started) - started,
        steady_rate=(len(rating_ids) - 1) / steady if steady > 0 else float("nan"),
    )


def bench_decision_rate(*, reviewer, ratings: int) -> list[Figure]:
    """One round with one worker, then one with two, each on its own fresh backlog."""
    recorded: list[float] = []
    drains: list[Drain] = []
    for workers in (1, 2):
        started = time.perf_counter()
        rating_ids = queue_backlog(reviewer=reviewer, count=ratings)
        recorded.append(time.perf_counter() - started)
        print(f"  {ratings:,} ratings queued; draining with {workers} burst worker(s)", flush=True)
        drains.append(drain(rating_ids=rating_ids, workers=workers))
    one, two = drains
    figures = [
        Figure(name="decisions applied/s, 1 RQ worker", value=one.rate, unit="decisions/s", target="none (reported)",
               informational=True),
        Figure(name="decisions applied/s, 2 RQ workers", value=two.rate, unit="decisions/s", floor=one.rate,
               floor_name="1 worker", ratio=two.rate / one.rate, target="none (reported; ratio = 2/1 scaling)",
               informational=True),
    ]
    for figure, d, seconds in zip(figures, drains, recorded, strict=True):
        figure.notes += [
            f"{d.ratings:,} ratings committed one at a time with no worker running ({seconds:.1f} s), each "
            f"leaving its apply_rating job on the Redis queue; then {d.workers} `manage.py rqworker --burst` "
            f"subprocess(es) (core.worker.FactdeskWorker: jobs run in the worker process).",
            f"All {d.ratings:,} decisions visible {d.seconds:.1f} s after the worker start: {d.rate:,.1f} decisions/s "
            f"including {d.to_first:.1f} s of worker start-up before the first decision; "
            f"{d.steady_rate:,.1f} decisions/s between the first and the last decided_at.",
        ]
    figures[0].notes.append(rating_note())
    figures[1].notes.append(
        f"Scaling 2 workers / 1 worker: {two.rate / one.rate:.2f}x over the whole drain, "
        f"{two.steady_rate / one.steady_rate:.2f}x steady (the machine has the CPUs listed above, shared with "
        "PostgreSQL and the bench's poller). The second round's pages carry the strikes of the first."
    )
    return figures
