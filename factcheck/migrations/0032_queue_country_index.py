"""The queue by country, `post_queue_country`: the queued posts by country, with each post's id and language in the
index (INCLUDE), in place of the whole table's index of a post's country.

An organisation that covers countries counts its queue page's capped total (factcheck.queue.capped_total) in the
countries (and languages) it covers. From the whole table's country index the planner ANDed every post of those
countries, waiting or not, with the language index in a bitmap and read each counted row from the table: on the
bench's 100,000 posts the page's statement took 12-16 ms for French in France. From this one the count is an
index-only read of the country's queued posts, stopping at 1,001: 4 ms at 1,000,000 posts (with 0033's statistics).

One key column, not (country, language): PostgreSQL estimates an index's cost from its key columns as if they were
independent (a sixty-fourth of the queue for French in France, where it is an eighth) even where the table has
statistics of the pair, and took a bitmap of that index for cheap: ANDed into a search for a rare word it read
121,696 entries to narrow 278 (the statement 55-80 ms at a million posts, 125 ms for two countries). On the country
alone its estimate is right and the plans above take 51-61 ms and 2.7 ms. Nothing else reads a post's country by
index, so a flagged post no longer writes the whole table's country index on arrival.

Built CONCURRENTLY (writes go on) and checked valid before the old index is dropped; a build left invalid is built
again (as 0028).
"""

from django.db import migrations, models
from django.db.models import Q

from core.indexes import build_index, drop_index

OLD = "factcheck_post_country_566c3e58"


def forwards(apps, schema_editor) -> None:
    build_index(schema_editor, name="post_queue_country", table="factcheck_post",
                definition="(country)", include=("id", "language"), where="queue_state = 'queued'")
    drop_index(schema_editor, OLD)


def backwards(apps, schema_editor) -> None:
    build_index(schema_editor, name=OLD, table="factcheck_post", definition="(country)")
    drop_index(schema_editor, "post_queue_country")


class Migration(migrations.Migration):
    atomic = False  # CREATE INDEX CONCURRENTLY cannot run inside a transaction

    dependencies = [("factcheck", "0031_queue_coverage_index")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(model_name="post", name="country",
                                      field=models.CharField(blank=True, max_length=2)),
                migrations.AddIndex(model_name="post", index=models.Index(
                    fields=["country"], include=["id", "language"], name="post_queue_country",
                    condition=Q(queue_state="queued"))),
            ],
            database_operations=[migrations.RunPython(forwards, backwards)],
        ),
    ]
