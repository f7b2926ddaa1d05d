"""Issue 29, break 10: the owners' portal opens with a summary per page (posts restricted now, active strikes,
repeat-offender standing and until when, appeals open), then filters the decided posts by page and by state
(restricted now, under appeal, all) in a compact, paginated list, in a bounded number of queries."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from factcheck.models import Verdict
from moderation.appeals import file_appeal
from moderation.models import Notification, RepeatOffenderPolicy, Strike
from tests import scenarios
from tests.factories import DecisionFactory, FactCheckerFactory, PageFactory, PostFactory, StaffFactory, UserFactory

pytestmark = pytest.mark.django_db


def words(html: str) -> str:
    """The text a person reads, tags dropped and spaces collapsed."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).strip()


def summary_of(html: str, page_name: str) -> str:
    """The words of one page's summary card."""
    cards = html.split('class="card page-summary')[1:]
    cards[-1] = cards[-1].split("A page with", 1)[0]
    return words(next(card for card in cards if f"<h3><bdi>{page_name}</bdi></h3>" in card))


def listed(html: str) -> set[str]:
    """The external ids of the posts in the list (not the summary's strikes)."""
    return set(re.findall(r'Post <bdi class="mono">([^<]+)</bdi>', html[html.index('id="posts-title"'):]))


@pytest.fixture
def world(db):
    """Olga owns Daily Wonders (four False posts rated 40, 30, 20 and 10 days ago: a repeat offender; a removed
    post; an open dispute) and Quiet Corner (a Satire post, labelled only; a True post, restricting nothing).
    Someone else's page has restricted posts and an appeal of its own."""
    owner, rater, staff = UserFactory(username="olga"), FactCheckerFactory(), StaffFactory()
    wonders, quiet = PageFactory(name="Daily Wonders"), PageFactory(name="Quiet Corner")
    for page in (wonders, quiet):
        page.owners.add(owner)
    now = timezone.now()
    rated = [PostFactory(page=wonders, external_id=f"wonder-{n}", posted_at=now - timedelta(days=50 - n))
             for n in range(4)]
    for n, post in enumerate(rated):
        DecisionFactory(post=post, reviewer=rater, created_at=now - timedelta(days=40 - 10 * n))
    removed = scenarios.removed_post(staff=staff, post=PostFactory(page=wonders, external_id="wonder-removed"))
    file_appeal(owner=owner, post_id=rated[0].pk, kind="dispute", statement="The quote is real.")
    satire = PostFactory(page=quiet, external_id="quiet-satire")
    DecisionFactory(post=satire, reviewer=rater, verdict=Verdict.SATIRE)
    true = PostFactory(page=quiet, external_id="quiet-true")
    DecisionFactory(post=true, reviewer=rater, verdict=Verdict.TRUE)

    stranger = UserFactory()
    theirs = PageFactory(name="Not Yours")
    theirs.owners.add(stranger)
    their_post = scenarios.rated_post(owner=stranger, post=PostFactory(page=theirs, external_id="theirs-rated"))
    file_appeal(owner=stranger, post_id=their_post.pk, kind="dispute", statement="Mine.")
    scenarios.removed_post(staff=staff, post=PostFactory(page=theirs, external_id="theirs-removed"))
    return {"owner": owner, "wonders": wonders, "quiet": quiet, "theirs": theirs, "rated": rated,
            "removed": removed}


def test_each_page_is_summed_up_first_with_restrictions_strikes_standing_and_open_appeals(login, world):
    html = login(world["owner"]).get("/appeals/").content.decode()
    # The summary comes before the notifications and the list.
    assert html.index('id="summary-title"') < html.index('id="notifications-title"') < html.index('id="posts-title"')

    wonders = summary_of(html, "Daily Wonders")
    assert "Restricted now 5 posts of Daily Wonders restricted now 4 shown less · 4 labelled · 1 removed" in wonders
    assert "Active strikes 4 fact-check 1 community-standards" in wonders
    assert "Appeals open 1 open appeal on Daily Wonders" in wonders
    # Four strikes, three make a repeat offender: it stays one until the second-oldest ages out.
    window = RepeatOffenderPolicy.current().window_days
    second = Strike.objects.filter(page=world["wonders"], kind="fact_check").order_by("created_at")[1]
    until = second.created_at + timedelta(days=window)
    assert "Repeat offender" in wonders and "Monetisation suspended." in wonders
    assert f"until {until.day} {until:%b %Y} unless a new strike counts" in wonders

    quiet = summary_of(html, "Quiet Corner")
    assert "Restricted now 1 post of Quiet Corner restricted now 0 shown less · 1 labelled · 0 removed" in quiet
    assert "Active strikes 0 fact-check 0 community-standards" in quiet
    assert "Appeals open None" in quiet
    assert "In good standing" in quiet and "Not a repeat offender; monetisation active." in quiet


