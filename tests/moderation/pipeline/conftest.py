"""The people and the post of the pipeline tests: an owner's page, a post on it, staff and a colleague."""

from __future__ import annotations

import pytest

from factcheck.members import create_user, organisation_of
from tests.factories import (
    PASSWORD,
    FactCheckerFactory,
    PageFactory,
    PostFactory,
    StaffFactory,
    UserFactory,
)


@pytest.fixture
def owner(db):
    return UserFactory(username="pipeline-owner")


@pytest.fixture
def page(owner):
    page = PageFactory(name="Pipeline Page")
    page.owners.add(owner)
    return page


@pytest.fixture
def post(page):
    return PostFactory(page=page)


@pytest.fixture
def colleague(factchecker):
    return FactCheckerFactory(organisation=organisation_of(factchecker))


@pytest.fixture
def staff(db):
    return create_user(username="pipeline-staff", role="trust_safety", password=PASSWORD)


@pytest.fixture
def other_staff(db):
    return StaffFactory(username="pipeline-other-staff")
