"""A decision made from a stale appeal page is refused: the appeal's version is checked, not just bumped."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from factcheck.members import organisation_of
from factcheck.models import Rating
from moderation.appeals import StaleAppeal, decide_appeal, start_review
from moderation.models import Appeal, AppealEvent, AppealStatus
from tests import scenarios
from tests.factories import PASSWORD, FactCheckerFactory, UserFactory
from tests.moderation.test_appeal_views import dispute

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner(db):
    return UserFactory()


@pytest.fixture
def colleagues(factchecker):
    return (FactCheckerFactory(organisation=organisation_of(factchecker)),
            FactCheckerFactory(organisation=organisation_of(factchecker)))


@pytest.fixture
def appeal(owner, factchecker):
    return dispute(owner, scenarios.rated_post(rater=factchecker, owner=owner, text="A miracle cure was found."))


def signed_in(user) -> Client:
    client = Client()
    assert client.login(username=user.username, password=PASSWORD)
    return client


def shown_version(html: str) -> int:
    return int(re.search(r'name="version" value="(\d+)"', html).group(1))


def test_deciding_with_an_older_version_is_refused_and_changes_nothing(appeal, colleagues):
    first, second = colleagues
    seen = appeal.version
    start_review(appeal_id=appeal.pk, reviewer=second)  # the appeal moves on meanwhile
    with pytest.raises(StaleAppeal, match="changed since you opened it"):
        decide_appeal(appeal_id=appeal.pk, reviewer=second, outcome="upheld", reason="Stands.", expected_version=seen)
    appeal.refresh_from_db()
    assert appeal.status == AppealStatus.IN_REVIEW
    assert not AppealEvent.objects.filter(appeal=appeal, to_status=AppealStatus.UPHELD).exists()


def test_a_decision_posted_from_a_stale_page_is_refused_with_a_clear_message(appeal, colleagues):
    first, second = colleagues
    page_first = signed_in(first).get(f"/queue/appeals/{appeal.pk}/").content.decode()
    version = shown_version(page_first)
    assert version == appeal.version
    # Meanwhile the appeal moves on (taken into review), and the decision is posted from the old page.
    signed_in(second).post(f"/queue/appeals/{appeal.pk}/review/", {"version": version})
    assert Appeal.objects.get(pk=appeal.pk).version == version + 1
    response = signed_in(second).post(
        f"/queue/appeals/{appeal.pk}/",
        {"outcome": "reversed", "reason": "The quote is real.",
            "public_rationale": "New evidence.", "new_verdict": "true", "version": version},
    )
    assert response.status_code == 409
    assert "This appeal changed since you opened it" in response.content.decode()
    appeal.refresh_from_db()
    assert appeal.status == AppealStatus.IN_REVIEW
    assert Rating.objects.filter(post=appeal.post).count() == 1


def test_a_decision_from_a_fresh_page_goes_through(appeal, colleagues):
    _, second = colleagues
    client = signed_in(second)
    version = shown_version(client.get(f"/queue/appeals/{appeal.pk}/").content.decode())
    response = client.post(
        f"/queue/appeals/{appeal.pk}/",
        {"outcome": "upheld", "reason": "The rating stands.", "version": version},
    )
    assert response.status_code == 302
    assert Appeal.objects.get(pk=appeal.pk).status == AppealStatus.UPHELD
