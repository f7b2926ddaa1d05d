"""/queue/rated/: "Rated by me" and "Rated by my organisation", paged, searchable, each row a link to its post."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from factcheck.models import Verdict
from factcheck.ratings import record_rating
from factcheck.views import PAGE_SIZE
from tests.factories import FactCheckerFactory, OrganisationFactory, RatingFactory

pytestmark = pytest.mark.django_db


def listed(response) -> list[int]:
    assert response.status_code == 200
    return [int(pk) for pk in re.findall(r'href="/queue/posts/(\d+)/" class="post-text"', response.content.decode())]


def total_of(response) -> str:
    return re.search(r'id="rated-total"><strong>([^<]+)</strong>', response.content.decode()).group(1)


@pytest.fixture
def team():
    organisation = OrganisationFactory(name="Verifica")
    return FactCheckerFactory(organisation=organisation), FactCheckerFactory(organisation=organisation)


def test_rated_by_me_lists_my_current_ratings_newest_first_and_my_organisation_lists_ours(login, team):
    me, colleague = team
    now = timezone.now()
    older = RatingFactory(reviewer=me, post__text="Old claim about tap water", created_at=now - timedelta(days=2)).post
    newer = RatingFactory(reviewer=me, post__text="New claim about vaccines", created_at=now - timedelta(hours=1)).post
    theirs = RatingFactory(reviewer=colleague, post__text="Colleague's claim about the moon", verdict=Verdict.SATIRE,
                           created_at=now - timedelta(hours=5)).post
    faktenwerk = OrganisationFactory(name="Faktenwerk")
    RatingFactory(reviewer__organisation=faktenwerk, post__text="Another organisation's claim")
    client = login(me)
    mine = client.get("/queue/rated/")
    assert listed(mine) == [newer.pk, older.pk]
    assert total_of(mine) == "1–2 of 2"
    assert 'aria-current="page">Rated by me</a>' in mine.content.decode()
    ours = client.get("/queue/rated/", {"who": "organisation"})
    assert listed(ours) == [newer.pk, theirs.pk, older.pk]
    html = ours.content.decode()
    assert 'aria-current="page">Rated by my organisation</a>' in html
    assert "Satire" in html and "Another organisation" not in html


def test_a_rating_changed_since_is_listed_once_under_its_current_rater(login, team):
    me, colleague = team
    post = RatingFactory(reviewer=me, post__text="A claim rated twice").post
    record_rating(reviewer=colleague, post_id=post.pk, verdict=Verdict.PARTLY_FALSE, rationale="r2",
                  sources=["https://b.example"], change_reason="New evidence.")
    client = login(me)
    assert listed(client.get("/queue/rated/")) == []
    assert listed(client.get("/queue/rated/", {"who": "organisation"})) == [post.pk]


def test_the_rated_list_searches_words_of_the_text_and_the_external_id(login, team):
    me, _ = team
    lemon = RatingFactory(reviewer=me, post__text="Lemon water cures measles").post
    by_id = RatingFactory(reviewer=me, post__text="Something else entirely", post__external_id="tw-4455").post
    RatingFactory(reviewer=me, post__text="The moon landing was staged")
    client = login(me)
    assert listed(client.get("/queue/rated/", {"q": "lemon cure"})) == [lemon.pk]
    assert listed(client.get("/queue/rated/", {"q": "4455"})) == [by_id.pk]
    empty = client.get("/queue/rated/", {"q": "volcano"})
    assert listed(empty) == [] and "No rated post matches “volcano”." in empty.content.decode()


def test_the_rated_list_is_paged_with_a_total_in_a_fixed_number_of_queries(login, team, django_assert_max_num_queries):
    me, _ = team
    now = timezone.now()
    posts = [RatingFactory(reviewer=me, post__text=f"Claim {i}", created_at=now - timedelta(minutes=i)).post
             for i in range(PAGE_SIZE + 3)]
    client = login(me)
    # session, user, the organisation's name in the header, the page of ratings with posts, pages,
    # raters and the capped total
    with django_assert_max_num_queries(4):
        second = client.get("/queue/rated/", {"page": 2})
    assert listed(second) == [post.pk for post in posts[PAGE_SIZE:]]
    assert total_of(second) == f"{PAGE_SIZE + 1}–{PAGE_SIZE + 3} of {PAGE_SIZE + 3}"
    first = client.get("/queue/rated/")
    assert 'rel="next"' in first.content.decode() and 'href="?who=me&amp;page=2"' in first.content.decode()


def test_the_navigation_links_to_the_rated_posts(login, team):
    me, _ = team
    assert 'href="/queue/rated/"' in login(me).get("/queue/").content.decode()
