"""Audit events become monthly range partitions of `created_at` on PostgreSQL (issue 32), under the same
append-only triggers on every partition (core.partitions). Every row is copied once (the table is locked
meanwhile: run it in a quiet hour); SQLite is left as it is. Irreversible, as webhooks 0006."""

from django.db import migrations

from core import partitions


def partition(apps, schema_editor):
    partitions.convert_in_migration(schema_editor, [partitions.Conversion("audit_auditevent", "created_at")])


class Migration(migrations.Migration):

    dependencies = [
        ("audit", "0013_history_triggers_stay_enabled"),
    ]

    operations = [
        migrations.RunPython(partition),
    ]
