"""The queue by country, `post_queue_country`: the queued posts by (country, language), with each post's id in the
index (INCLUDE), in place of the whole table's index of a post's country.

An organisation that covers countries counts its queue page's capped total (factcheck.queue.capped_total) in the
countries and languages it covers. From the whole table's country index the planner ANDed every post of those
countries, waiting or not, with the language index in a bitmap and read each counted row from the table: on the
bench's 100,000 posts, the page's statement took 12-16 ms for French in France and 18-22 ms for French and German
in France and Germany. From this one it is an index-only read of the pairs covered: 7.4 and 9.0 ms, the estimate
far from PostgreSQL's `jit_above_cost` at any size of the table, as the count stops at 1,001 (with the country
index dropped and no other, the planner walked the language index, estimated 240,000-360,000 and JIT-compiled the
statement: 100 ms). Nothing else reads a post's country by index, so every flagged post no longer writes the
whole table's index on arrival.

Built CONCURRENTLY (writes go on) and checked valid before the old index is dropped; a build left invalid is built
again (as 0028).
"""

from django.db import migrations, models
from django.db.models import Q

from core.indexes import build_index, drop_index

OLD = "factcheck_post_country_566c3e58"


def forwards(apps, schema_editor) -> None:
    # SQLite has no INCLUDE (as 0031): the embedded default gets the key columns alone.
    include = " INCLUDE (id)" if schema_editor.connection.vendor == "postgresql" else ""
    build_index(schema_editor, name="post_queue_country", table="factcheck_post",
                definition=f"(country, language){include} WHERE queue_state = 'queued'")
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
                    fields=["country", "language"], include=["id"], name="post_queue_country",
                    condition=Q(queue_state="queued"))),
            ],
            database_operations=[migrations.RunPython(forwards, backwards)],
        ),
    ]
