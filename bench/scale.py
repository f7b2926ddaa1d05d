"""The growth curve (`--only scale`): the core operations' cost as one database grows to 100,000, 1,000,000 and
5,000,000 posts (issue 32), against the target that each costs at most 1.5x at the largest size what it cost at
the smallest.

At each size, in ascending order, bench/scale_load.py grows the database by SQL (the difference only), then
each operation runs in this process (Django, no HTTP server), in this order, its warm-up first, and its p50 and
p95 are kept:

- a decision: `record_rating` on a queued post (claiming it), then `apply_rating`, as the decision job runs it;
- the queue page: `queue_page` for the English organisation, the view's columns, its first 26 rows;
- an owner's timeline: `post_timeline(post, for_owner=True)`, what the portal's post page shows, for a rated
  post with an appeal;
- the feed page: GET /api/v1/decisions?after=<near the end>&limit=100 with a platform token (django.test.Client);
- match candidates: what a match job does to find and judge one new post's candidates (bench.matching);
- a day's roll-up: `roll_up_day(day=today)`, as the periodic job runs it every five minutes;
- ingest, last (its posts would swell the queue the others read; they count toward the next size):
  `ingest_flags` of a batch of 1,000 flags on new posts (on the scale pages), as the API calls it.

Then the database's size, its biggest relations, the size per million posts, and a projection to 100,000,000
posts: disk, memory for the indexes, and the processes the program's rates need at the measured costs.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING

from django.db import connection
from django.utils import timezone

from bench.report import Figure, percentile, summary_ms

if TYPE_CHECKING:  # the module is imported for its arguments before Django is set up: models come later
    from bench.scale_load import Growth, ScaleUsers

TARGET_RATIO = 1.5
INGEST_BATCH = 1_000
PROJECTED_POSTS = 100_000_000
# The program's need, as deploy/README.md states it: flags at peak, ratings at most, reviewers.
PEAK_FLAGS_PER_S = 1_200
RATINGS_PER_S = 60
REVIEWERS = 10_000
QUEUE_PAGES_PER_REVIEWER_MINUTE = 1  # an assumption: each reviewer loads the queue once a minute
ROLLUP_PERIOD_S = 300
MB = 1024 * 1024

OPERATIONS = {
    "ingest": "ingest of one batch of 1,000 flags",
    "decision": "a decision (record_rating, then apply_rating)",
    "queue": "the queue page (queue_page, 26 rows)",
    "timeline": "an owner's timeline (post_timeline)",
    "feed": "the feed page (GET /api/v1/decisions, 100 changes)",
    "candidates": "match candidates of one new post",
    "rollup": "a day's roll-up (roll_up_day, today)",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--scale", default="100000,1000000,5000000",
                        help="posts the growth curve grows the database to, in turn (comma-separated; --only scale)")
    parser.add_argument("--scale-repeats", type=int, default=50,
                        help="measured repetitions of each operation at each size, but ingest and the roll-up")
    parser.add_argument("--scale-ingest-batches", type=int, default=20,
                        help="measured ingest batches of 1,000 flags at each size (they add posts)")
    parser.add_argument("--scale-rollups", type=int, default=10, help="measured roll-ups of today at each size")
    parser.add_argument("--scale-days", type=int, default=90, help="days the growth curve's history spans")


@dataclass
class SizeResult:
    growth: Growth
    samples: dict[str, list[float]]
    database_bytes: int
    relations: dict[str, tuple[int, int]]  # name -> (table bytes with TOAST, index bytes), partitions summed

    @property
    def posts(self) -> int:
        return self.growth.after

    @property
    def index_bytes(self) -> int:
        return sum(indexes for _, indexes in self.relations.values())


def timed(operation: Callable[[int], object], *, repeats: int, warmup: int) -> list[float]:
    """Milliseconds of `operation(i)` for each of `repeats` calls after `warmup` unmeasured ones."""
    samples = []
    for i in range(warmup + repeats):
        started = time.perf_counter()
        operation(i)
        if i >= warmup:
            samples.append((time.perf_counter() - started) * 1000)
    return samples


def database_size() -> tuple[int, dict[str, tuple[int, int]]]:
    """pg_database_size, and each table's (heap with TOAST, indexes), a partitioned table's partitions summed."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_database_size(current_database())")
        total = cursor.fetchone()[0]
        cursor.execute(
            """SELECT c.relname, sum(pg_table_size(leaf.oid)), sum(pg_indexes_size(leaf.oid))
               FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'public'
               CROSS JOIN LATERAL (SELECT c.oid WHERE c.relkind = 'r'
                                   UNION ALL SELECT relid FROM pg_partition_tree(c.oid)
                                   WHERE isleaf AND c.relkind = 'p') leaf(oid)
               WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition GROUP BY c.relname""")
        return total, {name: (int(heap), int(indexes)) for name, heap, indexes in cursor.fetchall()}


