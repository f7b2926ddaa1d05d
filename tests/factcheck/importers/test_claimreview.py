"""`import_posts --format claimreview`: ClaimReview objects, lists and DataFeeds as rated posts."""

from __future__ import annotations

import html
import json
import re
from datetime import UTC, datetime

import pytest
from django.utils import timezone

from accounts.models import User
from core.formatting import day, moment
from factcheck.importing.verdicts import verdict_for_name, verdict_for_value
from factcheck.members import organisation_of
from factcheck.models import Flag, Organisation, Page, Post, Rating, Verdict
from factcheck.ratings import record_rating
from tests.factcheck.importers.helpers import FILES, copied, import_fails, import_posts, row_counts
from tests.factories import FactCheckerFactory, PageFactory, RatingFactory, UserFactory

pytestmark = pytest.mark.django_db


def review(n: int, rating: dict, **extra) -> dict:
    data = json.loads((FILES / "single.json").read_text())
    data.update(url=f"https://checkers.example/fact-checks/t{n}", claimReviewed=f"Test claim {n} is a claim.",
                reviewRating=rating)
    data.update(extra)
    return data


def test_a_feed_becomes_rated_posts_and_bad_reviews_are_rejected_by_item(tmp_path):
    out = import_posts(copied("feed.json", tmp_path), "claimreview")
    assert out == [
        "imported 7, already present 0, rejected 7",
        "item 6: unknown rating 'Unproven': not in the rating table",
        "item 7: itemReviewed.datePublished 1999-05-01 is before 2000-01-01",
        "item 8: itemReviewed.datePublished '2024-02-30' is not an ISO 8601 date such as 2024-08-30 or "
        "2024-08-30T12:00:00Z",
        "item 9: claimReviewed is empty: there is no claim to import",
        "item 10: Text may not contain NUL (\\u0000) characters.",
        "item 12: is not a ClaimReview (@type 'Article')",
        "item 13: datePublished 2999-01-01 is more than a day in the future",
    ]
    verdicts = {r.post.text: r.verdict for r in Rating.objects.select_related("post")}
    assert verdicts == {
        "Claim number 1 about the election.": Verdict.FALSE,
        "Claim number 2 about the election.": Verdict.PARTLY_FALSE,
        "Claim number 3 about the election.": Verdict.ALTERED,
        "Claim number 4 about the election.": Verdict.SATIRE,
        "Claim number 5 about the election.": Verdict.TRUE,
        "Claim number 6 about the election.": Verdict.PARTLY_FALSE,
        'Vaccines contain microchips "really"': Verdict.MISSING_CONTEXT,
    }
    rating = Rating.objects.select_related("post__page", "organisation", "reviewer").get(
        post__text__startswith="Claim number 2"
    )
    assert rating.rationale == "Half of it is true & half not."
    assert rating.sources == [rating.article_url] == ["https://checkers.example/fact-checks/2"]
    assert rating.published_at == datetime(2024, 8, 30, tzinfo=UTC)
    assert (rating.organisation.name, rating.organisation.url) == ("Fact Desk Checkers", "https://checkers.example")
    assert rating.post.posted_at == datetime(2024, 8, 25, tzinfo=UTC)
    assert rating.post.url == "https://social.example/sam/2"
    assert (rating.post.page.external_id, rating.post.page.name) == (
        "claimreview-author:https://social.example/sam", "Sam Speaker"
    )
    assert rating.post.page.is_politician is False
    flag = Flag.objects.get(post=rating.post)
    assert (flag.source, flag.reason) == ("partner", "imported from ClaimReview by Fact Desk Checkers")
    assert flag.idempotency_key.startswith("claimreview:")
    # The organisation's importer account: a fact-checker nobody can sign in as.
    reviewer = rating.reviewer
    assert (reviewer.username, reviewer.is_active, reviewer.has_usable_password()) == (
        "import-fact-desk-checkers", False, False
    )
    assert rating.rationale and Rating.objects.get(post__text__startswith="Claim number 1").rationale == (
        "Rated Pants on Fire! by Fact Desk Checkers: https://checkers.example/fact-checks/1"
    )


def unbroken(when: str) -> str:
    """A date or moment as pages write a rating's: never split over two lines, except after a moment's comma."""
    return ", ".join(part.replace(" ", "\xa0") for part in when.split(", "))


