"""An index of withdrawn flags by `withdrawn_at` (partial: withdrawn ones only), so that the figures find the reports
withdrawn since a past day's end, open at it (reports.notices.reports_open_at), without reading every flag ever.

Built CONCURRENTLY (flags keep arriving while it builds: the table takes ten million rows a day at the program's
size); a build left invalid is built again (core.indexes.build_index, as 0030).
"""

from django.conf import settings
from django.db import migrations, models

from core.indexes import build_index, drop_index

NAME = "flag_withdrawn_at"


def forwards(apps, schema_editor) -> None:
    build_index(schema_editor, name=NAME, table="factcheck_flag", definition="(withdrawn_at)",
                where="withdrawn_at IS NOT NULL")


def backwards(apps, schema_editor) -> None:
    drop_index(schema_editor, NAME)


class Migration(migrations.Migration):
    atomic = False  # CREATE INDEX CONCURRENTLY cannot run inside a transaction

    dependencies = [
        ('factcheck', '0042_rated_keys_again_drop_post_rated_keys'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AddIndex(
                    model_name='flag',
                    index=models.Index(condition=models.Q(('withdrawn_at__isnull', False)), fields=['withdrawn_at'],
                                       name=NAME),
                ),
            ],
            database_operations=[migrations.RunPython(forwards, backwards)],
        ),
    ]
