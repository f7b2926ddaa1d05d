"""ClaimReview out: the API, the public `/claims/{id}/` page and `export_claimreview`.

`test_every_published_verdict_meets_the_published_rules` checks each exported ClaimReview field by
field against the rules written down here, from schema.org and Google's Fact Check Tools
(ClaimReview Read/Write API and Fact Check Explorer): required properties, types, the integer
truth scale, dates as ISO 8601, absolute http(s) URLs.
"""

from __future__ import annotations

import json
import re
from datetime import date, datetime, timedelta
from html.parser import HTMLParser
from io import StringIO

import factory
import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.utils import timezone

from factcheck.models import Verdict
from moderation.models import RemovalGround
from moderation.staff_actions import remove_post
from tests.conftest import bearer_client
from tests.factories import (
    DecisionFactory,
    FactCheckerFactory,
    PageFactory,
    PostFactory,
    StaffFactory,
    UserFactory,
)

PUBLISHED = [v for v in Verdict.values if v != Verdict.NOT_ELIGIBLE]
TRUTH_SCALE = {"false": 1, "altered": 1, "partly_false": 2, "missing_context": 3, "true": 4}
LABELS = {"false": "False", "altered": "Altered", "partly_false": "Partly false",
          "missing_context": "Missing context", "satire": "Satire", "true": "True"}
ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
ABSOLUTE_URL = re.compile(r"^https?://[^\s/]+\S*$")


class FullFactDecisionFactory(DecisionFactory):
    """A Full Fact fact-checker's rating and its decision: the review ClaimReview publishes."""

    reviewer = factory.SubFactory(
        FactCheckerFactory, organisation__name="Full Fact", organisation__url="https://fullfact.org/"
    )
    rationale = "The quote was never said; the clip is from 2019."
    sources = factory.LazyFunction(lambda: ["https://example.org/source-1", "https://example.org/source-2"])


def a_post(**kwargs):
    defaults = {"text": "The minister said schools will close for a year.", "url": "https://social.example/p/1",
                "page": PageFactory(name="Daily Truths")}
    return PostFactory(**{**defaults, **kwargs})


