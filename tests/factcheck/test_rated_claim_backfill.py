"""Migrations 0037 and 0038: ratings made before a rating kept its claim get their post's text and URL as they are
now, in batches that the content trigger of the time lets through, and the trigger then guards them too."""

from __future__ import annotations

from importlib import import_module

import pytest
from django.db import DatabaseError, connection, transaction
from django.db.migrations.executor import MigrationExecutor

from factcheck.models import Post, Rating
from tests.factories import PostFactory, RatingFactory

BEFORE = ("factcheck", "0036_renormalise_invisible_characters_and_digits")
AFTER = ("factcheck", "0038_rating_rated_claim_guarded")


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_ratings_made_before_get_their_posts_text_and_url_and_the_trigger_then_guards_them(monkeypatch):
    posts = [PostFactory(text=f"Claim number {n} as it was rated.", url=f"https://social.example/{n}")
             for n in range(3)]
    ratings = [RatingFactory(post=post) for post in posts]
    executor = MigrationExecutor(connection)
    executor.migrate([BEFORE])
    # Before 0037 nothing kept the rated words: what the post says when the migration runs is the best known.
    Post.objects.filter(pk=posts[0].pk).update(text="Sent again later with other words.")
    monkeypatch.setattr(import_module("factcheck.migrations.0037_rating_rated_claim"), "BATCH", 2)
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate([AFTER])

    kept = {rating.pk: (rating.rated_text, rating.rated_url) for rating in Rating.objects.all()}
    assert kept == {
        ratings[0].pk: ("Sent again later with other words.", "https://social.example/0"),
        ratings[1].pk: ("Claim number 1 as it was rated.", "https://social.example/1"),
        ratings[2].pk: ("Claim number 2 as it was rated.", "https://social.example/2"),
    }
    for column in ("rated_text", "rated_url"):
        with pytest.raises(DatabaseError, match="Cannot update rows"), transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute(f"UPDATE factcheck_rating SET {column} = 'rewritten'")  # noqa: S608
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())  # the later migrations back, for the tests after this one
