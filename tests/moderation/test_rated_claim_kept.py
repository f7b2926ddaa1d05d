"""A rating keeps the claim as it was rated (Rating.rated_text, rated_url).

The platform may send a flag for a post that is already rated with other words or another link: the post takes
them (factcheck.ingest), but the published fact-check does not. Its public page `/claims/{id}/`, its ClaimReview
(the page's JSON-LD, the API, `export_claimreview`) and the notices and portal pages that quote the rated claim to
the owners of its copies keep the words the fact-checker rated; the fact-checkers' post page, the appeal page and
the owner's portal show the rated words beside the new ones; a new rating is of the post as it reads then.
"""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client

from factcheck.models import Post, Rating
from moderation.models import Notification
from moderation.propagation import apply_matched_rating
from tests import scenarios
from tests.conftest import bearer_client
from tests.factories import (
    AppealFactory,
    FactCheckerFactory,
    MatchFactory,
    PageFactory,
    PlatformUserFactory,
    PostFactory,
    RatingFactory,
    UserFactory,
)
from tests.moderation.test_claimreview_out import ld_scripts

pytestmark = pytest.mark.django_db

RATED = "The health minister said every school will close for a whole year from Monday."
RATED_URL = "https://social.example/posts/schools-1"
SENT_LATER = "Completely different words sent by mistake in a staging batch."
SENT_LATER_URL = "https://social.example/posts/staging-99"


def send_again(post: Post, *, text: str, url: str, key: str = "sent-again-1") -> None:
    """The platform sends a new flag for `post` with other words and another link, as the audit reproduced it."""
    body = {"idempotency_key": key, "source": "classifier", "reason": "re-sent", "post": {
        "external_id": post.external_id, "url": url, "text": text, "language": post.language,
        "country": post.country, "posted_at": post.posted_at.isoformat(),
        "page": {"external_id": post.page.external_id, "name": post.page.name},
    }}
    response = bearer_client(PlatformUserFactory()).post("/api/v1/flags", json.dumps(body),
                                                          content_type="application/json")
    assert response.status_code in (200, 201), response.content
    post.refresh_from_db()
    assert (post.text, post.url) == (text, url)  # the post itself takes what the platform says now


@pytest.fixture
def rater():
    return FactCheckerFactory(organisation__name="Full Fact", organisation__url="https://fullfact.org/")


@pytest.fixture
def rated(rater):
    """A post rated False and decided, then sent again by the platform with other words and another link."""
    post = scenarios.rated_post(rater=rater, text=RATED, url=RATED_URL, page=PageFactory(name="Daily Truths"))
    send_again(post, text=SENT_LATER, url=SENT_LATER_URL)
    return post


def claim_review_of(rating: Rating) -> dict:
    return ld_scripts(Client().get(f"/claims/{rating.pk}/").content.decode())[0]


def test_the_claim_page_and_its_claimreview_keep_the_claim_as_it_was_rated(rated):
    rating = Rating.objects.get(post=rated)
    page = Client().get(f"/claims/{rating.pk}/").content.decode()
    assert RATED in page and SENT_LATER not in page
    assert f'href="{RATED_URL}"' in page and SENT_LATER_URL not in page

    review = claim_review_of(rating)
    assert review["claimReviewed"] == RATED
    assert review["itemReviewed"]["appearance"] == [{"@type": "CreativeWork", "url": RATED_URL}]

    platform = bearer_client(UserFactory(role="platform"))
    api = platform.get(f"/api/v1/posts/{rated.external_id}/claimreview").json()
    assert api["claimReviewed"] == RATED and api["itemReviewed"]["appearance"][0]["url"] == RATED_URL
    shown = platform.get(f"/api/v1/posts/{rated.external_id}").json()
    assert (shown["text"], shown["rating"]["rated_text"], shown["rating"]["rated_url"]) == (
        SENT_LATER, RATED, RATED_URL)

    out = StringIO()
    call_command("export_claimreview", "--since", "2000-01-01", stdout=out, stderr=StringIO())
    (item,) = json.loads(out.getvalue())["dataFeedElement"]
    assert item["item"][0]["claimReviewed"] == RATED
    assert SENT_LATER not in out.getvalue() and SENT_LATER_URL not in out.getvalue()


def test_the_post_page_shows_the_rated_words_beside_the_new_ones(rater, login):
    post = scenarios.rated_post(rater=rater, text=RATED, url=RATED_URL)
    client = login(rater)
    assert 'id="rated-claim-changed"' not in client.get(f"/queue/posts/{post.pk}/").content.decode()

    send_again(post, text=SENT_LATER, url=SENT_LATER_URL)
    page = client.get(f"/queue/posts/{post.pk}/").content.decode()
    changed = page[page.index('id="rated-claim-changed"'):]
    changed = changed[:changed.index("</section>")]
    assert "The post changed since this rating." in changed
    assert RATED in changed and SENT_LATER in changed
    assert RATED_URL in changed and SENT_LATER_URL in changed


def test_a_new_rating_is_of_the_new_words_and_the_old_one_keeps_its_own(rated, rater, login):
    first = Rating.objects.get(post=rated)
    second = RatingFactory(post=rated, reviewer=FactCheckerFactory(organisation=rater.membership.organisation),
                           change_reason="The post now says something else.")
    assert (second.rated_text, second.rated_url) == (SENT_LATER, SENT_LATER_URL)
    assert claim_review_of(second)["claimReviewed"] == SENT_LATER
    old_page = Client().get(f"/claims/{first.pk}/").content.decode()
    assert "This rating was superseded" in old_page and RATED in old_page and SENT_LATER not in old_page
    # Rated as it reads now: the post page no longer says it changed.
    assert 'id="rated-claim-changed"' not in login(rater).get(f"/queue/posts/{rated.pk}/").content.decode()


def test_the_owner_and_the_appeals_decider_see_the_rated_words_beside_the_new_ones(rater, login):
    owner = UserFactory()
    post = scenarios.rated_post(rater=rater, owner=owner, text=RATED, url=RATED_URL)
    send_again(post, text=SENT_LATER, url=SENT_LATER_URL)
    portal = login(owner).get(f"/appeals/posts/{post.pk}/").content.decode()
    assert "Your post changed since it was rated." in portal and RATED in portal and SENT_LATER in portal

    appeal = AppealFactory(post=post, filed_by=owner)
    decider = FactCheckerFactory(organisation=rater.membership.organisation)
    page = Client()
    page.force_login(decider)
    body = page.get(f"/queue/appeals/{appeal.pk}/").content.decode()
    assert "The post changed since this rating." in body and RATED in body and SENT_LATER in body


def test_a_matched_copy_is_told_the_claim_as_it_was_rated(rater, login):
    source = scenarios.rated_post(rater=rater, text=RATED, url=RATED_URL)
    send_again(source, text=SENT_LATER, url=SENT_LATER_URL)
    rating = Rating.objects.get(post=source)
    owner = UserFactory()
    page = PageFactory()
    page.owners.add(owner)
    copy = PostFactory(page=page, text="The minister says all schools close for a year from Monday!!",
                       duplicate_of=source, queue_state="matched")
    MatchFactory(post=copy, source=source, score=0.91)
    apply_matched_rating(rating_id=rating.pk, post_id=copy.pk)

    notice = Notification.objects.get(user=owner, post=copy)
    assert RATED[:40] in notice.body and SENT_LATER not in notice.body
    portal = login(owner).get(f"/appeals/posts/{copy.pk}/").content.decode()
    assert RATED in portal and SENT_LATER not in portal
    # The copy's own words are not "the post changed since this rating": that rating is of another post.
    assert "changed since it was rated" not in portal
