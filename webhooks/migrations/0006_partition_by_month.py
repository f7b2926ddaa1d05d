"""Webhook events, deliveries and attempts become monthly range partitions on PostgreSQL (issue 28, finding 9),
so that delivered history leaves by whole months after FACTDESK_WEBHOOK_RETENTION_DAYS while the append-only
triggers hold for every row kept. Attempts get their delivery's `created_at` (the month they are kept in).

On PostgreSQL every row is copied once into the partitioned tables (a few minutes per ten million rows; the
tables are locked meanwhile, so webhooks wait: run it in a quiet hour). On SQLite only the new column is added.
Irreversible: referenced by (id, created_at), the partitioned tables cannot take back the old foreign keys."""

import pgtrigger
from django.db import migrations, models
from django.db.models import deletion

from core import partitions


def fill_delivery_created_at(apps, schema_editor):
    sql = ("UPDATE webhooks_deliveryattempt SET delivery_created_at = "
           "(SELECT d.created_at FROM webhooks_delivery d WHERE d.id = webhooks_deliveryattempt.delivery_id)")
    if schema_editor.connection.vendor != "postgresql":
        schema_editor.execute(sql)
        return
    # The attempts are append-only; this one filling of the new column is the migration's, trigger by name.
    with pgtrigger.ignore("webhooks.DeliveryAttempt:webhook_delivery_attempt_append_only"):
        with schema_editor.connection.cursor() as cursor:
            cursor.execute(sql)


def partition(apps, schema_editor):
    partitions.convert_in_migration(schema_editor, [
        partitions.Conversion("webhooks_event", "created_at"),
        partitions.Conversion("webhooks_delivery", "created_at"),
        partitions.Conversion(
            "webhooks_deliveryattempt", "delivery_created_at",
            references=((("delivery_id", "delivery_created_at"), "webhooks_delivery", ("id", "created_at")),),
        ),
    ])


class Migration(migrations.Migration):

    dependencies = [
        ("webhooks", "0005_refuse_truncate"),
    ]

    operations = [
        migrations.AddField(
            model_name="deliveryattempt",
            name="delivery_created_at",
            field=models.DateTimeField(editable=False, null=True),
        ),
        migrations.RunPython(fill_delivery_created_at, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="deliveryattempt",
            name="delivery_created_at",
            field=models.DateTimeField(editable=False),
        ),
        migrations.AlterField(
            model_name="delivery",
            name="event",
            field=models.ForeignKey(db_constraint=False, on_delete=deletion.PROTECT, related_name="deliveries",
                                    to="webhooks.event"),
        ),
        migrations.AlterField(
            model_name="deliveryattempt",
            name="delivery",
            field=models.ForeignKey(db_constraint=False, on_delete=deletion.PROTECT, related_name="attempt_log",
                                    to="webhooks.delivery"),
        ),
        migrations.RunPython(partition),
    ]
