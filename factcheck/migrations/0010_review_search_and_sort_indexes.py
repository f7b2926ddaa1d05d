"""Indexes for the queue's search and sorts and the rated-posts list (PostgreSQL only).

- post_text_search: GIN over the posts' words and external ids (factcheck.queue.TextMatches), so a search
  is a probe per word, not a scan (0.3 ms for two words over 100,000 posts). Its price is paid by writes,
  measured here on 100,000 posts of 30 words (PostgreSQL 15): about 0.1 ms per row written (11.5 s for
  the 100,000 inserts against 0.6 s without it) and 20 MB (the table is 31 MB). Every non-HOT update
  pays it again, and refresh_priorities rewrites each queued post every 5 minutes (its score columns
  are indexed): about 10 s of index work per refresh per 100,000 queued posts. Dropping this index
  (and nothing else) leaves search working as a filtered walk of the queue's order index.
- post_queue_flagged, post_queue_reach: the "newest flagged", "longest waiting" and "most reach" orders
  of the queue, partial like the priority index (queued posts only), so each page is an index scan.

The embedded SQLite default has none of these: its search scans with LIKE, which is fine at demo size.
"""

from django.db import migrations

INDEXES = {
    "post_text_search": (
        "CREATE INDEX IF NOT EXISTS post_text_search ON factcheck_post USING gin "
        "((to_tsvector('simple'::regconfig, regexp_replace(COALESCE(\"text\", '') || ' ' || \"external_id\", "
        "'[-_./:+#@]+', ' ', 'g'))))"
    ),
    "post_queue_flagged": (
        "CREATE INDEX IF NOT EXISTS post_queue_flagged ON factcheck_post (first_flagged_at, id) "
        "WHERE queue_state = 'queued'"
    ),
    "post_queue_reach": (
        "CREATE INDEX IF NOT EXISTS post_queue_reach ON factcheck_post (((views + shares)) DESC, id) "
        "WHERE queue_state = 'queued'"
    ),
}


def create(apps, schema_editor) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    for sql in INDEXES.values():
        schema_editor.execute(sql)


def drop(apps, schema_editor) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    for name in INDEXES:
        schema_editor.execute(f"DROP INDEX IF EXISTS {name}")


class Migration(migrations.Migration):

    dependencies = [
        ("factcheck", "0009_matching_indexes"),
    ]

    operations = [migrations.RunPython(create, drop)]
