"""Copy-heavy load, driven from outside as a platform would (issue 28; `--only copyload`).

The app runs as bin/run starts it (bench/app_processes.py): gunicorn with 2 gthread workers, the RQ
worker(s) and rqcron, on config.settings. Rated claims are set up first (ingested and rated in the
bench process, not timed). Then, over HTTP only (bench/copy_clients.py):

- Ingest clients: `--ingest-clients` forked processes, each with its own platform token, POST
  /api/v1/flags batches of `--copy-batch` flags on new posts, one after the other as fast as the
  app answers; `--copy-share` of each batch are near-copies (a prefix, a suffix) of the rated claims,
  which matching links on arrival, the rest new texts.
- Rating to decisions feed: ratings go one at a time, POST /api/v1/posts/{id}/ratings by a
  fact-checker token; the clock starts at the 201 and stops when a poller of GET /api/v1/decisions
  (its own platform token, by cursor, `limit=1000`, every 20 ms when caught up) first sees an entry
  for that post. Without load first (the floor), then with the ingest clients running.
- Ingest rate with matching on and off: rounds of the same clients and batches (new posts each time),
  the whole app restarted with FACTDESK_MATCHING=1 or 0 for each round (gunicorn, worker and
  rqcron alike: off is off everywhere, as a deployment would set it), off and on alternating.
"""

from __future__ import annotations

import os
import random
import statistics
import time
from dataclasses import dataclass
from datetime import timedelta

from django.utils import timezone

from bench.app_processes import describe_workers, start_app
from bench.copy_clients import (
    GIVE_UP_SECONDS,
    VERDICT,
    Clients,
    FeedPoller,
    backlog,
    backlog_text,
    claim_text,
    decided_after_ms,
    time_ratings,
    wait_drained,
)
from bench.report import Figure, summary_ms

TARGET_LOAD_RATIO = 2.0
TARGET_MATCHING_SHARE = 0.70


# --- Set-up (in the bench process, not timed) -------------------------------------------------------------------


def _account(username: str, role: str, organisation: str | None = None):
    from accounts.models import User
    from factcheck.members import create_user

    return User.objects.filter(username=username).first() or create_user(
        username=username, role=role, password=None, organisation_name=organisation)


def token_for(user) -> str:
    from accounts.models import ApiToken

    return ApiToken.issue(user=user, name="bench copy load")[1]


def _ingest_own_pages(kind: str, texts: list[str], submitted_by) -> list[str]:
    """One post per text, each on a page of its own (a rated page's strikes stay on it); returns their ids."""
    from factcheck.ingest import FlagInput, PageInput, PostInput, ingest_flags

    now, flags = timezone.now(), []
    for n, text in enumerate(texts):
        page = PageInput(external_id=f"bench-copyload-{kind}-page-{n}", name=f"Bench copy-load {kind} page {n}")
        post = PostInput(external_id=f"bench-copyload-{kind}-{n}", page=page, posted_at=now - timedelta(hours=1),
                         text=text, language="en", country="GB", views=1000, shares=50)
        flags.append(FlagInput(idempotency_key=f"bench-copyload-{kind}-flag-{n}", source="user_report", post=post,
                               flagged_at=now))
    for start in range(0, len(flags), 500):
        ingest_flags(flags=flags[start:start + 500], submitted_by=submitted_by)
    return [f.post.external_id for f in flags]


def set_up(*, platform, rater, claims: int, rating_posts: int) -> tuple[list[str], list[str]]:
    """`claims` rated claims (ingested, then rated by the bench organisation) and `rating_posts` fresh queued
    posts for the timed ratings; returns (the claims' texts, the fresh posts' external ids)."""
    from factcheck.models import Post
    from factcheck.ratings import record_rating

    rng = random.Random(28)
    texts = [claim_text(rng) for _ in range(claims)]
    claim_ids = _ingest_own_pages("claim", texts, platform)
    for pk in Post.objects.filter(external_id__in=claim_ids).values_list("id", flat=True):
        record_rating(reviewer=rater, post_id=pk, verdict=VERDICT, rationale="No such thing happened.",
                      sources=["https://example.org/claim"], claim_if_unclaimed=True)
    fresh = _ingest_own_pages("rate", [claim_text(rng) for _ in range(rating_posts)], platform)
    return texts, fresh


@dataclass
class Round:
    matching: bool
    flags_per_s: float
    window: float
    batches: int
    batch_ms: list[float]
    failures: int
    left: dict[str, int]  # RQ jobs waiting (and running) at the end of the round


