"""Figure 4: rating-to-decision latency with real RQ workers (`manage.py rqworker`).

A reviewer claims a post (not timed), records a rating in a transaction, and the clock starts
when that transaction commits; it stops when the RatingDecision row is visible to a poller.
Ratings go one at a time, so the figure is the hand-off's latency, not a backlog.
"""

from __future__ import annotations

import random
import time

import django_rq
from django.db import transaction
from rq import Worker
from tqdm import tqdm

from bench import processes
from bench.counting import count_queries
from bench.report import Figure, percentile, summary_ms
from factcheck.claims import claim_next
from factcheck.models import Verdict
from factcheck.ratings import record_rating
from moderation.models import RatingDecision

TARGET_P95_MS = 1000.0
POLL_SECONDS = 0.002
GIVE_UP_SECONDS = 30.0
VERDICT_ODDS = {
    Verdict.FALSE: 30, Verdict.PARTLY_FALSE: 20, Verdict.MISSING_CONTEXT: 15, Verdict.ALTERED: 10,
    Verdict.SATIRE: 5, Verdict.TRUE: 15, Verdict.NOT_ELIGIBLE: 5,
}


def wait_for_workers(count: int, *, timeout: float = 60) -> None:
    queue = django_rq.get_queue("default")
    deadline = time.monotonic() + timeout
    while len(Worker.all(connection=queue.connection)) < count:
        if time.monotonic() > deadline:
            raise RuntimeError(f"RQ workers did not start within {timeout:.0f} s; logs in {processes.LOG_DIR}")
        time.sleep(0.1)


def rate_once(*, reviewer, rng: random.Random) -> tuple[float, int] | None:
    """Claim, rate, and wait for the decision; returns (ms from commit to decision, statements)."""
    claim = claim_next(reviewer=reviewer)
    if claim is None:
        return None
    committed: list[float] = []
    verdict = rng.choices(list(VERDICT_ODDS), weights=list(VERDICT_ODDS.values()))[0]
    with count_queries() as counter:
        with transaction.atomic():
            # Registered first, so it runs first after COMMIT: before the job is even enqueued.
            transaction.on_commit(lambda: committed.append(time.perf_counter()))
            rating = record_rating(
                reviewer=reviewer, post_id=claim.post_id, verdict=verdict,
                rationale="Checked against the original source; the claim does not hold.",
                sources=["https://factcheck.example/source"], article_url="https://factcheck.example/article",
            )
    statements = counter.n
    deadline = committed[0] + GIVE_UP_SECONDS
    while not RatingDecision.objects.filter(rating_id=rating.pk).exists():
        if time.perf_counter() > deadline:
            raise RuntimeError(f"no decision for rating {rating.pk} after {GIVE_UP_SECONDS:.0f} s")
        time.sleep(POLL_SECONDS)
    return (time.perf_counter() - committed[0]) * 1000, statements


def bench_decisions(*, reviewer, ratings: int, warmup: int, workers: int) -> Figure:
    figure = Figure(name="rating-to-decision p95", value=None, unit="ms",
                    target=f"<= {TARGET_P95_MS:,.0f} ms")
    django_rq.get_queue("default").connection.flushdb()
    procs = [processes.start_rqworker(n) for n in range(workers)]
    try:
        wait_for_workers(workers)
        rng = random.Random(11)
        for _ in range(warmup):
            rate_once(reviewer=reviewer, rng=rng)
        samples, statements = [], []
        for _ in tqdm(range(ratings), desc="ratings", unit="rating", leave=False):
            outcome = rate_once(reviewer=reviewer, rng=rng)
            if outcome is None:
                break
            samples.append(outcome[0])
            statements.append(outcome[1])
    finally:
        for proc in procs:
            processes.stop(proc)
    if not samples:
        figure.notes.append("not available: no post left to claim and rate.")
        return figure
    figure.value = percentile(samples, 95)
    figure.passed = figure.value <= TARGET_P95_MS
    figure.notes += [
        f"{workers} `manage.py rqworker default` subprocess(es) (RQ's default forking Worker) on the bench Redis db; "
        f"{warmup} warm-up ratings, then {len(samples)} ratings one at a time: {summary_ms(samples)}.",
        f"Clock: from the rating's COMMIT (first on_commit callback) until a poller every "
        f"{POLL_SECONDS * 1000:.0f} ms sees the RatingDecision row; verdicts mixed "
        + ", ".join(f"{v.value} {w}%" for v, w in VERDICT_ODDS.items()) + ".",
        f"record_rating: {sum(statements) / len(statements):.1f} SQL statements per rating (BEGIN/COMMIT not counted).",
        "No floor in the issue for this figure; the floor column is empty.",
    ]
    return figure
