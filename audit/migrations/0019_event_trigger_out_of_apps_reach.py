"""The event trigger's function made again by deploy/history_event_trigger.sql, in a schema of its own that the
superuser owns. Until now it was in `public`, which the app's role owns (docs/operations.md, "Roles and backups"), and
the owner of a schema may drop any function in it: `DROP FUNCTION ... CASCADE` by the app's role took the event
trigger with it. As a non-superuser this step cannot, and says so: `manage.py check_history` reports the function's
schema until a superuser runs the file (docs/history.md)."""

import logging

from django.db import migrations

from core.history_guard import event_trigger_sql

logger = logging.getLogger(__name__)


def remake(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")
        row = cursor.fetchone()
        if not (row and row[0]):
            logger.warning(
                "audit 0019: the migrating role is not a superuser, so the event trigger that keeps history triggers "
                "enabled was not made again out of its reach; have a superuser run deploy/history_event_trigger.sql "
                "(docs/history.md)"
            )
            return
        cursor.execute(event_trigger_sql())


class Migration(migrations.Migration):

    dependencies = [
        ("audit", "0018_reports_reopened_verb"),
    ]

    # Backwards: nothing to undo (0013's reverse drops the event trigger, its function and its schema).
    operations = [migrations.RunPython(remake, migrations.RunPython.noop, elidable=False)]