def test_an_imported_rating_is_dated_by_its_publication_and_its_import(tmp_path, login):
    """Reviewers read the import's day as the fact-check's: a 2024 fact-check loaded today looked written today.
    ClaimReview's datePublished is kept (Rating.published_at) and said first wherever a rating's date is shown: the
    post page, the organisation's rated posts, its public page. The record's own time is still the import's, which
    figures, the feed and every order go by."""
    before = timezone.now()
    import_posts(copied("single.json", tmp_path), "claimreview")
    rating = Rating.objects.get()
    assert rating.published_at == datetime(2024, 8, 30, tzinfo=UTC) and rating.created_at >= before
    client = login(FactCheckerFactory(organisation=Organisation.objects.get(name="Fact Desk Checkers")))
    dated = ('<time datetime="2024-08-30T00:00:00+00:00">published 30\xa0Aug\xa02024 '
             f"(imported {unbroken(day(rating.created_at))})")

    post_page = html.unescape(client.get(f"/queue/posts/{rating.post_id}/").content.decode())
    assert f"<div><dt>When</dt><dd>{dated}</time></dd></div>" in post_page
    rated = html.unescape(client.get("/queue/rated/?who=organisation").content.decode())
    assert dated in rated
    public = html.unescape(client.get(f"/claims/{rating.pk}/").content.decode())
    assert ('· <time datetime="2024-08-30T00:00:00+00:00">published 30\xa0August\xa02024 '
            f"(imported {unbroken(f'{rating.created_at.day} {rating.created_at:%B %Y}')})</time></p>") in public

    # The page's owner reads the same in their portal: the list of their posts and the post's own page.
    owner = UserFactory()
    rating.post.page.owners.add(owner)
    client = login(owner)
    for url in ("/appeals/", f"/appeals/posts/{rating.post_id}/"):
        page = re.sub(r"<a [^>]*>|</a>", "", html.unescape(client.get(url).content.decode()))  # the name may link
        assert f"rated by Fact Desk Checkers {dated}" in page, url


def test_an_imported_ratings_publication_day_is_the_same_for_a_reader_west_of_utc(tmp_path, login):
    """A ClaimReview's datePublished is a date: a reviewer in New York read "published 29 Aug 2024" for the 30th,
    the public page and the export said 30. The import, a moment, is on the reader's clock as every time is."""
    import_posts(copied("single.json", tmp_path), "claimreview")
    rating = Rating.objects.get()
    reader = FactCheckerFactory(organisation=Organisation.objects.get(name="Fact Desk Checkers"),
                                time_zone="America/New_York")
    post_page = html.unescape(login(reader).get(f"/queue/posts/{rating.post_id}/").content.decode())
    assert '<time datetime="2024-08-30T00:00:00+00:00">published 30\xa0Aug\xa02024 (imported' in post_page
    assert "29\xa0Aug\xa02024" not in post_page


def test_a_rating_recorded_here_is_dated_as_before(login):
    rating = RatingFactory(verdict=Verdict.FALSE)
    client = login(rating.reviewer)
    post_page = html.unescape(client.get(f"/queue/posts/{rating.post_id}/").content.decode())
    recorded = rating.created_at
    assert f'<dd><time datetime="{recorded.isoformat()}">{unbroken(moment(recorded))}</time></dd>' in post_page
    public = html.unescape(client.get(f"/claims/{rating.pk}/").content.decode())
    long_day = unbroken(f"{recorded.day} {recorded:%B %Y}")
    assert f'· published <time datetime="{recorded.isoformat()}">{long_day}</time></p>' in public
    assert "(imported" not in public


def test_a_second_import_finds_everything_already_present(tmp_path):
    path = copied("feed.json", tmp_path)
    import_posts(path, "claimreview")
    before = row_counts()
    assert import_posts(path, "claimreview")[0] == "imported 0, already present 7, rejected 7"
    assert row_counts() == before
    assert User.objects.filter(username__startswith="import-").count() == 1


def test_one_object_and_a_list_are_read_too():
    assert import_posts(FILES / "single.json", "claimreview") == ["imported 1, already present 0, rejected 0"]
    assert import_posts(FILES / "list.json", "claimreview") == ["imported 2, already present 0, rejected 0"]
    assert sorted(Rating.objects.values_list("verdict", flat=True)) == ["partly_false", "satire", "true"]


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("truncated.json", "not valid JSON (parse error: premature EOF): is the file cut short or not UTF-8?"),
        ("not_schema_org.json", "@context 'https://example.org/vocab' is not schema.org"),
    ],
)
def test_a_document_that_cannot_be_read_is_refused_whole_and_nothing_is_written(name, message):
    assert import_fails(FILES / name, "claimreview").endswith(message)
    assert row_counts() == {"pages": 0, "posts": 0, "flags": 0, "ratings": 0, "organisations": 0, "audit": 0}