def test_another_owners_pages_and_posts_are_never_shown_not_even_when_asked_for(login, world):
    client = login(world["owner"])
    for query in ("", f"?page_id={world['theirs'].pk}", f"?page_id={world['theirs'].pk}&state=appealed",
                  "?state=restricted"):
        html = client.get(f"/appeals/{query}").content.decode()
        assert "Not Yours" not in html and "theirs-" not in html, query
    # A page that is not theirs is no filter at all: all of their own posts.
    html = client.get(f"/appeals/?page_id={world['theirs'].pk}").content.decode()
    assert listed(html) == {f"wonder-{n}" for n in range(4)} | {"wonder-removed", "quiet-satire", "quiet-true"}


def test_the_list_filters_by_page_and_by_state(login, world):
    client = login(world["owner"])
    wonders, quiet = world["wonders"].pk, world["quiet"].pk
    everything = {f"wonder-{n}" for n in range(4)} | {"wonder-removed", "quiet-satire", "quiet-true"}
    cases = {
        "": everything,
        "?state=all": everything,
        "?state=restricted": everything - {"quiet-true"},
        "?state=appealed": {"wonder-0"},
        f"?page_id={quiet}": {"quiet-satire", "quiet-true"},
        f"?page_id={quiet}&state=restricted": {"quiet-satire"},
        f"?page_id={quiet}&state=appealed": set(),
        f"?page_id={wonders}&state=restricted": everything - {"quiet-satire", "quiet-true"},
        "?state=nonsense": everything,
    }
    for query, expected in cases.items():
        html = client.get(f"/appeals/{query}").content.decode()
        assert listed(html) == expected, query
    html = client.get(f"/appeals/?page_id={quiet}&state=appealed").content.decode()
    assert "Posts with a decision on <bdi>Quiet Corner</bdi>" in html and "None of these posts is under appeal." in html
    # The state tabs keep the page, and say which one is shown.
    assert f'href="?page_id={quiet}&amp;state=restricted"' in html
    assert re.search(r'state=appealed" aria-current="page">Under appeal<', html)
    # The summary's figures lead to the posts they count.
    html = client.get("/appeals/").content.decode()
    assert f'href="?page_id={wonders}&amp;state=restricted"' in html
    assert f'href="?page_id={wonders}&amp;state=appealed"' in html


def test_the_list_is_compact_and_the_full_notices_are_folded(login, world):
    html = login(world["owner"]).get("/appeals/").content.decode()
    notices = html[html.index('id="notifications"'):html.index('id="posts-title"')]
    assert '<details class="notices-fold">' in notices and "Unread notifications" in notices
    posts = html[html.index('id="posts-title"'):]
    # No rationale, no statement of reasons, no sources in the list: those are on each post's page.
    assert "The quote was never said." not in posts and "Statement of reasons" not in posts
    assert "https://evidence.example/1" not in posts
    assert posts.count('class="portal-post"') == 7


def test_marking_a_notice_read_returns_to_the_opened_notices(login, world):
    client = login(world["owner"])
    notification = Notification.objects.filter(user=world["owner"], read_at__isnull=True).first()
    response = client.post("/appeals/notifications/read/", {"notification": str(notification.pk)})
    assert response["Location"] == "/appeals/?notifications=open#notifications"
    html = client.get(response["Location"]).content.decode()
    assert '<details class="notices-fold" open>' in html and "1 notification marked as read." in html


@pytest.mark.parametrize("pages, posts_per_page", [(1, 2), (3, 8)])
@pytest.mark.parametrize("query", ["", "?state=restricted", "?state=appealed"])
def test_the_portal_with_its_summary_renders_in_a_bounded_number_of_queries(
    login, django_assert_max_num_queries, pages, posts_per_page, query
):
    owner, rater, staff = UserFactory(), FactCheckerFactory(), StaffFactory()
    for p in range(pages):
        page = PageFactory(name=f"Page {p}")
        page.owners.add(owner)
        for m in range(posts_per_page):
            post = scenarios.rated_post(rater=rater, post=PostFactory(page=page))
            if m % 3 == 0:
                scenarios.removed_post(staff=staff, post=post)
            if m % 2 == 0:
                file_appeal(owner=owner, post_id=post.pk, kind="dispute", statement="Wrong.")
    RepeatOffenderPolicy.current()
    client = login(owner)
    # Session, user, policy; pages, their restrictions, open appeals and strikes; posts with their ratings,
    # actions and appeals; notifications and the navigation's count of unread ones.
    with django_assert_max_num_queries(14):  # +1: the posts' media (issue 30)
        response = client.get(f"/appeals/{query}")
    html = response.content.decode()
    assert response.status_code == 200
    assert html.count('class="card page-summary') == pages
    shown = html.count('class="portal-post"')
    assert 0 < shown <= 20
    if pages * posts_per_page > 20 and query == "?state=restricted":
        # The next page keeps the filter.
        assert 'href="?state=restricted&amp;page=2"' in html
