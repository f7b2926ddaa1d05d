"""A partial index of the notifications not yet e-mailed (moderation.notice_delivery): a recipient's waiting for an
e-mail, an e-mail's waiting to be sent, and the sweep's. Few rows at any time, where the table keeps every
notification ever made: without it each e-mail job would read all of its recipient's notifications (staff are told
of every removal appeal), and the sweep the whole table.

Built CONCURRENTLY (writes go on); a build left invalid is built again (as factcheck 0030).
"""

from django.db import migrations, models
from django.db.models import Q

from core.indexes import build_index, drop_index

NAME = "notification_unemailed"
DEFINITION = "(user_id, email_id) WHERE emailed_at IS NULL"


def forwards(apps, schema_editor) -> None:
    build_index(schema_editor, name=NAME, table="moderation_notification", definition=DEFINITION)


def backwards(apps, schema_editor) -> None:
    drop_index(schema_editor, NAME)


class Migration(migrations.Migration):
    atomic = False  # CREATE INDEX CONCURRENTLY cannot run inside a transaction

    dependencies = [("moderation", "0015_notice_emails")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AddIndex(model_name="notification", index=models.Index(
                    fields=["user", "email"], name=NAME, condition=Q(emailed_at__isnull=True))),
            ],
            database_operations=[migrations.RunPython(forwards, backwards)],
        ),
    ]
