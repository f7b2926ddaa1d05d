"""The post page in the browser: what a reviewer reads, releasing a claim, and rating through the form."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from factcheck.claims import claim_post
from factcheck.members import organisation_id_of
from factcheck.models import Claim, ClaimStatus, FlagSource, Match, MatchMethod, MatchState, QueueState, Rating, Verdict
from factcheck.ratings import record_rating
from factcheck.views_matches import MATCHES_SHOWN
from moderation.models import PageStanding
from tests.factories import FactCheckerFactory, FlagFactory, OrganisationFactory, PageFactory, PostFactory

pytestmark = pytest.mark.django_db

GOOD = {
    "verdict": Verdict.FALSE,
    "rationale": "The quoted study does not exist; the journal has no such issue.",
    "sources": "https://journal.example/archive\nhttps://university.example/statement",
    "article_url": "https://factorg.example/checks/miracle-cure",
}


def field_block(html: str, name: str) -> str:
    """The markup of one form field's wrapper: its label, input, help and errors."""
    match = re.search(
        rf'<(div|fieldset) class="field[^"]*">((?:(?!<(?:div|fieldset) class="field).)*?name="{name}".*?)</\1>',
        html,
        re.S,
    )
    assert match, f"no field {name!r} in the page"
    return match.group(2)


def rate(client, post, **changes):
    return client.post(f"/queue/posts/{post.pk}/", {**GOOD, **changes})


# Reading a post


def test_post_page_shows_the_post_its_flags_reach_page_and_earlier_ratings(login, factchecker):
    page = PageFactory(name="Health Truths Daily")
    post = PostFactory(
        page=page, text="Lemon water cures measles", url="https://social.example/p/1", views=40000, shares=2000,
        posted_at=timezone.now() - timedelta(hours=10), media_type="video",
    )
    FlagFactory.create_batch(2, post=post, source=FlagSource.USER_REPORT, reason="dangerous health advice")
    FlagFactory(post=post, source=FlagSource.TRUSTED_FLAGGER, reason="medical misinformation")
    earlier = PostFactory(page=page, queue_state=QueueState.RATED)
    other_org = FactCheckerFactory(organisation=OrganisationFactory(name="Checkers United"))
    record_rating(claim_if_unclaimed=True, reviewer=other_org, post_id=earlier.pk, verdict=Verdict.PARTLY_FALSE,
                  rationale="r", sources=["https://a.example"])
    PageStanding.objects.create(page=page, active_strikes=3, is_repeat_offender=True, page_multiplier="0.5",
                                since=timezone.now())

    html = login(factchecker).get(f"/queue/posts/{post.pk}/").content.decode()
    assert "Lemon water cures measles" in html and "https://social.example/p/1" in html
    assert "Video" in html and "Health Truths Daily" in html and "Not a politician's page." in html
    assert "User report: 2" in html and "Trusted flagger: 1" in html and "medical misinformation" in html
    assert "40,000" in html and "2,000" in html and "4,200" in html  # velocity: 42,000 reach over 10 hours
    assert "Partly false" in html and "Checkers United" in html
    assert "3 active strikes" in html and "Repeat offender" in html
    # Nobody holds it: in the browser a reviewer claims it first, so no rating form yet.
    assert "Claim this post before you rate it." in html
    assert 'name="rationale"' not in html


def test_a_page_without_strikes_or_ratings_says_so(login, factchecker):
    post = PostFactory()
    html = login(factchecker).get(f"/queue/posts/{post.pk}/").content.decode()
    assert "No strikes." in html and "None yet." in html and "Nobody holds this post." in html


def test_a_missing_post_is_a_404(login, factchecker):
    assert login(factchecker).get("/queue/posts/424242/").status_code == 404


def test_someone_elses_claim_is_shown_and_the_form_is_withheld(login, factchecker):
    post = PostFactory()
    other = FactCheckerFactory(username="amira")
    claim_post(reviewer=other, post_id=post.pk)
    html = login(factchecker).get(f"/queue/posts/{post.pk}/").content.decode()
    assert "Claimed by amira until" in html
    assert 'name="rationale"' not in html and ">Release</button>" not in html


# Releasing


def test_releasing_a_claim_returns_the_post_to_the_queue(login, factchecker):
    post = PostFactory()
    claim_post(reviewer=factchecker, post_id=post.pk)
    response = login(factchecker).post(f"/queue/posts/{post.pk}/release/", follow=True)
    assert response.redirect_chain[-1][0] == "/queue/"
    assert "Claim released; the post is back in the queue." in response.content.decode()
    assert Claim.objects.get().status == ClaimStatus.RELEASED
    post.refresh_from_db()
    assert post.queue_state == QueueState.QUEUED


def test_releasing_a_claim_you_do_not_hold_changes_nothing(login, factchecker):
    post = PostFactory()
    claim_post(reviewer=FactCheckerFactory(), post_id=post.pk)
    response = login(factchecker).post(f"/queue/posts/{post.pk}/release/", follow=True)
    assert "You do not hold a claim on this post." in response.content.decode()
    assert Claim.objects.get().status == ClaimStatus.ACTIVE


