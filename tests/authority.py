"""What the two authority suites share: an organisation in and out of coverage, and "nothing was written".

tests/api/test_authority_api.py and tests/factcheck/test_authority_browser.py prove the same rules
through the API and the browser; their common fixtures and the write check live here once.
"""

from __future__ import annotations

from contextlib import contextmanager

import pytest

from audit.models import AuditEvent
from factcheck.models import Claim, Organisation, Post, Rating
from moderation.models import Action, Appeal
from tests.factories import FactCheckerFactory, OrganisationFactory


def snapshot(post: Post) -> dict:
    """Everything a refused rating or claim might have written."""
    return {
        "ratings": Rating.objects.count(),
        "claims": Claim.objects.count(),
        "audit_events": AuditEvent.objects.count(),
        "actions": Action.objects.count(),
        "appeals": list(Appeal.objects.order_by("pk").values_list("pk", "status", "decided_at")),
        "current_rating": list(
            Rating.objects.filter(post=post, is_current=True).values_list(
                "pk", "verdict", "reviewer_id", "organisation_id", "change_reason", "superseded_at"
            )
        ),
        "post_claims": list(
            Claim.objects.filter(post=post).order_by("pk").values_list("pk", "reviewer_id", "status", "ended_at")
        ),
        "queue_state": Post.objects.values_list("queue_state", flat=True).get(pk=post.pk),
    }


@pytest.fixture
def writes_nothing(django_capture_on_commit_callbacks):
    """`with writes_nothing(post): ...` fails if the block wrote anything or scheduled a job."""

    @contextmanager
    def check(post: Post):
        before = snapshot(post)
        with django_capture_on_commit_callbacks() as callbacks:
            yield
        assert snapshot(post) == before
        assert callbacks == [], "a refusal scheduled work after commit (a rating's decision job)"

    return check


def current(post: Post) -> Rating:
    return Rating.objects.get(post=post, is_current=True)


@pytest.fixture
def organisation(db) -> Organisation:
    return OrganisationFactory(name="Vérifions", languages=["fr"], countries=["FR"])


@pytest.fixture
def reviewer(organisation):
    return FactCheckerFactory(organisation=organisation)


@pytest.fixture
def colleague(organisation):
    return FactCheckerFactory(organisation=organisation)


OUTSIDE = pytest.mark.parametrize(
    "language, country", [("en", "FR"), ("fr", "BE"), ("en", "GB")], ids=["language", "country", "both"]
)
