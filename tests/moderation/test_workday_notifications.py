"""Issue 29, break 6: fact-checkers and staff hear of what is filed against their decisions.

Filing a dispute notifies the rating organisation's fact-checkers (in the filing's transaction), a removal
appeal notifies trust-and-safety staff; each reads them at /notifications/ and marks them read; the main
navigation counts what waits, per role, in one query; another organisation never sees any of it.
"""

from __future__ import annotations

import html
import re
from datetime import timedelta

import pytest
from django.utils import timezone

from factcheck.members import organisation_of
from moderation.appeals import file_appeal
from moderation.models import Notification, NotificationKind
from moderation.staff_actions import remove_post
from tests import scenarios
from tests.factories import FactCheckerFactory, PageFactory, PostFactory, StaffFactory, UserFactory

pytestmark = pytest.mark.django_db


def nav(response) -> str:
    """The main navigation's text, as a screen reader reads it (hidden words included)."""
    found = re.search(r'<nav aria-label="Main">(.*?)</nav>', response.content.decode(), re.S).group(1)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", found)).split())


def dispute(owner, post, statement: str = "The quote is real; here is the recording.") -> object:
    return file_appeal(owner=owner, post_id=post.pk, kind="dispute", statement=statement)


@pytest.fixture
def owner(db):
    return UserFactory(username="olga", role="page_owner")


@pytest.fixture
def colleague(factchecker):
    return FactCheckerFactory(organisation=organisation_of(factchecker))


@pytest.fixture
def disputed(owner, factchecker, colleague):
    post = scenarios.rated_post(rater=factchecker, owner=owner, external_id="post-77", text="The port closes.")
    return dispute(owner, post)


def test_filing_a_dispute_notifies_the_organisations_fact_checkers_who_read_it_in_the_app(login, disputed, colleague):
    response = login(colleague).get("/notifications/")
    assert response.status_code == 200
    page = html.unescape(response.content.decode())
    assert "New dispute appeal on post post-77" in page
    assert f'href="/queue/appeals/{disputed.pk}/"' in page
    assert "Notifications 1 unread" in nav(response) and "Appeals 1 open" in nav(response)


def test_the_notice_is_written_with_the_appeal_by_the_filing_itself(owner, factchecker, colleague):
    post = scenarios.rated_post(rater=factchecker, owner=owner)
    appeal = dispute(owner, post)
    [notice] = Notification.objects.filter(user=colleague)
    assert (notice.appeal_id, notice.post_id, notice.created_at, notice.read_at) == (
        appeal.pk, post.pk, appeal.created_at, None)
    # The rater may not decide it: counted on the Appeals link, but no notice asking them to decide.
    assert not Notification.objects.filter(user=factchecker, appeal=appeal).exists()


def test_another_organisation_never_sees_the_dispute_nor_its_counts(login, disputed):
    stranger = FactCheckerFactory()
    response = login(stranger).get("/notifications/")
    page = html.unescape(response.content.decode())
    assert "post-77" not in page and "Nothing new." in page
    assert "unread" not in nav(response) and "open" not in nav(response)
    marked = login(stranger).post("/notifications/read/", {"notification": [
        str(pk) for pk in Notification.objects.values_list("pk", flat=True)]})
    assert marked.status_code == 302
    assert Notification.objects.filter(read_at__isnull=False).count() == 0


def test_marking_read_clears_the_count_and_keeps_the_notice_under_read(login, disputed, colleague):
    client = login(colleague)
    notice = Notification.objects.get(user=colleague)
    response = client.post("/notifications/read/", {"notification": str(notice.pk)}, follow=True)
    page = html.unescape(response.content.decode())
    assert "1 notification marked as read." in page
    assert "unread" not in nav(response) and "Appeals 1 open" in nav(response)
    assert "Read recently" in page and "New dispute appeal on post post-77" in page


def test_mark_all_shown_as_read_leaves_one_that_arrived_meanwhile_unread(login, owner, factchecker, colleague):
    first = dispute(owner, scenarios.rated_post(rater=factchecker, owner=owner))
    shown = Notification.objects.get(user=colleague, appeal=first)
    dispute(owner, scenarios.rated_post(rater=factchecker, owner=owner))
    response = login(colleague).post("/notifications/read/", {"all": "1", "shown": [str(shown.pk)]}, follow=True)
    assert "Notifications 1 unread" in nav(response)


def test_a_removal_appeal_notifies_staff_and_the_nav_counts_removal_appeals_and_reports(login, owner):
    remover, other_staff = StaffFactory(), StaffFactory()
    post = PostFactory(page=PageFactory(), external_id="post-rm")
    post.page.owners.add(owner)
    remove_post(staff=remover, post_id=post.pk, ground="hate", reason="Slurs.")
    appeal = file_appeal(owner=owner, post_id=post.pk, kind="removal", statement="It was a quotation.")
    scenarios.reported_post(external_id="harm-1")
    response = login(other_staff).get("/notifications/")
    page = html.unescape(response.content.decode())
    assert "New removal appeal on post post-rm" in page
    assert f'href="/staff/appeals/{appeal.pk}/"' in page
    text = nav(response)
    assert "Removal appeals 1 open" in text and "Reports of harm 1 open" in text and "Notifications 1 unread" in text


