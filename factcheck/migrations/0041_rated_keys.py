"""A rated claim is matched by the words its rating rated (factcheck.matching.as_rated): each rated post gets its
current rating's keys (`RatedKeys`: `rated_text` and `rated_url` normalised, with the text's signature).

Before, the matcher read a rated claim by the post's own keys, which follow what the platform sent last: a rated post
sent again with edited words was matched by the new words. The fill writes, for every post with a current rating, 2,000
at a time, each batch its own transaction: the post's own keys where it still reads as rated (most), the rated words'
keys computed where it does not; and, for those rated claims, the band keys filed under them again, from their keys
as rated and their copies' (as factcheck.matching.candidates.refile_groups files them, each claim's lock taken first
on PostgreSQL). A rating whose keys are stored already is skipped, so it can run again (0042 does, for the ratings the
old code made meanwhile); a newer rating's keys are never replaced by an older one's. The table is then ANALYZEd on
PostgreSQL, so that the matcher's first lookups read its key indexes.
"""

import django.db.models.deletion
from django.db import migrations, models, transaction
from django.db.models import Exists, OuterRef

from factcheck.matching.candidates import REFILE_LOCK
from factcheck.matching.signature import keys_of
from factcheck.normalise import normalised_rows

BATCH = 2000
ROWS_PER_STATEMENT = 150  # 900 parameters, under SQLite's oldest limit (the embedded default migrates too)
KEY_FIELDS = ("normalised_text", "url_key", "text_key", "signature")


def fill(apps, schema_editor) -> None:
    """Every current rating without its keys gets them (see above)."""
    Rating, RatedKeys = apps.get_model("factcheck", "Rating"), apps.get_model("factcheck", "RatedKeys")
    stored = RatedKeys.objects.filter(post_id=OuterRef("post_id"), rating_id=OuterRef("pk"))
    last = 0
    while True:
        batch = list(Rating.objects.filter(is_current=True, post_id__gt=last).exclude(Exists(stored))
                     .order_by("post_id").values_list(
                         "post_id", "pk", "rated_text", "rated_url", "post__text", "post__url", "post__queue_state",
                         *(f"post__{field}" for field in KEY_FIELDS))[:BATCH])
        if not batch:
            break
        last = batch[-1][0]
        with transaction.atomic():
            _store(apps, schema_editor.connection, batch)
    if schema_editor.connection.vendor == "postgresql":
        # Statistics now, not at autovacuum's next pass: without them the planner read a key's rated claims by
        # scanning every rated post (225 ms for 10,000), where the key's index takes 0.3 ms.
        schema_editor.execute(f"ANALYZE {RatedKeys._meta.db_table}")


def _store(apps, connection, batch: list[tuple]) -> None:
    RatedKeys = apps.get_model("factcheck", "RatedKeys")
    edited = [row for row in batch if (row[2], row[3]) != (row[4], row[5])]
    computed = dict(zip((row[0] for row in edited), normalised_rows([(row[3], row[2]) for row in edited]),
                        strict=True))
    rows, moved = [], {}
    for post_id, rating_id, *_, state, normalised_text, url_key, text_key, signature in batch:
        if post_id in computed:
            _, url_key, normalised_text, text_key, new_signature = computed[post_id]
            if state == "rated" and new_signature != signature:
                moved[post_id] = new_signature
            signature = new_signature
        rows.append((post_id, rating_id, normalised_text, url_key, text_key, signature))
    table, fields = RatedKeys._meta.db_table, ", ".join(KEY_FIELDS)
    # A newer rating's keys (the new code's, written meanwhile) are never replaced: ratings' ids only grow.
    upsert = (f"ON CONFLICT (post_id) DO UPDATE SET rating_id = excluded.rating_id, "
              + ", ".join(f"{field} = excluded.{field}" for field in KEY_FIELDS)
              + f" WHERE {table}.rating_id < excluded.rating_id")
    with connection.cursor() as cursor:
        for start in range(0, len(rows), ROWS_PER_STATEMENT):
            chunk = rows[start : start + ROWS_PER_STATEMENT]
            cursor.execute(f"INSERT INTO {table} (post_id, rating_id, {fields}) VALUES "  # noqa: S608
                           + ", ".join(["(%s, %s, %s, %s, %s, %s)"] * len(chunk)) + f" {upsert}",
                           [value for row in chunk for value in row])
    if moved:
        _refile(apps, connection, moved)


def _refile(apps, connection, claims: dict[int, str]) -> None:
    """refile_groups' order with historical models, for rated claims whose keys as rated are not their posts' own:
    each claim's lock (PostgreSQL), its keys deleted, then filed again from its keys as rated (`claims`) and its
    copies' signatures. A claim never matched yet has no PostBand keys: it gets none here either."""
    Post, PostBand, RatedBand = (apps.get_model("factcheck", name) for name in ("Post", "PostBand", "RatedBand"))
    roots = sorted(claims)
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:  # in key order, as refile_groups; one statement for the batch's claims
            cursor.execute("SELECT count(pg_advisory_xact_lock(%s, key)) FROM "
                           "(SELECT key FROM unnest(%s::integer[]) AS key ORDER BY key) AS keys",
                           [REFILE_LOCK, sorted({root % 2**31 for root in roots})])
    filed = set(PostBand.objects.filter(post_id__in=roots).values_list("post_id", flat=True))
    for model in (PostBand, RatedBand):
        model.objects.filter(post_id__in=roots).delete()
    signatures = [*claims.items(), *Post.objects.filter(duplicate_of_id__in=roots)
                  .values_list("duplicate_of_id", "signature")]
    for model, held in ((PostBand, filed), (RatedBand, set(roots))):
        model.objects.bulk_create([model(band=key, post_id=root) for key, root in sorted(
            {(key, root) for root, signature in signatures if root in held for key in keys_of(signature)})],
            ignore_conflicts=True)


class Migration(migrations.Migration):
    atomic = False  # each batch of the fill commits on its own

    dependencies = [("factcheck", "0040_flag_withdrawn")]

    operations = [
        migrations.CreateModel(
            name="RatedKeys",
            fields=[
                ("post", models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True,
                                              related_name="rated_keys", serialize=False, to="factcheck.post")),
                ("normalised_text", models.TextField(blank=True)),
                ("url_key", models.CharField(blank=True, max_length=40)),
                ("text_key", models.CharField(blank=True, max_length=40)),
                ("signature", models.TextField(blank=True)),
                ("rating", models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT,
                                             related_name="+", to="factcheck.rating")),
            ],
            options={
                "verbose_name_plural": "rated keys",
                "indexes": [
                    models.Index(condition=~models.Q(text_key=""), fields=["text_key", "post"],
                                 name="ratedkeys_text_key"),
                    models.Index(condition=~models.Q(url_key=""), fields=["url_key", "post"],
                                 name="ratedkeys_url_key"),
                ],
            },
        ),
        migrations.RunPython(fill, migrations.RunPython.noop),
    ]