def test_the_same_organisation_changing_its_verdict_re_rates_with_a_reason(tmp_path):
    path = tmp_path / "one.json"
    path.write_text(json.dumps(review(1, {"alternateName": "False"})))
    import_posts(path, "claimreview")
    path.write_text(json.dumps(review(1, {"alternateName": "Missing context"})))
    assert import_posts(path, "claimreview") == ["imported 1, already present 0, rejected 0"]
    current = Rating.objects.get(is_current=True)
    assert current.verdict == Verdict.MISSING_CONTEXT
    assert current.change_reason == "updated by Fact Desk Checkers's ClaimReview import"
    assert Rating.objects.count() == 2


def test_a_new_verdict_re_rates_even_when_the_publisher_also_edited_the_posts_details(tmp_path):
    """The review's key (its URL and claim) names the first import's flag: with the post's date or the claimant
    changed too, the item was rejected ("idempotency_key: already names another flag") and the verdict lost."""
    path = tmp_path / "one.json"
    path.write_text(json.dumps(review(1, {"alternateName": "False"})))
    import_posts(path, "claimreview")
    post = Post.objects.get()
    edited = review(1, {"alternateName": "Partly false"})
    edited["itemReviewed"]["datePublished"] = "2024-03-02"
    edited["itemReviewed"]["author"] = {"@type": "Person", "name": "Someone Else"}
    path.write_text(json.dumps(edited))
    assert import_posts(path, "claimreview") == ["imported 1, already present 0, rejected 0"]
    assert Rating.objects.get(is_current=True).verdict == Verdict.PARTLY_FALSE
    assert Post.objects.get().posted_at == post.posted_at  # the post keeps the details it has
    assert import_posts(path, "claimreview") == ["imported 0, already present 1, rejected 0"]


def test_a_post_rated_by_another_organisation_is_a_rejection_with_the_refusal(tmp_path):
    other = FactCheckerFactory(organisation__name="Other Checkers")
    path = tmp_path / "one.json"
    data = review(1, {"alternateName": "False"})
    data["itemReviewed"]["identifier"] = "platform-post-77"
    path.write_text(json.dumps(data))
    page = PageFactory()
    from tests.factories import PostFactory

    post = PostFactory(external_id="platform-post-77", page=page)
    record_rating(reviewer=other, post_id=post.pk, verdict="true", rationale="checked", sources=["https://o.example"],
                  claim_if_unclaimed=True)
    out = import_posts(path, "claimreview")
    assert out[0] == "imported 0, already present 0, rejected 1"
    assert out[1].startswith("item 1: rating refused (not_your_rating): This post was rated True by Other Checkers")
    assert Rating.objects.get(is_current=True).organisation == organisation_of(other)


def test_a_politicians_page_is_refused_as_the_api_refuses_it(tmp_path):
    PageFactory(external_id="claimreview-author:https://social.example/sam", is_politician=True)
    path = tmp_path / "one.json"
    path.write_text(json.dumps(review(1, {"alternateName": "False"})))
    out = import_posts(path, "claimreview")
    assert out[1] == "item 1: rating refused (rating_refused): Posts and ads from politicians are not fact-checked."
    assert not Rating.objects.exists()
    assert Page.objects.get().is_politician


def test_an_over_long_claim_is_rejected_and_a_long_review_body_cut(tmp_path):
    path = tmp_path / "list.json"
    path.write_text(json.dumps([
        review(1, {"alternateName": "False"}, claimReviewed="x" * 70_000),
        review(2, {"alternateName": "False"}, reviewBody="y" * 6000),
    ]))
    out = import_posts(path, "claimreview")
    assert out == ["imported 1, already present 0, rejected 1",
                   "item 1: post.text: String should have at most 63206 characters"]
    assert len(Rating.objects.get().rationale) == 5000


def test_a_review_body_with_contact_details_is_imported_without_them(tmp_path):
    """A person's rationale with an e-mail address or phone number is refused (core.reasons); an imported
    fact-check has nobody to retype it, so its review is kept with them removed, not rejected."""
    path = tmp_path / "list.json"
    path.write_text(json.dumps([review(1, {"alternateName": "False"},
                                       reviewBody="Asked at press@health.example or 06 12 34 56 78, they denied it.")]))
    assert import_posts(path, "claimreview") == ["imported 1, already present 0, rejected 0"]
    assert Rating.objects.get().rationale == (
        "Asked at [e-mail address removed] or [phone number removed], they denied it.")