def ingest_round(*, matching: bool, label: str, tokens: list[str], claims: list[str], share: float, size: int,
                 seconds: float, cron: bool = True, environ: dict[str, str] | None = None) -> Round:
    """The app restarted with matching on or off (and `environ` set for it: app_env passes the environment on);
    the clients ingest for `seconds` after each has had a batch answered; flags/s over that window, and the RQ
    backlog at its end."""
    os.environ.update(environ or {})
    app = start_app(matching=matching, cron=cron)
    try:
        clients = Clients(app=app, tokens=tokens, label=label, claims=claims, share=share, size=size)
        clients.start()
        before, began = clients.batches(), time.perf_counter()
        time.sleep(seconds)
        done, window = clients.batches() - before, time.perf_counter() - began
        left = backlog()
        runs = clients.finish()
        app.check_alive()
    finally:
        app.stop()
        for name in environ or {}:
            os.environ.pop(name, None)
    if not matching:
        mark_matched(label)
    return Round(matching, done * size / window, window, done, [ms for r in runs for ms in r.batch_ms],
                 sum(r.failures for r in runs), left)


def mark_matched(label: str) -> int:
    """Posts ingested with matching off count as matched afterwards: with matching on again, the reconciler
    (match_unmatched, every minute) would otherwise sign and match them during the next round."""
    from factcheck.models import Post

    return Post.objects.filter(external_id__startswith=f"bench-copyload-{label}-", matched_at__isnull=True).update(
        matched_at=timezone.now())


def matched_share(label: str) -> tuple[int, int]:
    """(posts of the load linked to a rated claim on arrival, posts of the load)."""
    from factcheck.models import Post, QueueState

    posts = Post.objects.filter(external_id__startswith=f"bench-copyload-{label}-")
    return posts.filter(queue_state=QueueState.MATCHED).count(), posts.count()


def _summary(samples: list[float]) -> str:
    return summary_ms(samples) if samples else "none measured"


