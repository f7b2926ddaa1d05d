"""The page owners' portal in the browser: a post matched to a rated claim says which claim, who
linked it and where a dispute goes (PRODUCT.md, Near-duplicates)."""

from __future__ import annotations

import re

import pytest

from factcheck.models import MatchState, Post, QueueState
from moderation.models import Appeal, Notification, RemovalGround, RepeatOffenderPolicy
from moderation.propagation import apply_matched_rating
from tests import scenarios
from tests.factories import (
    DecisionFactory,
    MatchFactory,
    PageFactory,
    PostFactory,
)
from tests.moderation.portal.pages import file, text

pytestmark = pytest.mark.django_db


# A copy matched to a rated claim (PRODUCT.md, Near-duplicates)


SOURCE_TEXT = "Doctors confirm that lemon water cures measles in three days, share before it is deleted."


def matched_copy(page, rating, *, state=MatchState.AUTO, text="Doctors confirm lemon water cures measles!!"):
    """A post of `page` linked to the rated claim, carrying its rating as a matched rating."""
    copy = PostFactory(page=page, text=text, duplicate_of=rating.post, queue_state=QueueState.MATCHED)
    MatchFactory(post=copy, source=rating.post, score=0.91, state=state)
    apply_matched_rating(rating_id=rating.pk, post_id=copy.pk)
    return copy


@pytest.fixture
def claim_rating(factchecker):
    source = PostFactory(text=SOURCE_TEXT, page=PageFactory(name="Somebody else's page"))
    return DecisionFactory(post=source, reviewer=factchecker, article_url="https://factorg.example/lemon-measles").rating


def test_a_matched_post_says_which_rated_claim_it_was_matched_to_and_where_a_dispute_goes(
    login, owner, page, claim_rating
):
    copy = matched_copy(page, claim_rating)
    organisation = claim_rating.organisation.name
    client = login(owner)
    body = text(client.get(f"/appeals/posts/{copy.pk}/"))
    assert f"Your post was matched automatically to a claim that {organisation} rated False." in body
    assert "(near-duplicate text)" in body
    assert SOURCE_TEXT in body
    assert f'href="/claims/{claim_rating.pk}/"' in body
    assert f"Read {organisation}'s fact-check of that claim" in body
    assert "A <strong>dispute</strong> here means “my post does not make the same claim”" in body
    assert f"it goes to {organisation}, who rated that claim" in body
    # The claim's public page is there to read.
    assert client.get(f"/claims/{claim_rating.pk}/").status_code == 200

    response = file(client, copy, statement="My post is about measles vaccines, not lemon water.")
    assert f"Your dispute appeal was filed. {organisation} will review it" in text(response)
    appeal = Appeal.objects.get(post=copy)
    assert appeal.rating_id == claim_rating.pk
    assert appeal.action.kind == "matched_rating" and appeal.action.post_id == copy.pk
    assert "An appeal against this match is open." in text(client.get(f"/appeals/posts/{copy.pk}/"))


def test_a_confirmed_match_says_a_factchecker_confirmed_it(login, owner, page, claim_rating):
    copy = matched_copy(page, claim_rating, state=MatchState.CONFIRMED)
    body = text(login(owner).get(f"/appeals/posts/{copy.pk}/"))
    assert (f"Your post was matched to a claim that {claim_rating.organisation.name} rated False: it was found "
            "automatically, and a fact-checker confirmed that your post makes the same claim.") in body


def test_a_post_rated_on_its_own_shows_no_match(login, owner, rated_post):
    body = text(login(owner).get(f"/appeals/posts/{rated_post.pk}/"))
    assert "Your post was matched" not in body and "my post does not make the same claim" not in body


def test_the_portal_lists_a_matched_post_as_matched_to_the_claims_rating(login, owner, page, claim_rating):
    copy = matched_copy(page, claim_rating)
    body = text(login(owner).get("/appeals/"))
    card = body.split(f"Post <bdi class=\"mono\">{copy.external_id}</bdi>", 1)[1].split("</article>", 1)[0]
    assert re.search(rf"Matched to a claim that {claim_rating.organisation.name} rated <span[^>]*>False</span>", card)
    assert "Details, timeline and appeals" in card


@pytest.mark.parametrize("copies", [1, 8])
def test_the_portal_with_matched_posts_renders_in_a_fixed_number_of_queries(
    login, owner, page, claim_rating, django_assert_max_num_queries, copies
):
    for n in range(copies):
        matched_copy(page, claim_rating, text=f"Doctors confirm lemon water cures measles, copy {n}")
    RepeatOffenderPolicy.current()
    client = login(owner)
    with django_assert_max_num_queries(14):  # +1: the posts' media (issue 30)
        response = client.get("/appeals/")
    assert text(response).count("Matched to a claim that") == copies
    copy = Post.objects.filter(duplicate_of=claim_rating.post).first()
    # The matched post's own page: one query more than a rated post's, for how the match was made.
    with django_assert_max_num_queries(15):  # +1: the post's media (issue 30); +1: whether the claim was removed
        response = client.get(f"/appeals/posts/{copy.pk}/")
    assert "Your post was matched automatically" in text(response)


def test_a_removed_claim_is_not_quoted_to_its_copies_owners_nor_linked(login, owner, page, claim_rating):
    """Trust and safety removed the rated claim: its copies keep the rating, but another page's owner was still
    shown the removed post word for word, with a link to its fact-check page, which answers 404 now."""
    copy = matched_copy(page, claim_rating)
    scenarios.removed_post(post=claim_rating.post, ground=RemovalGround.VIOLENCE, reason="Incites an attack.")
    client = login(owner)
    body = text(client.get(f"/appeals/posts/{copy.pk}/"))
    organisation = claim_rating.organisation.name
    assert f"Your post was matched automatically to a claim that {organisation} rated False." in body
    assert "has since been removed by trust and safety, so it is no longer shown" in body
    assert SOURCE_TEXT not in body
    assert f'href="/claims/{claim_rating.pk}/"' not in body
    assert client.get(f"/claims/{claim_rating.pk}/").status_code == 404


def test_a_copy_of_a_removed_claim_is_told_its_rating_without_the_removed_text(owner, page, claim_rating):
    """A removed claim still carries its rating to new copies; the notice quoted its text to their owners."""
    scenarios.removed_post(post=claim_rating.post, ground=RemovalGround.VIOLENCE, reason="Incites an attack.")
    copy = matched_copy(page, claim_rating)
    notice = Notification.objects.get(user=owner, post=copy)
    assert "The post that made the claim was removed by trust and safety, so it is not shown." in notice.body
    assert SOURCE_TEXT not in notice.body
