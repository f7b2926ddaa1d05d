"""An event trigger that refuses `ALTER TABLE ... DISABLE TRIGGER` (or ENABLE REPLICA TRIGGER) on the triggers
that keep history append-only (issue 28, finding 7). Event triggers need a superuser: where the migrating role
is not one, this step is skipped with a warning and `manage.py check_history` reports the event trigger missing.
What a superuser can still do, and how it shows: docs/history.md.

The SQL is deploy/history_event_trigger.sql, which a superuser runs as it is where this step was skipped (and
after a restore); this step runs the same file, so the two cannot differ."""

import logging

from django.db import migrations

from core.history_guard import event_trigger_sql

logger = logging.getLogger(__name__)

EVENT_TRIGGER = "factdesk_history_triggers_stay_enabled"

DROP = f"""
DROP EVENT TRIGGER IF EXISTS {EVENT_TRIGGER};
DROP SCHEMA IF EXISTS factdesk_guard CASCADE;
DROP FUNCTION IF EXISTS public.factdesk_refuse_disabled_history_triggers();
"""


def may_create_event_triggers(cursor) -> bool:
    cursor.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")
    row = cursor.fetchone()
    return bool(row and row[0])


def install(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        if not may_create_event_triggers(cursor):
            logger.warning(
                "audit 0013: the migrating role is not a superuser, so the event trigger %s that refuses disabling "
                "the history triggers was not created; have a superuser run deploy/history_event_trigger.sql "
                "(docs/history.md); `manage.py check_history` reports it missing until then",
                EVENT_TRIGGER,
            )
            return
        cursor.execute(event_trigger_sql())


def uninstall(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        if may_create_event_triggers(cursor):
            cursor.execute(DROP)


class Migration(migrations.Migration):

    dependencies = [
        ("audit", "0012_refuse_truncate"),
    ]

    operations = [migrations.RunPython(install, uninstall, elidable=False)]
