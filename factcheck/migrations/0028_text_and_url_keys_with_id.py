"""The post's text and URL keys are indexed with the post's id: (text_key, id) and (url_key, id), in place of the
keys alone.

The matcher reads the oldest 200 posts sharing a new post's text or URL (factcheck.matching.candidates). On the
key alone PostgreSQL read every post holding the key and sorted them before keeping 200: 17 ms for 20,000 exact
copies of one text, in every match job with one more copy, growing with the copies. On (key, id) the read
stops at the 200th (a scratch table of 20,000 copies of one key among 120,000 rows: 4.8 ms a key, then 0.2 ms). The same keys, so the indexes are the same size; each is built CONCURRENTLY (writes go on)
before the old one is dropped. If a build fails it leaves an invalid index: drop it
(`DROP INDEX CONCURRENTLY IF EXISTS post_text_key`) and migrate again.
"""

from django.db import migrations, models

# (new index, its columns, the index it replaces, that one's column)
INDEXES = [
    ("post_text_key", "text_key, id", "factcheck_post_text_key_f463bb44", "text_key"),
    ("post_url_key", "url_key, id", "factcheck_post_url_key_7969d3f3", "url_key"),
]


def _concurrently(schema_editor) -> str:
    return " CONCURRENTLY" if schema_editor.connection.vendor == "postgresql" else ""


def forwards(apps, schema_editor) -> None:
    how = _concurrently(schema_editor)
    for name, columns, old, _ in INDEXES:
        schema_editor.execute(f"CREATE INDEX{how} IF NOT EXISTS {name} ON factcheck_post ({columns})")
        schema_editor.execute(f"DROP INDEX{how} IF EXISTS {old}")


def backwards(apps, schema_editor) -> None:
    how = _concurrently(schema_editor)
    for name, _, old, column in INDEXES:
        schema_editor.execute(f"CREATE INDEX{how} IF NOT EXISTS {old} ON factcheck_post ({column})")
        schema_editor.execute(f"DROP INDEX{how} IF EXISTS {name}")


class Migration(migrations.Migration):
    atomic = False  # CREATE INDEX CONCURRENTLY cannot run inside a transaction

    dependencies = [("factcheck", "0027_indexes_no_query_reads")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(model_name="post", name="text_key",
                                      field=models.CharField(blank=True, max_length=40)),
                migrations.AlterField(model_name="post", name="url_key",
                                      field=models.CharField(blank=True, max_length=40)),
                migrations.AddIndex(model_name="post",
                                    index=models.Index(fields=["text_key", "id"], name="post_text_key")),
                migrations.AddIndex(model_name="post",
                                    index=models.Index(fields=["url_key", "id"], name="post_url_key")),
            ],
            database_operations=[migrations.RunPython(forwards, backwards)],
        ),
    ]
