"""The roll-up grows with the day, not the history (issue 32): each post's `left_queue_at` (factcheck.waiting) is
never earlier than the moment it last stopped waiting for a rating, so a day's queue figures read the posts waiting
now and those that left since, through its index, and still equal a direct count of every post. Migration
factcheck 0025 fills the column for posts stored before it by the same rule."""

from __future__ import annotations

import pytest
from django.db import connection, transaction
from django.db.migrations.executor import MigrationExecutor

from factcheck.ingest import ingest_flags
from factcheck.models import Post
from moderation.appeals import decide_appeal, file_appeal
from moderation.propagation import apply_matches
from reports.rollup import waiting_posts
from tests.factcheck.matching_helpers import CLAIM, EXACT_COPY
from tests.factories import DecisionFactory, FactCheckerFactory, OrganisationFactory
from tests.reports.conftest import TEXTS, at, flag
from tests.reports.direct_counts import waiting_at

pytestmark = pytest.mark.django_db


def left(external_id: str):
    return Post.objects.get(external_id=external_id).left_queue_at


def ids(posts) -> list[int]:
    return sorted(post.pk for post in posts)


@pytest.fixture
def claim_and_copy(page_owner):
    """A claim rated at 09:00 (decided 09:01), its exact copy flagged at 10:00 and given the claim's rating at
    10:05; the copy's owner disputes it and the claim's organisation unlinks it at 14:00. A post flagged at 07:00
    waits throughout."""
    organisation = OrganisationFactory(name="Full Facts", languages=["en"])
    rater, colleague = FactCheckerFactory.create_batch(2, organisation=organisation)
    ingest_flags(flags=[flag("waiting", flagged_at=at(0, 7), text=TEXTS["en1"], where=("en", "GB")),
                        flag("claim", flagged_at=at(0, 8), text=CLAIM, where=("en", "GB"))], now=at(0, 8))
    DecisionFactory(reviewer=rater, post=Post.objects.get(external_id="claim"), verdict="false",
                    created_at=at(0, 9), decided_at=at(0, 9, 1))
    ingest_flags(flags=[flag("copy", flagged_at=at(0, 10), text=EXACT_COPY, where=("en", "GB"))], now=at(0, 10))
    copy = Post.objects.select_related("page").get(external_id="copy")
    copy.page.owners.add(page_owner)
    apply_matches(post_ids=[copy.pk], now=at(0, 10, 5))
    return copy, colleague


def test_a_post_leaves_when_rated_or_given_its_claims_rating_and_waits_again_when_unlinked(claim_and_copy, page_owner):
    copy, colleague = claim_and_copy
    assert left("waiting") is None
    assert left("claim") == at(0, 9, 1)  # rated at 09:00; its decision a minute later: never earlier than leaving
    assert left("copy") == at(0, 10, 5)  # the claim's rating reached it
    appeal = file_appeal(owner=page_owner, post_id=copy.pk, kind="dispute", statement="Not the same claim.",
                         now=at(0, 12))
    decide_appeal(appeal_id=appeal.pk, reviewer=colleague, outcome="reversed", reason="A different claim.",
                  now=at(0, 14))
    assert left("copy") is None  # back in the queue: waiting again
    for moment in (at(0, 9, 30), at(0, 12), at(0, 14, 1), at(1, 0)):
        assert ids(waiting_posts(moment)) == ids(waiting_at(moment, None)), moment


def test_a_past_moment_counts_the_posts_that_left_after_it(claim_and_copy):
    # At 08:30 the claim was still waiting; it left at 09:00, after the moment asked about.
    assert ids(waiting_posts(at(0, 8, 30))) == ids(Post.objects.filter(external_id__in=["waiting", "claim"]))
    assert ids(waiting_posts(at(0, 8, 30))) == ids(waiting_at(at(0, 8, 30), None))


def test_a_days_queue_figures_read_the_waiting_and_the_days_leavers_through_their_indexes(claim_and_copy):
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        explained = waiting_posts(at(1, 0)).explain()
    # The waiting (left_queue_at IS NULL) and the day's leavers (>= the moment), both read from its index.
    assert "Index Cond: (left_queue_at IS NULL)" in explained, explained
    assert "Index Cond: (left_queue_at >= " in explained, explained
    assert "Seq Scan on factcheck_post" not in explained, explained


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_the_migration_fills_each_post_no_earlier_than_it_left(page_owner):
    organisation = OrganisationFactory(name="Full Facts", languages=["en"])
    rater = FactCheckerFactory(organisation=organisation)
    ingest_flags(flags=[flag("waiting", flagged_at=at(0, 7), text=TEXTS["en1"], where=("en", "GB")),
                        flag("claim", flagged_at=at(0, 8), text=CLAIM, where=("en", "GB"))], now=at(0, 8))
    DecisionFactory(reviewer=rater, post=Post.objects.get(external_id="claim"), verdict="false",
                    created_at=at(0, 9), decided_at=at(0, 9, 1))
    DecisionFactory(reviewer=rater, post=Post.objects.get(external_id="claim"), verdict="false",
                    created_at=at(1, 9), decided_at=at(1, 9, 1))  # re-rated the next day
    ingest_flags(flags=[flag("copy", flagged_at=at(0, 10), text=EXACT_COPY, where=("en", "GB"))], now=at(0, 10))
    apply_matches(post_ids=[Post.objects.get(external_id="copy").pk], now=at(0, 10, 5))
    executor = MigrationExecutor(connection)
    executor.migrate([("factcheck", "0024_media_band_words")])
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())
    assert left("waiting") is None
    assert left("claim") == at(1, 9)  # its latest rating: later than it left, which is safe
    assert left("copy") == at(0, 10, 5)
    assert ids(waiting_posts(at(0, 8, 30))) == ids(waiting_at(at(0, 8, 30), None))
