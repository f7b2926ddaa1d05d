"""Band rows carry their item's post and hash (migration factcheck 0024), so a lookup reads no item row: the words
are the hash exactly, the migration fills them for rows stored before it, the primary key INCLUDEs them on
PostgreSQL, and the lookup finds exactly what a scan finds on SQLite, the embedded default, too."""

from __future__ import annotations

import json
import random

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from factcheck.media import hash_words, pdq_hex, words_value
from factcheck.models_media import MediaBand
from tests.factories import PostFactory
from tests.test_embedded_default import embedded_env, manage  # noqa: F401  (embedded_env is a fixture)

BEFORE, AFTER = ("factcheck", "0023_semantic_sketch"), ("factcheck", "0024_media_band_words")


def test_a_hash_is_four_signed_words_and_back():
    rng = random.Random(24)
    for value in [0, 2**256 - 1, 1 << 255, 1 << 63, *(rng.getrandbits(256) for _ in range(200))]:
        words = hash_words(value)
        assert all(-(2**63) <= word < 2**63 for word in words)
        assert words_value(words) == value
    assert hash_words(int("8" + "0" * 15 + "f" * 16 + "0" * 31 + "1", 16)) == (-(2**63), -1, 0, 1)


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_the_migration_fills_each_band_rows_post_and_hash_and_the_key_includes_them():
    post = PostFactory()
    value = random.Random(1).getrandbits(256)
    executor = MigrationExecutor(connection)
    executor.migrate([BEFORE])
    with connection.cursor() as cursor:
        cursor.execute("INSERT INTO factcheck_postmedia (post_id, position, kind, url, still_url, pdq, md5, alt_text) "
                       "VALUES (%s, 0, 'image', 'https://media.example/a.jpg', '', %s, '', '') RETURNING id",
                       [post.pk, pdq_hex(value)])
        media_id = cursor.fetchone()[0]
        for table in ("factcheck_mediaband", "factcheck_ratedmediaband"):
            cursor.execute(f"INSERT INTO {table} (band, media_id) VALUES (7, %s), (65543, %s)", [media_id, media_id])
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate([AFTER])
    with connection.cursor() as cursor:
        for table in ("factcheck_mediaband", "factcheck_ratedmediaband"):
            cursor.execute(f"SELECT post_id, h1, h2, h3, h4 FROM {table} WHERE media_id = %s", [media_id])
            assert cursor.fetchall() == [(post.pk, *hash_words(value))] * 2
            cursor.execute("SELECT pg_get_indexdef(conindid) FROM pg_constraint WHERE conname = %s",
                           [f"{table}_pkey"])
            assert cursor.fetchone()[0].endswith("(band, media_id) INCLUDE (post_id, h1, h2, h3, h4)")
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())  # the later migrations back, for the tests after this one


LOOKUP_ON_SQLITE = """
import json, random
from factcheck.media import MediaInput, pdq_hex, store_media
from factcheck.matching.media import find_similar
from factcheck.ingest import FlagInput, PageInput, PostInput, ingest_flags
from factcheck.models import Post
from django.utils import timezone

rng = random.Random(7)
stored = [rng.getrandbits(256) for _ in range(30)]
now = timezone.now()
page = PageInput(external_id="page-1", name="Daily Miracle")
ingest_flags(flags=[FlagInput(idempotency_key=f"k{n}", source="user_report", flagged_at=now, post=PostInput(
    external_id=f"post-{n}", page=page, posted_at=now, text=f"Post number {n}", language="en", country="GB"))
    for n in range(30)])
posts = list(Post.objects.order_by("id").values_list("id", flat=True))
media = store_media({pk: [MediaInput(kind="image", url="https://media.example/a.jpg", pdq=pdq_hex(value))]
                     for pk, value in zip(posts, stored)})
def flipped(value, bits):
    for bit in rng.sample(range(256), bits):
        value ^= 1 << bit
    return value
queries = [flipped(stored[n % 30], rng.choice([0, 9, 16, 25, 31, 32, 40])) for n in range(40)]
found = find_similar(queries, rated_only=False)
scan = {str(q): sorted([(q ^ v).bit_count(), m, p] for m, p, v in zip(media, posts, stored)
                       if (q ^ v).bit_count() <= 31)
        for q in queries}
print(json.dumps({"found": {str(q): sorted([d, m, p] for m, p, d in found[q]) for q in queries}, "scan": scan}))
"""


def test_the_lookup_on_sqlite_finds_exactly_what_a_scan_finds(embedded_env):  # noqa: F811 (the fixture)
    manage(embedded_env, "migrate", "--noinput", "-v", "0")
    result = json.loads(manage(embedded_env, "shell", "-c", LOOKUP_ON_SQLITE).stdout.strip().splitlines()[-1])
    assert result["found"] == result["scan"]
    assert sum(len(hits) for hits in result["scan"].values()) >= 20


@pytest.mark.django_db
def test_stored_media_write_each_band_rows_post_and_hash():
    from factcheck.media import MediaInput, store_media

    post, value = PostFactory(), random.Random(3).getrandbits(256)
    [media_id] = store_media({post.pk: [MediaInput(kind="image", url="https://media.example/a.jpg",
                                                   pdq=pdq_hex(value))]})
    rows = set(MediaBand.objects.filter(media_id=media_id).values_list("post_id", "h1", "h2", "h3", "h4"))
    assert rows == {(post.pk, *hash_words(value))}
    assert MediaBand.objects.filter(media_id=media_id).count() == 16
