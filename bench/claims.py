"""Figure 3: claim_next from concurrent reviewers, against a raw SKIP LOCKED claim loop.

Each reviewer is its own OS process with its own database connection (as separate web
workers would be), so the figure is not bounded by one interpreter's GIL. Every claim is a
real transaction. Double claims are counted afterwards from the Claim table itself.
"""

from __future__ import annotations

import multiprocessing as mp
import time
from collections.abc import Callable
from datetime import datetime

import psycopg
from django.db import connection, connections
from django.utils import timezone

from bench.counting import count_queries
from bench.database import conninfo
from bench.report import Figure
from factcheck.models import Claim, ClaimStatus

TARGET_SHARE_OF_FLOOR = 0.30
# fork: children inherit the configured Django; each opens its own connection on first use.
CONTEXT = mp.get_context("fork")


def _claim_with_app(reviewer_id: int, count: int, start, results) -> None:
    from accounts.models import User
    from factcheck.claims import claim_next

    reviewer = User.objects.select_related("membership__organisation").get(pk=reviewer_id)
    start.wait()
    began, got, empty = time.time(), 0, 0
    for _ in range(count):
        if claim_next(reviewer=reviewer) is None:
            empty += 1
        else:
            got += 1
    results.put((began, time.time(), got, empty))
    connection.close()


def _claim_raw(worker: int, count: int, start, results) -> None:
    with psycopg.connect(conninfo()) as conn:
        start.wait()
        began, got, lost = time.time(), 0, 0
        for _ in range(count):
            row = conn.execute(
                "SELECT id FROM bench_claim_floor WHERE queue_state = 'queued' "
                "ORDER BY priority DESC, id LIMIT 1 FOR UPDATE SKIP LOCKED"
            ).fetchone()
            if row is not None:
                updated = conn.execute(
                    "UPDATE bench_claim_floor SET queue_state = 'claimed', claimed_by = %s, claimed_at = now() "
                    "WHERE id = %s AND queue_state = 'queued'",
                    (worker, row[0]),
                ).rowcount
                got += updated
                lost += 1 - updated
            conn.commit()
        results.put((began, time.time(), got, lost))


def run_workers(target: Callable, args: list[tuple], *, timeout: float = 300) -> tuple[float, int, int]:
    """Start one process per args tuple, release them together; returns (seconds, done, misses)."""
    connections.close_all()  # never share a socket with a forked child
    start, results = CONTEXT.Event(), CONTEXT.Queue()
    procs = [CONTEXT.Process(target=target, args=(*a, start, results), daemon=True) for a in args]
    try:
        for p in procs:
            p.start()
        time.sleep(1.0)  # let every child connect and load its reviewer before the start signal
        start.set()
        outcomes = [results.get(timeout=timeout) for _ in procs]
        for p in procs:
            p.join(timeout=10)
    finally:
        for p in procs:
            if p.is_alive():
                p.terminate()
                p.join(timeout=5)
    failed = [p.exitcode for p in procs if p.exitcode not in (0, None)]
    if failed:
        raise RuntimeError(f"claim workers exited with {failed}")
    seconds = max(o[1] for o in outcomes) - min(o[0] for o in outcomes)
    return seconds, sum(o[2] for o in outcomes), sum(o[3] for o in outcomes)


def double_claims(since: datetime) -> tuple[int, int, int]:
    """(claims made, posts claimed more than once, posts with more than one active claim)."""
    made = Claim.objects.filter(claimed_at__gte=since)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM (SELECT post_id FROM factcheck_claim WHERE claimed_at >= %s "
            "GROUP BY post_id HAVING count(*) > 1) twice",
            [since],
        )
        twice = cursor.fetchone()[0]
        cursor.execute(
            "SELECT count(*) FROM (SELECT post_id FROM factcheck_claim WHERE status = %s "
            "GROUP BY post_id HAVING count(*) > 1) held",
            [ClaimStatus.ACTIVE],
        )
        held = cursor.fetchone()[0]
    return made.count(), twice, held


def prepare_floor_table() -> None:
    with psycopg.connect(conninfo()) as conn:
        conn.execute("DROP TABLE IF EXISTS bench_claim_floor")
        conn.execute(
            "CREATE TABLE bench_claim_floor (id bigint PRIMARY KEY, priority double precision NOT NULL, "
            "queue_state varchar(20) NOT NULL, claimed_by int, claimed_at timestamptz)"
        )
        conn.execute(
            "INSERT INTO bench_claim_floor (id, priority, queue_state) "
            "SELECT id, priority, queue_state FROM factcheck_post WHERE queue_state = 'queued'"
        )
        conn.execute(
            "CREATE INDEX bench_claim_floor_order ON bench_claim_floor (priority DESC, id) "
            "WHERE queue_state = 'queued'"
        )
        conn.execute("ANALYZE bench_claim_floor")


def bench_claims(*, reviewers: list, claims: int) -> Figure:
    per_reviewer = claims // len(reviewers)
    since = timezone.now()
    seconds, got, empty = run_workers(_claim_with_app, [(r.pk, per_reviewer) for r in reviewers])
    made, twice, held = double_claims(since)
    from factcheck.claims import claim_next

    # After the check, so this extra claim is not counted in it.
    with count_queries() as counter:
        claim_next(reviewer=reviewers[0])
    prepare_floor_table()
    floor_seconds, floor_got, floor_lost = run_workers(_claim_raw, [(n, per_reviewer) for n in range(len(reviewers))])
    rate, floor = got / seconds, floor_got / floor_seconds
    doubles = twice + held
    figure = Figure(
        name=f"claim_next, {len(reviewers)} reviewers",
        value=rate,
        unit="claims/s",
        floor=floor,
        floor_name="raw SKIP LOCKED",
        target=f">= {TARGET_SHARE_OF_FLOOR:.0%} of raw SKIP LOCKED and 0 double claims",
        ratio=rate / floor,
        passed=rate / floor >= TARGET_SHARE_OF_FLOOR and doubles == 0 and made == got,
    )
    figure.notes += [
        f"{len(reviewers)} processes x {per_reviewer:,} claim_next calls, each its own transaction: "
        f"{got:,} claims in {seconds:.2f} s ({empty} calls found nothing to claim).",
        f"Double claims from the Claim table: {twice} posts claimed more than once during the run, "
        f"{held} posts with more than one active claim; {made:,} Claim rows written for {got:,} claims returned.",
        f"claim_next runs {counter.n} SQL statement(s) per claim plus BEGIN and COMMIT (the floor runs 2): "
        "one statement that picks the post (FOR NO KEY UPDATE SKIP LOCKED), marks it claimed, and inserts the "
        "claim and its audit row (factcheck.claims._claim_statement).",
        f"Floor: {len(reviewers)} psycopg processes, each `SELECT id ... ORDER BY priority DESC, id LIMIT 1 "
        f"FOR UPDATE SKIP LOCKED` + `UPDATE` + COMMIT on bench_claim_floor (the queued posts' ids and "
        f"priorities, same partial index shape): {floor_got:,} claims in {floor_seconds:.2f} s, "
        f"{floor_lost} lost updates.",
    ]
    return figure
