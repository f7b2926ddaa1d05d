"""The reports queue at scale (`--only reports`): `/staff/reports/` with 100,000 open reports of harm.

The reports are written straight into the tables by SQL (posts reported for harm only, on their own pages,
one to three reports each, of the four categories and every source, arrived over the last 48 hours, so that
about half are overdue), with each post's queue row counted from its reports as moderation.report_queue
counts it, because the figure is the page, not ingest. Then the page, as a trust-and-safety member, over HTTP
against one sync gunicorn worker, p95 against the signed-in floor of the same run (one indexed query for 25
posts in a minimal template: bench.urls), taking turns request by request; the target is 3x the floor.
"""

from __future__ import annotations

import time
from datetime import timedelta

from django.db import connection
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from bench import processes
from bench.counting import count_queries
from bench.queue_page import http_getter, time_alternately, wait_for_http
from bench.report import Figure, percentile, summary_ms

TARGET_RATIO = 3.0
HOURS = 48
CATEGORIES = ("violence", "hate", "harassment", "imminent_harm")
SOURCES = ("user_report", "user_report", "user_report", "classifier", "partner", "trusted_flagger")


def load_reports(*, reports: int, pages: int) -> dict[str, int]:
    """About `reports` open reports of harm on posts reported for nothing else, and their queue rows, by SQL."""
    now = timezone.now()
    posts = max(reports // 2, 1)  # 1, 2 or 3 reports a post: 2 on average
    with connection.cursor() as cursor:
        cursor.execute("SELECT setseed(0.17)")
        cursor.execute(
            """INSERT INTO factcheck_page (external_id, name, is_politician, created_at)
               SELECT 'reports-page-' || n, 'Reported page ' || n, false, %s FROM generate_series(1, %s) n""",
            [now - timedelta(days=30), pages],
        )
        cursor.execute("SELECT min(id) FROM factcheck_page WHERE external_id LIKE 'reports-page-%%'")
        first_page = cursor.fetchone()[0]
        cursor.execute(
            """INSERT INTO factcheck_post (external_id, page_id, url, text, language, country, media_type, topic,
                   posted_at, views, shares, normalised_url, url_key, normalised_text, text_key, signature,
                   queue_state, flag_count, flag_weight, first_flagged_at, priority, velocity_score, flag_score,
                   age_score, created_at, updated_at)
               SELECT 'reported-' || n, %(first_page)s + n %% %(pages)s, '',
                   'A post reported for harm, number ' || n || ', with words enough to fill a row of the list.',
                   'en', 'GB', 'text', '', %(now)s - interval '3 days',
                   floor(exp(random() * 14))::bigint, floor(exp(random() * 9))::bigint, '', '', '', '', '',
                   'unflagged', 0, 0, NULL, 0, 0, 0, 0, %(now)s, %(now)s
               FROM generate_series(1, %(posts)s) n""",
            {"first_page": first_page, "pages": pages, "now": now, "posts": posts},
        )
        cursor.execute(
            """INSERT INTO factcheck_flag (post_id, source, category, reason, flagged_at, received_at,
                   idempotency_key, status, outcome)
               SELECT r.post_id, (%(sources)s::text[])[1 + floor(random() * %(n_sources)s)::int],
                   (%(categories)s::text[])[1 + floor(random() * 4)::int], 'Reported by the bench',
                   r.received - interval '5 minutes', r.received, 'reports-' || r.post_id || '-' || r.k, 'open', ''
               FROM (SELECT p.id AS post_id, k, %(now)s - random() * interval '%(hours)s hours' AS received
                     FROM factcheck_post p CROSS JOIN LATERAL generate_series(1, 1 + (p.id %% 3)::int) k
                     WHERE p.external_id LIKE 'reported-%%') r""",
            {"sources": list(SOURCES), "n_sources": len(SOURCES), "categories": list(CATEGORIES), "now": now,
             "hours": HOURS},
        )
        # Each post's queue row, counted as moderation.report_queue.refresh_rows counts it.
        cursor.execute(
            """INSERT INTO moderation_reportedpost (post_id, open_reports, opened_at, trusted, severity, velocity)
               SELECT f.post_id, count(*), min(f.received_at), bool_or(f.source = 'trusted_flagger'),
                   max(CASE WHEN f.category IN ('imminent_harm', 'violence') THEN 2 ELSE 1 END),
                   round(((p.views + p.shares) / 72.0)::numeric, 2)
               FROM factcheck_flag f JOIN factcheck_post p ON p.id = f.post_id
               WHERE p.external_id LIKE 'reported-%%' GROUP BY f.post_id, p.views, p.shares""",
        )
        counts = {}
        for name, sql in (("posts", "SELECT count(*) FROM moderation_reportedpost WHERE open_reports > 0"),
                          ("reports", "SELECT count(*) FROM factcheck_flag WHERE status = 'open' "
                                      "AND category <> 'misinformation'"),
                          ("overdue", "SELECT count(*) FROM moderation_reportedpost WHERE open_reports > 0 "
                                      "AND opened_at < now() - interval '24 hours'")):
            cursor.execute(sql)
            counts[name] = cursor.fetchone()[0]
        cursor.execute("ANALYZE factcheck_page, factcheck_post, factcheck_flag, moderation_reportedpost")
    return counts


def bench_reports_page(*, staff, reports: int, pages: int, warmup: int, requests: int) -> Figure:
    print(f"reports 1/2: {reports:,} open reports of harm, by SQL", flush=True)
    started = time.perf_counter()
    counts = load_reports(reports=reports, pages=pages)
    loaded = time.perf_counter() - started
    client = Client()
    client.force_login(staff)
    url, floor_url = reverse("moderation:staff_reports"), reverse("bench-queue-floor")
    probe = client.get(url)
    if probe.status_code != 200:
        raise RuntimeError(f"GET {url} answered {probe.status_code}")
    with count_queries() as counter:
        client.get(url)

    print("reports 2/2: the page over HTTP against gunicorn, taking turns with the signed-in floor", flush=True)
    port = processes.free_port()
    server = processes.start_gunicorn(port)
    try:
        get = http_getter(port, f"sessionid={client.cookies['sessionid'].value}")
        wait_for_http(get, floor_url)
        floor, samples, floor_status, status = time_alternately(get, floor_url, url, warmup=warmup,
                                                                requests=requests)
    finally:
        processes.stop(server)
    if floor_status != 200 or status != 200:
        raise RuntimeError(f"{floor_url} answered {floor_status}, {url} answered {status}")
    value, floor95 = percentile(samples, 95), percentile(floor, 95)
    return Figure(
        name=f"reports queue page p95, {counts['reports']:,} open reports", value=value, unit="ms", floor=floor95,
        floor_name="signed-in view, 1 indexed query, 25 posts", ratio=value / floor95,
        target=f"<= {TARGET_RATIO:g}x floor", passed=value / floor95 <= TARGET_RATIO,
        notes=[
            f"{counts['reports']:,} open reports of harm on {counts['posts']:,} posts ({counts['overdue']:,} of them "
            f"overdue), reported over the last {HOURS} hours, on {pages:,} pages (written by SQL in {loaded:.0f} s).",
            f"GET {url} as a trust-and-safety member (HTTP, one sync gunicorn worker, a new connection a request, "
            f"taking turns with the floor): {summary_ms(samples)}; {counter.n} SQL statements; "
            f"{len(probe.content):,} bytes of HTML for 25 posts; floor {floor_url}: {summary_ms(floor)}.",
            "The page reads one range of the partial index report_queue_order (trusted, severity, velocity, post) "
            "for its 26 rows, with the counts of the waiting posts and the overdue ones (up to 1,001 each, each a "
            "range of a partial index) riding along, then their open reports by the partial index "
            "flag_open_harm_report (moderation.report_queue); its rows are the template's loop over plain values "
            "(moderation.views_reports._queue_rows).",
        ],
    )
