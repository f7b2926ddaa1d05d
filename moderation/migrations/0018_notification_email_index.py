"""An index of the notifications by the e-mail that carried them, for deleting sent e-mails' rows past their
retention (moderation.notice_delivery.delete_old_notices): Django sets each of their notifications' `email` to NULL,
and PostgreSQL's foreign-key check looks for a notification still pointing at each deleted e-mail. Without an index
both read the whole table, the check once for each e-mail deleted: a batch of 1,000 e-mails beside 300,000
notifications took 69 s to commit, and 0.1 s with it (PostgreSQL 15, this machine).

Built CONCURRENTLY (writes go on); a build left invalid is built again (as 0016).
"""

from django.db import migrations, models
from django.db.models import Q

from core.indexes import build_index, drop_index

NAME = "notification_email"
DEFINITION = "(email_id) WHERE email_id IS NOT NULL"


def forwards(apps, schema_editor) -> None:
    build_index(schema_editor, name=NAME, table="moderation_notification", definition=DEFINITION)


def backwards(apps, schema_editor) -> None:
    drop_index(schema_editor, NAME)


class Migration(migrations.Migration):
    atomic = False  # CREATE INDEX CONCURRENTLY cannot run inside a transaction

    dependencies = [("moderation", "0017_notices_held_while_copies_are_decided")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AddIndex(model_name="notification", index=models.Index(
                    fields=["email"], name=NAME, condition=Q(email__isnull=False))),
            ],
            database_operations=[migrations.RunPython(forwards, backwards)],
        ),
    ]
