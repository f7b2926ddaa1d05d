"""The growth curve's history (`--only scale`): the database grown to N posts by SQL, as years of use would leave it.

Each size adds only the difference to what the run has loaded so far (never from zero), so the curve is one
database growing. Ingest through the API would take hours at 5,000,000 posts, so the rows are written by
INSERT ... SELECT generate_series, shaped as ingest, the decision pipeline and appeals leave them:

- pages (one per POSTS_PER_PAGE posts) and posts first flagged over the last `days` days, their text,
  normalised forms, keys and stored words (the generated `search_vector`) as ingest stores them, every post
  matched (`matched_at`) with its 12 band keys in PostBand as its match job writes them;
- 1 to 3 flags a post, each with its `flag.received` audit event, and each post's `post.queued` event;
- RATED_SHARE of the posts rated within two days of their first flag by a reviewer of the organisation of the
  post's language: its claim (completed), rating, band keys in RatedBand, decision, the policy's action with
  its statement of reasons, the post's distribution and feed entry, the decision's audit events, the flags
  answered and `left_queue_at` set to the rating's moment;
- an appeal against APPEALED_SHARE of the restricting ratings (most decided, upheld), with its events.

What the SQL leaves out: strikes and page standings (a page's strikes would make most pages repeat offenders;
each measured decision reads the page's strikes, a handful at any size), near-duplicate groups and matches,
notices (the bench pages have no owners) and webhook events (no endpoint). Signatures are 12 random keys, not
a MinHash of the text, so a text's copies are not found by its keys (bench/scale.py says how the candidates
figure copes).
"""

from __future__ import annotations

import math
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from decimal import Decimal

from django.db import connection, transaction
from django.utils import timezone

from bench.dashboard import LANGUAGES, REVIEWERS_PER_ORGANISATION, dashboard_reviewers
from bench.data import COUNTRIES, SYLLABLES
from bench.database import vacuum_analyze

POSTS_PER_PAGE = 50
RATED_SHARE = 0.25
APPEALED_SHARE = 0.01
PREFIX = "scale-"
# Verdicts of the ratings, in these proportions (one in seven each, false twice): as load_history has them.
VERDICTS = ("false", "false", "partly_false", "altered", "missing_context", "true", "satire")
RATIONALE = ("Checked against the official records (reference %s): the figures quoted do not appear in them, and "
             "the people named deny the statement. The sources hold the documents and the replies we received.")


@dataclass
class ScaleUsers:
    """Who the history names: the platform account that flags, the reviewers of one organisation per language
    (bench.dashboard's, reused) and the owner who files the appeals."""

    platform: object
    owner: object
    organisation_ids: list[int]
    reviewer_ids: list[int]


@dataclass
class Growth:
    """One growth step: from how many posts to how many, and the seconds each stage of the SQL took."""

    before: int
    after: int
    stages: dict[str, float] = field(default_factory=dict)

    @property
    def added(self) -> int:
        return self.after - self.before

    @property
    def seconds(self) -> float:
        return sum(self.stages.values())


def scale_users(*, platform, owner) -> ScaleUsers:
    organisation_ids, reviewer_ids = dashboard_reviewers()
    return ScaleUsers(platform=platform, owner=owner, organisation_ids=organisation_ids, reviewer_ids=reviewer_ids)


def post_count() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM factcheck_post")
        return cursor.fetchone()[0]


@contextmanager
def _stage(growth: Growth, name: str):
    print(f"  {name}", flush=True)
    started = time.perf_counter()
    yield
    growth.stages[name] = growth.stages.get(name, 0.0) + time.perf_counter() - started


