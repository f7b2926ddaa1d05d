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
