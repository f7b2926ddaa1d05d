"""Audit events become monthly range partitions of `created_at` on PostgreSQL (issue 32), under the same
append-only triggers on every partition (core.partitions). Every row is copied once (the table is locked
meanwhile: run it in a quiet hour); SQLite is left as it is. Irreversible, as webhooks 0006."""

from django.db import migrations
from django.utils import timezone

from core import partitions

MONTHS_AHEAD = 3


def partition(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        if partitions.is_partitioned(cursor, "audit_auditevent"):
            return
        partitions.convert_to_partitioned(
            cursor, [partitions.Conversion("audit_auditevent", "created_at")], now=timezone.now(), ahead=MONTHS_AHEAD,
        )


class Migration(migrations.Migration):

    dependencies = [
        ("audit", "0013_history_triggers_stay_enabled"),
    ]

    operations = [
        migrations.RunPython(partition),
    ]