# Rating


def test_rating_a_claimed_post_saves_it_completes_the_claim_and_returns_to_the_queue(login, factchecker):
    post = PostFactory(external_id="post-lemon")
    claim_post(reviewer=factchecker, post_id=post.pk)
    response = rate(login(factchecker), post)
    assert response.status_code == 302 and response["Location"] == "/queue/"
    rating = Rating.objects.get()
    assert (rating.post_id, rating.reviewer_id, rating.organisation_id) == (post.pk, factchecker.pk,
                                                                            organisation_id_of(factchecker))
    assert rating.verdict == Verdict.FALSE and rating.is_current
    assert rating.sources == ["https://journal.example/archive", "https://university.example/statement"]
    assert rating.article_url == GOOD["article_url"]
    assert Claim.objects.get().status == ClaimStatus.COMPLETED
    post.refresh_from_db()
    assert post.queue_state == QueueState.RATED
    queue = login(factchecker).get("/queue/").content.decode()
    assert "Rating saved: “<bdi>post-lemon</bdi>” rated False." in queue


def test_an_unclaimed_post_is_not_rated_in_the_browser_without_its_claim(login, factchecker):
    # In the browser the reviewer holds the lease (PRODUCT.md); only their own lapsed claim is taken again
    # by a save (tests/factcheck/test_claim_lapse.py). Refused, the page comes back with what was typed (issue 29).
    post = PostFactory()
    client = login(factchecker)
    response = rate(client, post, verdict=Verdict.MISSING_CONTEXT, article_url="")
    assert response.status_code == 409
    page = response.content.decode()
    assert "Claim this post before you rate it." in page and GOOD["rationale"] in page
    assert not Rating.objects.exists() and not Claim.objects.exists()


def test_the_claimed_post_is_rated_in_the_browser(login, factchecker):
    post = PostFactory()
    claim_post(reviewer=factchecker, post_id=post.pk)
    assert rate(login(factchecker), post, verdict=Verdict.MISSING_CONTEXT, article_url="").status_code == 302
    assert Rating.objects.get().verdict == Verdict.MISSING_CONTEXT
    assert Claim.objects.get().status == ClaimStatus.COMPLETED


@pytest.mark.parametrize(
    "changes, field, message",
    [
        ({"rationale": "   "}, "rationale", "A rationale is required."),
        ({"sources": ""}, "sources", "Give at least one source URL."),
        ({"sources": "ftp://files.example/r.pdf"}, "sources", "Not an http:// or https:// URL: ftp://files.example/r.pdf"),
        ({"article_url": "javascript:alert(1)"}, "article_url", "Enter a valid http:// or https:// URL."),
        ({"verdict": ""}, "verdict", "Choose a verdict."),
        ({"verdict": "mostly_fine"}, "verdict", "Select a valid choice."),
    ],
)
def test_form_errors_appear_next_to_their_field_and_nothing_is_saved(login, factchecker, changes, field, message):
    post = PostFactory()
    claim_post(reviewer=factchecker, post_id=post.pk)
    response = rate(login(factchecker), post, **changes)
    assert response.status_code == 200
    html = response.content.decode()
    assert message in field_block(html, field)
    assert html.count('class="error"') == 1  # only the field at fault
    assert not Rating.objects.exists()
    assert Claim.objects.get().status == ClaimStatus.ACTIVE
    # What was typed stays in the form.
    if field != "rationale":
        assert GOOD["rationale"] in html


def test_rating_a_post_another_reviewer_holds_is_refused_and_nothing_is_saved(login, factchecker):
    post = PostFactory()
    claim_post(reviewer=FactCheckerFactory(username="amira"), post_id=post.pk)
    response = rate(login(factchecker), post)
    # Issue 29: the page again, with who holds the post and everything typed (no redirect that loses it).
    assert response.status_code == 409
    page = response.content.decode()
    assert "Not saved: amira holds this post until" in page
    assert GOOD["rationale"] in page
    assert not Rating.objects.exists()


def test_a_politicians_post_shows_why_it_cannot_be_rated_and_a_rating_is_refused(login, factchecker):
    post = PostFactory(page__is_politician=True, queue_state=QueueState.NOT_ELIGIBLE)
    client = login(factchecker)
    html = client.get(f"/queue/posts/{post.pk}/").content.decode()
    assert "Posts and ads from politicians are not fact-checked." in html
    assert 'name="rationale"' not in html
    response = rate(client, post)
    assert response.status_code == 409  # the page again, with what was typed (issue 29)
    assert "Posts and ads from politicians are not fact-checked." in response.content.decode()
    assert not Rating.objects.exists()