def grow(*, posts: int, days: int, users: ScaleUsers) -> Growth:
    """Add what it takes for the database to hold `posts` posts, with their history; then VACUUM ANALYZE."""
    growth = Growth(before=post_count(), after=posts)
    if growth.added <= 0:
        growth.after = growth.before
        return growth
    now = timezone.now()
    with connection.cursor() as cursor:
        # Sorts of tens of millions of band keys (the primary keys rebuilt below) in memory, not in many runs.
        cursor.execute("SET maintenance_work_mem = '1GB'")
        cursor.execute("SET work_mem = '256MB'")
        cursor.execute("SELECT count(*) FROM factcheck_post WHERE external_id LIKE %s", [f"{PREFIX}%"])
        first = cursor.fetchone()[0] + 1
        cursor.execute("SELECT coalesce(max(id), 0) FROM factcheck_post")
        after_id = cursor.fetchone()[0]
        params = {"after": after_id, "now": now, "span": timedelta(days=days), "platform": users.platform.pk,
                  "owner": users.owner.pk, "languages": list(LANGUAGES),
                  "countries": [COUNTRIES[code] for code in LANGUAGES], "organisations": users.organisation_ids,
                  "reviewers": users.reviewer_ids, "per": REVIEWERS_PER_ORGANISATION}
        with _stage(growth, "pages"):
            _add_pages(cursor, pages=math.ceil(posts / POSTS_PER_PAGE), now=now, days=days)
        with _stage(growth, "posts"):
            _add_posts(cursor, params | {"first": first, "last": first + growth.added - 1, "syllables": SYLLABLES,
                                         "rated": RATED_SHARE})
        with _stage(growth, "band keys (PostBand)"):
            _add_bands(cursor, "factcheck_postband", "id > %(after)s", params)
        with _stage(growth, "flags"):
            _add_flags(cursor, params)
        with _stage(growth, "claims and ratings"):
            _add_ratings(cursor, params | {"verdicts": list(VERDICTS), "rationale": RATIONALE})
        with _stage(growth, "band keys of rated claims (RatedBand)"):
            _add_bands(cursor, "factcheck_ratedband", "id > %(after)s AND queue_state = 'rated'", params)
        with _stage(growth, "actions and decisions"):
            _add_decisions(cursor, params)
        with _stage(growth, "statements of reasons"):
            _add_statements(cursor, params)
        with _stage(growth, "distributions and the decisions feed"):
            _add_distributions(cursor, params)
        with _stage(growth, "audit events"):
            _add_audit_events(cursor, params)
        with _stage(growth, "appeals and their events"):
            _add_appeals(cursor, params | {"share": APPEALED_SHARE})
        cursor.execute("RESET maintenance_work_mem")
        cursor.execute("RESET work_mem")
    with _stage(growth, "VACUUM ANALYZE"):
        vacuum_analyze()
    growth.after = post_count()
    return growth


def _add_pages(cursor, *, pages: int, now, days: int) -> None:
    cursor.execute(
        """INSERT INTO factcheck_page (external_id, name, is_politician, created_at)
           SELECT %(prefix)s || 'page-' || lpad(k::text, 8, '0'), 'Scale page ' || k, false, %(created)s
           FROM generate_series((SELECT count(*) + 1 FROM factcheck_page WHERE external_id LIKE %(like)s),
                                %(pages)s) k""",
        {"prefix": PREFIX, "like": f"{PREFIX}page-%", "pages": pages, "created": now - timedelta(days=days + 1)},
    )


