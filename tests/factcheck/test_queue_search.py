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


# Words the planner expects in many posts: the queue's order is walked, the total is its estimate


@pytest.fixture
def common(monkeypatch):
    """Every search counts as common words: in the suite's small tables the planner never expects 2,000."""
    monkeypatch.setattr(queue_module, "SEARCH_WALK_FROM", -1)
    estimates = []
    real = queue_module._estimated

    def kept(sql, params):
        estimate = real(sql, params)
        estimates.append(estimate.matches)
        return estimate

    monkeypatch.setattr(queue_module, "_estimated", kept)
    return estimates


@pytest.mark.parametrize("sort, key", [
    ("priority", lambda post: (-post.priority, post.pk)),
    ("newest", lambda post: (-post.first_flagged_at.timestamp(), -post.pk)),
    ("reach", lambda post: (-(post.views + post.shares), post.pk)),
])
def test_a_search_for_common_words_walks_the_queue_in_the_order_asked_for_and_shows_an_estimate(
    login, reviewer, matching, common, sort, key
):
    in_order = [post.pk for post in sorted(matching, key=key)]
    client = login(reviewer)
    with CaptureQueriesContext(connection) as queries:
        first = client.get("/queue/", {"q": "lemon", "sort": sort})
    assert row_ids(first) == in_order[:PAGE_SIZE]
    about = max(common[-1], PAGE_SIZE + 1)  # at least the rows read: the page's and the next one's first
    assert total_of(first) == f"1–{PAGE_SIZE} of about {round(about, 2 - len(str(about))):,}"
    # The estimate is EXPLAIN's, never a count; the page reads no table of matches first.
    assert any(q["sql"].startswith("EXPLAIN (FORMAT JSON)") for q in queries)
    assert not any("queue_matches" in q["sql"] or "AS capped" in q["sql"] for q in queries)
    # The walk reaching the last match knows the total.
    last = client.get("/queue/", {"q": "lemon", "sort": sort, "page": 2})
    assert row_ids(last) == in_order[PAGE_SIZE:]
    assert total_of(last) == f"{PAGE_SIZE + 1}–30 of 30"


def test_a_walked_search_keeps_the_other_filters_and_an_empty_one_says_so(login, reviewer, matching, common):
    french = sorted((post for post in matching if post.language == "fr"), key=lambda post: -post.priority)
    client = login(reviewer)
    response = client.get("/queue/", {"q": "lemon", "language": "fr"})
    assert row_ids(response) == [post.pk for post in french]
    assert total_of(response) == f"1–{len(french)} of {len(french)}"
    assert total_of(client.get("/queue/", {"q": "lemon juice"})) == "0 of 0"


def explains(queries) -> int:
    return sum(q["sql"].startswith("EXPLAIN (FORMAT JSON)") for q in queries)


def test_the_planners_estimate_is_asked_once_a_while_and_again_when_it_may_have_changed(
    login, reviewer, matching, common, monkeypatch
):
    client = login(reviewer)
    with CaptureQueriesContext(connection) as first:
        first_page = client.get("/queue/", {"q": "lemon"})
    with CaptureQueriesContext(connection) as again:
        second_page = client.get("/queue/", {"q": "lemon", "page": 2})
        same_page = client.get("/queue/", {"q": "lemon"})
    assert (explains(first), explains(again)) == (1, 0)
    assert row_ids(same_page) == row_ids(first_page) and len(row_ids(second_page)) == 30 - PAGE_SIZE
    # Other words are another estimate; and once ESTIMATE_SECONDS have passed, the same words are asked again.
    with CaptureQueriesContext(connection) as other:
        client.get("/queue/", {"q": "lemon water"})
    monkeypatch.setattr(queue_module, "ESTIMATE_SECONDS", 0)
    with CaptureQueriesContext(connection) as later:
        assert row_ids(client.get("/queue/", {"q": "lemon"})) == row_ids(first_page)
    assert (explains(other), explains(later)) == (1, 1)


@pytest.mark.parametrize("first, shown, total, label", [
    (1, 25, 8_512, "1–25 of about 8,500"),
    (1, 25, 170_179, "1–25 of about 170,000"),
    (26, 25, 40, "26–50 of about 50"),  # never fewer than the rows already shown
    (1, 25, 3, "1–25 of about 25"),
    (101, 0, 1_034, "0 of about 1,000"),
])
def test_an_estimated_total_reads_as_about_two_significant_figures(first, shown, total, label):
    from factcheck.views import range_label

    assert range_label(first=first, shown=shown, total=total, estimated=True) == label
