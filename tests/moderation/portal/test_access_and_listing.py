"""The page owners' portal in the browser: who may see it, and what it shows of the owner's posts."""

from __future__ import annotations

from datetime import timedelta

import pytest

from factcheck.members import organisation_of
from moderation.appeals import file_appeal
from moderation.models import Appeal, AppealStatus, RepeatOffenderPolicy, Strike
from tests.factories import (
    DecisionFactory,
    FactCheckerFactory,
    PageFactory,
    PlatformUserFactory,
    PostFactory,
    StaffFactory,
    UserFactory,
)
from tests.moderation.portal.pages import text

pytestmark = pytest.mark.django_db


# Who may see it


def portal_urls(post, appeal):
    return [
        ("get", "/appeals/"), ("post", "/appeals/notifications/read/"), ("get", f"/appeals/posts/{post.pk}/"),
        ("post", f"/appeals/posts/{post.pk}/"), ("post", f"/appeals/{appeal.pk}/withdraw/"),
    ]


def test_anonymous_visitors_are_sent_to_the_login_page_from_every_portal_url(client, owner, rated_post):
    appeal = file_appeal(owner=owner, post_id=rated_post.pk, kind="dispute", statement="Real quote.")
    for method, url in portal_urls(rated_post, appeal):
        response = getattr(client, method)(url, {"kind": "dispute", "statement": "x"})
        assert response.status_code == 302, url
        assert response["Location"].startswith("/accounts/login/?next="), url
    assert Appeal.objects.count() == 1
    assert Appeal.objects.get().status == AppealStatus.OPEN


@pytest.mark.parametrize("make_user", [FactCheckerFactory, StaffFactory, PlatformUserFactory])
def test_factcheckers_staff_and_the_platform_are_refused_every_portal_url(login, make_user, owner, rated_post):
    appeal = file_appeal(owner=owner, post_id=rated_post.pk, kind="dispute", statement="Real quote.")
    client = login(make_user())
    for method, url in portal_urls(rated_post, appeal):
        response = getattr(client, method)(url, {"kind": "correction", "statement": "x", "correction_details": "y"})
        assert response.status_code == 403, url
        assert "This page is for page owners" in text(response)
    assert Appeal.objects.count() == 1
    assert Appeal.objects.get().status == AppealStatus.OPEN


def test_the_owner_of_another_page_sees_none_of_this_post_and_cannot_act_on_it(login, owner, rated_post):
    appeal = file_appeal(owner=owner, post_id=rated_post.pk, kind="dispute", statement="Real quote.")
    other = UserFactory()
    PageFactory(name="Other Page").owners.add(other)
    client = login(other)
    portal = client.get("/appeals/")
    assert portal.status_code == 200
    assert rated_post.external_id not in text(portal) and "Daily Wonders" not in text(portal)
    assert client.get(f"/appeals/posts/{rated_post.pk}/").status_code == 404
    assert client.post(f"/appeals/posts/{rated_post.pk}/", {"kind": "correction", "statement": "x",
                                                            "correction_details": "y"}).status_code == 404
    assert client.post(f"/appeals/{appeal.pk}/withdraw/").status_code == 404
    assert Appeal.objects.count() == 1
    assert Appeal.objects.get().status == AppealStatus.OPEN


def test_a_page_owner_lands_on_the_portal_from_the_start_page(login, owner):
    assert login(owner).get("/")["Location"] == "/appeals/"


# What the portal shows


def test_the_portal_lists_decided_posts_compactly_and_their_page_gives_rating_and_reasons(
    login, owner, rated_post, factchecker
):
    # Issue 29: the list is compact (distribution, verdict, who rated it, where it applies); the rationale,
    # sources and statement of reasons are one click away, on the post's own page.
    PostFactory(page=rated_post.page, external_id="never-decided")
    client = login(owner)
    response = client.get("/appeals/")
    html = text(response)
    assert response.status_code == 200
    assert rated_post.external_id in html and "never-decided" not in html
    assert "Shown about 80% less in news feeds (×0.2)" in html
    assert "False information. Checked by independent fact-checkers." in html
    assert f"rated by {organisation_of(factchecker).name}" in html and "Applies in the United Kingdom." in html
    listed = html[html.index('id="posts-title"'):]
    assert "The quote is invented." not in listed and "Detection: an automated classifier" not in listed
    detail = text(client.get(f"/appeals/posts/{rated_post.pk}/"))
    assert "The quote is invented." in detail
    assert "https://source.example/evidence" in detail and "https://factorg.example/miracle-cure" in detail
    assert "Your post stays up, but" in detail and "Detection: an automated classifier flagged it." in detail
    assert "You can appeal until" in detail


def test_the_portal_shows_repeat_offender_state_with_the_day_each_strike_ages_out(login, owner, page, factchecker):
    posts = [PostFactory(page=page) for _ in range(3)]
    for post in posts:
        DecisionFactory(post=post, reviewer=factchecker)
    window = RepeatOffenderPolicy.current().window_days
    html = text(login(owner).get("/appeals/"))
    assert "Repeat offender" in html and "Monetisation suspended." in html
    assert "3 fact-check strikes counted" in html
    for strike in Strike.objects.filter(page=page):
        assert f"ages out on <strong>{(strike.created_at + timedelta(days=window)):%-d %b %Y}</strong>" in html


def test_a_page_in_good_standing_and_a_removal_are_shown_as_such(login, owner, removed_post):
    html = text(login(owner).get("/appeals/"))
    assert "In good standing" in html and "monetisation active" in html
    assert "1 community-standards strike" in html
    assert "Removed</span> Not shown to anyone." in html
    assert "Community standards: Harassment" in text(login(owner).get(f"/appeals/posts/{removed_post.pk}/"))


def test_the_post_page_shows_reasons_the_filing_form_and_the_timeline(login, owner, rated_post, factchecker):
    html = text(login(owner).get(f"/appeals/posts/{rated_post.pk}/"))
    assert "Your post stays up, but it is shown about 80% less in news feeds" in html
    assert "Misinformation policy" in html
    assert f"Rated False by {organisation_of(factchecker).name}: The quote is invented." in html
    assert "You can appeal until" in html
    for field, label in (("statement", "Your statement"), ("evidence_urls", "Evidence URLs"),
                         ("correction_details", "What was corrected, and where")):
        assert f'<label for="id_{field}">{label}' in html and f'id="id_{field}"' in html
    assert "Dispute (the rating is wrong)" in html and "Removal appeal" not in html
    assert "up to 2,000 characters" in html
    assert "Flagged (classifier)" in html and "Rated False" in html
    assert factchecker.username not in html  # owners read the organisation, never the person