def _add_posts(cursor, params: dict) -> None:
    """Posts `first` to `last` (their external ids), spread over every scale page. A text is 14 to 44 words of
    three syllables, Zipf-distributed over 20,000 words (as bench.data's, whose texts are in lower case, so the
    normalised text is the text); the keys are SHA-256 cut to the length of factcheck.normalise's SHA-1."""
    cursor.execute(
        """INSERT INTO factcheck_post (external_id, page_id, url, text, language, country, media_type, topic,
               posted_at, views, shares, normalised_url, url_key, normalised_text, text_key, signature,
               queue_state, flag_count, flag_weight, first_flagged_at, left_queue_at, priority, velocity_score,
               flag_score, age_score, created_at, updated_at, matched_at)
           SELECT %(prefix)s || lpad(g::text, 10, '0'), pg.id, url, text, (%(languages)s::text[])[1 + g %% 8],
               (%(countries)s::text[])[1 + g %% 8], 'text', '', f - posted_before, floor(exp(draw_views * 14)),
               floor(exp(draw_views * 9)), url, left(encode(sha256(convert_to(url, 'UTF8')), 'hex'), 40), text,
               left(encode(sha256(convert_to(text, 'UTF8')), 'hex'), 40), signature,
               CASE WHEN rated THEN 'rated' ELSE 'queued' END, flags, flags, f,
               CASE WHEN rated THEN LEAST(f + draw_rated_after * interval '48 hours', %(now)s) END,
               priority, priority * 0.5, priority * 0.3, priority * 0.2, f, f, f
           FROM (SELECT g, 'https://social.example/p/' || %(prefix)s || g AS url,
                     %(now)s::timestamptz - random() * %(span)s::interval AS f,
                     random() * interval '3 days' AS posted_before, random() AS draw_views,
                     random() < %(rated)s AS rated, random() AS draw_rated_after, random() * 100 AS priority,
                     1 + (draw_flags < 0.3)::int + (draw_flags < 0.1)::int AS flags,
                     (SELECT string_agg(s[1 + r %% 44] || s[1 + (r / 44) %% 44] || s[1 + (r / 1936) %% 44], ' ')
                      FROM (SELECT least(floor(10 * exp(random() * ln(2001.0)) - 10)::int, 19999) AS r
                            FROM generate_series(1, 14 + g %% 31)) w) AS text,
                     -- 12 keys, the band's number in the low 4 bits (as real keys mix it in): never two alike
                     (SELECT string_agg((floor(random() * 268435456)::bigint * 16 + b - 2147483648)::text, ' ')
                      FROM generate_series(0, 11) b WHERE g IS NOT NULL) AS signature
                 FROM generate_series(%(first)s, %(last)s) g, (SELECT %(syllables)s::text[] AS s) syllables,
                     LATERAL (SELECT random() AS draw_flags WHERE g IS NOT NULL) d
                 OFFSET 0) p
           JOIN (SELECT id, row_number() OVER (ORDER BY id) - 1 AS k FROM factcheck_page
                 WHERE external_id LIKE %(like)s) pg
             ON pg.k = p.g %% (SELECT count(*) FROM factcheck_page WHERE external_id LIKE %(like)s)""",
        params | {"prefix": PREFIX, "like": f"{PREFIX}page-%"},
    )


def _add_bands(cursor, table: str, where: str, params: dict) -> None:
    """The band keys of the posts `where` says, in `table`: its primary key dropped, the rows written, the key
    built again (bench.matching.index_loaded_posts says why: one sort instead of a probe a row)."""
    with transaction.atomic():
        cursor.execute(f"ALTER TABLE {table} DROP CONSTRAINT {table}_pkey")
        cursor.execute(f"INSERT INTO {table} (band, post_id) SELECT unnest(string_to_array(signature, ' ')::int[]), "
                       f"id FROM factcheck_post WHERE {where}", params)
        cursor.execute(f"ALTER TABLE {table} ADD CONSTRAINT {table}_pkey PRIMARY KEY (band, post_id)")


def _add_flags(cursor, params: dict) -> None:
    """Each post's flags (the first at its first flag, the others within six hours), from the sources in
    bench.data's odds; those of a rated post answered by its rating."""
    cursor.execute(
        """INSERT INTO factcheck_flag (post_id, source, category, reason, flagged_at, received_at, idempotency_key,
               submitted_by_id, status, outcome, decided_at, fingerprint)
           SELECT id, (ARRAY['user_report', 'classifier', 'partner', 'trusted_flagger'])[
                   CASE WHEN draw < 0.6 THEN 1 WHEN draw < 0.85 THEN 2 WHEN draw < 0.95 THEN 3 ELSE 4 END],
               'misinformation', 'Reported as false information', at, at, key, %(platform)s,
               CASE WHEN rated_at IS NULL THEN 'open' ELSE 'decided' END,
               CASE WHEN rated_at IS NULL THEN '' ELSE 'rated' END,
               CASE WHEN rated_at IS NOT NULL THEN GREATEST(rated_at, at) END,
               encode(sha256(convert_to(key, 'UTF8')), 'hex')
           FROM (SELECT p.id, p.left_queue_at AS rated_at, random() AS draw,
                     %(prefix)s || 'flag-' || p.id || '-' || k AS key,
                     LEAST(p.first_flagged_at + (k - 1) * random() * interval '6 hours', %(now)s) AS at
                 FROM factcheck_post p CROSS JOIN LATERAL generate_series(1, p.flag_count) k
                 WHERE p.id > %(after)s OFFSET 0) f""",
        params | {"prefix": PREFIX},
    )


