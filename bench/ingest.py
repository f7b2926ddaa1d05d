"""Figure 1: bulk ingest through factcheck.ingest.ingest_flags, against a raw COPY of the same rows."""

from __future__ import annotations

import time

import psycopg
from tqdm import tqdm

from bench.counting import count_queries
from bench.database import conninfo
from bench.report import Figure
from factcheck.ingest import FlagInput, ingest_flags
from factcheck.models import Post

TARGET_SHARE_OF_COPY = 0.30


def run_ingest(*, flags: list[FlagInput], batch_size: int, submitted_by) -> tuple[float, int, int]:
    """Ingest in batches as the API would; returns (seconds, posts, SQL statements)."""
    started = time.perf_counter()
    with count_queries() as counter:
        for start in tqdm(range(0, len(flags), batch_size), desc="ingest_flags", unit="batch", leave=False):
            ingest_flags(flags=flags[start : start + batch_size], submitted_by=submitted_by)
    seconds = time.perf_counter() - started
    return seconds, Post.objects.count(), counter.n


def run_copy_floor() -> tuple[float, int]:
    """COPY the rows ingest wrote into a scratch table of the same shape (columns, indexes)."""
    with psycopg.connect(conninfo()) as conn:
        conn.execute(
            "CREATE TABLE bench_post_copy (LIKE factcheck_post INCLUDING DEFAULTS INCLUDING CONSTRAINTS "
            "INCLUDING INDEXES)"
        )
        conn.commit()
        columns = [
            r[0]
            for r in conn.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = 'factcheck_post' "
                "ORDER BY ordinal_position"
            )
        ]
        column_list = ", ".join(columns)
        rows = conn.execute(f"SELECT {column_list} FROM factcheck_post ORDER BY id").fetchall()
        # Only the write is timed; the floor gets its rows ready-made, as ingest gets its inputs.
        started = time.perf_counter()
        with conn.cursor() as cursor:
            with cursor.copy(f"COPY bench_post_copy ({column_list}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
        conn.commit()
        seconds = time.perf_counter() - started
    return seconds, len(rows)


def bench_ingest(*, flags: list[FlagInput], batch_size: int, submitted_by) -> Figure:
    seconds, posts, statements = run_ingest(flags=flags, batch_size=batch_size, submitted_by=submitted_by)
    copy_seconds, copied = run_copy_floor()
    rate, floor = posts / seconds, copied / copy_seconds
    batches = -(-len(flags) // batch_size)
    figure = Figure(
        name="bulk ingest",
        value=rate,
        unit="posts/s",
        floor=floor,
        floor_name="raw COPY",
        target=f">= {TARGET_SHARE_OF_COPY:.0%} of raw COPY",
        ratio=rate / floor,
        passed=rate / floor >= TARGET_SHARE_OF_COPY,
    )
    figure.notes += [
        f"ingest_flags: {len(flags):,} flags (one per post) in {batches:,} batches of {batch_size:,}, "
        f"{posts:,} posts in {seconds:.1f} s; {statements / batches:.1f} SQL statements per batch "
        "(BEGIN and COMMIT not counted).",
        f"Each batch also writes its pages, {batch_size:,} flags and two audit events per new post "
        "(flag received, post queued), so ingest writes about 3x the rows the floor does.",
        f"raw COPY: {copied:,} rows of factcheck_post (same columns and indexes, no foreign keys) "
        f"into bench_post_copy with psycopg3 cursor.copy() in one transaction, {copy_seconds:.2f} s.",
    ]
    return figure
