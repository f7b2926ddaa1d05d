"""What confirming a suggested copy does, said beside its Confirm button on the post page (factcheck.views_matches):
the rating the copy takes, named by its verdict, organisation and date (an imported one's publication date too), or,
for a claim not rated yet, that the copy is reviewed with it. "It takes that post's rating" did not say which."""

from __future__ import annotations

import html
import re
from datetime import UTC, datetime

import pytest

from core.formatting import day
from factcheck.models import Match, Post, Rating, Verdict

# The claim, and the claim with a long comment of the reposter's: text between the two thresholds.
from tests.factcheck.matching_helpers import CLAIM, COMMENTED_COPY
from tests.factories import (
    DecisionFactory,
    FactCheckerFactory,
    MatchFactory,
    OrganisationFactory,
    PostFactory,
    RatingFactory,
)

pytestmark = pytest.mark.django_db


def page_of(client, post: Post) -> str:
    response = client.get(f"/queue/posts/{post.pk}/")
    assert response.status_code == 200
    return html.unescape(response.content.decode())


def unbroken(date: str) -> str:
    """A date as pages write it, never split over two lines: its spaces are no-break ones."""
    return date.replace(" ", "\xa0")


def effect_of(page: str, pair: Match) -> str:
    """The words that describe the pair's Confirm button (its aria-describedby), as they are on the page."""
    assert f'aria-describedby="effect-{pair.pk}">Confirm</button>' in page
    return re.search(rf'<p class="[^"]*" id="effect-{pair.pk}">(.*?)</p>', page, re.S).group(1)


@pytest.fixture
def reviewer():
    return FactCheckerFactory(username="maria", organisation=OrganisationFactory(name="Verifica"))


def test_the_confirm_button_names_the_rating_the_copy_takes(login, reviewer):
    claim = PostFactory(text=CLAIM)
    DecisionFactory(reviewer=reviewer, post=claim)
    copy = PostFactory(text=COMMENTED_COPY)
    pair = MatchFactory(post=copy, source=claim)
    rating = Rating.objects.get(post=claim, is_current=True)
    assert effect_of(page_of(login(reviewer), copy), pair) == (
        f"Confirming makes post {copy.external_id} a copy of post {claim.external_id}: post {copy.external_id} takes "
        f"“False” from Verifica's rating of {unbroken(day(rating.created_at))}."
    )


def test_a_copy_of_an_imported_rating_is_told_when_the_fact_check_was_published(login, reviewer):
    claim = PostFactory(text=CLAIM)
    rating = RatingFactory(post=claim, reviewer=reviewer, verdict=Verdict.PARTLY_FALSE,
                           published_at=datetime(2024, 8, 30, tzinfo=UTC))
    copy = PostFactory(text=COMMENTED_COPY)
    pair = MatchFactory(post=copy, source=claim)
    assert effect_of(page_of(login(reviewer), copy), pair).endswith(
        f"takes “Partly false” from Verifica's rating published 30\xa0Aug\xa02024 "
        f"(imported {unbroken(day(rating.created_at))})."
    )


def test_a_copy_of_a_claim_not_rated_yet_is_told_it_is_reviewed_with_it_instead(login, reviewer):
    claim, copy = PostFactory(text=CLAIM), PostFactory(text=COMMENTED_COPY)
    pair = MatchFactory(post=copy, source=claim)
    assert effect_of(page_of(login(reviewer), claim), pair) == (
        f"Confirming makes post {copy.external_id} a copy of post {claim.external_id}, which is not rated yet: "
        f"post {copy.external_id} takes no rating now; it will be reviewed once, with that claim."
    )
