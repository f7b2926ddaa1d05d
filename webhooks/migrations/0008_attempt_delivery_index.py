"""A delivery's attempts by (delivery, id), `webhook_attempt_delivery`, in place of the delivery's own index, which it
starts with (core.indexes).

The admin's list of deliveries shows each one's "last answer": the newest attempt of the delivery (webhooks.admin,
a correlated subquery, `ORDER BY id DESC LIMIT 1`). By the delivery alone the planner may walk the attempts table
backwards by id until it meets one of the delivery's, as it does while its statistics are stale (after a burst of
attempts); with this index each row of the list is one probe.

The attempts are partitioned by month (0006): the index is built on each month CONCURRENTLY (writes go on) and
attached to the table's (core.indexes.build_index), checked valid before the old one is dropped; a build that fails
is finished by the next `migrate`. Dropping the old partitioned index takes the table's lock for a moment (as 0007).
SQLite: a plain index.
"""

from django.db import migrations, models
from django.db.models import deletion

from core.indexes import build_index, drop_index

OLD = "webhooks_deliveryattempt_delivery_id_a3a82286"  # Django's index of the foreign key
TABLE = "webhooks_deliveryattempt"


def forwards(apps, schema_editor) -> None:
    build_index(schema_editor, name="webhook_attempt_delivery", table=TABLE, definition="(delivery_id, id)")
    drop_index(schema_editor, OLD)


def backwards(apps, schema_editor) -> None:
    build_index(schema_editor, name=OLD, table=TABLE, definition="(delivery_id)")
    drop_index(schema_editor, "webhook_attempt_delivery")


class Migration(migrations.Migration):
    atomic = False  # CREATE INDEX CONCURRENTLY cannot run inside a transaction

    dependencies = [("webhooks", "0007_indexes_no_query_reads")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="deliveryattempt", name="delivery",
                    field=models.ForeignKey(db_constraint=False, db_index=False, on_delete=deletion.PROTECT,
                                            related_name="attempt_log", to="webhooks.delivery"),
                ),
                migrations.AddIndex(model_name="deliveryattempt",
                                    index=models.Index(fields=["delivery", "id"], name="webhook_attempt_delivery")),
            ],
            database_operations=[migrations.RunPython(forwards, backwards)],
        ),
    ]
