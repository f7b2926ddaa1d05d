"""A search for common words read from a window of the queue (factcheck.queue._windowed_page): the queue's
first posts in the order asked for, down to a depth expected to hold the page's matches, ANDed with the text
index. Whatever the window's depth, the order or the ties at its bound, the page lists what walking the whole
queue lists."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from factcheck import queue as queue_module
from factcheck.models import Post, QueueState
from factcheck.queue import Estimate, QueueFilters, queue_page
from factcheck.views import PAGE_SIZE
from tests.factcheck.test_queue_usability import row_ids, total_of
from tests.factories import FactCheckerFactory, OrganisationFactory, PageFactory, PostFactory

pytestmark = pytest.mark.django_db

ORDERS = {
    "priority": lambda post: (-post.priority, post.first_flagged_at.timestamp(), post.pk),
    "newest": lambda post: (-post.first_flagged_at.timestamp(), -post.pk),
    "waiting": lambda post: (post.first_flagged_at.timestamp(), post.pk),
    "reach": lambda post: (-(post.views + post.shares), post.pk),
}


@pytest.fixture
def organisation():
    return OrganisationFactory(languages=["en", "fr"], countries=[])


@pytest.fixture
def lemons(organisation):
    """160 queued posts, 40 of them about lemons, their priorities, flag times and reach interleaved, with ties
    (priorities in steps of 5); and lemon posts the search must leave out."""
    now, page = timezone.now(), PageFactory()
    matching = []
    for n in range(160):
        lemon = n % 4 == 1
        post = PostFactory(
            page=page, text=f"Lemon water cures everything, part {n}" if lemon else f"Orange juice, part {n}",
            language="fr" if n % 3 == 0 else "en", priority=float((n * 37) % 20 * 5),
            first_flagged_at=now - timedelta(minutes=(n * 53) % 400), views=(n * 7919) % 1000, shares=n % 7,
        )
        if lemon:
            matching.append(post)
    PostFactory(page=page, text="Lemon water, in German", language="de", priority=100)  # not covered
    PostFactory(page=page, text="Lemon water, already rated", queue_state=QueueState.RATED, priority=100)
    return matching


@pytest.fixture
def windowed(monkeypatch):
    """Searches for common words (past SEARCH_WALK_FROM), with the planner's estimates replaced by the true
    counts (the suite's tables are too small for its statistics): 40 matches the reviewer may take in a queue
    of 161, 42 posts with the words. Returns the depths the windows were asked at."""
    monkeypatch.setattr(queue_module, "SEARCH_WALK_FROM", -1)
    monkeypatch.setattr(queue_module, "WINDOW_MARGIN", 1)
    monkeypatch.setattr(queue_module, "_estimated",
                        lambda sql, params: Estimate(matches=40, queued=161, with_words=42))
    depths = []
    real = queue_module._key_at

    def key_at(sort, depth):
        depths.append(depth)
        return real(sort, depth)

    monkeypatch.setattr(queue_module, "_key_at", key_at)
    return depths


def page_of(organisation, sort, start, stop, **filters):
    page = queue_page(organisation=organisation, filters=QueueFilters(q="lemon", **filters), sort=sort,
                      columns=("id",), start=start, stop=stop)
    return [row["id"] for row in page.rows], page


@pytest.mark.parametrize("sort", ORDERS)
@pytest.mark.parametrize("start, stop", [(0, 5), (5, 10), (20, 30)])
def test_a_windowed_page_lists_what_the_whole_queue_lists_in_each_order(
    organisation, lemons, windowed, sort, start, stop
):
    expected = [post.pk for post in sorted(lemons, key=ORDERS[sort])]
    with CaptureQueriesContext(connection) as queries:
        ids, page = page_of(organisation, sort, start, stop)
    assert ids == expected[start:stop]
    assert (page.total, page.estimated) == (40, True)
    # Read from a window: a bounded read of the matches, never a walk of the queue's order.
    assert windowed and windowed[0] < 161
    searches = [q["sql"] for q in queries if "search_vector @@" in q["sql"] and "EXPLAIN" not in q["sql"]]
    assert len(searches) == len(windowed)
    assert all("queue_matches" in sql for sql in searches)


def test_a_window_holding_too_few_matches_is_made_deeper(organisation, lemons, windowed, monkeypatch):
    # A window expected to hold a tenth of the page's matches: too few, so it is asked again, 4 times deeper.
    monkeypatch.setattr(queue_module, "WINDOW_MARGIN", 0.1)
    ids, _ = page_of(organisation, "priority", 0, 10)
    assert ids == [post.pk for post in sorted(lemons, key=ORDERS["priority"])][:10]
    assert len(windowed) >= 2 and windowed[0] == 8
    assert all(deeper == 4 * depth for depth, deeper in zip(windowed, windowed[1:]))


def test_a_window_as_deep_as_the_queue_leaves_the_page_to_the_walk(organisation, lemons, windowed, monkeypatch):
    monkeypatch.setattr(queue_module, "WINDOW_MARGIN", 10)
    monkeypatch.setattr(queue_module, "WINDOW_ENTRY_COST", 0)  # a window, however deep
    with CaptureQueriesContext(connection) as queries:
        ids, page = page_of(organisation, "reach", 0, 10)
    assert ids == [post.pk for post in sorted(lemons, key=ORDERS["reach"])][:10]
    assert windowed == []  # 512 posts deep, in a queue of 161: not even its bound is asked
    assert not any("queue_matches" in q["sql"] for q in queries)


def test_a_queue_shorter_than_the_planner_thought_leaves_the_page_to_the_walk(
    organisation, lemons, windowed, monkeypatch
):
    monkeypatch.setattr(queue_module, "_estimated",
                        lambda sql, params: Estimate(matches=40, queued=100_000, with_words=42))
    monkeypatch.setattr(queue_module, "WINDOW_MARGIN", 0.02)  # a window of 256 posts: more than are queued
    with CaptureQueriesContext(connection) as queries:
        ids, _ = page_of(organisation, "priority", 0, 5)
    assert ids == [post.pk for post in sorted(lemons, key=ORDERS["priority"])][:5]
    assert windowed == [256]
    assert not any("queue_matches" in q["sql"] for q in queries)


def test_an_estimate_of_another_shape_leaves_every_page_to_the_walk():
    # A part of the three the planner proved empty has no row of its own in the plan.
    PostFactory.create_batch(3)
    estimate = queue_module._estimated("EXPLAIN (FORMAT JSON) SELECT id FROM factcheck_post", ())
    assert estimate.queued == estimate.with_words == 0 and estimate.matches >= 0


def test_words_in_most_posts_walk_the_queues_order_rather_than_read_a_window(
    organisation, lemons, windowed, monkeypatch
):
    # The text index's bitmap of the words would cost more than walking to the page's last match.
    monkeypatch.setattr(queue_module, "_estimated",
                        lambda sql, params: Estimate(matches=40, queued=161, with_words=5_000))
    with CaptureQueriesContext(connection) as queries:
        ids, page = page_of(organisation, "newest", 0, 10)
    assert ids == [post.pk for post in sorted(lemons, key=ORDERS["newest"])][:10]
    assert windowed == [] and page.estimated
    assert not any("queue_matches" in q["sql"] for q in queries)


def test_past_the_last_match_the_window_gives_way_to_the_walk_and_its_count(organisation, lemons, windowed):
    ids, page = page_of(organisation, "priority", 40, 50)
    assert ids == []
    assert page.total == 40


def test_words_commoner_than_the_planner_thought_leave_the_page_to_the_walk(
    organisation, lemons, windowed, monkeypatch
):
    # The window holds more matches than a search reads (SEARCH_READ_CAP): those it read may not be its
    # first, so the page walks the queue's order instead of making the window deeper.
    monkeypatch.setattr(queue_module, "SEARCH_READ_CAP", 3)
    with CaptureQueriesContext(connection) as queries:
        ids, page = page_of(organisation, "waiting", 0, 10)
    assert ids == [post.pk for post in sorted(lemons, key=ORDERS["waiting"])][:10]
    assert len(windowed) == 1 and page.estimated
    searches = [q["sql"] for q in queries if "search_vector @@" in q["sql"] and "EXPLAIN" not in q["sql"]]
    assert len(searches) == 2 and "queue_matches" in searches[0] and "queue_matches" not in searches[1]


def test_the_window_keeps_the_other_filters(organisation, lemons, windowed):
    french = [post.pk for post in sorted(lemons, key=ORDERS["priority"]) if post.language == "fr"]
    ids, _ = page_of(organisation, "priority", 0, 5, language="fr")
    assert ids == french[:5]


def test_posts_never_flagged_lead_the_newest_order_inside_the_window_too(organisation, lemons, windowed):
    # PostgreSQL puts NULLs first in a descending order: a window bounded by a flag time must keep them.
    unflagged = lemons[7:9]
    for post in unflagged:
        post.first_flagged_at = None
        post.save(update_fields=["first_flagged_at"])
    ids, _ = page_of(organisation, "newest", 0, 5)
    assert ids[:2] == sorted(post.pk for post in unflagged)[::-1]
    flagged = sorted((post for post in lemons if post not in unflagged), key=ORDERS["newest"])
    assert ids[2:] == [post.pk for post in flagged][:3]


def test_a_windowed_search_page_with_its_copy_groups_runs_six_statements_then_four(
    login, organisation, lemons, windowed, django_assert_max_num_queries
):
    reviewer = FactCheckerFactory(organisation=organisation)
    client = login(reviewer)
    best = sorted(lemons, key=ORDERS["reach"])[0]
    PostFactory.create_batch(2, duplicate_of=best, queue_state=QueueState.GROUPED, views=10, shares=0)
    # session, user with their organisation, my claims, the planner's estimates, the window's bound, the page
    with django_assert_max_num_queries(6) as queries:
        first = client.get("/queue/", {"q": "lemon", "sort": "reach"})
    assert sum("queue_matches" in q["sql"] for q in queries.captured_queries) == len(windowed) == 1
    assert "2 copies · combined reach" in first.content.decode()
    assert row_ids(first) == [post.pk for post in sorted(lemons, key=ORDERS["reach"])][:PAGE_SIZE]
    assert total_of(first) == f"1–{PAGE_SIZE} of about 40"
    # The estimates and the bound are kept a while.
    with django_assert_max_num_queries(4):
        again = client.get("/queue/", {"q": "lemon", "sort": "reach"})
    assert row_ids(again) == row_ids(first)


def test_posts_never_flagged_end_the_longest_waiting_order_and_a_window_reaching_them_is_the_whole_queue(
    organisation, lemons, windowed, monkeypatch
):
    # Only 12 posts of the queue have a flag time: the window's bound, 16 posts down the order, is NULL.
    Post.objects.exclude(pk__in=[post.pk for post in lemons[:12]]).update(first_flagged_at=None)
    monkeypatch.setattr(queue_module, "WINDOW_MARGIN", 0.7)
    ids, _ = page_of(organisation, "waiting", 0, 5)
    assert windowed == [16]
    flagged = sorted(lemons[:12], key=ORDERS["waiting"])
    assert ids == [post.pk for post in flagged][:5]


def test_a_windows_bound_is_asked_once_a_while(organisation, lemons, windowed, monkeypatch):
    def bound_lookups(queries):
        return sum(q["sql"].lstrip().startswith("SELECT") and "OFFSET" in q["sql"] and "@@" not in q["sql"]
                   for q in queries)

    with CaptureQueriesContext(connection) as first:
        page_of(organisation, "priority", 0, 5)
    with CaptureQueriesContext(connection) as again:
        page_of(organisation, "priority", 0, 5)
    monkeypatch.setattr(queue_module, "ESTIMATE_SECONDS", 0)
    with CaptureQueriesContext(connection) as later:
        page_of(organisation, "priority", 0, 5)
    assert (bound_lookups(first), bound_lookups(again), bound_lookups(later)) == (1, 0, 1)


@pytest.mark.parametrize("sort, index", [
    ("newest", "post_queue_flagged"), ("waiting", "post_queue_flagged"), ("reach", "post_queue_reach"),
])
def test_the_windows_range_is_one_of_its_orders_index(organisation, lemons, windowed, sort, index):
    # So that PostgreSQL may AND it with the text index's posts of the words, as it does at the bench's size.
    # The suite's small table leaves the planner free to read any index of the queued posts whole, so the
    # others are dropped (inside the test's transaction, rolled back after it) and the table analysed: the
    # window's condition then shows as the range read from that order's index.
    with CaptureQueriesContext(connection) as queries:
        page_of(None, sort, 0, 5)  # the whole queue: no language index to read instead
    search = next(q["sql"] for q in queries if "queue_matches" in q["sql"])
    others = {"post_queue_order", "post_queue_flagged", "post_queue_reach", "post_queue_language"} - {index}
    with connection.cursor() as cursor:
        for other in others:
            cursor.execute(f"DROP INDEX {other}")
        cursor.execute("ANALYZE factcheck_post")
        for setting in ("enable_seqscan", "enable_indexscan", "enable_indexonlyscan"):
            cursor.execute(f"SET LOCAL {setting} = off")
        cursor.execute(f"EXPLAIN {search}")
        plan = "\n".join(row[0] for row in cursor.fetchall())
    matches_plan = plan.split("CTE queue_matches", 1)[1].split("InitPlan", 1)[0]
    assert f"Bitmap Index Scan on {index}" in matches_plan, plan
    index_conditions = [line for line in matches_plan.splitlines() if "Index Cond" in line]
    key = {"newest": "first_flagged_at >=", "waiting": "first_flagged_at <=", "reach": "(views + shares) >="}[sort]
    assert any(key in line for line in index_conditions), plan


@pytest.mark.parametrize("more_posts", [0, 2_000])
def test_a_windowed_page_in_priority_order_reads_the_index_of_words_by_band_alone(
    organisation, lemons, windowed, more_posts
):
    # Whatever the queue's size: the read is planned on its own, and the function it indexes is too costly
    # to compute for each queued post, however few (the planner's estimate of the bands' OR is poor).
    page = lemons[0].page
    Post.objects.bulk_create(
        Post(page=page, external_id=f"more-{n}", text=f"Orange juice {n}", language="en",
             queue_state=QueueState.QUEUED, priority=float(n % 100), posted_at=lemons[0].posted_at,
             first_flagged_at=lemons[0].first_flagged_at)
        for n in range(more_posts)
    )
    with CaptureQueriesContext(connection) as queries:
        ids, _ = page_of(organisation, "priority", 0, 5)
    assert ids == [post.pk for post in sorted(lemons, key=ORDERS["priority"])][:5]
    search = next(q["sql"] for q in queries if "queue_matches" in q["sql"])
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE factcheck_post")
        cursor.execute(f"EXPLAIN {search}")
        plan = "\n".join(row[0] for row in cursor.fetchall())
    matches_plan = plan.split("CTE queue_matches", 1)[1].split("InitPlan", 1)[0]
    scans = [line.strip() for line in matches_plan.splitlines() if " Scan " in line and "Subquery" not in line]
    assert len(scans) == 2 and "Bitmap Heap Scan on factcheck_post" in scans[0], plan
    assert "Bitmap Index Scan on post_queue_words" in scans[1], plan
    assert "Gather" not in plan and "Seq Scan" not in plan