class _LdScripts(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.scripts: list[str] = []
        self._inside = False

    def handle_starttag(self, tag, attrs):
        self._inside = tag == "script" and ("type", "application/ld+json") in attrs
        if self._inside:
            self.scripts.append("")

    def handle_endtag(self, tag):
        self._inside = False

    def handle_data(self, data):
        if self._inside:
            self.scripts[-1] += data


def ld_scripts(html: str) -> list[dict]:
    parser = _LdScripts()
    parser.feed(html)
    return [json.loads(s) for s in parser.scripts]


def check_claim_review(review: dict, *, verdict: str) -> None:
    """The published rules, field by field."""
    assert review["@context"] in ("https://schema.org", "http://schema.org")
    assert review["@type"] == "ClaimReview"
    assert ABSOLUTE_URL.match(review["url"])
    assert isinstance(review["claimReviewed"], str) and review["claimReviewed"].strip()
    assert ISO_DATE.match(review["datePublished"]) and date.fromisoformat(review["datePublished"])
    author = review["author"]
    assert author["@type"] == "Organization" and author["name"].strip()
    if "url" in author:
        assert ABSOLUTE_URL.match(author["url"])
    stars = review["reviewRating"]
    assert stars["@type"] == "Rating"
    assert stars["alternateName"] == LABELS[verdict]
    if verdict in TRUTH_SCALE:
        # Integers (not strings or floats), worst < best, the value between them.
        for key in ("ratingValue", "worstRating", "bestRating"):
            assert type(stars[key]) is int, key
        assert (stars["worstRating"], stars["bestRating"]) == (1, 4)
        assert stars["ratingValue"] == TRUTH_SCALE[verdict]
    else:
        assert not {"ratingValue", "worstRating", "bestRating"} & set(stars)
    item = review["itemReviewed"]
    assert item["@type"] == "Claim"
    assert item["author"]["@type"] in ("Organization", "Person") and item["author"]["name"].strip()
    assert ISO_DATE.match(item["datePublished"])
    for appearance in item.get("appearance", []):
        assert appearance["@type"] == "CreativeWork" and ABSOLUTE_URL.match(appearance["url"])


@pytest.mark.parametrize("verdict", PUBLISHED)
@pytest.mark.django_db
def test_every_published_verdict_meets_the_published_rules(platform_client, verdict):
    post = a_post()
    rating = FullFactDecisionFactory(post=post, verdict=verdict,
                                     article_url="https://fullfact.org/online/schools-closing/").rating
    response = platform_client.get(f"/api/v1/posts/{post.external_id}/claimreview")
    assert response.status_code == 200
    review = response.json()
    check_claim_review(review, verdict=verdict)
    assert review == {
        "@context": "https://schema.org",
        "@type": "ClaimReview",
        "url": "https://fullfact.org/online/schools-closing/",
        "claimReviewed": "The minister said schools will close for a year.",
        "datePublished": rating.created_at.date().isoformat(),
        "author": {"@type": "Organization", "name": "Full Fact", "url": "https://fullfact.org/"},
        "reviewRating": review["reviewRating"],
        "reviewBody": "The quote was never said; the clip is from 2019.",
        "itemReviewed": {
            "@type": "Claim",
            "identifier": post.external_id,
            "author": {"@type": "Organization", "name": "Daily Truths"},
            "datePublished": post.posted_at.date().isoformat(),
            "appearance": [{"@type": "CreativeWork", "url": "https://social.example/p/1"}],
        },
    }


@pytest.mark.django_db
def test_without_an_article_the_url_is_the_ratings_public_page(platform_client, settings):
    settings.FACTDESK_PUBLIC_URL = "https://factdesk.example/"
    post = a_post(url="")
    rating = FullFactDecisionFactory(post=post, verdict="partly_false").rating
    review = platform_client.get(f"/api/v1/posts/{post.external_id}/claimreview").json()
    assert review["url"] == f"https://factdesk.example/claims/{rating.pk}/"
    assert "appearance" not in review["itemReviewed"]
    assert Client().get(f"/claims/{rating.pk}/").status_code == 200


@pytest.mark.django_db
def test_only_a_current_published_rating_is_given_as_claimreview(platform_client):
    unrated, not_eligible, removed = a_post(), a_post(), a_post()
    FullFactDecisionFactory(post=not_eligible, verdict="not_eligible")
    FullFactDecisionFactory(post=removed)
    remove_post(staff=StaffFactory(), post_id=removed.pk, ground=RemovalGround.VIOLENCE, reason="Calls for attacks.")
    for post in (unrated, not_eligible, removed):
        response = platform_client.get(f"/api/v1/posts/{post.external_id}/claimreview")
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "not_found"
    assert platform_client.get("/api/v1/posts/no-such-post/claimreview").status_code == 404


@pytest.mark.django_db
def test_a_re_rating_replaces_the_claimreview(platform_client):
    post = a_post()
    first = FullFactDecisionFactory(post=post, verdict="false").rating
    FullFactDecisionFactory(post=post, verdict="missing_context", reviewer=first.reviewer,
                            change_reason="New evidence from the ministry.")
    review = platform_client.get(f"/api/v1/posts/{post.external_id}/claimreview").json()
    assert review["reviewRating"] == {
        "@type": "Rating", "alternateName": "Missing context", "ratingValue": 3, "worstRating": 1, "bestRating": 4
    }


@pytest.mark.django_db
def test_page_owners_read_the_claimreview_of_their_own_posts_only():
    post = a_post()
    FullFactDecisionFactory(post=post)
    owner, stranger = UserFactory(role="page_owner"), UserFactory(role="page_owner")
    post.page.owners.add(owner)
    assert bearer_client(owner).get(f"/api/v1/posts/{post.external_id}/claimreview").status_code == 200
    assert bearer_client(stranger).get(f"/api/v1/posts/{post.external_id}/claimreview").status_code == 404
    assert Client().get(f"/api/v1/posts/{post.external_id}/claimreview").status_code == 401


@pytest.mark.django_db
def test_the_public_page_shows_the_rating_and_embeds_the_same_json_ld(platform_client, django_assert_max_num_queries):
    post = a_post()
    rating = FullFactDecisionFactory(post=post, verdict="false", article_url="https://fullfact.org/a/").rating
    with django_assert_max_num_queries(4):
        response = Client().get(f"/claims/{rating.pk}/")
    assert response.status_code == 200
    html = response.content.decode()
    for shown in ("The minister said schools will close for a year.", "False", "Full Fact", "Daily Truths",
                  "The quote was never said", "https://example.org/source-1", "https://fullfact.org/a/"):
        assert shown in html
    assert rating.reviewer.username not in html  # who rated it is not published
    api = platform_client.get(f"/api/v1/posts/{post.external_id}/claimreview").json()
    assert ld_scripts(html) == [api]


@pytest.mark.django_db
def test_hostile_text_cannot_break_out_of_the_json_ld_script():
    hostile = '</script><script>alert("x")</script> & <!-- "quoted" \u2028'
    post = a_post(text=hostile)
    rating = FullFactDecisionFactory(post=post).rating
    html = Client().get(f"/claims/{rating.pk}/").content.decode()
    assert "<script>alert" not in html
    [review] = ld_scripts(html)
    assert review["claimReviewed"] == hostile.strip()


@pytest.mark.django_db
def test_a_superseded_rating_points_to_the_current_one_and_is_not_published_again():
    post = a_post()
    first = FullFactDecisionFactory(post=post, verdict="false").rating
    second = FullFactDecisionFactory(post=post, verdict="true", reviewer=first.reviewer,
                                     change_reason="The ministry confirmed it.").rating
    html = Client().get(f"/claims/{first.pk}/").content.decode()
    assert "This rating was superseded" in html and f"/claims/{second.pk}/" in html
    assert ld_scripts(html) == []
    assert len(ld_scripts(Client().get(f"/claims/{second.pk}/").content.decode())) == 1


@pytest.mark.django_db
def test_ratings_that_are_not_public_have_no_page():
    not_eligible, removed = a_post(), a_post()
    hidden = FullFactDecisionFactory(post=not_eligible, verdict="not_eligible").rating
    gone = FullFactDecisionFactory(post=removed).rating
    remove_post(staff=StaffFactory(), post_id=removed.pk, ground=RemovalGround.HATE, reason="Slurs against a group.")
    for rating_id in (hidden.pk, gone.pk, 999_999_999):
        assert Client().get(f"/claims/{rating_id}/").status_code == 404
    assert Client().post(f"/claims/{gone.pk}/").status_code == 405


def export(*args: str) -> tuple[dict, str]:
    out, err = StringIO(), StringIO()
    call_command("export_claimreview", *args, stdout=out, stderr=err)
    return json.loads(out.getvalue()), err.getvalue()


@pytest.mark.django_db
def test_export_writes_a_data_feed_of_the_published_ratings_since_the_date(tmp_path):
    now = timezone.now()
    old, new, hidden = a_post(), a_post(), a_post()
    FullFactDecisionFactory(post=old, created_at=now - timedelta(days=40))
    newer = FullFactDecisionFactory(post=new, verdict="satire").rating
    FullFactDecisionFactory(post=hidden, verdict="not_eligible")
    since = (now - timedelta(days=10)).date().isoformat()
    feed, _ = export("--since", since)
    assert (feed["@context"], feed["@type"]) == ("https://schema.org", "DataFeed")
    datetime.fromisoformat(feed["dateCreated"])
    [element] = feed["dataFeedElement"]
    assert element["@type"] == "DataFeedItem"
    [review] = element["item"]
    check_claim_review(review, verdict="satire")
    assert review["itemReviewed"]["identifier"] == new.external_id
    assert review["reviewRating"] == {"@type": "Rating", "alternateName": "Satire"}
    assert newer.pk

    target = tmp_path / "feed.json"
    out = StringIO()
    call_command("export_claimreview", "--since", "2000-01-01", "--out", str(target), stdout=out)
    assert "Exported 2 ClaimReview(s)" in out.getvalue()
    assert len(json.loads(target.read_text())["dataFeedElement"]) == 2
    assert not list(tmp_path.glob("*.partial"))


@pytest.mark.django_db
def test_export_refuses_a_bad_date_and_an_unwritable_file(tmp_path):
    with pytest.raises(CommandError, match="YYYY-MM-DD"):
        call_command("export_claimreview", "--since", "last tuesday")
    with pytest.raises(CommandError, match="Cannot write"):
        call_command("export_claimreview", "--since", "2020-01-01", "--out", str(tmp_path / "missing" / "feed.json"))


@pytest.mark.django_db
def test_export_into_an_existing_directory_is_refused_clearly_and_leaves_no_partial_file(tmp_path):
    target = tmp_path / "feeds"
    target.mkdir()
    with pytest.raises(CommandError, match="Cannot write"):
        call_command("export_claimreview", "--since", "2020-01-01", "--out", str(target), stdout=StringIO())
    assert target.is_dir() and not list(tmp_path.glob("*.partial"))
