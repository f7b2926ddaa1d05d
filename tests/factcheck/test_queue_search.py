"""The queue page's text search: the posts a reviewer may take that have every word, in the queue's order,
with the queue's capped total, whichever way the statement finds them (factcheck.queue.queue_page)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from factcheck import queue as queue_module
from factcheck.models import QueueState
from factcheck.views import PAGE_SIZE
from tests.factcheck.test_queue_usability import row_ids, total_of
from tests.factories import FactCheckerFactory, FlagFactory, OrganisationFactory, PostFactory

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


def test_a_search_with_more_matches_than_the_cap_still_lists_the_best_and_shows_the_cap(
    login, reviewer, matching, monkeypatch
):
    # Past the search's read cap the page walks the queue's order instead of sorting the matches it read.
    monkeypatch.setattr(queue_module, "SEARCH_READ_CAP", 12)
    monkeypatch.setattr(queue_module, "COUNT_CAP", 12)
    monkeypatch.setattr("factcheck.views.COUNT_CAP", 12)
    best_first = [post.pk for post in sorted(matching, key=lambda post: -post.priority)]
    client = login(reviewer)
    first = client.get("/queue/", {"q": "lemon"})
    assert row_ids(first) == best_first[:PAGE_SIZE]
    assert total_of(first) == f"1–{PAGE_SIZE} of {PAGE_SIZE}+"
    assert row_ids(client.get("/queue/", {"q": "lemon", "page": 2})) == best_first[PAGE_SIZE:]
    assert total_of(client.get("/queue/", {"q": "lemon", "page": 5})) == "0 of 12+"


def test_a_search_with_more_matches_than_the_shown_total_sorts_all_it_read_and_shows_the_cap(
    login, reviewer, matching, monkeypatch
):
    # Under the read cap the matches are all read and sorted; the total shown is still capped.
    monkeypatch.setattr(queue_module, "SEARCH_READ_CAP", 40)
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


def test_a_search_reads_the_matches_from_the_text_index_whatever_the_queue_indexes_offer(login, reviewer, matching):
    # The rare-word safety: the matches come from the text index, in a part of the statement where the
    # planner cannot walk the queue's order index instead (computing every post's words, for seconds).
    client = login(reviewer)
    with CaptureQueriesContext(connection) as queries:
        client.get("/queue/", {"q": "lemon"})
    search = next(q["sql"] for q in queries if "queue_matches" in q["sql"])
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")  # as on a large table
        cursor.execute(f"EXPLAIN {search}")
        plan = "\n".join(row[0] for row in cursor.fetchall())
    matches_plan = plan.split("CTE queue_matches", 1)[1].split("InitPlan", 1)[0]
    assert "Bitmap Index Scan on post_search_vector" in matches_plan, plan
    assert "post_queue" not in matches_plan, plan
