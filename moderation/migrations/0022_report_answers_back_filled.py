"""One answer per flag decided before answers were kept: its outcome and decision time as they stand.

The earlier answers of a flag decided again (reopened, overruled) were overwritten and are only in the audit log:
its history starts here, with the decision that stands, counted as its first. Batched by flag id, each batch its
own transaction (the migration is not atomic), so that no transaction holds more than a batch's rows; a flag
answered already (a batch committed before a failure, the new code answering it meanwhile) is skipped, so the
migration can be run again. An INSERT the append-only triggers allow."""

from django.db import migrations, transaction

BATCH = 20_000


def back_fill(apps, schema_editor):
    Flag = apps.get_model("factcheck", "Flag")
    ReportAnswer = apps.get_model("moderation", "ReportAnswer")
    last = Flag.objects.order_by("-id").values_list("id", flat=True).first() or 0
    sql = (f"INSERT INTO {ReportAnswer._meta.db_table} (flag_id, outcome, answered_at, actor_id, replaces_id) "
           f"SELECT id, outcome, decided_at, NULL, NULL FROM {Flag._meta.db_table} "
           "WHERE id > %s AND id <= %s AND status = 'decided' "
           f"AND NOT EXISTS (SELECT 1 FROM {ReportAnswer._meta.db_table} a WHERE a.flag_id = {Flag._meta.db_table}.id) "
           "ORDER BY id")
    for start in range(0, last, BATCH):
        with transaction.atomic(using=schema_editor.connection.alias), schema_editor.connection.cursor() as cursor:
            cursor.execute(sql, [start, start + BATCH])


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("moderation", "0021_report_answers"),
    ]

    operations = [
        migrations.RunPython(back_fill, migrations.RunPython.noop, elidable=False),
    ]