@pytest.mark.parametrize(
    ("published", "verdict"),
    [
        ("False", "false"), ("Pants on Fire", "false"), ("Fake", "false"), ("Incorrect", "false"),
        ("Mostly False", "partly_false"), ("Half True", "partly_false"), ("Mostly True", "partly_false"),
        ("Partly false", "partly_false"), ("Partially false", "partly_false"), ("Mixture", "partly_false"),
        ("Barely true", "partly_false"), ("Misleading", "missing_context"), ("Missing context", "missing_context"),
        ("Needs context", "missing_context"), ("Lacks context", "missing_context"), ("Altered", "altered"),
        ("Altered photo", "altered"), ("Altered video", "altered"), ("Manipulated", "altered"), ("Doctored", "altered"),
        ("Satire", "satire"), ("Parody", "satire"), ("True", "true"), ("Correct", "true"), ("Accurate", "true"),
        ("pants-fire", "false"), ("barely-true", "partly_false"), ("half-true", "partly_false"),
        ("mostly-true", "partly_false"), ("  PANTS   on fire! ", "false"), ("Unproven", None),
    ],
)
def test_the_rating_table(published, verdict):
    assert verdict_for_name(published) == verdict


def test_our_own_export_reads_back_to_the_same_verdicts():
    for label, value, verdict in [("False", 1, "false"), ("Altered", 1, "altered"), ("Partly false", 2, "partly_false"),
                                  ("Missing context", 3, "missing_context"), ("True", 4, "true")]:
        assert verdict_for_name(label) == verdict
        if verdict != "altered":
            assert verdict_for_value(value, worst=1, best=4) == verdict
    assert verdict_for_name("Satire") == "satire"
    assert verdict_for_value(5, worst=1, best=4) is None


def test_organisations_are_found_by_name(tmp_path):
    Organisation.objects.create(name="Fact Desk Checkers")
    path = tmp_path / "one.json"
    path.write_text(json.dumps(review(1, {"alternateName": "True"})))
    import_posts(path, "claimreview")
    assert Organisation.objects.get().url == "https://checkers.example"
    assert Post.objects.get().ratings.get().organisation.name == "Fact Desk Checkers"


@pytest.mark.parametrize(
    "rating",
    [
        {"ratingValue": "inf", "worstRating": "-inf", "bestRating": "inf"},
        {"ratingValue": 1e308, "worstRating": -1e308, "bestRating": 1e308},
        {"ratingValue": "nan"},
        {"ratingValue": "3", "worstRating": "1", "bestRating": "inf"},
    ],
)
def test_a_rating_value_off_any_finite_scale_is_an_unknown_rating_not_true(tmp_path, rating):
    path = tmp_path / "one.json"
    path.write_text(json.dumps(review(1, rating)))
    out = import_posts(path, "claimreview")
    assert out[0] == "imported 0, already present 0, rejected 1"
    assert out[1].startswith("item 1: unknown rating ")
    assert not Rating.objects.exists()


def test_a_review_naming_an_existing_post_rates_it_and_leaves_the_post_as_the_platform_sent_it(tmp_path):
    from tests.factories import PostFactory

    page = PageFactory(external_id="platform-page-1", name="Platform Page")
    post = PostFactory(external_id="platform-post-1", page=page, text="What the post really says",
                       url="https://social.example/p/1", language="de", country="DE", views=5000, shares=40,
                       topic="elections")
    data = review(1, {"alternateName": "False"}, claimReviewed="The claim as the fact-checker worded it")
    data["itemReviewed"]["identifier"] = "platform-post-1"
    path = tmp_path / "one.json"
    path.write_text(json.dumps(data))
    assert import_posts(path, "claimreview") == ["imported 1, already present 0, rejected 0"]
    post.refresh_from_db()
    assert (post.page_id, post.text, post.url, post.language, post.country, post.views, post.shares,
            post.topic) == (page.pk, "What the post really says", "https://social.example/p/1", "de", "DE", 5000, 40,
                            "elections")
    assert post.ratings.get().verdict == Verdict.FALSE
    assert post.flags.filter(source="partner").exists()