def _random_ids(sql: str, params: list, *, count: int, rng: random.Random) -> list[int]:
    """Up to `count` distinct ids, each the first row of `sql` (which takes the start id last) from a random
    start id: an index probe each, where ORDER BY random() would read every post."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT min(id), max(id) FROM factcheck_post")
        low, high = cursor.fetchone()
        found: dict[int, None] = {}
        for _ in range(count * 4):
            cursor.execute(sql, [*params, rng.randint(low, high)])
            row = cursor.fetchone()
            if row:
                found[row[0]] = None
            if len(found) == count:
                break
    return list(found)


def _ingest_batches(*, size: int, batches: int, rng: random.Random) -> list[list]:
    from bench.data import COUNTRIES, SOURCE_ODDS, SOURCES, post_text
    from bench.scale_load import LANGUAGES, POSTS_PER_PAGE, PREFIX
    from factcheck.ingest import FlagInput, PageInput, PostInput

    pages = max(1, size // POSTS_PER_PAGE)
    now = timezone.now()
    made = []
    for batch in range(batches):
        flags = []
        for n in range(INGEST_BATCH):
            label = f"{PREFIX}ingest-{size}-{batch}-{n}"
            page = rng.randint(1, pages)
            language = rng.choice(LANGUAGES)
            posted_at = now - timedelta(minutes=rng.randint(5, 72 * 60))
            post = PostInput(external_id=label, page=PageInput(external_id=f"{PREFIX}page-{page:08d}",
                                                               name=f"Scale page {page}"),
                             posted_at=posted_at, url=f"https://social.example/p/{label}", text=post_text(rng),
                             language=language, country=COUNTRIES[language],
                             views=int(rng.lognormvariate(7, 2)), shares=int(rng.lognormvariate(4, 2)))
            flags.append(FlagInput(idempotency_key=label, source=rng.choices(SOURCES, weights=SOURCE_ODDS)[0],
                                   post=post, flagged_at=posted_at + timedelta(minutes=1),
                                   reason="Reported as false information"))
        made.append(flags)
    return made


def _candidate_rows(*, count: int, rng: random.Random) -> list:
    """New posts to find candidates for, none stored: half light edits of stored posts, half new texts. An edit
    keeps its post's band keys (the SQL's keys are random, so the edit's own MinHash would not find the post it
    copies; a real light edit shares most of them), its text is the judge's to compare."""
    from bench.data import post_text
    from bench.scale_load import PREFIX
    from factcheck.matching.candidates import Row
    from factcheck.models import QueueState
    from factcheck.normalise import digest, normalise_text, normalised_fields

    ids = _random_ids("SELECT id FROM factcheck_post WHERE external_id LIKE %s AND id >= %s ORDER BY id LIMIT 1",
                      [f"{PREFIX}0%"], count=count, rng=rng)
    with connection.cursor() as cursor:
        cursor.execute("SELECT text, signature FROM factcheck_post WHERE id = ANY(%s)", [ids])
        stored = cursor.fetchall()
        cursor.execute("SELECT max(id) FROM factcheck_post")
        last = cursor.fetchone()[0]
    rows = []
    for n, (text, signature) in enumerate(stored):
        pk = last + 1 + 2 * n
        edit = f"BREAKING: {text} #share"
        normalised = normalise_text(edit)
        rows.append(Row(id=pk, text=edit, normalised_text=normalised, url_key="", text_key=digest(normalised),
                        signature=signature, duplicate_of_id=None, queue_state=QueueState.QUEUED, page_id=0))
        fresh = post_text(rng)
        _, url_key, normalised, text_key, signature = normalised_fields(url="", text=fresh)
        rows.append(Row(id=pk + 1, text=fresh, normalised_text=normalised, url_key=url_key, text_key=text_key,
                        signature=signature, duplicate_of_id=None, queue_state=QueueState.QUEUED, page_id=0))
    return rows


