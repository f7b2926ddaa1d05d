"""The bench's own PostgreSQL database: create it if missing, migrate it, empty what the bench fills."""

from __future__ import annotations

import pgtrigger
import psycopg
from django.conf import settings
from django.core.management import call_command
from django.db import connection, transaction

# Filled by each run; policies, users and organisations are kept (users are reused by name,
# and the policy rows come from a data migration that a TRUNCATE would lose).
FILLED_MODELS = (
    "factcheck.Match",
    "factcheck.PostBand",
    "factcheck.RatedBand",
    # Media keys have no foreign key to cascade through (db_constraint=False): emptied by name.
    "factcheck.MediaBand",
    "factcheck.RatedMediaBand",
    "factcheck.PostMedia",
    "factcheck.SemanticBand",
    "factcheck.Flag",
    "factcheck.Rating",
    "factcheck.Claim",
    "factcheck.Post",
    "factcheck.Page",
    "moderation.Action",
    "moderation.Strike",
    "moderation.PageStanding",
    "moderation.RatingDecision",
    "moderation.PostDistribution",
    "moderation.DistributionChange",
    "moderation.ReportedPost",
    "audit.AuditEvent",
    "webhooks.Endpoint",
    "sessions.Session",
    "reports.DailyFigure",
    "reports.RolledUpDay",
)
# The tables ingest writes, in its order; the ingest floor copies their new rows into scratch copies.
COPIED_TABLES = ("factcheck_page", "factcheck_post", "factcheck_flag", "audit_auditevent")


def copy_table(real: str) -> str:
    """The scratch copy of a real table that the ingest floor writes into."""
    return f"bench_{real}_copy"


# bench_post_copy: the posts-only floor of earlier runs, dropped if an old run left it.
SCRATCH_TABLES = (*(copy_table(t) for t in COPIED_TABLES), "bench_claim_floor", "bench_post_copy")


def conninfo() -> str:
    db = settings.DATABASES["default"]
    return psycopg.conninfo.make_conninfo(
        dbname=db["NAME"], user=db.get("USER") or None, password=db.get("PASSWORD") or None,
        host=db.get("HOST") or None, port=str(db["PORT"]) if db.get("PORT") else None,
    )


def ensure_database() -> None:
    """Create the bench database when it does not exist yet (connecting to `postgres` to do so)."""
    target = settings.DATABASES["default"]["NAME"]
    try:
        psycopg.connect(conninfo(), connect_timeout=5).close()
        return
    except psycopg.OperationalError as exc:
        if "does not exist" not in str(exc):
            raise
    admin = psycopg.conninfo.conninfo_to_dict(conninfo()) | {"dbname": "postgres"}
    with psycopg.connect(**admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{target}"')


def prepare_database() -> None:
    """Migrate, then empty every table the bench fills, so each run starts from the same state."""
    ensure_database()
    call_command("migrate", interactive=False, verbosity=0)
    from django.apps import apps

    tables = [apps.get_model(label)._meta.db_table for label in FILLED_MODELS]
    tables.append(apps.get_model("factcheck.Page").owners.through._meta.db_table)
    # The history tables refuse TRUNCATE (docs/history.md): the bench's own database is emptied with pgtrigger's
    # triggers ignored for these statements.
    with pgtrigger.ignore(), transaction.atomic(), connection.cursor() as cursor:
        # CASCADE: rows of newer tables that point at these (appeals, notices) go with them.
        cursor.execute(f"TRUNCATE {', '.join(tables)} RESTART IDENTITY CASCADE")
        for table in SCRATCH_TABLES:
            cursor.execute(f"DROP TABLE IF EXISTS {table}")


def vacuum_analyze() -> None:
    """Fresh statistics after the bulk load, as autovacuum would give a long-running database."""
    with psycopg.connect(conninfo(), autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")


def insert_bench_posts(cursor, *, prefix: str, count: int, media_type: str = "text") -> list[int]:
    """`count` queued posts on one page of their own, matched already, written by one INSERT ... SELECT (the index
    benchmarks' millions of rows; no ingest), their external ids `{prefix}-1` on; returns their ids in order. Posts
    of an earlier run with the prefix are deleted first."""
    cursor.execute("""INSERT INTO factcheck_page (external_id, name, is_politician, created_at)
                      VALUES (%s, %s, false, now()) ON CONFLICT (external_id) DO NOTHING""",
                   [f"{prefix}-page", f"{prefix.replace('-', ' ').capitalize()} page"])
    cursor.execute("DELETE FROM factcheck_post WHERE external_id LIKE %s", [f"{prefix}-%"])
    cursor.execute(
        """INSERT INTO factcheck_post (external_id, page_id, url, text, language, country, media_type, topic,
               posted_at, views, shares, normalised_url, url_key, normalised_text, text_key, signature,
               queue_state, flag_count, flag_weight, first_flagged_at, priority, velocity_score, flag_score,
               age_score, created_at, updated_at, matched_at)
           SELECT %s || n, (SELECT id FROM factcheck_page WHERE external_id = %s),
               '', 'Bench post ' || n, 'en', 'GB', %s, '', now(), 100, 10, '', '', '', '', '',
               'queued', 1, 1.0, now(), 1.0, 0, 0, 0, now(), now(), now()
           FROM generate_series(1, %s) n""", [f"{prefix}-", f"{prefix}-page", media_type, count])
    cursor.execute("SELECT id FROM factcheck_post WHERE external_id LIKE %s ORDER BY id", [f"{prefix}-%"])
    return [row[0] for row in cursor.fetchall()]