def bench_copy_load(*, platform, rater, ratings: int, warmup: int, clients: int, batch: int, share: float,
                    claims: int, rounds: int, round_seconds: float, drain_timeout: float,
                    phase_seconds: float = 600) -> list[Figure]:
    import django_rq

    from accounts.models import Role

    django_rq.get_queue("default").connection.flushdb()  # no job of an earlier figure or run
    tokens = [token_for(_account(f"bench-copyload-client-{n}", Role.PLATFORM)) for n in range(clients)]
    feed_token = token_for(_account("bench-copyload-feed", Role.PLATFORM))
    rater_token = token_for(rater)
    print(f"  set-up: {claims} rated claims, {2 * (warmup + ratings)} posts to rate", flush=True)
    texts, fresh = set_up(platform=platform, rater=rater, claims=claims, rating_posts=2 * (warmup + ratings))
    quiet_ids, load_ids = fresh[: warmup + ratings], fresh[warmup + ratings:]

    def rounds_with(matching: bool) -> list[Round]:
        state = "on" if matching else "off"
        out = []
        for r in range(rounds):
            print(f"  ingest round {r + 1}/{rounds}, matching {state}: {round_seconds:.0f} s", flush=True)
            out.append(ingest_round(matching=matching, label=f"{state}{r}", tokens=tokens, claims=texts, share=share,
                                    size=batch, seconds=round_seconds))
        return out

    app = start_app(matching=True)
    try:
        set_up_drained, _ = wait_drained(drain_timeout)  # the claims' own decisions
        poller = FeedPoller(app.url, feed_token)
        print(f"  {ratings} ratings without load", flush=True)
        quiet = time_ratings(app=app, poller=poller, token=rater_token, external_ids=quiet_ids, warmup=warmup,
                             desc="no load")
        poller.close()
        app.check_alive()
    finally:
        app.stop()
    # Matching off first: its rounds leave no jobs behind, while the copy load leaves a backlog that the
    # worker is still deciding long after (see the notes), which would weigh on a later "off" round.
    results = rounds_with(False)

    app = start_app(matching=True)
    try:
        poller = FeedPoller(app.url, feed_token)
        before_load = backlog()
        print(f"  {ratings} ratings while {clients} clients ingest {batch}-flag batches, {share:.0%} copies",
              flush=True)
        load = Clients(app=app, tokens=tokens, label="load", claims=texts, share=share, size=batch)
        load.start()
        began, batches_before = time.perf_counter(), load.batches()
        loaded = time_ratings(app=app, poller=poller, token=rater_token, external_ids=load_ids, warmup=warmup,
                              desc="under load", budget=phase_seconds)
        window, load_batches = time.perf_counter() - began, load.batches() - batches_before
        after_load = backlog()
        runs = load.finish()
        poller.close()
        app.check_alive()
    finally:
        app.stop()
    linked, load_posts = matched_share("load")
    quiet_db, loaded_db = decided_after_ms(quiet.external_ids), decided_after_ms(loaded.external_ids)
    results += rounds_with(True)  # straight after the load, its backlog still waiting: the steady state
    on = [x for x in results if x.matching]
    off = [x for x in results if not x.matching]
    on_rate, off_rate = statistics.fmean(x.flags_per_s for x in on), statistics.fmean(x.flags_per_s for x in off)

    p95, floor95 = loaded.p95(), quiet.p95()
    app_note = (f"The app as bin/run starts it: gunicorn `--workers 2` with bin/run's flags (gthread, 8 threads), "
                f"{describe_workers()} and `rqcron config.cron`, on config.settings; logs in the bench's temporary "
                "directory.")
    load_flags = load_batches * batch
    figures = [
        Figure(
            name="rating-to-decisions-feed p95 under copy-heavy ingest (HTTP)", value=p95, unit="ms",
            floor=floor95, floor_name="the same without load", ratio=p95 / floor95,
            target=f"<= {TARGET_LOAD_RATIO:g}x without load", passed=p95 <= TARGET_LOAD_RATIO * floor95,
            notes=[
                app_note,
                f"{ratings} ratings (after {warmup} unmeasured) one at a time, POST /api/v1/posts/{{id}}/ratings "
                f'(verdict "{VERDICT}", a fact-checker token) on fresh queued posts, each on a page of its own; the '
                "clock runs from the 201 to the first GET /api/v1/decisions page (a poller on its own platform "
                "token, by cursor, 1,000 a page, every 20 ms when caught up) that holds the post.",
                f"Without load: {_summary(quiet.feed_ms)}; the POST itself {_summary(quiet.post_ms)}.",
                f"Under load: {_summary(loaded.feed_ms)}; the POST itself {_summary(loaded.post_ms)}."
                + (f" {loaded.missed} of them did not reach the feed within {GIVE_UP_SECONDS:.0f} s or were not "
                   f"sent (counted as {GIVE_UP_SECONDS:.0f} s, so the p95 is a lower bound): the phase stopped after "
                   f"{loaded.stopped_after} ratings (warm-up included), each later one would wait behind the same "
                   "backlog." if loaded.missed else "")
                + (f" The phase's time budget ({phase_seconds:.0f} s) ran out after {loaded.out_of_time} ratings "
                   "(warm-up included): the figure is over those measured." if loaded.out_of_time else ""),
                "From the database (the rating's created_at to its decision's decided_at, i.e. waiting in the RQ "
                f"queue until the job starts): without load {_summary(quiet_db)}; "
                f"under load {_summary(loaded_db)}.",
                f"Load: {clients} forked clients, each its own platform token, POST /api/v1/flags batches of "
                f"{batch:,} new posts back to back, {share:.0%} of them near-copies (a prefix or suffix) of "
                f"{claims} claims rated before the run, the rest new texts; {load_batches:,} batches "
                f"({load_flags:,} flags, {load_flags / window:,.0f} flags/s) in the {window:.1f} s window, per "
                f"batch {_summary([ms for r in runs for ms in r.batch_ms])}; "
                f"{sum(r.failures for r in runs)} failed batches"
                + (f" (first: {next(r.first_failure for r in runs if r.first_failure)})"
                   if any(r.failures for r in runs) else "") + f"; {linked:,} of {load_posts:,} posts of the load "
                "linked to a rated claim on arrival.",
                f"RQ jobs waiting (and running): before the load {backlog_text(before_load)}; at the last rating "
                f"{backlog_text(after_load)}. The claims' own decisions took {set_up_drained:.0f} s before the "
                "first rating.",
            ],
        ),
        Figure(
            name="API ingest flags/s, matching on / off (copy-heavy, gunicorn 2 workers)", value=on_rate,
            unit="flags/s", floor=off_rate, floor_name="the same with FACTDESK_MATCHING=0", ratio=on_rate / off_rate,
            target=f">= {TARGET_MATCHING_SHARE:.0%} of matching off",
            passed=on_rate >= TARGET_MATCHING_SHARE * off_rate,
            notes=[
                app_note + " Restarted for each round with FACTDESK_MATCHING=1 or 0 (every process).",
                f"{rounds} rounds each way: {clients} clients as above ({batch:,}-flag batches, {share:.0%} copies "
                f"of rated claims), flags/s over {round_seconds:.0f} s from when every client has had a batch "
                "answered. The off rounds run after the floor's ratings, the on rounds straight after the loaded "
                "ratings, with the jobs that load left still waiting (the worker is as busy as under any sustained "
                "copy-heavy load; an off round first would otherwise inherit them).",
                *[f"Round {n % rounds + 1} matching {'on' if x.matching else 'off'}: {x.flags_per_s:,.0f} flags/s "
                  f"({x.batches} batches in {x.window:.1f} s; per batch {_summary(x.batch_ms)}; "
                  f"{x.failures} failed); RQ jobs at its end: {backlog_text(x.left)}"
                  for n, x in enumerate(results)],
            ],
        ),
    ]
    return figures