def test_rating_a_rated_post_again_supersedes_the_earlier_rating(login, factchecker):
    post = PostFactory()
    record_rating(claim_if_unclaimed=True, reviewer=factchecker, post_id=post.pk, verdict=Verdict.TRUE, rationale="r",
                  sources=["https://a.example"])
    client = login(factchecker)
    html = client.get(f"/queue/posts/{post.pk}/").content.decode()
    assert "A new rating supersedes the current one" in html and 'name="change_reason"' in html
    response = rate(client, post)  # without a reason: refused next to the field
    assert "Say why the rating changes" in field_block(response.content.decode(), "change_reason")
    assert Rating.objects.count() == 1
    rate(client, post, change_reason="A new study contradicts it.")
    assert list(Rating.objects.order_by("id").values_list("verdict", "is_current", "change_reason")) == [
        (Verdict.TRUE, False, ""), (Verdict.FALSE, True, "A new study contradicts it."),
    ]


# Query counts


@pytest.mark.parametrize("rows", [5, 40])
def test_post_page_renders_in_a_fixed_number_of_queries(login, factchecker, django_assert_max_num_queries, rows):
    page = PageFactory()
    post = PostFactory(page=page)
    for source in FlagSource.values:
        FlagFactory.create_batch(rows // 4, post=post, source=source)
    for i in range(rows):
        earlier = PostFactory(page=page)
        record_rating(claim_if_unclaimed=True, reviewer=FactCheckerFactory(), post_id=earlier.pk,
                      verdict=Verdict.FALSE, rationale=f"r{i}", sources=["https://a.example"])
    PageStanding.objects.create(page=page, active_strikes=rows)
    # Copies linked to it and suggested pairs both ways, each with a post on a page of its own.
    now = timezone.now()
    for i in range(rows):
        copy = PostFactory(duplicate_of=post, queue_state=QueueState.GROUPED)
        Match.objects.create(post=copy, source=post, method=MatchMethod.TEXT, score=1.0, state=MatchState.AUTO,
                             created_at=now)
        Match.objects.create(post=PostFactory(), source=post, method=MatchMethod.MINHASH, score=0.5 + i / 1000,
                             state=MatchState.SUGGESTED, created_at=now, decided_by=None)
    claim_post(reviewer=factchecker, post_id=post.pk)
    client = login(factchecker)
    # session, user, post with page/standing/distribution, claim, history, current rating, flags by
    # source, recent flags, the near-duplicate pairs with their posts and pages, the organisation
    # in the header (which the coverage check reuses), and the rating form's effect preview (the policy
    # rows, the repeat-offender numbers, the page's strikes), and the reviewer's own rating draft
    # +1: the navigation's counts (issue 29); +1: its media (issue 30); +1: staff's notes sending it here;
    # +1: its pairs and copies counted in full (the list shows the first hundred)
    with django_assert_max_num_queries(18):
        response = client.get(f"/queue/posts/{post.pk}/")
    assert response.status_code == 200
    html = response.content.decode()
    assert f"{rows} active strikes" in html
    assert f"Rating this post rates its {rows} copies too." in html
    assert html.count('aria-label="Confirm post ') == min(rows, MATCHES_SHOWN)


@pytest.mark.parametrize("rows", [5, 40])
def test_a_matched_copys_page_renders_in_a_fixed_number_of_queries(login, factchecker,
                                                                    django_assert_max_num_queries, rows):
    source = PostFactory()
    record_rating(claim_if_unclaimed=True, reviewer=factchecker, post_id=source.pk, verdict=Verdict.FALSE,
                  rationale="r", sources=["https://a.example"])
    copy = PostFactory(duplicate_of=source, queue_state=QueueState.MATCHED)
    now = timezone.now()
    Match.objects.create(post=copy, source=source, method=MatchMethod.URL, score=1.0, state=MatchState.AUTO,
                         created_at=now)
    for _ in range(rows):  # pairs this copy was also suggested in, to other claims
        Match.objects.create(post=copy, source=PostFactory(), method=MatchMethod.MINHASH, score=0.45,
                             state=MatchState.REJECTED, created_at=now, decided_by=factchecker, decided_at=now)
    client = login(factchecker)
    # as above without the rating form, and the claim's current rating (which the page names), the
    # timeline (flags, ratings, actions, appeal events) and the appeals, and the reviewer's own rating draft
    # +1: the navigation's counts (issue 29); +1: its pairs and copies counted in full; +1: whether the reviewer may
    # unlink it ("Not a copy: unlink": its link to the claim); +1: whether each rejected pair's rejection may be undone
    # (factcheck.matching.undoing.rejections: each pair's latest audit event). The facts those rules and the
    # suggestions judge on (the copy, its claim and rating's organisation, the other post of each rejected or suggested
    # pair) are one query for all (factcheck.views_matches.pair_facts): read once for the unlink and once more for
    # the undo, the copy's own twice, the page took 23. Still the same count at 5 and 40 pairs: no query per pair.
    with django_assert_max_num_queries(22):
        response = client.get(f"/queue/posts/{copy.pk}/")
    assert response.status_code == 200
    assert "Matched to a claim rated" in response.content.decode()
