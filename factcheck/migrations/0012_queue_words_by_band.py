"""The queued posts' words indexed by priority band, for a search read from the top of the queue (PostgreSQL
only; factcheck.queue reads it).

A search for common words in the priority order reads a window of the queue: its posts from the first down
to a priority bound (factcheck.queue._windowed_page). Without this index PostgreSQL finds the window's
matches by ANDing two bitmaps, the text index's posts of the words (every post that has them, 7,349 for a
word in 1% of the bench's 1,000,000) and the window's range of a queue index (10,336 posts): 4.7-6.5 ms of
a page whose other statements take 1. Here each queued post's words are indexed once more, each prefixed
with the post's band, the whole points of its priority (0 to 100: the priority's parts add up to at most
100, factcheck.priority). The window's matches are then the posts with a word of a band at or above the
bound's, `'46@lemon':* | '47@lemon':* | ... | '100@lemon':*`, read from this index alone: 140 posts for
that word, 0.4 ms.

- `factcheck_queue_band(priority)`: a priority's band; the window's bound goes through it too.
- `factcheck_queue_words(search_vector, priority)`: the post's words (migration 0011), each as
  `<band>@<word>`. Declared very costly (COST 100000; it does rebuild the words) so that the planner
  always reads its index rather than compute it for each queued post: its estimate of an OR of many
  prefixes is poor (half the queue, for 140 posts), and with a lesser cost it read a small queue's
  partial index whole and computed the words of every post, which on a queue of thousands would take
  tenths of a second. Both plans are charged the function for each post they expect to test, so at this
  cost the index wins whenever it is expected to hold fewer posts than the queue. PARALLEL UNSAFE so that
  no query of it is split across workers: at that guess a parallel plan, and JIT compilation
  (config.settings turns JIT off), would cost 100 times the read.
- `factcheck_queue_query(query, from_band)`: the tsquery of the same words in each band from `from_band` to
  100, built from `to_tsquery`'s own output, so the words are normalised exactly as the stored ones.

SQL-standard bodies (BEGIN ATOMIC, PostgreSQL 14+) bind the functions they call when created, so the index
expression does not depend on the search_path of whoever writes a post or restores a dump.

Every post written while queued is written into this index too: refresh_priorities' rewrite of a post costs
about half as much again (an UPDATE of 20,000 queued posts' priority: 8.3-8.8 s against 4.9-5.9 s on the
bench's table), taken by GIN's pending list. The index is built CONCURRENTLY (65 s for 975,000 queued posts
here), so writes go on meanwhile; if that build fails it leaves an invalid index, which must be dropped
before this migration is run again.
"""

from django.db import migrations

FUNCTIONS = [
    """
    CREATE OR REPLACE FUNCTION factcheck_queue_band(priority double precision) RETURNS integer
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN LEAST(GREATEST(floor(priority), 0), 100)::integer
    """,
    """
    CREATE OR REPLACE FUNCTION factcheck_queue_words(words tsvector, priority double precision) RETURNS tsvector
    LANGUAGE sql IMMUTABLE STRICT PARALLEL UNSAFE COST 100000
    BEGIN ATOMIC
        SELECT array_to_tsvector(ARRAY(
            SELECT factcheck_queue_band(priority)::text || '@' || lexeme FROM unnest(tsvector_to_array(words)) AS lexeme
        ));
    END
    """,
    # Each quoted word of the query (quotes inside it doubled), and its ":*", becomes an OR of the same in each
    # band: 'lemon':* & 'water':* -> ('46@lemon':* | ... | '100@lemon':*) & ('46@water':* | ...).
    """
    CREATE OR REPLACE FUNCTION factcheck_queue_query(query tsquery, from_band integer) RETURNS tsquery
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    BEGIN ATOMIC
        SELECT regexp_replace(
            query::text,
            $word$'((?:[^']|'')*)'(:\\*)?$word$,
            '(' || (
                SELECT string_agg('''' || band::text || '@\\1''\\2', ' | ' ORDER BY band)
                FROM generate_series(LEAST(GREATEST(from_band, 0), 100), 100) AS band
            ) || ')',
            'g'
        )::tsquery;
    END
    """,
]
INDEX = (
    "CREATE INDEX CONCURRENTLY IF NOT EXISTS post_queue_words ON factcheck_post "
    "USING gin (factcheck_queue_words(search_vector, priority)) WHERE queue_state = 'queued'"
)


def add(apps, schema_editor) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    for function in FUNCTIONS:
        schema_editor.execute(function)
    schema_editor.execute(INDEX)


def remove(apps, schema_editor) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute("DROP INDEX CONCURRENTLY IF EXISTS post_queue_words")
    for name in ("factcheck_queue_query(tsquery, integer)", "factcheck_queue_words(tsvector, double precision)",
                 "factcheck_queue_band(double precision)"):
        schema_editor.execute(f"DROP FUNCTION IF EXISTS {name}")


class Migration(migrations.Migration):
    atomic = False  # CREATE INDEX CONCURRENTLY cannot run inside a transaction

    dependencies = [("factcheck", "0011_post_search_vector")]

    operations = [migrations.RunPython(add, remove, elidable=False)]