def _add_ratings(cursor, params: dict) -> None:
    """A completed claim and a rating for each rated post, by a reviewer of its language's organisation."""
    cursor.execute(
        """INSERT INTO factcheck_claim (status, claimed_at, expires_at, ended_at, reviewer_id, post_id)
           SELECT 'completed', rated_at - took, rated_at - took + interval '30 minutes', rated_at,
               (%(reviewers)s::bigint[])[1 + li * %(per)s + id %% %(per)s], id
           FROM (SELECT id, left_queue_at AS rated_at, random() * interval '25 minutes' AS took,
                     array_position(%(languages)s::text[], language::text) - 1 AS li
                 FROM factcheck_post WHERE id > %(after)s AND queue_state = 'rated' OFFSET 0) p""",
        params,
    )
    cursor.execute(
        """INSERT INTO factcheck_rating (post_id, claim_id, reviewer_id, organisation_id, verdict, rationale, sources,
               article_url, change_reason, created_at, is_current)
           SELECT c.post_id, c.id, c.reviewer_id,
               (%(organisations)s::bigint[])[array_position(%(languages)s::text[], p.language::text)],
               (%(verdicts)s::text[])[1 + (c.post_id * 7919) %% 7], format(%(rationale)s, c.post_id),
               jsonb_build_array('https://records.example/doc/' || c.post_id,
                                 'https://news.example/replies/' || c.post_id),
               'https://factcheck.example/articles/' || c.post_id, '', c.ended_at, true
           FROM factcheck_claim c JOIN factcheck_post p ON p.id = c.post_id WHERE c.post_id > %(after)s""",
        params,
    )


def _add_decisions(cursor, params: dict) -> None:
    """The policy's action for each restricting rating, and each rating's decision, at the rating's moment."""
    cursor.execute(
        """INSERT INTO moderation_action (puid, post_id, kind, rating_id, verdict, feed_multiplier, label,
               warn_sharers, ground, reason, created_at, end_reason)
           SELECT 'fd-action-' || md5(%(prefix)s || r.id), r.post_id, 'fact_check', r.id, r.verdict,
               e.feed_multiplier, e.label, e.warn_sharers, '', r.rationale, r.created_at, ''
           FROM factcheck_rating r JOIN moderation_enforcementpolicy e ON e.verdict = r.verdict
           WHERE r.post_id > %(after)s AND (e.feed_multiplier < 1 OR e.label <> '')""",
        params | {"prefix": PREFIX},
    )
    cursor.execute(
        """INSERT INTO moderation_ratingdecision (rating_id, post_id, outcome, action_id, decided_at)
           SELECT r.id, r.post_id, 'applied', a.id, r.created_at
           FROM factcheck_rating r LEFT JOIN moderation_action a ON a.rating_id = r.id
           WHERE r.post_id > %(after)s""",
        params,
    )


def statement_templates() -> list[tuple]:
    """Per restricting verdict, a statement of reasons as moderation.statements.reasons builds it (for an
    unsaved action on an unsaved post): its words, less the organisation's name and rationale (the SQL writes
    those per row) and the puid (set per row in the transparency record)."""
    from factcheck.models import Organisation, Post, Rating, Verdict
    from moderation.models import Action, ActionKind, EnforcementPolicy
    from moderation.statements.reasons import build_statement

    now = timezone.now()
    found = []
    for policy in EnforcementPolicy.objects.all():
        if policy.feed_multiplier >= Decimal("1") and not policy.label:
            continue
        rating = Rating(pk=1, verdict=policy.verdict, rationale="", organisation=Organisation(name="Scale"))
        action = Action(puid="fd-action-template", kind=ActionKind.FACT_CHECK, rating=rating, verdict=policy.verdict,
                        feed_multiplier=policy.feed_multiplier, label=policy.label,
                        warn_sharers=policy.warn_sharers, created_at=now)
        statement = build_statement(action=action, post=Post(language="en", country="GB", posted_at=now),
                                    flag_sources={"user_report"}, started_by="user_report", standing=None,
                                    notice_at=now, media_kinds=set())
        found.append((policy.verdict, Verdict(policy.verdict).label, statement.what, statement.scope,
                      statement.ground, statement.automation, statement.automated_detection,
                      statement.automated_decision, statement.appeal_kinds, statement.how_to_appeal,
                      statement.transparency))
    return found