def test_page_owners_see_their_unread_count_and_are_sent_to_their_portal_for_the_list(login, owner, factchecker):
    scenarios.rated_post(rater=factchecker, owner=owner)
    response = login(owner).get("/appeals/")
    assert "Your posts and appeals 1 unread" in nav(response)
    assert login(owner).get("/notifications/").status_code == 403


def test_anonymous_visitors_get_no_counts_and_no_queries_for_them(client, disputed, django_assert_max_num_queries):
    rating = disputed.rating
    with django_assert_max_num_queries(2):  # the published rating with its post, page and organisation; nothing else
        response = client.get(f"/claims/{rating.pk}/")
    assert response.status_code == 200 and 'aria-label="Main"' not in response.content.decode()
    assert client.get("/notifications/").status_code == 302


@pytest.mark.parametrize("appeals", [1, 8])
def test_a_page_with_the_navigation_counts_in_one_query_whatever_waits(login, owner, factchecker, colleague, appeals,
                                                                       django_assert_max_num_queries):
    for _ in range(appeals):
        dispute(owner, scenarios.rated_post(rater=factchecker, owner=owner))
    client = login(colleague)
    # Session, user with their organisation, the appeals with their posts, pages, ratings and reviewers; the
    # navigation's counts (one query).
    with django_assert_max_num_queries(4):
        response = client.get("/queue/appeals/")
    assert f"Appeals {appeals} open" in nav(response)
    # Session, user, unread and read notifications, the waiting suggestions (each half of the rule); the counts;
    # +4: JIT off around the two halves (core.jit: in the test's transaction SAVEPOINT, SET LOCAL, ROLLBACK TO and
    # RELEASE; a request sends SET LOCAL alone between its BEGIN and ROLLBACK).
    with django_assert_max_num_queries(11):
        response = client.get("/notifications/")
    assert f"Notifications {appeals} unread" in nav(response)
    assert html.unescape(response.content.decode()).count("<strong>New dispute appeal") == appeals


def test_the_suggestions_badge_is_counted_once_a_minute_per_organisation(login, factchecker):
    """Counting the suggestions walks the suggested pairs (bench/navigation.py): the navigation counts them
    in its one statement at most once a minute per organisation, and reads the cache in between. (On the rated
    posts' page, which reads no pairs of its own: the queue's reads the pending suggestions that fold variants.)"""
    from django.core.cache import cache
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from tests.factories import MatchFactory

    covered = {"language": "en", "country": "GB"}
    MatchFactory(post=PostFactory(**covered), source=PostFactory(**covered))
    client = login(factchecker)
    with CaptureQueriesContext(connection) as first:
        assert "Suggestions 1" in nav(client.get("/queue/rated/"))
    assert any("factcheck_match" in query["sql"] for query in first.captured_queries)
    MatchFactory(post=PostFactory(**covered), source=PostFactory(**covered))
    with CaptureQueriesContext(connection) as again:
        assert "Suggestions 1" in nav(client.get("/queue/rated/"))  # the minute is not over: the cached count
    assert not any("factcheck_match" in query["sql"] for query in again.captured_queries)
    cache.delete(f"suggestions-waiting:{factchecker.membership.organisation_id}")  # the minute is over
    assert "Suggestions 2" in nav(client.get("/queue/rated/"))


def test_notifications_read_long_ago_stay_reachable_page_by_page(login, factchecker, django_assert_max_num_queries):
    """The page listed the 20 notifications read most recently and nothing older: a notice read last week could not be
    found again. They are paged now, each page in as many queries as the first."""
    now = timezone.now()
    Notification.objects.bulk_create(
        Notification(user=factchecker, kind=NotificationKind.APPEAL_RECEIVED, subject=f"Notice {n:02}", body="Read.",
                     created_at=now - timedelta(minutes=n), read_at=now)
        for n in range(45)
    )
    client = login(factchecker)
    pages, url = [], "/notifications/"
    while url is not None:
        with django_assert_max_num_queries(11):
            body = html.unescape(client.get(url).content.decode())
        pages.append(re.findall(r'<div class="notification-head">\s*(Notice \d+)', body))
        older = re.search(r'<a href="(\?read=\d+)#read-title" rel="next">Older →</a>', body)
        url = "/notifications/" + older.group(1) if older else None
    assert [len(page) for page in pages] == [20, 20, 5]
    assert sum(pages, []) == [f"Notice {n:02}" for n in range(45)]
    assert "Read earlier" in body and '<a href="?read=2#read-title" rel="prev">← Newer</a>' in body
