"""Statistics of a post's language and country together (CREATE STATISTICS, PostgreSQL), so that the planner knows
that French posts are mostly from France.

Without them it multiplies the shares (an eighth of the posts French, an eighth from France: a sixty-fourth both)
and expects an organisation covering French in France to find its 26 rows of a queue page 64 posts apart along the
queue's order, where they are 8 apart. At a million posts that estimate, with each row's fold probe
(factcheck.queue_fold), put the page's statement past PostgreSQL's `jit_above_cost`: compiling it took 95 ms of a
148 ms statement whose execution took 3 ms (the bench's queue at 1,000,000 posts, sorted by newest; 105-213 ms p95
a page over HTTP, with 0031 and 0032 already in). With them the planner's cost estimate is 71,000-74,000, most of it the capped total's 1,001 rows and their
probes (bounded by the cap, whatever the size of the table), and the statement runs in 4 ms.

ANALYZE fills them at once (a sample of the table: a second or two at a million posts); autovacuum keeps them.
"""

from django.db import migrations

from core.indexes import create_statistics, drop_statistics

NAME = "post_language_country"


def forwards(apps, schema_editor) -> None:
    create_statistics(schema_editor, name=NAME, table="factcheck_post", columns=("language", "country"))


def backwards(apps, schema_editor) -> None:
    drop_statistics(schema_editor, NAME)


class Migration(migrations.Migration):

    dependencies = [("factcheck", "0032_queue_country_index")]

    operations = [migrations.RunPython(forwards, backwards)]