def _add_statements(cursor, params: dict) -> None:
    from psycopg.types.json import Jsonb

    cursor.execute("""CREATE TEMP TABLE IF NOT EXISTS scale_statement (verdict text PRIMARY KEY, display text,
                          what text, scope text, ground text, automation text, automated_detection boolean,
                          automated_decision boolean, appeal_kinds jsonb, how_to_appeal text, transparency jsonb)""")
    cursor.execute("TRUNCATE scale_statement")
    cursor.executemany("INSERT INTO scale_statement VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                       [(*row[:8], Jsonb(row[8]), row[9], Jsonb(row[10])) for row in statement_templates()])
    cursor.execute(
        """INSERT INTO moderation_statementofreasons (puid, created_at, what, scope, facts, ground, automation,
               automated_detection, automated_decision, appeal_kinds, appeal_by, how_to_appeal, transparency,
               action_id)
           SELECT a.puid, a.created_at, t.what, t.scope, 'Rated ' || t.display || ' by ' || o.name || ': ' || a.reason,
               t.ground, replace(t.automation, 'Scale', o.name), t.automated_detection, t.automated_decision,
               t.appeal_kinds, a.created_at + interval '6 months', t.how_to_appeal,
               jsonb_set(t.transparency, '{puid}', to_jsonb(a.puid)), a.id
           FROM moderation_action a JOIN factcheck_rating r ON r.id = a.rating_id
           JOIN factcheck_organisation o ON o.id = r.organisation_id JOIN scale_statement t ON t.verdict = a.verdict
           WHERE a.post_id > %(after)s""",
        params,
    )


def _add_distributions(cursor, params: dict) -> None:
    """Each restricted post's distribution, and its entry in the decisions feed (ids in time order, as the
    feed hands them out in commit order)."""
    described = """SELECT a.id, a.post_id, a.verdict, a.feed_multiplier, a.warn_sharers, a.created_at, t.display,
                       CASE WHEN a.label = '' THEN '[]'::jsonb ELSE jsonb_build_array(a.label) END AS labels,
                       jsonb_build_array(jsonb_build_object('code', 'fact_check', 'action_id', a.id,
                           'verdict', a.verdict, 'text', 'Rated ' || t.display || ' by ' || o.name
                           || '; feed distribution x' || trim_scale(a.feed_multiplier) || '.')) AS reasons
                   FROM moderation_action a JOIN factcheck_rating r ON r.id = a.rating_id
                   JOIN factcheck_organisation o ON o.id = r.organisation_id
                   JOIN scale_statement t ON t.verdict = a.verdict WHERE a.post_id > %(after)s"""
    cursor.execute(
        f"""INSERT INTO moderation_postdistribution (multiplier, labels, removed, reasons, updated_at, post_id)
            SELECT feed_multiplier, labels, false, reasons, created_at, post_id FROM ({described}) d""",
        params,
    )
    cursor.execute(
        f"""INSERT INTO moderation_distributionchange (multiplier, labels, removed, reasons, warn_sharers, cause,
                created_at, post_id)
            SELECT feed_multiplier, labels, false, reasons, warn_sharers, 'rated ' || display, created_at, post_id
            FROM ({described}) d ORDER BY created_at""",
        params,
    )


def _add_audit_events(cursor, params: dict) -> None:
    """What ingest logs (a `flag.received` a flag, a `post.queued` a post) and what a rating and its decision log
    (the claim, the rating, the flags answered, the action and the decision)."""
    columns = "created_at, actor_id, actor_label, verb, target_type, target_id, post_id, reason, data"
    cursor.execute(
        f"""INSERT INTO audit_auditevent ({columns})
            SELECT f.received_at, f.submitted_by_id, u.username, 'flag.received', 'factcheck.flag', f.id::text,
                f.post_id, f.reason, jsonb_build_object('source', f.source, 'category', f.category,
                                                       'idempotency_key', f.idempotency_key)
            FROM factcheck_flag f JOIN accounts_user u ON u.id = f.submitted_by_id WHERE f.post_id > %(after)s""",
        params,
    )
    cursor.execute(
        f"""INSERT INTO audit_auditevent ({columns})
            SELECT p.first_flagged_at, u.id, u.username, 'post.queued', 'factcheck.post', p.id::text, p.id, 'flagged',
                '{{}}'::jsonb
            FROM factcheck_post p, accounts_user u WHERE p.id > %(after)s AND u.id = %(platform)s""",
        params,
    )
    cursor.execute(
        f"""INSERT INTO audit_auditevent ({columns})
            SELECT r.created_at, e.actor_id, coalesce(u.username, 'system:enforcement'), e.verb, e.target_type,
                e.target_id, r.post_id, e.reason, e.data
            FROM factcheck_rating r LEFT JOIN moderation_action a ON a.rating_id = r.id
            CROSS JOIN LATERAL (VALUES
                (r.reviewer_id, 'claim.created', 'factcheck.claim', r.claim_id::text, '',
                 jsonb_build_object('expires_at', r.created_at + interval '30 minutes')),
                (r.reviewer_id, 'rating.recorded', 'factcheck.rating', r.id::text, r.rationale,
                 jsonb_build_object('verdict', r.verdict, 'organisation', r.organisation_id)),
                (NULL, 'report.decided', 'factcheck.post', r.post_id::text, '', jsonb_build_object('outcome', 'rated')),
                (NULL, 'action.created', 'moderation.action', a.id::text, 'rated ' || r.verdict,
                 jsonb_build_object('kind', a.kind, 'label', a.label, 'rating', r.id, 'multiplier', a.feed_multiplier)),
                (NULL, 'decision.applied', 'factcheck.rating', r.id::text, '',
                 jsonb_build_object('action', a.id, 'verdict', r.verdict))
            ) AS e(actor_id, verb, target_type, target_id, reason, data)
            LEFT JOIN accounts_user u ON u.id = e.actor_id
            WHERE r.post_id > %(after)s AND (e.verb <> 'action.created' OR a.id IS NOT NULL)""",
        params,
    )


def _add_appeals(cursor, params: dict) -> None:
    """Disputes of APPEALED_SHARE of the restricting ratings, filed within five days of the decision; those
    filed more than two days ago mostly decided (upheld) within 40 hours. Each with its filing and decision
    events."""
    cursor.execute(
        """INSERT INTO moderation_appeal (post_id, kind, rating_id, action_id, filed_by_id, statement, evidence_urls,
               correction_details, status, version, created_at, decision_notice_at, reviewer_id, decided_at,
               outcome_reason, new_verdict)
           SELECT post_id, 'dispute', rating_id, NULL, %(owner)s, 'The rating is wrong: the figures are official.',
               jsonb_build_array('https://evidence.example/' || post_id), '',
               CASE WHEN decided_at IS NULL THEN 'open' ELSE 'upheld' END,
               CASE WHEN decided_at IS NULL THEN 1 ELSE 2 END,
               filed, created_at, CASE WHEN decided_at IS NOT NULL THEN reviewer_id END, decided_at,
               CASE WHEN decided_at IS NULL THEN '' ELSE 'The sources stand; the rating stays.' END, ''
           FROM (SELECT a.post_id, a.rating_id, a.created_at, r.reviewer_id, filed,
                     CASE WHEN draw < 0.85 AND filed + interval '40 hours' < %(now)s
                          THEN filed + draw * interval '40 hours' END AS decided_at
                 FROM moderation_action a JOIN factcheck_rating r ON r.id = a.rating_id
                 CROSS JOIN LATERAL (SELECT a.created_at + random() * interval '5 days' AS filed,
                                            random() AS draw, random() AS pick) d
                 WHERE a.post_id > %(after)s AND pick < %(share)s AND filed < %(now)s OFFSET 0) x""",
        params,
    )
    cursor.execute(
        """INSERT INTO moderation_appealevent (appeal_id, from_status, to_status, actor_id, reason, created_at)
           SELECT id, '', 'open', filed_by_id, statement, created_at FROM moderation_appeal WHERE post_id > %(after)s
           UNION ALL
           SELECT id, 'open', status, reviewer_id, outcome_reason, decided_at FROM moderation_appeal
           WHERE post_id > %(after)s AND decided_at IS NOT NULL""",
        params,
    )