def measure_size(*, size: int, users: ScaleUsers, args: argparse.Namespace, feed_client) -> dict[str, list[float]]:
    """Each operation at the database's present size, in the module's order."""
    from accounts.models import User
    from bench.matching import find_and_judge
    from bench.scale_load import LANGUAGES
    from factcheck.ingest import ingest_flags
    from factcheck.models import Organisation, Post
    from factcheck.queue import queue_page
    from factcheck.ratings import record_rating
    from factcheck.views import QUEUE_COLUMNS
    from moderation.enforcement import apply_rating
    from moderation.timeline import post_timeline
    from reports.rollup import roll_up_day

    rng = random.Random(size)
    repeats, warmup = args.scale_repeats, max(2, args.scale_repeats // 10)
    samples: dict[str, list[float]] = {}

    print(f"scale {size:,}: decisions, the queue page, timelines, the feed, candidates", flush=True)
    language = LANGUAGES[0]
    reviewers = list(User.objects.filter(pk__in=users.reviewer_ids[:8]).select_related("membership__organisation"))
    queued = _random_ids("SELECT id FROM factcheck_post WHERE queue_state = 'queued' AND language = %s AND id >= %s "
                         "ORDER BY id LIMIT 1", [language], count=warmup + repeats, rng=rng)

    def decide(i: int) -> None:
        rating = record_rating(reviewer=reviewers[i % len(reviewers)], post_id=queued[i], verdict="false",
                               rationale="No such law exists; the ministry denies it.",
                               sources=["https://gov.example/denial"], claim_if_unclaimed=True)
        apply_rating(rating_id=rating.pk)

    samples["decision"] = timed(decide, repeats=min(repeats, len(queued) - warmup), warmup=warmup)

    organisation = Organisation.objects.get(pk=users.organisation_ids[0])
    samples["queue"] = timed(lambda i: queue_page(organisation=organisation, columns=QUEUE_COLUMNS, start=0, stop=26),
                             repeats=repeats, warmup=warmup)

    with connection.cursor() as cursor:
        cursor.execute("SELECT post_id FROM moderation_appeal ORDER BY random() LIMIT %s", [warmup + repeats])
        appealed = [row[0] for row in cursor.fetchall()]
    # A database too small to have an appeal (a few thousand posts) times rated posts without one.
    posts = list(Post.objects.filter(pk__in=appealed).select_related("page")) or list(
        Post.objects.filter(queue_state="rated").select_related("page")[: warmup + repeats])
    samples["timeline"] = timed(lambda i: post_timeline(posts[i % len(posts)], for_owner=True),
                                repeats=repeats, warmup=warmup)

    with connection.cursor() as cursor:
        cursor.execute("SELECT max(id) FROM moderation_distributionchange")
        last_change = cursor.fetchone()[0]

    def poll(i: int) -> None:
        response = feed_client.get(f"/api/v1/decisions?after={max(0, last_change - 100 - i)}&limit=100")
        if response.status_code != 200:
            raise RuntimeError(f"/api/v1/decisions answered {response.status_code}")

    samples["feed"] = timed(poll, repeats=repeats, warmup=warmup)

    rows = _candidate_rows(count=(warmup + repeats) // 2 + 1, rng=rng)
    samples["candidates"] = timed(lambda i: find_and_judge(rows[i % len(rows)]), repeats=repeats, warmup=warmup)

    print(f"scale {size:,}: roll-up of today, {args.scale_rollups} times", flush=True)
    today = timezone.now().date()
    samples["rollup"] = timed(lambda i: roll_up_day(day=today), repeats=args.scale_rollups, warmup=1)

    # Last: its posts (first flagged over the last three days) would swell the queue the other operations read.
    # They stay, and count toward the next size.
    print(f"scale {size:,}: ingest, {args.scale_ingest_batches} batches of {INGEST_BATCH:,}", flush=True)
    batches = _ingest_batches(size=size, batches=args.scale_ingest_batches + 2, rng=rng)
    samples["ingest"] = timed(lambda i: ingest_flags(flags=batches[i], submitted_by=users.platform),
                              repeats=args.scale_ingest_batches, warmup=2)
    return {key: samples[key] for key in OPERATIONS}


def run_scale_figures(run, args: argparse.Namespace, *, platform, owner) -> None:
    import django_rq
    from django.conf import settings
    from django.test import Client

    from accounts.models import ApiToken
    from bench.scale_load import grow, scale_users

    sizes = sorted({int(s.replace("_", "")) for s in args.scale.split(",") if s.strip()})
    users = scale_users(platform=platform, owner=owner)
    _, raw = ApiToken.issue(user=platform, name="bench-scale")
    feed_client = Client(headers={"Authorization": f"Bearer {raw}"})
    results: list[SizeResult] = []
    for size in sizes:
        print(f"scale {size:,}: growing the database by SQL", flush=True)
        growth = grow(posts=size, days=args.scale_days, users=users)
        print(f"scale {size:,}: {growth.added:,} posts added in {growth.seconds:,.0f} s", flush=True)
        total, relations = database_size()  # before the measured operations add their rows
        samples = measure_size(size=size, users=users, args=args, feed_client=feed_client)
        results.append(SizeResult(growth=growth, samples=samples, database_bytes=total, relations=relations))
        # The match and decision jobs the operations enqueued are not run (the operations ran in-process).
        django_rq.get_queue("default").connection.flushdb()
    run.figures += _figures(results)
    run.sections += [
        ("Growth curve", _curve_table(results)),
        ("Database size", _size_section(results)),
        ("Projection to 100,000,000 posts", _projection(results)),
        ("Growth SQL", _load_section(results)),
    ]
    run.details.append(
        f"Growth curve (bench/scale.py, bench/scale_load.py; `--only scale`): one database grown by SQL to each of "
        f"{', '.join(f'{s:,}' for s in sizes)} posts over {args.scale_days} days (what that history holds and "
        "leaves out: bench/scale_load.py's docstring), then each operation in-process: "
        f"{args.scale_repeats} measured repetitions ({args.scale_ingest_batches} ingest batches, "
        f"{args.scale_rollups} roll-ups) after a warm-up. FACTDESK_MATCHING={settings.FACTDESK_MATCHING}: ingest "
        "matches each batch to rated claims in its transaction; the match jobs it enqueues and the decision jobs "
        "record_rating enqueues are not run (Redis is flushed after each size).")


def _figures(results: list[SizeResult]) -> list[Figure]:
    small, large = results[0], results[-1]
    figures = []
    for key, name in OPERATIONS.items():
        low, high = percentile(small.samples[key], 95), percentile(large.samples[key], 95)
        figure = Figure(name=f"{name} p95, {large.posts:,} posts", value=high, unit="ms", floor=low,
                        floor_name=f"the same at {small.posts:,} posts", ratio=high / low if low else None,
                        target=f"<= {TARGET_RATIO:g}x its cost at {small.posts:,} posts")
        # One size has no curve: nothing to pass or fail.
        figure.passed = (figure.ratio is not None and figure.ratio <= TARGET_RATIO) if len(results) > 1 else None
        figure.notes += [f"At {r.posts:,} posts: {summary_ms(r.samples[key])}." for r in results]
        figures.append(figure)
    if len(results) > 1:  # what each million more posts adds: the empty schema's megabytes left out
        per_million = (large.database_bytes - small.database_bytes) / (large.posts - small.posts) * 1e6 / MB
        name = f"database growth per million posts, {small.posts:,} to {large.posts:,}"
    else:
        per_million = large.database_bytes / large.posts * 1e6 / MB
        name = f"database size per million posts, at {large.posts:,}"
    figures.append(Figure(name=name, value=per_million, unit="MB", informational=True,
                          notes=["The section Database size has every size and the biggest relations."]))
    added = sum(r.growth.added for r in results)
    seconds = sum(r.growth.seconds for r in results)
    figures.append(Figure(name="growth SQL per 100,000 posts", value=seconds / added * 100_000 if added else None,
                          unit="s", informational=True,
                          notes=[f"{added:,} posts written in {seconds:,.0f} s in all, VACUUM ANALYZE included; "
                                 "the section Growth SQL has each stage."]))
    return figures


def _curve_table(results: list[SizeResult]) -> str:
    head = " | ".join(f"{r.posts:,} posts: p50 / p95 ms" for r in results)
    lines = [f"Each operation's p50 and p95 at each size, and its p95 at the largest size over its p95 at the "
             f"smallest (target <= {TARGET_RATIO:g}).", "",
             f"| operation | {head} | ratio | result |", "| --- | " + "--- | " * len(results) + "--- | --- |"]
    for key, name in OPERATIONS.items():
        low, high = percentile(results[0].samples[key], 95), percentile(results[-1].samples[key], 95)
        ratio = high / low if low else float("nan")
        cells = " | ".join(f"{percentile(r.samples[key], 50):,.1f} / {percentile(r.samples[key], 95):,.1f}"
                           for r in results)
        result = "-" if len(results) < 2 else "PASS" if ratio <= TARGET_RATIO else "FAIL"
        lines.append(f"| {name} | {cells} | {ratio:.2f} | {result} |")
    return "\n".join(lines)


def _size_section(results: list[SizeResult]) -> str:
    lines = ["`pg_database_size` after each growth (VACUUM ANALYZE done, before the measured operations), and "
             "per million posts: the whole, and the increase since the size before it.", "",
             "| posts | database | per million posts | added per million since the size before | tables | indexes |",
             "| --- | --- | --- | --- | --- | --- |"]
    previous = None
    for r in results:
        tables = sum(heap for heap, _ in r.relations.values())
        marginal = "-" if previous is None else (
            f"{(r.database_bytes - previous.database_bytes) / (r.posts - previous.posts) * 1e6 / MB:,.0f} MB")
        lines.append(f"| {r.posts:,} | {r.database_bytes / MB:,.0f} MB | "
                     f"{r.database_bytes / r.posts * 1e6 / MB:,.0f} MB | {marginal} | {tables / MB:,.0f} MB | "
                     f"{r.index_bytes / MB:,.0f} MB |")
        previous = r
    largest = results[-1].relations
    biggest = sorted(largest, key=lambda name: -sum(largest[name]))[:15]
    head = " | ".join(f"{r.posts:,}: table + indexes" for r in results)
    lines += ["", f"The biggest relations at {results[-1].posts:,} posts (a partitioned table's partitions summed), "
              "MB:", "", f"| relation | {head} |", "| --- | " + "--- | " * len(results)]
    for name in biggest:
        sizes = [r.relations.get(name, (0, 0)) for r in results]
        cells = " | ".join(f"{heap / MB:,.0f} + {indexes / MB:,.0f}" for heap, indexes in sizes)
        lines.append(f"| {name} | {cells} |")
    return "\n".join(lines)


def _slope(results: list[SizeResult], value: Callable[[SizeResult], float]) -> float:
    """Increase of `value` per post between the two largest sizes (0 with one size, never negative)."""
    if len(results) < 2:
        return 0.0
    a, b = results[-2], results[-1]
    return max(0.0, (value(b) - value(a)) / (b.posts - a.posts))


def _projected_ms(results: list[SizeResult], key: str) -> tuple[float, bool]:
    """The p95 at 100,000,000 posts, and whether it grows. Growth is read from the p50 (a p95 of 50 samples on a
    shared machine jumps by half from run to run): an operation whose p50 stayed within the target keeps the
    largest size's p95; one past it adds its p50's growth per post between the two largest sizes, carried on in
    a straight line."""
    def p50(r: SizeResult) -> float:
        return percentile(r.samples[key], 50)

    large = percentile(results[-1].samples[key], 95)
    if len(results) < 2 or not p50(results[0]) or p50(results[-1]) / p50(results[0]) <= TARGET_RATIO:
        return large, False
    return large + _slope(results, p50) * (PROJECTED_POSTS - results[-1].posts), True


def _projection(results: list[SizeResult]) -> str:
    large = results[-1]
    more = PROJECTED_POSTS - large.posts
    disk = large.database_bytes + _slope(results, lambda r: r.database_bytes) * more
    indexes = large.index_bytes + _slope(results, lambda r: r.index_bytes) * more
    tables = sum(h for h, _ in large.relations.values())
    tables += _slope(results, lambda r: sum(h for h, _ in r.relations.values())) * more
    projected = {key: _projected_ms(results, key) for key in OPERATIONS}
    cost = {key: ms / 1000 for key, (ms, _) in projected.items()}
    growing = [OPERATIONS[key] for key, (_, grows) in projected.items() if grows]
    queue_rate = REVIEWERS * QUEUE_PAGES_PER_REVIEWER_MINUTE / 60
    # (what, its rate, the rate's number per second, the cost of one in seconds)
    busy = [
        ("ingest (web processes)", f"{PEAK_FLAGS_PER_S:,} flags/s at peak", PEAK_FLAGS_PER_S / INGEST_BATCH,
         cost["ingest"]),
        ("decisions (urgent workers; record_rating runs in the web process)", f"{RATINGS_PER_S} ratings/s",
         RATINGS_PER_S, cost["decision"]),
        ("finding match candidates (workers, the read part of a match job)",
         f"{PEAK_FLAGS_PER_S:,} new posts/s at peak", PEAK_FLAGS_PER_S, cost["candidates"]),
        ("queue pages (web processes)", f"{queue_rate:,.0f} pages/s ({REVIEWERS:,} reviewers, one a minute each)",
         queue_rate, cost["queue"]),
    ]
    lines = [
        f"Sizes: a straight line through the two largest sizes ({results[-2].posts:,} and {large.posts:,} posts), "
        f"carried to {PROJECTED_POSTS:,}. The history spans the same days at every size, so a day's activity grows "
        "with the posts." if len(results) > 1 else "One size only: nothing to carry on; the figures are its own.",
        "",
        f"- Disk: {disk / 1024**3:,.0f} GB for the database ({tables / 1024**3:,.0f} GB of tables, "
        f"{indexes / 1024**3:,.0f} GB of indexes), before WAL, backups and replicas.",
        f"- Memory: {indexes / 1024**3:,.0f} GB to keep every index cached (shared_buffers plus the OS page cache); "
        "the tables' rows are read by index, a page at a time, and need not all fit.",
        f"- Processes, busy ones (rate x the p95 cost projected to {PROJECTED_POSTS:,} posts), before headroom:",
    ]
    lines += [f"  - {what}: {rate} x {seconds * 1000:,.1f} ms = {per_second * seconds:,.1f} busy"
              for what, rate, per_second, seconds in busy]
    lines.append(f"  - the roll-up (rqcron, every {ROLLUP_PERIOD_S} s, today and yesterday at least): "
                 f"{2 * cost['rollup']:,.1f} s of every {ROLLUP_PERIOD_S} s")
    lines.append("- Costs: the largest size's p95, plus, for the operations whose p50 grew past the target, that "
                 "growth carried on in a straight line: " + (", ".join(growing) if growing else "none") + ".")
    lines.append("- Rates from deploy/README.md (the program's need: 1,200 flags/s at peak, 30-60 ratings/s, "
                 "10,000 reviewers); one queue page a reviewer a minute is this report's assumption.")
    return "\n".join(lines)


def _load_section(results: list[SizeResult]) -> str:
    stages = list(dict.fromkeys(name for r in results for name in r.growth.stages))
    head = " | ".join(f"+{r.growth.added:,} to {r.posts:,}" for r in results)
    added = sum(r.growth.added for r in results)
    lines = ["Seconds each stage of the growth SQL took (bench/scale_load.py), and per 100,000 posts over the "
             "whole run: what predicts a run's length.", "",
             f"| stage | {head} | per 100,000 posts |", "| --- | " + "--- | " * len(results) + "--- |"]
    for name in [*stages, "all"]:
        values = [r.growth.seconds if name == "all" else r.growth.stages.get(name, 0.0) for r in results]
        per = sum(values) / added * 100_000 if added else 0.0
        lines.append(f"| {name} | " + " | ".join(f"{v:,.1f}" for v in values) + f" | {per:,.1f} |")
    return "\n".join(lines)
