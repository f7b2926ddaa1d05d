"""A partial index of the copies linked while unflagged (a post flagged for harm only, matched to a claim), which
the reconciler `regroup_rated` looks over with the grouped ones (post_linked_copy): a copy linked by a match job
while its claim was being rated is left waiting, and the reconciler gives it the rating. Without it the reconciler
would read every post in those states to find the few linked ones, every few minutes.

Built CONCURRENTLY (writes go on); a build left invalid is built again (as 0028).
"""

from django.db import migrations, models
from django.db.models import Q

from core.indexes import build_index, drop_index

NAME = "post_unflagged_copy"
DEFINITION = "(duplicate_of_id) WHERE queue_state = 'unflagged' AND duplicate_of_id IS NOT NULL"


def forwards(apps, schema_editor) -> None:
    build_index(schema_editor, name=NAME, table="factcheck_post", definition=DEFINITION)


def backwards(apps, schema_editor) -> None:
    drop_index(schema_editor, NAME)


class Migration(migrations.Migration):
    atomic = False  # CREATE INDEX CONCURRENTLY cannot run inside a transaction

    dependencies = [("factcheck", "0029_rated_claims_hold_their_groups_keys")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AddIndex(model_name="post", index=models.Index(
                    fields=["duplicate_of"], name=NAME,
                    condition=Q(queue_state="unflagged", duplicate_of__isnull=False))),
            ],
            database_operations=[migrations.RunPython(forwards, backwards)],
        ),
    ]
