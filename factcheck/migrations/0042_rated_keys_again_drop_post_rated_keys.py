"""After the code that writes RatedKeys serves: 0041's fill again, for the ratings the old code made while 0041 ran and
until the deploy (their posts were read by their own keys meanwhile, as before), then the post table's indexes of
rated posts' text and URL keys go, DROP INDEX CONCURRENTLY (writes go on): exact copies of rated claims are looked
up in RatedKeys now (`ratedkeys_text_key`, `ratedkeys_url_key`). Reversed, they are built again, CONCURRENTLY.
"""

from importlib import import_module

from django.db import migrations

from core.indexes import build_index, drop_index

fill = import_module("factcheck.migrations.0041_rated_keys").fill
INDEXES = [("post_rated_text_key", "text_key"), ("post_rated_url_key", "url_key")]


def forwards(apps, schema_editor) -> None:
    for name, _ in INDEXES:
        drop_index(schema_editor, name)


def backwards(apps, schema_editor) -> None:
    for name, column in INDEXES:
        build_index(schema_editor, name=name, table="factcheck_post", definition=f"({column})",
                    where="queue_state = 'rated'")


class Migration(migrations.Migration):
    atomic = False  # DROP INDEX CONCURRENTLY cannot run inside a transaction; each batch of the fill commits alone

    dependencies = [("factcheck", "0041_rated_keys")]

    operations = [
        migrations.RunPython(fill, migrations.RunPython.noop),
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveIndex(model_name="post", name="post_rated_text_key"),
                migrations.RemoveIndex(model_name="post", name="post_rated_url_key"),
            ],
            database_operations=[migrations.RunPython(forwards, backwards)],
        ),
    ]
