"""The decisions feed, rating decisions, statements of reasons and appeal events become monthly range partitions on
PostgreSQL (issue 32), under the same append-only triggers on every partition (core.partitions).

PostgreSQL requires each unique key of a partitioned table to hold its partition key, so each table is partitioned
by a moment its key decides, and the database holds the row to that moment, so that the widened key is exactly as
unique as the old one:
- a rating decision by its rating's `created_at` (the new `rating_created_at`, a foreign key with the rating's id
  to the rating's (id, created_at), which a unique index made here keys: factcheck's ratings are not partitioned,
  and the index is moderation's, for its decisions): unique (rating, post, rating_created_at) is unique (rating,
  post);
- a statement of reasons by its action's `created_at`, and with its action's puid (a foreign key to the action's
  (id, puid, created_at)): unique (action, created_at) and (puid, created_at) are unique action and puid;
- the feed and appeal events by their own `created_at` (no unique key but the id).

On PostgreSQL every row is copied once (the tables are locked meanwhile: run it in a quiet hour). On SQLite only the
new column and the keys are added. Irreversible, as webhooks 0006: nothing undoes a partitioning."""

import pgtrigger
from django.db import migrations, models
from django.utils import timezone

from core import partitions

MONTHS_AHEAD = 3

TABLES = [
    partitions.Conversion(
        "moderation_ratingdecision", "rating_created_at",
        references=((("rating_id", "rating_created_at"), "factcheck_rating", ("id", "created_at")),),
    ),
    partitions.Conversion(
        "moderation_statementofreasons", "created_at",
        references=((("action_id", "puid", "created_at"), "moderation_action", ("id", "puid", "created_at")),),
    ),
    partitions.Conversion("moderation_appealevent", "created_at"),
    partitions.Conversion("moderation_distributionchange", "created_at"),
]


def fill_rating_created_at(apps, schema_editor):
    sql = ("UPDATE moderation_ratingdecision SET rating_created_at = "
           "(SELECT r.created_at FROM factcheck_rating r WHERE r.id = moderation_ratingdecision.rating_id)")
    if schema_editor.connection.vendor != "postgresql":
        schema_editor.execute(sql)
        return
    # Rating decisions are append-only; this one filling of the new column is the migration's, trigger by name.
    with pgtrigger.ignore("moderation.RatingDecision:rating_decision_append_only"):
        with schema_editor.connection.cursor() as cursor:
            cursor.execute(sql)


def partition(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        if partitions.is_partitioned(cursor, "moderation_distributionchange"):
            return
        partitions.convert_to_partitioned(
            cursor, [partitions.Conversion(spec.table, spec.key, spec.references) for spec in TABLES],
            now=timezone.now(), ahead=MONTHS_AHEAD,
        )


class Migration(migrations.Migration):

    dependencies = [
        ("moderation", "0012_unread_notifications_index"),
    ]

    operations = [
        migrations.RunSQL(
            "CREATE UNIQUE INDEX IF NOT EXISTS moderation_rating_decision_key ON factcheck_rating (id, created_at)",
            "DROP INDEX IF EXISTS moderation_rating_decision_key",
        ),
        migrations.AddConstraint(
            model_name="action",
            constraint=models.UniqueConstraint(fields=("id", "puid", "created_at"), name="action_statement_key"),
        ),
        migrations.AddField(
            model_name="ratingdecision",
            name="rating_created_at",
            field=models.DateTimeField(editable=False, null=True),
        ),
        migrations.RunPython(fill_rating_created_at, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="ratingdecision",
            name="rating_created_at",
            field=models.DateTimeField(editable=False),
        ),
        migrations.RunPython(partition),
    ]
