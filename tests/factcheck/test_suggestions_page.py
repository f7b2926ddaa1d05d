"""`/queue/suggestions/`: every suggested copy waiting for the reviewer's organisation, a page at a time, reached from
the notifications page, which lists the newest few (it showed 10 of "99+" with no way to the rest)."""

from __future__ import annotations

import html
import re

import pytest

from factcheck.models import MatchState
from tests.factories import FactCheckerFactory, MatchFactory, OrganisationFactory, PostFactory

pytestmark = pytest.mark.django_db

SUGGESTIONS = "/queue/suggestions/"


def text(response) -> str:
    assert response.status_code == 200
    return html.unescape(response.content.decode())


def copies_listed(body: str) -> list[str]:
    """The copies' ids, in the order the page lists its waiting pairs."""
    return re.findall(r'<li class="waiting-pair"><a href="[^"]*">Post <bdi class="mono">([^<]+)</bdi>', body)


def link(body: str, rel: str) -> str | None:
    found = re.search(rf'<a href="(\?(?:before|after)=\d+)" rel="{rel}">', body)
    return SUGGESTIONS + found.group(1) if found else None


@pytest.fixture
def checker():
    return FactCheckerFactory(organisation=OrganisationFactory(name="Verifica"))


def waiting(count: int) -> list[str]:
    """`count` suggested pairs the checker's organisation can decide; their copies' ids, newest pair first."""
    pairs = [MatchFactory(post=PostFactory(external_id=f"copy-{n:03}"), source=PostFactory(external_id=f"claim-{n:03}"))
             for n in range(count)]
    return [pair.post.external_id for pair in sorted(pairs, key=lambda pair: -pair.pk)]


def test_every_waiting_suggestion_is_reached_from_the_notifications_page(login, checker, monkeypatch):
    monkeypatch.setattr("factcheck.views_suggestions.SUGGESTIONS_PAGE", 5)
    newest_first = waiting(13)
    MatchFactory(post=PostFactory(external_id="decided-copy"), state=MatchState.REJECTED)  # waits for nobody
    client = login(checker)

    notices = text(client.get("/notifications/"))
    assert copies_listed(notices) == newest_first[:10]
    assert (f'These are the newest 10: <a href="{SUGGESTIONS}">see every suggested copy waiting</a>, '
            "a page at a time.") in notices
    assert f'<a href="{SUGGESTIONS}">Suggested copies waiting for your organisation</a>: <strong>13</strong>' in notices
    # The navigation's count, on every page, leads to them all too.
    assert f'<li><a href="{SUGGESTIONS}">Suggestions <span class="nav-count">13<' in text(client.get("/queue/"))

    # Older, page by page, to the end: each waiting pair once, newest first.
    seen, pages, url = [], [], SUGGESTIONS
    while url is not None:
        body = text(client.get(url))
        pages.append(copies_listed(body))
        seen += pages[-1]
        url = link(body, "next")
    assert [len(page) for page in pages] == [5, 5, 3]
    assert seen == newest_first
    # And newer again, from the last page back to the first, full.
    back = text(client.get(link(body, "prev")))
    assert copies_listed(back) == newest_first[5:10]
    first = text(client.get(link(back, "prev")))
    assert copies_listed(first) == newest_first[:5] and link(first, "prev") is None


def test_the_notifications_page_links_to_no_more_when_it_lists_them_all(login, checker):
    waiting(4)
    notices = text(login(checker).get("/notifications/"))
    assert len(copies_listed(notices)) == 4 and "see every suggested copy waiting" not in notices


def test_another_organisations_suggestions_are_not_listed(login, checker):
    waiting(2)
    other = FactCheckerFactory(organisation=OrganisationFactory(name="Faktenwerk", languages=["de"]))
    body = text(login(other).get(SUGGESTIONS))
    assert copies_listed(body) == [] and "No suggested copy is waiting" in body


@pytest.mark.parametrize("count", [3, 40])
def test_a_page_of_suggestions_renders_in_a_fixed_number_of_queries(login, checker, count,
                                                                   django_assert_max_num_queries):
    newest_first = waiting(count)
    client = login(checker)
    # Session, user with their organisation; the navigation's counts (one query); the two halves of the rule, with
    # JIT off around them (core.jit: 4 statements in a test's transaction), whatever the number of pairs and the page.
    with django_assert_max_num_queries(9):
        first = text(client.get(SUGGESTIONS))
    assert copies_listed(first) == newest_first[:25]
    if count > 25:
        with django_assert_max_num_queries(9):
            older = text(client.get(link(first, "next")))
        assert copies_listed(older) == newest_first[25:]
