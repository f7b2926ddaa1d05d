"""The decisions feed, statements of reasons and appeal events become monthly range partitions on PostgreSQL
(issue 32), under the same append-only triggers on every partition (core.partitions).

PostgreSQL requires each unique key of a partitioned table to hold its partition key. A statement of reasons is
partitioned by its action's `created_at` and carries its action's puid, and a foreign key to the action's (id,
puid, created_at) holds it to both: unique (action, created_at) and (puid, created_at) are then exactly unique
action and puid. The feed and appeal events are partitioned by their own `created_at` (no unique key but the id).
Rating decisions stay one table (docs/history.md says why).

On PostgreSQL every row is copied once (the tables are locked meanwhile: run it in a quiet hour). On SQLite only the
action's key is added. Irreversible, as webhooks 0006: nothing undoes a partitioning."""

from django.db import migrations, models

from core import partitions


def partition(apps, schema_editor):
    partitions.convert_in_migration(schema_editor, [
        partitions.Conversion(
            "moderation_statementofreasons", "created_at",
            references=((("action_id", "puid", "created_at"), "moderation_action", ("id", "puid", "created_at")),),
        ),
        partitions.Conversion("moderation_appealevent", "created_at"),
        partitions.Conversion("moderation_distributionchange", "created_at"),
    ])


class Migration(migrations.Migration):

    dependencies = [
        ("moderation", "0012_unread_notifications_index"),
    ]

    operations = [
        migrations.AddConstraint(
            model_name="action",
            constraint=models.UniqueConstraint(fields=("id", "puid", "created_at"), name="action_statement_key"),
        ),
        migrations.RunPython(partition),
    ]
