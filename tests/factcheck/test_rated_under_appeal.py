"""Issue 29, break 6: "Rated posts" marks the ratings under appeal and filters them."""

from __future__ import annotations

import re

import pytest

from factcheck.members import organisation_of
from moderation.appeals import decide_appeal, file_appeal
from tests import scenarios
from tests.factories import FactCheckerFactory, UserFactory

pytestmark = pytest.mark.django_db


def rows(response) -> dict[str, bool]:
    """Each listed post's external id, and whether its row says "Under appeal"."""
    assert response.status_code == 200
    found = re.findall(r'<li class="card rated-item">(.*?)</li>', response.content.decode(), re.S)
    return {re.search(r'<bdi class="mono">([^<]+)</bdi>', row).group(1): "Under appeal" in row for row in found}


@pytest.fixture
def world(factchecker):
    owner = UserFactory()
    colleague = FactCheckerFactory(organisation=organisation_of(factchecker))
    disputed = scenarios.rated_post(rater=factchecker, owner=owner, external_id="disputed")
    decided = scenarios.rated_post(rater=factchecker, owner=owner, external_id="decided")
    scenarios.rated_post(rater=factchecker, owner=owner, external_id="quiet")
    file_appeal(owner=owner, post_id=disputed.pk, kind="dispute", statement="The quote is real.")
    upheld = file_appeal(owner=owner, post_id=decided.pk, kind="dispute", statement="It is satire.")
    decide_appeal(appeal_id=upheld.pk, reviewer=colleague, outcome="upheld", reason="It is not.")
    return {"colleague": colleague}


def test_rated_posts_mark_the_ratings_with_an_open_appeal(login, factchecker, world):
    assert rows(login(factchecker).get("/queue/rated/")) == {"disputed": True, "decided": False, "quiet": False}


def test_the_under_appeal_filter_lists_only_those_for_me_and_for_my_organisation(login, factchecker, world):
    client = login(factchecker)
    assert rows(client.get("/queue/rated/", {"appeal": "open"})) == {"disputed": True}
    page = client.get("/queue/rated/", {"appeal": "open", "who": "organisation"})
    assert rows(page) == {"disputed": True}
    assert re.search(r'id="id_appeal"[^>]* checked', page.content.decode())
    # The colleague rated none of them: "Rated by me" under appeal is empty, and says so.
    empty = login(world["colleague"]).get("/queue/rated/", {"appeal": "open"})
    assert rows(empty) == {} and "No rating is under appeal." in empty.content.decode()


def test_another_organisation_sees_none_of_them(login, world):
    stranger = FactCheckerFactory()
    assert rows(login(stranger).get("/queue/rated/", {"appeal": "open", "who": "organisation"})) == {}


def test_the_under_appeal_list_renders_in_a_fixed_number_of_queries(login, factchecker, world,
                                                                    django_assert_max_num_queries):
    client = login(factchecker)
    # Session, user with the organisation, the page of ratings with their appeal state and total; the nav counts.
    with django_assert_max_num_queries(4):
        response = client.get("/queue/rated/", {"appeal": "open", "who": "organisation"})
    assert rows(response) == {"disputed": True}
