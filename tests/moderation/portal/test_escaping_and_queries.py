"""The page owners' portal in the browser: everything a person wrote is shown escaped, and its pages
render in a fixed number of queries."""

from __future__ import annotations

import pytest

from factcheck.members import organisation_of
from moderation.appeals import decide_appeal, file_appeal
from moderation.models import Appeal, RepeatOffenderPolicy
from moderation.staff_actions import remove_post
from tests.factories import (
    DecisionFactory,
    FactCheckerFactory,
    FlagFactory,
    PageFactory,
    PostFactory,
)
from tests.moderation.portal.pages import file, text

pytestmark = pytest.mark.django_db


# Escaping


def test_html_and_script_in_statements_reasons_and_notifications_are_shown_escaped(
    login, owner, page, factchecker, staff_user
):
    script = "<script>alert('x')</script>"
    rated = PostFactory(page=page, text=f"Post text {script}")
    DecisionFactory(post=rated, reviewer=factchecker, rationale=f"Rationale <b>bold</b> {script}")
    removed = PostFactory(page=page)
    remove_post(staff=staff_user, post_id=removed.pk, ground="hate", reason=f"Removal reason {script}")
    client = login(owner)
    file(client, rated, statement=f"Statement {script}", evidence_urls="https://e.example/?q=<img>")
    appeal = Appeal.objects.get()
    decide_appeal(appeal_id=appeal.pk, reviewer=FactCheckerFactory(organisation=organisation_of(factchecker)),
                  outcome="upheld", reason=f"Outcome <img src=x onerror=alert(1)> {script}")
    pages = [client.get(url) for url in ("/appeals/", f"/appeals/posts/{rated.pk}/", f"/appeals/posts/{removed.pk}/")]
    for response in pages:
        html = text(response)
        assert "<script>" not in html and "<b>bold" not in html and "<img src=x" not in html
        assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in html
    assert "Statement &lt;script&gt;" in text(pages[1]) and "Rationale &lt;b&gt;bold&lt;/b&gt;" in text(pages[1])
    assert "Outcome &lt;img src=x onerror=alert(1)&gt;" in text(pages[1])
    assert "Removal reason &lt;script&gt;" in text(pages[2])
    assert "Outcome &lt;img src=x" in text(pages[0])  # the notification of the decided appeal


# Query counts


def _decided_world(owner, factchecker, staff_user, *, pages: int, posts_per_page: int) -> list:
    posts = []
    for _ in range(pages):
        page = PageFactory()
        page.owners.add(owner)
        for m in range(posts_per_page):
            post = PostFactory(page=page)
            FlagFactory(post=post, source="classifier")
            FlagFactory(post=post)
            DecisionFactory(post=post, reviewer=factchecker)
            if m % 2:
                remove_post(staff=staff_user, post_id=post.pk, ground="violence", reason="Threat.")
            file_appeal(owner=owner, post_id=post.pk, kind="dispute", statement="Wrong.")
            posts.append(post)
    return posts


@pytest.mark.parametrize("pages, posts_per_page", [(1, 1), (4, 6)])
def test_the_portal_renders_in_a_fixed_number_of_queries(login, owner, factchecker, staff_user,
                                                         django_assert_max_num_queries, pages, posts_per_page):
    _decided_world(owner, factchecker, staff_user, pages=pages, posts_per_page=posts_per_page)
    RepeatOffenderPolicy.current()
    client = login(owner)
    # Session, user, policy, pages, their restrictions, open appeals and strikes (the summary), posts and their
    # ratings, actions and appeals, notifications, and the navigation's count of unread ones.
    with django_assert_max_num_queries(14):  # +1: the posts' media (issue 30)
        response = client.get("/appeals/")
    assert response.status_code == 200
    # 24 posts run past one page of 20: the rest are a click away.
    assert text(response).count('class="portal-post"') == min(pages * posts_per_page, 20)
    assert ("Older →" in text(response)) == (pages * posts_per_page > 20)


@pytest.mark.parametrize("appeals", [1, 6])
def test_the_post_page_renders_in_a_fixed_number_of_queries(login, owner, page, factchecker, staff_user,
                                                            django_assert_max_num_queries, appeals):
    post = PostFactory(page=page)
    colleague = FactCheckerFactory(organisation=organisation_of(factchecker))
    for n in range(appeals):
        FlagFactory(post=post)
        DecisionFactory(post=post, reviewer=factchecker, rationale=f"Rating {n}.")
        appeal = file_appeal(owner=owner, post_id=post.pk, kind="dispute", statement=f"Wrong {n}.")
        decide_appeal(appeal_id=appeal.pk, reviewer=colleague, outcome="upheld", reason=f"Stands {n}.")
    remove_post(staff=staff_user, post_id=post.pk, ground="violence", reason="Threat.")
    client = login(owner)
    # with the navigation's count of unread notifications; +1: the post's media (issue 30)
    with django_assert_max_num_queries(13):
        response = client.get(f"/appeals/posts/{post.pk}/")
    assert response.status_code == 200
    assert text(response).count("Appeal not accepted") == appeals