def test_a_refused_review_of_an_existing_politicians_post_leaves_the_post_untouched(tmp_path):
    from tests.factories import PostFactory

    page = PageFactory(external_id="senator", name="Senator", is_politician=True)
    post = PostFactory(external_id="senator-post", page=page, text="What the senator said", views=900,
                       queue_state="not_eligible")
    data = review(1, {"alternateName": "False"})
    data["itemReviewed"]["identifier"] = "senator-post"
    path = tmp_path / "one.json"
    path.write_text(json.dumps(data))
    out = import_posts(path, "claimreview")
    assert out[1] == "item 1: rating refused (rating_refused): Posts and ads from politicians are not fact-checked."
    post.refresh_from_db()
    assert (post.text, post.views, post.queue_state) == ("What the senator said", 900, "not_eligible")
    assert not Rating.objects.exists()


def test_an_organisation_is_found_whatever_the_case_of_its_name(tmp_path):
    def review(n: int, author: str) -> dict:
        return {
            "@context": "https://schema.org", "@type": "ClaimReview", "url": f"https://pf.example/{n}",
            "claimReviewed": f"Claim number {n} about the budget.", "datePublished": "2024-05-01",
            "author": {"@type": "Organization", "name": author},
            "reviewRating": {"@type": "Rating", "alternateName": "False"},
            "itemReviewed": {"@type": "Claim", "author": {"@type": "Person", "name": "A speaker"}},
        }

    path = tmp_path / "two.json"
    path.write_text(json.dumps([review(1, "PolitiFact"), review(2, "Politifact")]))
    assert import_posts(path, "claimreview")[0] == "imported 2, already present 0, rejected 0"
    assert list(Organisation.objects.values_list("name", flat=True)) == ["PolitiFact"]
    assert set(Rating.objects.values_list("organisation__name", flat=True)) == {"PolitiFact"}


def test_an_identifier_with_a_slash_is_not_the_posts_id_but_the_reviews_key_is(tmp_path):
    # A post's id is a segment of its API URLs, so "/" is refused in it (factcheck.flag_input.POST_ID); a
    # ClaimReview naming its post by a URL still imports, under the key made from the review.
    path = tmp_path / "one.json"
    data = review(1, {"alternateName": "False"})
    data["itemReviewed"]["identifier"] = "https://social.example/posts/77"
    path.write_text(json.dumps(data))
    assert import_posts(path, "claimreview") == ["imported 1, already present 0, rejected 0"]
    post = Post.objects.get()
    assert post.external_id.startswith("claimreview:") and "/" not in post.external_id


def test_a_file_with_a_byte_order_mark_imports(tmp_path):
    """Windows editors write one; it was refused as "not valid JSON ... or not UTF-8?" though it is UTF-8."""
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(review(1, {"alternateName": "False"})).encode())
    assert import_posts(path, "claimreview") == ["imported 1, already present 0, rejected 0"]


def test_a_data_feed_with_one_element_as_an_object_imports_it(tmp_path):
    """JSON-LD lets one object stand for a list of one; the feed was refused whole as 'not a ClaimReview'."""
    path = tmp_path / "feed.json"
    path.write_text(json.dumps({"@context": "https://schema.org", "@type": "DataFeed",
                                "dataFeedElement": review(1, {"alternateName": "False"})}))
    assert import_posts(path, "claimreview") == ["imported 1, already present 0, rejected 0"]
    assert Rating.objects.get().verdict == Verdict.FALSE


def test_a_number_too_long_to_read_refuses_the_file_with_a_message_not_a_traceback(tmp_path):
    for number in ("1" * 5001, "1e99999999999999999999"):
        path = tmp_path / "huge.json"
        path.write_text(json.dumps(review(1, {"alternateName": "False"}))[:-1] + ', "ratingValue": ' + number + "}")
        assert import_fails(path, "claimreview").endswith("a number in the file is too long or too large to read")
    assert row_counts()["posts"] == 0


@pytest.mark.parametrize(("change", "message"), [
    ({"datePublished": 20250101}, "item 1: datePublished '20250101' is not an ISO 8601 date"),
    ({"@type": "DataFeedItem", "item": None}, "item 1: is a DataFeedItem without an item"),
])
def test_a_review_refused_for_its_shape_is_told_what_is_wrong_with_it(tmp_path, change, message):
    """A number for a date was reported as "datePublished is missing", an empty DataFeedItem as "@type 'NoneType'"."""
    path = tmp_path / "one.json"
    path.write_text(json.dumps({**review(1, {"alternateName": "False"}), **change}))
    out = import_posts(path, "claimreview")
    assert out[0] == "imported 0, already present 0, rejected 1" and out[1].startswith(message)
