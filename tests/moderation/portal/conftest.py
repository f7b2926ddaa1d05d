"""The page owners' portal tests' world: an owner's page, a post on it rated False and decided, a removed post."""

from __future__ import annotations

import pytest

from tests import scenarios
from tests.factories import (
    DecisionFactory,
    FlagFactory,
    PageFactory,
    UserFactory,
)

# The rating of `rated_post`, as the portal shows it.
SHOWN = {
    "rationale": "The quote is invented.",
    "sources": ["https://source.example/evidence"],
    "article_url": "https://factorg.example/miracle-cure",
}


@pytest.fixture
def owner(db):
    return UserFactory()


@pytest.fixture
def page(owner):
    page = PageFactory(name="Daily Wonders")
    page.owners.add(owner)
    return page


@pytest.fixture
def rated_post(page, factchecker):
    """Flagged by a classifier, rated False and decided: the portal shows the rating's `SHOWN` fields."""
    post = FlagFactory(source="classifier", post__page=page, post__text="A miracle cure was found.").post
    DecisionFactory(post=post, reviewer=factchecker, **SHOWN)
    return post


@pytest.fixture
def removed_post(page, staff_user):
    return scenarios.removed_post(staff=staff_user, page=page, ground="harassment",
                                  reason="Targets a private person by name.")
