from django.db import migrations, models
import django.db.models.deletion

# Each band row carries its item's post and hash (factcheck.models_media._HashWords); on PostgreSQL the primary key
# INCLUDEs them, so that a probe reads every candidate's hash from the index alone (factcheck.matching.media).
# On PostgreSQL it rewrites both band tables once and rebuilds their keys (16 rows an image: for a million images,
# a few minutes, the tables locked meanwhile, so media matching waits: run it in a quiet hour).
TABLES = ("factcheck_mediaband", "factcheck_ratedmediaband")


def hash_words(pdq: str) -> list[int]:
    """factcheck.media.hash_words of a hex hash, as it was when this migration was written."""
    words = [int(pdq[16 * i : 16 * i + 16], 16) for i in range(4)]
    return [word - 2**64 if word >= 2**63 else word for word in words]


WORDS = ", ".join(f"h{i + 1} = ('x' || substr(m.pdq, {16 * i + 1}, 16))::bit(64)::bigint" for i in range(4))


def fill_words(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        for table in TABLES:
            schema_editor.execute(f"UPDATE {table} b SET post_id = m.post_id, {WORDS} "
                                  "FROM factcheck_postmedia m WHERE m.id = b.media_id")
            schema_editor.execute(f"ALTER TABLE {table} DROP CONSTRAINT {table}_pkey")
            schema_editor.execute(f"ALTER TABLE {table} ADD CONSTRAINT {table}_pkey "
                                  "PRIMARY KEY (band, media_id) INCLUDE (post_id, h1, h2, h3, h4)")
        return
    items = apps.get_model("factcheck", "PostMedia").objects
    for name in ("MediaBand", "RatedMediaBand"):
        bands = apps.get_model("factcheck", name).objects
        for media_id in bands.values_list("media_id", flat=True).distinct():
            item = items.filter(pk=media_id).values_list("post_id", "pdq").first()
            if item is None:  # a key left behind by an item that is gone: its zeros match nothing, as on PostgreSQL
                continue
            post_id, pdq = item
            h1, h2, h3, h4 = hash_words(pdq)
            bands.filter(media_id=media_id).update(post_id=post_id, h1=h1, h2=h2, h3=h3, h4=h4)


def plain_key(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        for table in TABLES:
            schema_editor.execute(f"ALTER TABLE {table} DROP CONSTRAINT {table}_pkey")
            schema_editor.execute(f"ALTER TABLE {table} ADD CONSTRAINT {table}_pkey PRIMARY KEY (band, media_id)")


def fields(model_name):
    return [
        migrations.AddField(
            model_name=model_name, name="post", preserve_default=False,
            field=models.ForeignKey(db_constraint=False, db_index=False, default=0, on_delete=django.db.models.deletion.DO_NOTHING,
                                    related_name="+", to="factcheck.post"),
        ),
        *(migrations.AddField(model_name=model_name, name=f"h{i}", preserve_default=False,
                              field=models.BigIntegerField(default=0)) for i in range(1, 5)),
    ]


class Migration(migrations.Migration):

    dependencies = [
        ("factcheck", "0023_semantic_sketch"),
    ]

    operations = [
        *fields("mediaband"),
        *fields("ratedmediaband"),
        migrations.RunPython(fill_words, plain_key),
    ]
