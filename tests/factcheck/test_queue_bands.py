"""A search for common words in the priority order reads its window's matches from the queued posts' words by
priority band (migration 0012, factcheck.queue._banded): each word stored as `<band>@<word>`, the band the
whole points of the post's priority. Whatever the priorities, the bands' edges, the words' case or a priority
that moved, the page lists what walking the whole queue lists; and the plan reads that index alone."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from factcheck import queue as queue_module
from factcheck.models import Post, QueueState
from factcheck.queue import QueueFilters, QueueSort, _search_statements, coverage_of, every_word
from tests.factcheck.test_queue_window import ORDERS, page_of
from tests.factories import OrganisationFactory, PageFactory, PostFactory

pytestmark = pytest.mark.django_db

# Each side of a band's edges, the bound's band, and priorities outside the 0-100 scale, with ties.
PRIORITIES = [150.0, 100.0, 99.99, 47.0, 46.71, 46.7, 46.7, 46.69, 46.0, 45.99, 45.0, 10.0, 0.0, -3.0]


def sql_value(sql: str, *params):
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchone()[0]


@pytest.fixture
def edges():
    """A queued post about lemons (written in capitals and with an accent) at each of PRIORITIES, and one of
    oranges beside each; a lemon post of another language, and a rated one."""
    now, page = timezone.now(), PageFactory()
    lemons = []
    for n, priority in enumerate(PRIORITIES):
        lemons.append(PostFactory(page=page, text=f"CITRON PRESSÉ, part {n}", language="en", priority=priority,
                                  first_flagged_at=now - timedelta(minutes=n % 3)))
        PostFactory(page=page, text=f"Orange pressée, part {n}", language="en", priority=priority)
    PostFactory(page=page, text="Citron pressé, in German", language="de", priority=90)
    PostFactory(page=page, text="Citron pressé, already rated", queue_state=QueueState.RATED, priority=90)
    return lemons


def window_of(organisation, words: tuple[str, ...], bound: float, start: int = 0, stop: int = 50):
    """The page and the count of the window's matches (down to priority `bound`) of a search."""
    page = _search_statements(coverage_of(organisation), QueueFilters(q=" ".join(words)),
                              QueueSort.PRIORITY, words, ("id",), start, stop, window=(bound,))[0]
    rows = page.rows()
    return [row["id"] for row in rows], (rows[0]["queue_total"] if rows else 0), page.sql


@pytest.mark.parametrize("bound", [150.0, 100.0, 46.7, 46.0, 45.99, 0.0, -3.0])
def test_a_windows_matches_are_every_post_with_the_words_down_to_its_bound_whatever_the_band(edges, bound):
    organisation = OrganisationFactory(languages=["en"], countries=[])
    expected = [post.pk for post in sorted(edges, key=ORDERS["priority"]) if post.priority >= bound]
    ids, total, sql = window_of(organisation, ("citron",), bound)
    assert "factcheck_queue_words" in sql
    assert ids == expected
    assert total == len(expected)


def test_words_are_found_as_typed_in_any_case_and_as_the_start_of_a_word(edges):
    organisation = OrganisationFactory(languages=["en"], countries=[])
    expected = [post.pk for post in sorted(edges, key=ORDERS["priority"]) if post.priority >= 46]
    for words in [("citron", "pressé"), ("CITRON", "PRESS"), ("cit", "part")]:
        ids, _, _ = window_of(organisation, tuple(word.lower() for word in words), 46.0)
        assert ids == expected, words
    assert window_of(organisation, ("citron", "orange"), 0.0)[0] == []  # every word, not any


def test_a_post_whose_priority_moved_is_read_in_its_new_band(edges):
    organisation = OrganisationFactory(languages=["en"], countries=[])
    low = next(post for post in edges if post.priority == 10.0)
    assert low.pk not in window_of(organisation, ("citron",), 46.0)[0]
    Post.objects.filter(pk=low.pk).update(priority=88.5)  # as refresh_priorities rewrites it
    assert window_of(organisation, ("citron",), 46.0)[0][:4] == [post.pk for post in edges[:3]] + [low.pk]
    Post.objects.filter(pk=low.pk).update(queue_state=QueueState.RATED)  # and out of the queue
    assert low.pk not in window_of(organisation, ("citron",), 46.0)[0]


def test_the_other_orders_windows_do_not_read_the_bands(edges):
    organisation = OrganisationFactory(languages=["en"], countries=[])
    for sort in (QueueSort.NEWEST, QueueSort.WAITING, QueueSort.REACH):
        key = queue_module._key_at(sort, 4)
        page = _search_statements(coverage_of(organisation), QueueFilters(q="citron"), sort, ("citron",),
                                  ("id",), 0, 5, window=key)[0]
        assert "factcheck_queue_words" not in page.sql


def test_the_bands_and_the_query_of_the_bands(edges):
    assert [sql_value("SELECT factcheck_queue_band(%s::float8)", value)
            for value in (-3.0, 0.0, 45.99, 46.0, 99.99, 100.0, 150.0, "NaN", "-Infinity")] == [
        0, 0, 45, 46, 99, 100, 100, 100, 0]
    assert sql_value("SELECT factcheck_queue_query(to_tsquery('simple', %s), %s)::text",
                     every_word(["lemon", "wa"]), 99) == (
        "( '99@lemon':* | '100@lemon':* ) & ( '99@wa':* | '100@wa':* )")
    assert sql_value("SELECT factcheck_queue_query(%s::tsquery, %s)::text", "'o''neil':*", 120) == (
        "'100@o''neil':*")
    stored = sql_value("SELECT factcheck_queue_words(search_vector, priority)::text FROM factcheck_post "
                       "WHERE id = %s", edges[4].pk)
    words = sql_value("SELECT tsvector_to_array(search_vector) FROM factcheck_post WHERE id = %s", edges[4].pk)
    assert {"citron", "pressé", "part", "4"} <= set(words)
    assert set(stored.split()) == {f"'46@{word}'" for word in words}


def test_connections_to_postgresql_compile_no_query(edges):
    assert sql_value("SHOW jit") == "off"
