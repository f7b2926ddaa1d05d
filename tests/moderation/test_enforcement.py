from decimal import Decimal

import pytest

from factcheck.claims import claim_next
from factcheck.ratings import record_rating
from moderation.models import DistributionChange, PostDistribution
from tests.factories import PostFactory


@pytest.mark.django_db
def test_false_rating_demotes_and_labels_the_post_through_a_real_worker(
    factchecker, run_worker, django_capture_on_commit_callbacks
):
    post = PostFactory()
    with django_capture_on_commit_callbacks(execute=True):
        claim = claim_next(reviewer=factchecker)
        record_rating(
            reviewer=factchecker, post_id=claim.post_id, verdict="false", rationale="Fabricated quote.",
            sources=["https://archive.example/original"],
        )
    assert run_worker() == 1
    distribution = PostDistribution.objects.get(post=post)
    assert distribution.multiplier == Decimal("0.2")
    assert distribution.labels == ["False information. Checked by independent fact-checkers."]
    assert DistributionChange.objects.filter(post=post).count() == 1
