"""The posts' words stored once, as a generated column, and indexed there (PostgreSQL only).

Migration 0010 indexed an expression, `to_tsvector(...)` of each post's text and external id. The
index answers "which posts have these words" well, but every other use computed the words again, about
12 us a post: rechecking the lossy pages of a large bitmap, and, worst, the queue's search for a common
word, which walks the queue's order testing each post (0.5 s for a word in a quarter of the posts, on
the bench's 1,000,000). `search_vector` holds them, computed when a post's text or id is written
(PostgreSQL leaves it alone when other columns change, such as the scores refresh_priorities rewrites),
so a test costs a read of the row, and the planner has statistics of the words (ANALYZE gathers them
for a column, with the frequency of the commonest).

The column is not a model field: the ORM never reads or writes it (factcheck.queue.TextMatches names it),
and the embedded SQLite default, which searches with LIKE, has no such column.

Adding a stored column rewrites the table under an exclusive lock: 77 s for 1,000,000 posts here, and
the new index 22 s more. On a large deployment, run it in a maintenance window or add the column in
steps (a plain column filled in batches, then the index CONCURRENTLY); docs/operations.md says so.
"""

from django.db import migrations

# As 0010 had it. Hyphens, dots, slashes and the like become spaces first: PostgreSQL's parser reads
# "fb-90210" as "fb" and the number "-90210", which a search for "90210" would never find.
WORDS = (
    "to_tsvector('simple'::regconfig, regexp_replace(COALESCE(\"text\", '') || ' ' || \"external_id\", "
    "'[-_./:+#@]+', ' ', 'g'))"
)


def add(apps, schema_editor) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(
        "ALTER TABLE factcheck_post ADD COLUMN IF NOT EXISTS search_vector tsvector "
        f"GENERATED ALWAYS AS ({WORDS}) STORED"
    )
    schema_editor.execute("CREATE INDEX IF NOT EXISTS post_search_vector ON factcheck_post USING gin (search_vector)")
    schema_editor.execute("DROP INDEX IF EXISTS post_text_search")


def remove(apps, schema_editor) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(f"CREATE INDEX IF NOT EXISTS post_text_search ON factcheck_post USING gin (({WORDS}))")
    schema_editor.execute("ALTER TABLE factcheck_post DROP COLUMN IF EXISTS search_vector")


class Migration(migrations.Migration):
    dependencies = [("factcheck", "0010_review_search_and_sort_indexes")]

    operations = [migrations.RunPython(add, remove, elidable=False)]
