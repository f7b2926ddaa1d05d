"""`make bench`: load 100,000 posts, measure the core loop against its floors, write bench/REPORT.md.

Runs against its own PostgreSQL database (created and migrated if missing, emptied of what
the bench fills before each run) and its own Redis db, both from DATABASE_URL and REDIS_URL.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

REPORT = Path(__file__).resolve().parent / "REPORT.md"


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--posts", type=int, default=int(os.environ.get("BENCH_POSTS") or 100_000),
                        help="posts to load (one flag each); BENCH_POSTS sets it too")
    parser.add_argument("--pages", type=int, default=2_000, help="pages the posts belong to")
    parser.add_argument("--batch", type=int, default=1_000, help="flags per ingest_flags call (the API's maximum)")
    parser.add_argument("--requests", type=int, default=300, help="measured requests per page")
    parser.add_argument("--warmup", type=int, default=30, help="unmeasured requests or ratings first")
    parser.add_argument("--reviewers", type=int, default=4, help="concurrent claim_next processes")
    parser.add_argument("--claims", type=int, default=8_000, help="claim_next calls in all")
    parser.add_argument("--ratings", type=int, default=200, help="measured ratings")
    parser.add_argument("--rq-workers", type=int, default=1, help="`manage.py rqworker` subprocesses (no-load figure)")
    parser.add_argument("--backlog", type=int, default=150, help="queued ratings per round of decisions/s")
    parser.add_argument("--load-ratings", type=int, default=100, help="measured ratings under ingest load")
    parser.add_argument("--ingest-clients", type=int, default=2, help="ingest processes during the loaded figure")
    parser.add_argument("--import-rows", type=int, default=1_000_000, help="rows of each generated import file")
    parser.add_argument("--candidates", type=int, default=300, help="new posts whose candidates are timed")
    parser.add_argument("--copies", type=int, default=1_000, help="copies one rating reaches")
    parser.add_argument("--matching-posts", type=int, default=20_000,
                        help="new posts ingested each way (matching off, then on)")
    parser.add_argument("--webhook-samples", type=int, default=200, help="changes timed to their webhook delivery")
    parser.add_argument("--webhook-deliveries", type=int, default=2_000, help="deliveries drained per throughput round")
    parser.add_argument("--dashboard-posts", type=int, default=1_000_000,
                        help="posts of the dashboard's 90-day history (written by SQL)")
    parser.add_argument("--reports", type=int, default=100_000,
                        help="open reports of harm of the reports queue's figure (written by SQL)")
    parser.add_argument("--suggested-pairs", type=int, default=100_000,
                        help="suggested matches of the navigation counts' figure (written by SQL)")
    parser.add_argument("--navigation-requests", type=int, default=100,
                        help="measured requests per page and way of the navigation counts' figure")
    parser.add_argument("--copy-ratings", type=int, default=100,
                        help="ratings timed to their decisions-feed entry, without and with the copy-heavy load")
    parser.add_argument("--copy-batch", type=int, default=500, help="flags per POST /api/v1/flags of the copy load")
    parser.add_argument("--copy-share", type=float, default=0.8, help="share of the copy load's posts that copy "
                        "a rated claim")
    parser.add_argument("--copy-claims", type=int, default=100, help="rated claims the copy load copies")
    parser.add_argument("--copy-rounds", type=int, default=2, help="ingest rounds each way, matching off and on")
    parser.add_argument("--copy-round-seconds", type=float, default=30.0, help="length of one ingest round")
    parser.add_argument("--copy-drain-timeout", type=float, default=300.0,
                        help="seconds to wait for the set-up's RQ jobs before the first rating")
    parser.add_argument("--copy-phase-seconds", type=float, default=600.0,
                        help="at most this long sending ratings under load (then the figure is over those measured)")
    parser.add_argument("--viral-copies", type=int, default=20000,
                        help="copies of one claim the viral match-job figure grows to, in batches of 500")
    parser.add_argument("--only", choices=["importers", "matching", "webhooks", "queue", "claims", "dashboard",
                                           "reports", "copyload", "navigation", "media", "semantic", "scale"],
                        help="run only these figures; the report goes to "
                        "bench/REPORT-<only>.md unless --report says otherwise, so REPORT.md keeps the full run")
    from bench.media import add_arguments as add_media_arguments

    add_media_arguments(parser)
    from bench.semantic import add_arguments as add_semantic_arguments

    add_semantic_arguments(parser)
    from bench.scale import add_arguments as add_scale_arguments

    add_scale_arguments(parser)
    parser.add_argument("--report", type=Path, default=None, help="where to write the report")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a figure misses its target")
    return parser.parse_args(argv)


def setup_django() -> None:
    if not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        sys.exit("make bench needs DATABASE_URL=postgres://... (the bench measures PostgreSQL row locks)")
    if not os.environ.get("REDIS_URL"):
        sys.exit("make bench needs REDIS_URL=redis://... (rating decisions run on a real RQ worker)")
    os.environ["DJANGO_SETTINGS_MODULE"] = "bench.settings"
    import django

    django.setup()


def bench_user(username: str, role: str, organisation: str | None = None):
    from accounts.models import User
    from factcheck.members import create_user

    return User.objects.filter(username=username).first() or create_user(
        username=username, role=role, password=None, organisation_name=organisation)


def bench_users(*, reviewers: int):
    """The platform account that pushes flags and the fact-checkers, reused across runs."""
    from accounts.models import Role, User
    from bench.data import COVERED_LANGUAGES
    from factcheck.members import create_user, organisation_of
    from factcheck.models import Organisation

    def user(username: str, role: str, org: str | None = None) -> User:
        found = User.objects.filter(username=username).select_related("membership__organisation").first()
        return found or create_user(username=username, role=role, password=None, organisation_name=org)

    platform = user("bench-platform", Role.PLATFORM)
    checkers = [user(f"bench-checker-{n}", Role.FACTCHECKER, "Bench Fact Checks") for n in range(reviewers + 1)]
    # No countries: the organisation covers its languages wherever the posts come from.
    Organisation.objects.filter(name="Bench Fact Checks").update(languages=COVERED_LANGUAGES, countries=[])
    for checker in checkers:
        organisation_of(checker).refresh_from_db()
    return platform, checkers


def versions() -> tuple[str, str]:
    import django_rq
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version")
        postgres = cursor.fetchone()[0]
    redis = django_rq.get_queue("default").connection.info("server")["redis_version"]
    return postgres, redis


def run_matching_figures(run, args: argparse.Namespace, *, platform, rater) -> None:
    """The near-duplicate figures (bench/matching.py), on the posts loaded so far."""
    from django.conf import settings

    from bench.matching import bench_candidates, bench_ingest_matching, bench_propagation
    from bench.matching_quality import quality_figures

    print("matching 0/4 quality on the labelled pairs from ../shared/data", flush=True)
    figures, section = quality_figures(auto=settings.FACTDESK_MATCH_AUTO, suggest=settings.FACTDESK_MATCH_SUGGEST)
    run.figures += figures
    run.sections.append(("Near-duplicate matching quality", section))
    print(f"matching 1/4 candidates of {args.candidates} new posts", flush=True)
    run.figures.append(bench_candidates(samples=args.candidates, warmup=min(args.warmup, 20)))
    print(f"matching 2/4 one rating reaching {args.copies:,} copies", flush=True)
    run.figures.append(bench_propagation(reviewer=rater, submitted_by=platform, copies=args.copies))
    print(f"matching 3/4 ingest with matching off and on, {args.matching_posts:,} posts each", flush=True)
    run.figures += bench_ingest_matching(submitted_by=platform, posts=args.matching_posts, batch_size=args.batch,
                                         pages=args.pages)
    from bench.viral import bench_viral_copies

    print(f"matching 4/4 match jobs of a viral claim's copies, up to {args.viral_copies:,}", flush=True)
    run.figures.append(bench_viral_copies(submitted_by=platform, copies=args.viral_copies))


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    args.report = args.report or (REPORT.with_name(f"REPORT-{args.only}.md") if args.only else REPORT)
    setup_django()

    import django_rq
    from django.db import connection
    from django.utils import timezone

    from bench import processes
    from bench.claims import bench_claims
    from bench.data import make_flags
    from bench.database import prepare_database, vacuum_analyze
    from bench.decision_rate import bench_decision_rate
    from bench.decisions import bench_decisions, bench_decisions_under_load
    from bench.importers import bench_importer
    from bench.ingest import bench_ingest
    from bench.queue_page import bench_queue_page
    from bench.report import Run, machine_info, render, summary

    processes.install_cleanup()
    began = time.perf_counter()
    started_at = datetime.now(UTC)
    print(f"bench database {connection.settings_dict['NAME']}: migrating and emptying", flush=True)
    prepare_database()
    postgres_version, redis_version = versions()
    run = Run(
        started_at=started_at,
        command="make bench  (" + shlex.join([Path(sys.executable).name, "-m", "bench", *argv]) + ")",
        parameters={k: v for k, v in vars(args).items() if k not in ("report", "strict")},
        machine=machine_info(postgres_version=postgres_version, redis_version=redis_version),
        details=[
            f"Database: PostgreSQL database `{connection.settings_dict['NAME']}` on "
            f"{connection.settings_dict['HOST']}, tables the bench fills are emptied at the start; "
            "Redis: the db in REDIS_URL, flushed before each rating figure.",
            "Data: synthetic pages (2% politicians') and posts in 8 languages with log-normal reach; "
            "the bench organisation covers 5 of the 8 languages.",
            "Order: ingest, then VACUUM ANALYZE, queue page (in-process and over HTTP against gunicorn), "
            "claim_next (forked processes), rating-to-decision without load (an RQ worker subprocess), "
            "decisions/s from a backlog (burst RQ worker subprocesses), then rating-to-decision under ingest "
            "load (forked ingest processes), as the load grows the tables; the importers (csv, then jsonl, "
            "`manage.py import_posts` subprocesses) come last, as they add the most rows.",
            "Queue page variants (bench/queue_page.py; `--only queue`): over HTTP against one sync gunicorn worker, "
            "as a reviewer holding no claims, of the bench organisation and of one covering French in France; each "
            "variant's requests take turns with the floor's, one for one, so "
            "a machine whose speed drifts during the run (this one is a shared VM) weighs on both alike. "
            "Then refresh_priorities (bench/refresh.py): one pass over the queue as the cron job runs it, against "
            "one UPDATE of every queued post's scores.",
            "Near-duplicates (bench/matching.py, bench/matching_quality.py; `--only matching` runs them alone, with "
            "the load): the load's match jobs are not run, its posts' band keys are written to PostBand as those "
            "jobs would; then quality on labelled pairs from ../shared/data, candidates of new posts, one rating "
            "reaching 1,000 copies (a burst RQ worker), ingest with matching off and on, batch by batch, and the "
            "match jobs of --viral-copies copies of one claim (bench/viral.py).",
            "Dashboard (bench/dashboard.py; `--only dashboard`): a 90-day history of --dashboard-posts posts written "
            "by SQL after the other figures (before the importers), rolled up, then the dashboard and the stats API.",
            "Reports of harm (bench/reports_page.py; `--only reports`): --reports open reports written by SQL, then "
            "/staff/reports/ as a trust-and-safety member over HTTP, taking turns with the signed-in floor.",
            "Navigation counts (bench/navigation.py; `--only navigation`): --suggested-pairs suggested matches "
            "written by SQL among the loaded posts, then, for a fact-checker of a narrow organisation and of one "
            "covering everything, the queue page and /notifications/ in-process and over HTTP, taking turns with "
            "the signed-in floor, and work_counts() alone.",
            "Webhooks (bench/webhooks.py; `--only webhooks`): after the decision figures, a local receiver in the "
            "bench process; change-to-delivery latency with one long-running worker, then deliveries/s drained by "
            "1 and 2 burst workers from a committed backlog.",
            "Copy-heavy load (bench/copy_load.py; `--only copyload`): the app started as bin/run starts it (gunicorn "
            "2 workers, RQ worker, rqcron) and driven over HTTP: ratings timed from their 201 to the decisions feed "
            "without and with 2 clients POSTing flag batches that mostly copy rated claims, then API ingest rounds "
            "with FACTDESK_MATCHING off and on.",
        ],
    )
    platform, checkers = bench_users(reviewers=args.reviewers)
    reviewers, rater = checkers[: args.reviewers], checkers[args.reviewers]

    try:
        if args.only in (None, "matching", "webhooks", "queue", "claims", "copyload", "navigation"):
            print(f"1/6 ingest: {args.posts:,} posts in batches of {args.batch:,}", flush=True)
            flags = make_flags(posts=args.posts, pages=args.pages, now=timezone.now())
            run.figures.append(bench_ingest(flags=flags, batch_size=args.batch, submitted_by=platform,
                                            floor=args.only is None))
            del flags
            # The match jobs of the load are not run: the candidates figure needs the posts and their
            # signatures, not their groups (the last matching figure drains jobs of its own).
            django_rq.get_queue("default").connection.flushdb()
            from bench.matching import index_loaded_posts

            if args.only not in ("queue", "claims", "navigation"):  # these need the posts, not their band keys
                print(f"band keys of the {args.posts:,} posts, as their match jobs would write them", flush=True)
                index_loaded_posts()
            vacuum_analyze()
        if args.only is None:
            print("2/6 queue page", flush=True)
            run.figures.append(bench_queue_page(reviewer=reviewers[0], warmup=args.warmup, requests=args.requests))
            print(f"3/6 claim_next: {args.reviewers} reviewers, {args.claims:,} claims", flush=True)
            run.figures.append(bench_claims(reviewers=reviewers, claims=args.claims))
            warmup = min(args.warmup, 10)
            print(f"4/6 rating-to-decision: {args.ratings} ratings, {args.rq_workers} RQ worker(s)", flush=True)
            no_load = bench_decisions(reviewer=rater, ratings=args.ratings, warmup=warmup, workers=args.rq_workers)
            run.figures.append(no_load)
            print(f"5/6 decisions/s: {args.backlog:,} queued ratings, 1 then 2 burst RQ workers", flush=True)
            run.figures += bench_decision_rate(reviewer=rater, ratings=args.backlog)
            print(f"6/6 rating-to-decision under load: {args.load_ratings} ratings, "
                  f"{args.ingest_clients} ingest clients", flush=True)
            run.figures.append(
                bench_decisions_under_load(
                    reviewer=rater, submitted_by=platform, ratings=args.load_ratings, warmup=min(warmup, 5),
                    clients=args.ingest_clients, batch_size=args.batch, pages=args.pages, no_load=no_load,
                )
            )
        if args.only == "claims":
            print(f"claim_next: {args.reviewers} reviewers, {args.claims:,} claims", flush=True)
            run.figures.append(bench_claims(reviewers=reviewers, claims=args.claims))
        if args.only in (None, "queue"):
            from accounts.models import Role
            from bench.queue_page import bench_queue_variants

            print("queue page with its total, a search and each sort, against the signed-in floor", flush=True)
            # A reviewer holding no claims: after claim_next's figure each bench reviewer holds some 2,000 live
            # claims, which the queue page lists as theirs (170 ms of rendering that no real reviewer has).
            reader = bench_user("bench-queue-reader", Role.FACTCHECKER, organisation="Bench Fact Checks")
            run.figures += bench_queue_variants(reviewer=reader, warmup=args.warmup, requests=args.requests,
                                                posts=args.posts)
            # The same for an organisation covering one language in one country, as most fact-checkers' do: an
            # eighth of the bench's queue, whose rows the page finds among everyone else's.
            from bench.data import COUNTRIES
            from factcheck.members import organisation_of
            from factcheck.models import Organisation

            narrow = bench_user("bench-queue-narrow", Role.FACTCHECKER, organisation="Bench Narrow Fact Checks")
            Organisation.objects.filter(name="Bench Narrow Fact Checks").update(languages=["fr"],
                                                                              countries=[COUNTRIES["fr"]])
            organisation_of(narrow).refresh_from_db()
            run.figures += bench_queue_variants(reviewer=narrow, warmup=args.warmup, requests=args.requests,
                                                posts=args.posts, coverage="an organisation covering French in France")
            from bench.refresh import bench_refresh_priorities

            print("refresh_priorities: one pass over the whole queue, against one UPDATE of it", flush=True)
            run.figures.append(bench_refresh_priorities())
        if args.only in (None, "navigation"):
            from accounts.models import Role
            from bench.navigation import bench_navigation

            owner = bench_user("bench-owner", Role.PAGE_OWNER)
            run.figures += bench_navigation(pairs=args.suggested_pairs, owner=owner, warmup=min(args.warmup, 10),
                                            requests=args.navigation_requests)
        if args.only in (None, "webhooks"):
            from bench.webhooks import bench_webhooks

            print("webhooks: change-to-delivery latency, then deliveries/s with 1 and 2 workers", flush=True)
            run.figures += bench_webhooks(platform=platform, samples=args.webhook_samples, warmup=min(args.warmup, 20),
                                          deliveries=args.webhook_deliveries)
        if args.only in (None, "matching"):
            run_matching_figures(run, args, platform=platform, rater=rater)
        if args.only in (None, "dashboard"):
            from accounts.models import Role
            from bench.dashboard import bench_dashboard

            staff = bench_user("bench-staff", Role.TRUST_SAFETY)
            owner = bench_user("bench-owner", Role.PAGE_OWNER)
            run.figures += bench_dashboard(posts=args.dashboard_posts, pages=args.pages, owner=owner, staff=staff,
                                           warmup=args.warmup, requests=args.requests)
        if args.only in (None, "reports"):
            from accounts.models import Role
            from bench.reports_page import bench_reports_page

            staff = bench_user("bench-staff", Role.TRUST_SAFETY)
            run.figures.append(bench_reports_page(staff=staff, reports=args.reports, pages=args.pages,
                                                  warmup=args.warmup, requests=args.requests))
        if args.only in (None, "copyload"):
            from bench.copy_load import bench_copy_load

            print("copy-heavy load over HTTP: ratings to the decisions feed, ingest with matching off and on",
                  flush=True)
            run.figures += bench_copy_load(
                platform=platform, rater=rater, ratings=args.copy_ratings, warmup=min(args.warmup, 5),
                clients=args.ingest_clients, batch=args.copy_batch, share=args.copy_share, claims=args.copy_claims,
                rounds=args.copy_rounds, round_seconds=args.copy_round_seconds, drain_timeout=args.copy_drain_timeout,
                phase_seconds=args.copy_phase_seconds,
            )
        if args.only in (None, "media"):
            from bench.media import run_media_figures

            run_media_figures(run, args)
        if args.only in (None, "semantic"):
            from bench.semantic import run_semantic_figures

            run_semantic_figures(run, args, platform=platform)
        if args.only == "scale":  # not in the full run: growing to 5,000,000 posts takes hours of its own
            from accounts.models import Role
            from bench.scale import run_scale_figures

            owner = bench_user("bench-owner", Role.PAGE_OWNER)
            run_scale_figures(run, args, platform=platform, owner=owner)
        for step, fmt in enumerate(("csv", "jsonl") if args.only in (None, "importers") else (), start=1):
            print(f"importers {step}/2: import_posts --format {fmt}, {args.import_rows:,} rows", flush=True)
            figure = bench_importer(fmt=fmt, rows=args.import_rows, pages=args.pages, now=timezone.now())
            run.figures.append(figure)
    finally:
        processes.stop_all()
        run.machine["load average at end (1, 5, 15 min)"] = ", ".join(f"{x:.2f}" for x in os.getloadavg())
        run.seconds = time.perf_counter() - began
        if run.figures:
            args.report.write_text(render(run))
            print(summary(run))
            print(f"report: {args.report}")
    # A missed target is a finding for the report, not a broken run, unless --strict asks otherwise.
    return 1 if args.strict and any(f.missed for f in run.figures) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
