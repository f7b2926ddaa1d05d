"""Navigation counts (issue 29; `--only navigation`): what the counts in a fact-checker's navigation cost.

Every signed-in page a fact-checker opens counts their unread notifications, their organisation's open
appeals and the suggested copies their organisation could confirm (moderation.workday.work_counts, through
moderation.context_processors.work). The bench's posts are reused; `--suggested-pairs` suggested matches
between posts of the same language are written by SQL, with a share of their posts rated, open disputes of
some of those ratings, and notifications for each fact-checker. Two organisations: a narrow one (French in
France) and one covering everything, with a fact-checker each. For each, measured in-process
(django.test.Client) and over HTTP (one sync gunicorn worker), each request taking turns with the signed-in
floor of the queue figures (bench.urls: one indexed query for 25 posts, no base.html, no counts) in the same
session: the queue page (target: p95 within 3x the floor's, the queue figure's own target; in-process also with
PostgreSQL's JIT off and with the counts patched out, to show what they cost), /notifications/, and
work_counts() alone (with the EXPLAIN ANALYZE of its statement); and, for comparison, the suggestions counted
with the single OR condition (confirmable_by) that the two halves replaced.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from unittest import mock

from django.db import connection, transaction
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.models import Role, User
from bench import processes
from bench.counting import count_queries
from bench.queue_page import Getter, http_getter, in_process_getter, time_alternately, wait_for_http
from bench.report import Figure, percentile, summary_ms
from factcheck.matching.confirmable import confirmable_by
from factcheck.members import create_user
from factcheck.models import Match, Organisation
from factcheck.selectors import waiting_suggestions_everywhere
from moderation.workday import COUNT_CAP, WorkCounts, work_counts

TARGET_RATIO = 3.0
# name -> the languages and countries it covers (empty: all), and how the report names them.
ORGANISATIONS = {"Bench Narrow Checks": (["fr"], ["FR"], "French in France"),
                 "Bench Worldwide Checks": ([], [], "all languages, all countries")}
SOURCE_SHARE = 0.2  # of each language's posts, the claims' first posts that copies are suggested for
RATED_SOURCES, RATED_COPIES = 0.10, 0.02  # shares of the pairs' posts given a current rating
APPEALED = 0.05  # of those ratings, disputed and still open
NOTIFICATIONS = 200  # per fact-checker, one in four unread
OR_SAMPLES = 3


def navigation_checkers() -> dict[str, object]:
    """A fact-checker in each organisation, reused across runs, by organisation name."""
    checkers = {}
    for n, (name, (languages, countries, _)) in enumerate(ORGANISATIONS.items()):
        username = f"bench-nav-checker-{n}"
        if not User.objects.filter(username=username).exists():
            create_user(username=username, role=Role.FACTCHECKER, password=None, organisation_name=name)
        Organisation.objects.filter(name=name).update(languages=languages, countries=countries)
        checkers[name] = User.objects.select_related("membership__organisation").get(username=username)
    return checkers


def load_navigation_rows(*, pairs: int, checkers: dict, owner) -> dict[str, int]:
    """Suggested pairs, ratings, open disputes and notifications, by SQL; the counts written."""
    now = timezone.now()
    narrow, wide = checkers.values()
    narrow_languages, narrow_countries, _ = ORGANISATIONS[narrow.membership.organisation.name]
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT setseed(0.29)")
        # The posts of each language numbered 1..c; the first SOURCE_SHARE of them are the claims' first posts.
        cursor.execute("""CREATE TEMP TABLE nav_posts ON COMMIT DROP AS
                          SELECT id, language, row_number() OVER (PARTITION BY language ORDER BY id) AS k
                          FROM factcheck_post""")
        cursor.execute("""CREATE TEMP TABLE nav_languages ON COMMIT DROP AS
                          SELECT row_number() OVER (ORDER BY language) - 1 AS n, language, count(*) AS c,
                              greatest(floor(count(*) * %s), 1)::int AS sources
                          FROM nav_posts GROUP BY language HAVING count(*) > 10""", [SOURCE_SHARE])
        cursor.execute("SELECT count(*) FROM nav_languages")
        if not (languages := cursor.fetchone()[0]):
            raise RuntimeError("the navigation figure needs the bench's posts: none were loaded")
        cursor.execute("CREATE INDEX ON nav_posts (language, k)")
        cursor.execute(
            """INSERT INTO factcheck_match (post_id, source_id, method, score, state, guard, created_at, reason)
               SELECT c.id, s.id, 'minhash', 0.55 + random() * 0.3, 'suggested', '',
                   %(now)s - random() * interval '7 days', ''
               FROM (SELECT l.language, 1 + floor(random() * l.sources)::int AS si,
                         l.sources + 1 + floor(random() * (l.c - l.sources))::int AS ci
                     FROM generate_series(1, %(pairs)s) g JOIN nav_languages l ON l.n = g %% %(languages)s) x
               JOIN nav_posts s ON s.language = x.language AND s.k = x.si
               JOIN nav_posts c ON c.language = x.language AND c.k = x.ci
               ON CONFLICT DO NOTHING""",
            {"now": now, "pairs": pairs, "languages": languages},
        )
        # Ratings: the narrow organisation rates its posts, the other one the rest.
        cursor.execute(
            """INSERT INTO factcheck_rating (post_id, reviewer_id, organisation_id, verdict, rationale, sources,
                   article_url, change_reason, created_at, is_current)
               SELECT x.id, CASE WHEN narrow THEN %(narrow)s ELSE %(wide)s END,
                   CASE WHEN narrow THEN %(narrow_org)s ELSE %(wide_org)s END,
                   'false', 'See sources.', '[]', '', '', %(now)s - random() * interval '7 days', true
               FROM (SELECT p.id, p.language = ANY(%(languages)s) AND p.country = ANY(%(countries)s) AS narrow,
                         EXISTS (SELECT 1 FROM factcheck_match m WHERE m.source_id = p.id) AS source
                     FROM factcheck_post p
                     WHERE p.id IN (SELECT source_id FROM factcheck_match UNION SELECT post_id FROM factcheck_match)
                       AND NOT EXISTS (SELECT 1 FROM factcheck_rating r WHERE r.post_id = p.id AND r.is_current)) x
               WHERE random() < CASE WHEN source THEN %(rated_sources)s ELSE %(rated_copies)s END""",
            {"narrow": narrow.pk, "wide": wide.pk, "narrow_org": narrow.membership.organisation_id,
             "wide_org": wide.membership.organisation_id, "languages": narrow_languages,
             "countries": narrow_countries, "now": now, "rated_sources": RATED_SOURCES, "rated_copies": RATED_COPIES},
        )
        cursor.execute("""UPDATE factcheck_post p SET queue_state = 'rated' FROM factcheck_rating r
                          WHERE r.post_id = p.id AND r.is_current AND r.reviewer_id = ANY(%s)""",
                       [[narrow.pk, wide.pk]])
        cursor.execute(
            """INSERT INTO moderation_appeal (post_id, kind, rating_id, filed_by_id, statement, evidence_urls,
                   correction_details, status, version, created_at, decision_notice_at, outcome_reason, new_verdict)
               SELECT r.post_id, 'dispute', r.id, %(owner)s, 'The rating is wrong.', '[]', '', 'open', 1,
                   r.created_at + interval '1 hour', r.created_at, '', ''
               FROM factcheck_rating r WHERE r.reviewer_id = ANY(%(checkers)s) AND random() < %(share)s""",
            {"owner": owner.pk, "checkers": [narrow.pk, wide.pk], "share": APPEALED},
        )
        cursor.execute(
            """INSERT INTO moderation_notification (user_id, kind, post_id, subject, body, created_at, read_at)
               SELECT u, 'appeal_received', p.id, 'An appeal arrived',
                   'A page owner disputes a rating of your organisation.', %(now)s - g * interval '30 minutes',
                   CASE WHEN g %% 4 = 0 THEN NULL ELSE %(now)s - g * interval '30 minutes' + interval '1 hour' END
               FROM unnest(%(users)s::bigint[]) u, generate_series(1, %(n)s) g
               JOIN nav_posts p ON p.k = g AND p.language = (SELECT min(language) FROM nav_languages)""",
            {"users": [narrow.pk, wide.pk], "n": NOTIFICATIONS, "now": now},
        )
        cursor.execute("ANALYZE factcheck_match, factcheck_rating, factcheck_post, moderation_appeal, "
                       "moderation_notification")
        cursor.execute("""SELECT (SELECT count(*) FROM factcheck_match WHERE state = 'suggested'),
                              (SELECT count(*) FROM factcheck_rating WHERE is_current),
                              (SELECT count(*) FROM moderation_appeal WHERE status = 'open'),
                              (SELECT count(*) FROM factcheck_post)""")
        counts = dict(zip(("pairs", "ratings", "appeals", "posts"), cursor.fetchone(), strict=True))
    return counts


@contextmanager
def jit_off() -> Iterator[None]:
    """This process's new connections with PostgreSQL's JIT off (PGOPTIONS), for comparison."""
    before = os.environ.get("PGOPTIONS")
    os.environ["PGOPTIONS"] = "-c jit=off"
    connection.close()
    try:
        yield
    finally:
        if before is None:
            del os.environ["PGOPTIONS"]
        else:
            os.environ["PGOPTIONS"] = before
        connection.close()


def time_work_counts(user, *, warmup: int, requests: int) -> list[float]:
    """Milliseconds per work_counts() call, the user loaded once as a request loads them."""
    samples = []
    for _ in range(warmup + requests):
        started = time.perf_counter()
        work_counts(user=user)
        samples.append((time.perf_counter() - started) * 1000)
    return samples[warmup:]


def explain_work_counts(user) -> str:
    """Where work_counts' one statement spends its time: EXPLAIN (ANALYZE, FORMAT JSON) of it, warm."""
    statements = []

    def keep(execute, sql, params, many, context):
        statements.append((sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(keep):
        work_counts(user=user)
    sql, params = statements[-1]
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) {sql}", params)
        plan = cursor.fetchone()[0]
    plan = plan[0] if isinstance(plan, list) else plan
    jit = plan.get("JIT")
    jit_text = (f"JIT compiled {jit['Functions']} functions in {jit['Timing']['Total']:.1f} ms" if jit
                else "no JIT")
    return (f"EXPLAIN ANALYZE of its statement: planned cost {plan['Plan']['Total Cost']:,.0f} (jit_above_cost "
            f"is 100,000 by default), planning {plan['Planning Time']:.1f} ms, {jit_text}, execution "
            f"{plan['Execution Time']:.1f} ms in all.")


def suggestion_counts(organisation) -> tuple[int, int, list[float]]:
    """The confirmable pairs in all (uncapped, both halves), the navigation's capped count, and milliseconds
    of OR_SAMPLES counts with the single OR condition, capped as the navigation caps them."""
    halves = [half.count() for half in waiting_suggestions_everywhere(organisation=organisation)]
    total, capped = sum(halves), sum(min(n, COUNT_CAP + 1) for n in halves)
    samples = []
    for _ in range(OR_SAMPLES):
        started = time.perf_counter()
        Match.objects.filter(confirmable_by(organisation, now=timezone.now())).order_by().values("pk")[
            : COUNT_CAP + 1].count()
        samples.append((time.perf_counter() - started) * 1000)
    return total, capped, samples


def page_figure(*, name: str, url: str, floor_url: str, getters: dict[str, Getter], warmup: int, requests: int,
                target: bool) -> Figure:
    """One page's figure, taking turns with the floor: the value from HTTP, each way's samples in the notes.
    The queue page is measured in-process twice more: with JIT off, and without the counts (patched out)."""
    ways = [(how, get, nullcontext) for how, get in getters.items()]
    if target:
        ways += [("in-process, JIT off (PGOPTIONS='-c jit=off')", getters["in-process"], jit_off),
                 ("in-process, without the counts (work_counts patched out of the context processor)",
                  getters["in-process"], lambda: mock.patch("moderation.context_processors.work_counts",
                                                            return_value=WorkCounts()))]
    runs, notes = {}, []
    for how, get, around in ways:
        with around():
            floor, samples, floor_status, status = time_alternately(get, floor_url, url, warmup=warmup,
                                                                    requests=requests)
        if floor_status != 200 or status != 200:
            raise RuntimeError(f"{floor_url} answered {floor_status}, {url} answered {status}")
        runs[how] = (percentile(samples, 95), percentile(floor, 95))
        notes.append(f"{how}: GET {url} {summary_ms(samples)}; floor {floor_url} {summary_ms(floor)}; p95 ratio "
                     f"{runs[how][0] / runs[how][1]:.2f}.")
    value, floor95 = runs["HTTP"]
    return Figure(name=name, value=value, unit="ms", floor=floor95, floor_name="signed-in view, 1 indexed query, "
                  "25 posts, same session", ratio=value / floor95, target=f"<= {TARGET_RATIO:g}x floor" if target
                  else "", passed=value / floor95 <= TARGET_RATIO if target else None, informational=not target,
                  notes=notes)


def bench_navigation(*, pairs: int, owner, warmup: int, requests: int) -> list[Figure]:
    checkers = navigation_checkers()
    print(f"navigation 1/3: {pairs:,} suggested pairs, ratings, disputes and notifications, by SQL", flush=True)
    started = time.perf_counter()
    counts = load_navigation_rows(pairs=pairs, checkers=checkers, owner=owner)
    loaded = time.perf_counter() - started
    floor_url = reverse("bench-queue-floor")
    pages = {"queue page": reverse("factcheck:queue"), "/notifications/": reverse("moderation:notifications")}
    clients = {}
    for name, checker in checkers.items():
        clients[name] = Client()
        clients[name].force_login(checker)
        for url in (floor_url, *pages.values()):
            if (status := clients[name].get(url).status_code) != 200:
                raise RuntimeError(f"GET {url} as {checker.username} answered {status}")

    print("navigation 2/3: work_counts() alone, and the single OR condition for comparison", flush=True)
    counted: list[Figure] = []
    for name, checker in checkers.items():
        samples = time_work_counts(checker, warmup=warmup, requests=requests)
        with jit_off():
            without_jit = time_work_counts(checker, warmup=warmup, requests=requests)
        shown = work_counts(user=checker)
        total, capped, or_samples = suggestion_counts(checker.membership.organisation)
        counted.append(Figure(
            name=f"work_counts() p95, {name} ({ORGANISATIONS[name][2]})", value=percentile(samples, 95), unit="ms",
            informational=True,
            notes=[f"In-process, one statement a call: {summary_ms(samples)}.", explain_work_counts(checker),
                   f"The same with JIT off (PGOPTIONS='-c jit=off'): {summary_ms(without_jit)}.",
                   f"Shown: {shown.unread_shown or 0} unread, {shown.appeals_shown or 0} open appeals, "
                   f"{shown.suggestions_shown or 0} suggestions ({capped} counted, capped at 100 a half; "
                   f"{total:,} confirmable in all, of {counts['pairs']:,} suggested pairs).",
                   f"The suggestions counted with the single OR condition (confirmable_by), capped alike: "
                   f"{', '.join(f'{ms:,.0f}' for ms in or_samples)} ms (median "
                   f"{statistics.median(or_samples):,.0f} ms), against the two halves inside work_counts above."],
        ))

    print("navigation 3/3: the queue page and /notifications/, in-process and over HTTP, taking turns with the "
          "signed-in floor", flush=True)
    figures: list[Figure] = []
    port = processes.free_port()
    server = processes.start_gunicorn(port)
    try:
        for name, client in clients.items():
            getters = {"in-process": in_process_getter(client),
                       "HTTP": http_getter(port, f"sessionid={client.cookies['sessionid'].value}")}
            wait_for_http(getters["HTTP"], floor_url)
            for page, url in pages.items():
                with count_queries() as counter:
                    client.get(url)
                figure = page_figure(name=f"{page} with navigation counts p95 (HTTP), {name} "
                                     f"({ORGANISATIONS[name][2]})", url=url, floor_url=floor_url, getters=getters,
                                     warmup=warmup, requests=requests, target=page == "queue page")
                figures.append(figure)
                figure.notes.append(f"{counter.n} SQL statements a request.")
    finally:
        processes.stop(server)
    figures[0].notes.insert(0, f"Rows, written by SQL in {loaded:.0f} s: {counts['pairs']:,} suggested pairs "
                               f"among {counts['posts']:,} posts, {counts['ratings']:,} current ratings, "
                               f"{counts['appeals']:,} open appeals, {NOTIFICATIONS} notifications per "
                               "fact-checker (a quarter unread).")
    return figures + counted
