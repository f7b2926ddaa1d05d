"""An event trigger that refuses `ALTER TABLE ... DISABLE TRIGGER` (or ENABLE REPLICA TRIGGER) on the triggers
that keep history append-only (issue 28, finding 7). Event triggers need a superuser: where the migrating role
is not one, this step is skipped with a warning and `manage.py check_history` reports the event trigger missing.
What a superuser can still do, and how it shows: docs/history.md."""

import logging

from django.db import migrations

logger = logging.getLogger(__name__)

EVENT_TRIGGER = "factdesk_history_triggers_stay_enabled"

CREATE = f"""
CREATE OR REPLACE FUNCTION factdesk_refuse_disabled_history_triggers() RETURNS event_trigger
LANGUAGE plpgsql AS $$
DECLARE
    hit record;
BEGIN
    -- After the ALTER TABLE: is any pgtrigger trigger of the altered tables (or of their partitions) no
    -- longer fired in an ordinary session? D = disabled, R = fired only under session_replication_role=replica.
    SELECT t.tgname, t.tgrelid::regclass AS tbl INTO hit
    FROM pg_event_trigger_ddl_commands() AS c
    CROSS JOIN LATERAL (SELECT c.objid::regclass UNION SELECT relid FROM pg_partition_tree(c.objid::regclass))
        AS tree (relid)
    JOIN pg_trigger AS t ON t.tgrelid = tree.relid
    WHERE c.object_type = 'table' AND t.tgname LIKE 'pgtrigger\\_%' AND t.tgenabled IN ('D', 'R')
    LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'Cannot disable trigger % on %: the triggers that keep history stay enabled', hit.tgname, hit.tbl
            USING HINT = 'See docs/history.md.';
    END IF;
END;
$$;
DROP EVENT TRIGGER IF EXISTS {EVENT_TRIGGER};
CREATE EVENT TRIGGER {EVENT_TRIGGER} ON ddl_command_end WHEN TAG IN ('ALTER TABLE')
    EXECUTE FUNCTION factdesk_refuse_disabled_history_triggers();
"""

DROP = f"""
DROP EVENT TRIGGER IF EXISTS {EVENT_TRIGGER};
DROP FUNCTION IF EXISTS factdesk_refuse_disabled_history_triggers();
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
                "the history triggers was not created; `manage.py check_history` reports it missing (docs/history.md)",
                EVENT_TRIGGER,
            )
            return
        cursor.execute(CREATE)


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
