"""The dashboard's waiting figures after a rating is withdrawn (reports.rollup.waiting_posts): the post, and the copy
that carried its rating, wait again from the withdrawal, not before it; a past day's figures keep them rated."""

from __future__ import annotations

import pytest

from factcheck.ingest import ingest_flags
from factcheck.models import Post, QueueState, Rating
from moderation.propagation import apply_matches
from moderation.withdrawal import withdraw_rating
from reports.rollup import waiting_posts
from tests.factcheck.matching_helpers import CLAIM, EXACT_COPY
from tests.factories import DecisionFactory, FactCheckerFactory, OrganisationFactory
from tests.reports.conftest import at, flag
from tests.reports.direct_counts import rolled_up_first_day, waiting_at

pytestmark = pytest.mark.django_db


def ids(posts) -> list[int]:
    return sorted(post.pk for post in posts)


def test_a_withdrawn_rating_leaves_its_post_and_copy_waiting_from_the_withdrawal(db):
    organisation = OrganisationFactory(name="Full Facts", languages=["en"])
    rater = FactCheckerFactory(organisation=organisation)
    ingest_flags(flags=[flag("lemon", flagged_at=at(0, 8), text=CLAIM, where=("en", "GB"))], now=at(0, 8))
    claim = Post.objects.get(external_id="lemon")
    DecisionFactory(reviewer=rater, post=claim, verdict="false", created_at=at(0, 9), decided_at=at(0, 9, 1))
    ingest_flags(flags=[flag("lemon-copy", flagged_at=at(0, 10), text=EXACT_COPY, where=("en", "GB"))],
                 now=at(0, 10))
    copy = Post.objects.get(external_id="lemon-copy")
    apply_matches(post_ids=[copy.pk], now=at(0, 10, 5))  # the copy inherits the claim's False
    copy.refresh_from_db()
    assert copy.queue_state == QueueState.MATCHED
    assert waiting_posts(at(0, 13)).count() == 0 == len(waiting_at(at(0, 13), None))

    rating = Rating.objects.get(post=claim, is_current=True)
    withdraw_rating(actor=rater, post_id=claim.pk, rating_id=rating.pk, reason="Rated the wrong post.",
                    now=at(0, 14))
    copy.refresh_from_db()
    assert copy.queue_state == QueueState.GROUPED  # it waits with its claim
    assert ids(waiting_posts(at(0, 13))) == [] == ids(waiting_at(at(0, 13), None))  # rated then
    for moment in (at(0, 14, 1), at(1, 0)):
        assert ids(waiting_posts(moment)) == sorted([claim.pk, copy.pk]) == ids(waiting_at(moment, None))
    today, rebuilt = rolled_up_first_day(organisation, live_at=at(0, 14, 1), rebuilt_at=at(1, 6))
    assert (today.queue_depth, today.queue_oldest_seconds) == (2, (6 * 60 + 1) * 60.0)  # flagged at 08:00
    assert [day.queue_depth for day in rebuilt] == [2, 2]
