"""The queue page's text search: the posts a reviewer may take that have every word, in the order asked for,
with the queue's capped total (factcheck.queue.queue_page, factcheck.search)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from factcheck import queue as queue_module
from factcheck.members import organisation_of
from factcheck.models import Post, QueueState
from factcheck.queue import QueueFilters, queue_page
from factcheck.views import PAGE_SIZE
from tests.factcheck.test_queue_usability import row_ids, total_of
from tests.factories import FactCheckerFactory, FlagFactory, OrganisationFactory, PageFactory, PostFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def reviewer():
    return FactCheckerFactory(organisation=OrganisationFactory(languages=["en", "fr"], countries=[]))


@pytest.fixture
def matching(reviewer):
    """30 queued posts the reviewer covers that mention a lemon, with distinct priorities, stored out of
    order; and posts the search must leave out."""
    now = timezone.now()
    posts = [
        PostFactory(text=f"Lemon water cures everything, part {n}", language="en" if n % 3 else "fr",
                    priority=(n * 37) % 100 + n / 100, first_flagged_at=now - timedelta(minutes=(n * 53) % 90),
                    views=(n * 7919) % 1000, shares=0)
        for n in range(30)
    ]
    PostFactory(text="Lemon water, in German", language="de", priority=99.9)  # not covered
    PostFactory(text="Lemon water, already rated", queue_state=QueueState.RATED, priority=99.9)
    PostFactory(text="Lemon water, grouped with its copy", queue_state=QueueState.GROUPED, priority=99.9)
    PostFactory(text="Orange juice cures nothing", priority=99.9)  # no lemon
    return posts


def test_a_search_lists_the_matching_posts_best_first_with_their_total_across_pages(login, reviewer, matching):
    best_first = [post.pk for post in sorted(matching, key=lambda post: -post.priority)]
    client = login(reviewer)
    first = client.get("/queue/", {"q": "lemon wat"})
    assert row_ids(first) == best_first[:PAGE_SIZE]
    assert total_of(first) == f"1–{PAGE_SIZE} of 30"
    second = client.get("/queue/", {"q": "lemon wat", "page": 2})
    assert row_ids(second) == best_first[PAGE_SIZE:]
    assert total_of(second) == f"{PAGE_SIZE + 1}–30 of 30"
    assert total_of(client.get("/queue/", {"q": "lemon wat", "page": 5})) == "0 of 30"
    assert total_of(client.get("/queue/", {"q": "lemon juice"})) == "0 of 0"


@pytest.mark.parametrize("sort, key", [
    ("newest", lambda post: (-post.first_flagged_at.timestamp(), -post.pk)),
    ("waiting", lambda post: (post.first_flagged_at.timestamp(), post.pk)),
    ("reach", lambda post: (-(post.views + post.shares), post.pk)),
])
def test_a_search_keeps_the_sort_asked_for(login, reviewer, matching, sort, key):
    response = login(reviewer).get("/queue/", {"q": "lemon", "sort": sort})
    assert row_ids(response) == [post.pk for post in sorted(matching, key=key)][:PAGE_SIZE]
    assert total_of(response) == f"1–{PAGE_SIZE} of 30"


def test_a_search_with_more_matches_than_the_cap_lists_them_in_order_and_shows_the_cap(login, reviewer, matching,
                                                                                        monkeypatch):
    monkeypatch.setattr(queue_module, "COUNT_CAP", 12)
    monkeypatch.setattr("factcheck.views.COUNT_CAP", 12)
    by_reach = [post.pk for post in sorted(matching, key=lambda post: (-(post.views + post.shares), post.pk))]
    client = login(reviewer)
    first = client.get("/queue/", {"q": "lemon", "sort": "reach"})
    assert row_ids(first) == by_reach[:PAGE_SIZE]
    assert total_of(first) == f"1–{PAGE_SIZE} of {PAGE_SIZE}+"
    second = client.get("/queue/", {"q": "lemon", "sort": "reach", "page": 2})
    assert row_ids(second) == by_reach[PAGE_SIZE:]
    assert total_of(second) == f"{PAGE_SIZE + 1}–30 of 30+"
    assert total_of(client.get("/queue/", {"q": "lemon", "page": 5})) == "0 of 12+"


def test_a_search_applies_the_other_filters_to_the_matches(login, reviewer, matching):
    flagged_by_partner = matching[4:7]
    for post in flagged_by_partner:
        FlagFactory(post=post, source="partner")
    client = login(reviewer)
    response = client.get("/queue/", {"q": "lemon", "source": "partner"})
    assert row_ids(response) == [post.pk for post in sorted(flagged_by_partner, key=lambda post: -post.priority)]
    french = [post for post in matching if post.language == "fr"]
    response = client.get("/queue/", {"q": "lemon", "language": "fr"})
    assert row_ids(response) == [post.pk for post in sorted(french, key=lambda post: -post.priority)]
    assert total_of(response) == f"1–{len(french)} of {len(french)}"


# Each order, across pages, with ties and posts never flagged

ORDERS = {
    "priority": lambda post: (-post.priority, post.first_flagged_at.timestamp(), post.pk),
    "newest": lambda post: (-post.first_flagged_at.timestamp(), -post.pk),
    "waiting": lambda post: (post.first_flagged_at.timestamp(), post.pk),
    "reach": lambda post: (-(post.views + post.shares), post.pk),
}


@pytest.fixture
def lemons(reviewer):
    """160 queued posts, 40 of them about lemons, their priorities, flag times and reach interleaved, with ties
    (priorities in steps of 5); and lemon posts the search must leave out."""
    now, page = timezone.now(), PageFactory()
    found = []
    for n in range(160):
        lemon = n % 4 == 1
        post = PostFactory(
            page=page, text=f"Lemon water cures everything, part {n}" if lemon else f"Orange juice, part {n}",
            language="fr" if n % 3 == 0 else "en", priority=float((n * 37) % 20 * 5),
            first_flagged_at=now - timedelta(minutes=(n * 53) % 400), views=(n * 7919) % 1000, shares=n % 7,
        )
        if lemon:
            found.append(post)
    PostFactory(page=page, text="Lemon water, in German", language="de", priority=100)  # not covered
    PostFactory(page=page, text="Lemon water, already rated", queue_state=QueueState.RATED, priority=100)
    return found


def lemon_page(reviewer, sort, start, stop):
    page = queue_page(organisation=organisation_of(reviewer), filters=QueueFilters(q="lemon"), sort=sort,
                      columns=("id",), start=start, stop=stop)
    return [row["id"] for row in page.rows], page.total


@pytest.mark.parametrize("sort", ORDERS)
@pytest.mark.parametrize("start, stop", [(0, 5), (5, 10), (20, 30), (35, 45)])
def test_a_search_page_lists_the_matches_in_each_order_whatever_the_ties(reviewer, lemons, sort, start, stop):
    expected = [post.pk for post in sorted(lemons, key=ORDERS[sort])]
    assert lemon_page(reviewer, sort, start, stop) == (expected[start:stop], 40)


def test_posts_never_flagged_lead_the_newest_order_and_end_the_longest_waiting_one(reviewer, lemons):
    # PostgreSQL puts NULLs first in a descending order and last in an ascending one.
    unflagged = lemons[7:9]
    Post.objects.filter(pk__in=[post.pk for post in unflagged]).update(first_flagged_at=None)
    flagged = [post for post in lemons if post not in unflagged]
    newest, _ = lemon_page(reviewer, "newest", 0, 5)
    assert newest == sorted(post.pk for post in unflagged)[::-1] + [
        post.pk for post in sorted(flagged, key=ORDERS["newest"])][:3]
    waiting, _ = lemon_page(reviewer, "waiting", 35, 45)
    assert waiting == [post.pk for post in sorted(flagged, key=ORDERS["waiting"])][35:] + sorted(
        post.pk for post in unflagged)


def test_a_search_page_shows_each_rows_copy_group(login, reviewer, lemons):
    best = sorted(lemons, key=ORDERS["reach"])[0]
    PostFactory.create_batch(2, duplicate_of=best, queue_state=QueueState.GROUPED, views=10, shares=0)
    response = login(reviewer).get("/queue/", {"q": "lemon", "sort": "reach"})
    assert row_ids(response) == [post.pk for post in sorted(lemons, key=ORDERS["reach"])][:PAGE_SIZE]
    assert total_of(response) == f"1–{PAGE_SIZE} of 40"
    first_row = response.content.decode().split("<tbody>", 1)[1].split("</tr>", 1)[0]
    assert "2 copies · combined reach" in first_row


@pytest.mark.parametrize("word", ["कोरोना", "वायरस", "टीका"])
def test_a_word_with_vowel_signs_is_searched_whole(login, word):
    """Hindi's vowel signs are combining marks: the search split its words at them (कोरोना into क, र and न) and
    found nothing; the index holds each word whole."""
    hindi = FactCheckerFactory(organisation=OrganisationFactory(languages=["hi"], countries=[]))
    post = PostFactory(text="कोरोना वायरस का टीका सुरक्षित नहीं है", language="hi")
    PostFactory(text="कल बारिश होगी", language="hi")
    response = login(hindi).get("/queue/", {"q": word})
    assert row_ids(response) == [post.pk]
