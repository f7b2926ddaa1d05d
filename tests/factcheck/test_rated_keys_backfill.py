"""Migrations 0041 and 0042: claims rated before the matcher read them as rated get their current rating's keys, and a
claim edited since has its band keys filed again from the words rated, so that copies are matched to what was rated
from the upgrade on."""

from __future__ import annotations

from importlib import import_module

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from factcheck.matching.signature import keys_of
from factcheck.models import Post, QueueState, Rating
from factcheck.models_bands import RatedBand, RatedKeys
from factcheck.normalise import normalised_fields
from tests import scenarios
from tests.factcheck.matching_helpers import CLAIM, NEAR_COPY, UNRELATED
from tests.factcheck.test_matching_as_rated import NEW_URL, NEW_WORDS, NEW_WORDS_NEAR, RATED_URL, send
from tests.factories import FactCheckerFactory

BEFORE = ("factcheck", "0040_flag_withdrawn")


def migrate(target: list[tuple[str, str]] | None = None) -> None:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(target or executor.loader.graph.leaf_nodes())


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_a_claim_edited_before_the_upgrade_is_matched_by_its_rated_words_after_it(monkeypatch):
    rater = FactCheckerFactory()
    claim = scenarios.rated_claim(rater=rater, text=CLAIM, url=RATED_URL)
    untouched = scenarios.rated_claim(rater=rater, text=UNRELATED, external_id="untouched")
    send("source", NEW_WORDS, url=NEW_URL, page="page-source", key="sent-again")
    migrate([BEFORE])
    # What the old code could leave: the claim's band keys filed again from its post's edited words (a copy leaving).
    claim.refresh_from_db()
    RatedBand.objects.filter(post=claim).delete()
    RatedBand.objects.bulk_create([RatedBand(band=key, post=claim) for key in keys_of(claim.signature)])
    monkeypatch.setattr(import_module("factcheck.migrations.0041_rated_keys"), "BATCH", 1)
    migrate()

    kept = {keys.post_id: (keys.rating_id, keys.text_key, keys.url_key) for keys in RatedKeys.objects.all()}
    rated_fields = normalised_fields(url=RATED_URL, text=CLAIM)
    untouched.refresh_from_db()
    assert kept == {
        claim.pk: (Rating.objects.get(post=claim).pk, rated_fields[3], rated_fields[1]),
        untouched.pk: (Rating.objects.get(post=untouched).pk, untouched.text_key, untouched.url_key),
    }
    assert set(RatedBand.objects.filter(post=claim).values_list("band", flat=True)) == set(keys_of(rated_fields[4]))

    rated_copy, edit_copy = send("copy-of-rated", NEAR_COPY), send("copy-of-edit", NEW_WORDS_NEAR)
    assert (rated_copy.queue_state, rated_copy.duplicate_of_id) == (QueueState.MATCHED, claim.pk)
    assert (edit_copy.queue_state, edit_copy.duplicate_of_id) == (QueueState.QUEUED, None)
    assert Post.objects.get(pk=claim.pk).text == NEW_WORDS  # the post itself says what the platform sent last
