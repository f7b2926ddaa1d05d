"""Who may rate, through the browser (PRODUCT.md, "Who may change a decision").

Every rule of factcheck.ratings._authorise as the reviewer meets it: the post page shows the
refusal instead of a form that would be refused, and a POST that is refused anyway shows the
message and writes nothing (no Rating, Claim, AuditEvent or Action row, no work scheduled after
commit, the current rating, the post's claims and its queue state as they were).
"""

from __future__ import annotations

import html
import re
from datetime import timedelta

import pytest
from django.utils import timezone

from audit.models import AuditEvent
from factcheck.claims import claim_post
from factcheck.members import organisation_id_of
from factcheck.models import Claim, ClaimStatus, Organisation, Post, QueueState, Rating, Verdict
from factcheck.pages import set_politician
from moderation.appeals import decide_appeal, start_review, withdraw_appeal
from moderation.models import Appeal, AppealStatus
from tests.authority import OUTSIDE, current
from tests.factories import (
    AppealFactory,
    DecisionFactory,
    FactCheckerFactory,
    OrganisationFactory,
    PlatformUserFactory,
    PostFactory,
    StaffFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db

GOOD = {
    "verdict": Verdict.FALSE,
    "rationale": "The quoted study does not exist; the journal has no such issue.",
    "sources": "https://journal.example/archive\nhttps://university.example/statement",
    "article_url": "",
}
REASON = "A second study, published since, contradicts the first."
CLAIM_FIRST = "Claim this post before you rate it."
HELD_BY_ANOTHER = "Another reviewer holds the claim on this post."
NOT_YOURS = "only a member of that organisation can change the rating"
APPEAL_OPEN = "The page owner has appealed this rating; only the appeal's decision can change it now."
POLITICIAN = "Posts and ads from politicians are not fact-checked."
FORM = 'name="rationale"'


# Helpers


def text(response) -> str:
    """The page as a reader sees it (entities such as &#x27; unescaped)."""
    return html.unescape(response.content.decode())


def field_block(page: str, name: str) -> str:
    """The markup of one form field's wrapper: its label, input, help and errors."""
    match = re.search(
        rf'<(div|fieldset) class="field[^"]*">((?:(?!<(?:div|fieldset) class="field).)*?name="{name}".*?)</\1>',
        page,
        re.S,
    )
    assert match, f"no field {name!r} in the page"
    return match.group(2)


def post_url(post: Post) -> str:
    return f"/queue/posts/{post.pk}/"


def rate(client, post: Post, **changes):
    """Submit the rating form; follows the redirect so the message is on the page."""
    return client.post(post_url(post), {**GOOD, **changes}, follow=True)


def claim(client, post: Post):
    return client.post(f"/queue/posts/{post.pk}/claim/", follow=True)


@pytest.fixture
def covered_post(db) -> Post:
    """Rated, it is asserted to have an action (DecisionFactory's), so "no Action row written" means something."""
    return PostFactory(language="fr", country="FR")




# Coverage: reading is allowed, acting is refused


@OUTSIDE
def test_a_post_outside_coverage_can_be_read_and_the_page_shows_the_refusal_instead_of_the_form(
    login, reviewer, language, country
):
    post = PostFactory(language=language, country=country, text="Lemon water cures measles")
    response = login(reviewer).get(post_url(post))
    assert response.status_code == 200
    page = text(response)
    assert "Lemon water cures measles" in page
    assert (
        "is outside what Vérifions covers (French in France); it can be read but not claimed or rated."
        in page
    )
    assert 'id="rating-refusal"' in page and FORM not in page


def test_the_refusal_names_the_posts_language_and_country_as_words(login, reviewer):
    page = text(login(reviewer).get(post_url(PostFactory(language="es", country="MX"))))
    assert "This post (Spanish, Mexico) is outside what Vérifions covers (French in France)" in page
    assert "(ES, MX)" not in page


@OUTSIDE
def test_claiming_a_post_outside_coverage_is_refused_with_the_message_and_writes_nothing(
    login, reviewer, writes_nothing, language, country
):
    post = PostFactory(language=language, country=country)
    client = login(reviewer)
    with writes_nothing(post):
        response = claim(client, post)
    assert response.redirect_chain == [(post_url(post), 302)]
    assert "outside what Vérifions covers" in text(response)
    assert not Claim.objects.exists()


@pytest.mark.parametrize("filters", [{}, {"language": "en", "country": "GB"}], ids=["no-filter", "filter-outside"])
def test_claim_next_never_claims_a_post_outside_coverage(login, reviewer, writes_nothing, filters):
    outside = PostFactory(language="en", country="GB", priority=99.0)
    client = login(reviewer)
    with writes_nothing(outside):
        response = client.post("/queue/claim-next/", filters, follow=True)
    assert "No post is waiting that matches these filters." in text(response)
    assert not Claim.objects.exists()

    inside = PostFactory(language="fr", country="FR", priority=1.0)
    response = client.post("/queue/claim-next/", filters)
    assert response.status_code == 302 and response["Location"] == post_url(inside)
    assert list(Claim.objects.values_list("post_id", "reviewer_id")) == [(inside.pk, reviewer.pk)]


def test_rating_a_post_outside_coverage_is_refused_and_writes_nothing(login, reviewer, writes_nothing):
    post = PostFactory(language="en", country="GB")
    client = login(reviewer)
    with writes_nothing(post):
        response = rate(client, post)
    assert response.status_code == 409  # the page again, with what was typed (issue 29)
    assert "outside what Vérifions covers" in text(response)
    assert not Rating.objects.exists()


def test_a_claim_held_when_coverage_narrowed_does_not_let_the_reviewer_rate(
    login, reviewer, organisation, covered_post, writes_nothing
):
    claim_post(reviewer=reviewer, post_id=covered_post.pk)
    Organisation.objects.filter(pk=organisation.pk).update(languages=["nl"])
    client = login(reviewer)
    assert "outside what Vérifions covers (Dutch in France)" in text(client.get(post_url(covered_post)))
    with writes_nothing(covered_post):
        response = rate(client, covered_post)
    assert "outside what Vérifions covers (Dutch in France)" in text(response)
    assert Claim.objects.get().status == ClaimStatus.ACTIVE  # the refusal did not even end the claim


@pytest.mark.parametrize(
    "languages, countries, language, country",
    [([], [], "sw", "KE"), (["en"], [], "en", "NZ"), ([], ["GB"], "cy", "GB")],
    ids=["lists-none", "languages-only", "countries-only"],
)
def test_an_empty_coverage_list_covers_all_so_the_post_is_claimed_and_rated(
    login, languages, countries, language, country
):
    reviewer = FactCheckerFactory(organisation=OrganisationFactory(languages=languages, countries=countries))
    post = PostFactory(language=language, country=country)
    client = login(reviewer)
    assert "You claimed this post until" in text(claim(client, post))
    assert FORM in text(client.get(post_url(post)))
    assert rate(client, post).redirect_chain == [("/queue/", 302)]
    assert current(post).reviewer == reviewer


# The live claim


def test_an_unclaimed_post_asks_for_the_claim_and_a_rating_without_it_writes_nothing(
    login, reviewer, covered_post, writes_nothing
):
    client = login(reviewer)
    page = text(client.get(post_url(covered_post)))
    assert CLAIM_FIRST in page and FORM not in page and ">Claim</button>" in page
    with writes_nothing(covered_post):
        response = rate(client, covered_post)
    assert response.status_code == 409  # the page again, with what was typed (issue 29)
    assert CLAIM_FIRST in text(response)


def test_a_lapsed_claim_is_not_the_live_claim(login, reviewer, colleague, covered_post, writes_nothing):
    # Someone else's lapsed claim holds nothing, for them or anyone (the reviewer's own lapsed claim is taken
    # again by their save, issue 29: tests/factcheck/test_claim_lapse.py).
    lapsed = claim_post(reviewer=colleague, post_id=covered_post.pk)
    Claim.objects.filter(pk=lapsed.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    client = login(reviewer)
    assert CLAIM_FIRST in text(client.get(post_url(covered_post)))
    with writes_nothing(covered_post):
        response = rate(client, covered_post)
    assert CLAIM_FIRST in text(response)


@pytest.mark.parametrize("holder_is", ["colleague", "other-organisation"])
def test_a_post_another_reviewer_holds_can_be_neither_rated_nor_claimed(
    login, reviewer, colleague, covered_post, writes_nothing, holder_is
):
    holder = colleague if holder_is == "colleague" else FactCheckerFactory()
    claim_post(reviewer=holder, post_id=covered_post.pk)
    client = login(reviewer)
    page = text(client.get(post_url(covered_post)))
    assert HELD_BY_ANOTHER in page and FORM not in page
    with writes_nothing(covered_post):
        refused_rating = rate(client, covered_post)
        refused_claim = claim(client, covered_post)
    assert "holds this post until" in text(refused_rating) and GOOD["rationale"] in text(refused_rating)
    assert "Another reviewer is working on this post." in text(refused_claim)
    assert Claim.objects.get().reviewer == holder


def test_the_reviewer_holding_the_claim_rates_and_the_claim_is_completed(login, reviewer, covered_post):
    client = login(reviewer)
    claim(client, covered_post)
    assert FORM in text(client.get(post_url(covered_post)))
    assert rate(client, covered_post).redirect_chain == [("/queue/", 302)]
    the_claim = Claim.objects.get()
    assert (the_claim.reviewer, the_claim.status) == (reviewer, ClaimStatus.COMPLETED)
    rating = current(covered_post)
    assert (rating.reviewer, rating.organisation_id, rating.claim_id) == (reviewer, organisation_id_of(reviewer),
                                                                         the_claim.pk)
    verbs = list(AuditEvent.objects.filter(post_id=covered_post.pk).order_by("id").values_list("verb", flat=True))
    assert verbs == ["claim.created", "rating.recorded"]


# Re-rating: the rating's organisation, with a reason


@pytest.mark.parametrize("who", ["rater", "colleague"])
def test_the_raters_organisation_re_rates_with_a_reason_and_the_earlier_rating_is_superseded(
    login, reviewer, colleague, covered_post, who
):
    assert DecisionFactory(reviewer=reviewer, post=covered_post).action
    earlier = current(covered_post)
    client = login(reviewer if who == "rater" else colleague)
    page = text(client.get(post_url(covered_post)))
    assert "Why the rating changes" in field_block(page, "change_reason")
    assert rate(client, covered_post, verdict=Verdict.PARTLY_FALSE, change_reason=REASON).redirect_chain == [
        ("/queue/", 302)
    ]
    now_current = current(covered_post)
    assert now_current.verdict == Verdict.PARTLY_FALSE and now_current.change_reason == REASON
    assert now_current.reviewer == (reviewer if who == "rater" else colleague)
    earlier.refresh_from_db()
    assert (earlier.is_current, earlier.superseded_by_id) == (False, now_current.pk)
    assert AuditEvent.objects.filter(verb="rating.superseded", target_id=str(earlier.pk), reason=REASON).exists()


@pytest.mark.parametrize(
    "change_reason, error",
    [
        ("", "Say why the rating changes (new evidence, an error)."),
        ("   \n ", "Say why the rating changes (new evidence, an error)."),
        ("x" * 2001, "Keep the reason under 2,000 characters."),
    ],
    ids=["missing", "blank", "too-long"],
)
def test_re_rating_without_a_reason_shows_the_error_next_to_the_field_and_writes_nothing(
    login, reviewer, covered_post, writes_nothing, change_reason, error
):
    assert DecisionFactory(reviewer=reviewer, post=covered_post).action
    client = login(reviewer)
    with writes_nothing(covered_post):
        response = client.post(post_url(covered_post), {**GOOD, "change_reason": change_reason})
    assert response.status_code == 200
    page = text(response)
    assert error in field_block(page, "change_reason")
    assert page.count('class="error"') == 1
    assert GOOD["rationale"] in page  # what was typed stays


def test_another_organisation_cannot_re_rate_the_page_says_why_and_a_post_is_refused(
    login, reviewer, covered_post, writes_nothing
):
    assert DecisionFactory(reviewer=reviewer, post=covered_post).action
    outsider = FactCheckerFactory(organisation=OrganisationFactory(name="Checkers United"))
    client = login(outsider)
    page = text(client.get(post_url(covered_post)))
    assert f"This post was rated False by Vérifions; {NOT_YOURS}." in page and FORM not in page
    with writes_nothing(covered_post):
        response = rate(client, covered_post, change_reason=REASON)
    assert response.status_code == 409  # the page again, with what was typed (issue 29)
    assert NOT_YOURS in text(response)


@pytest.mark.parametrize("appeal_state", ["open", "in_review"])
@pytest.mark.parametrize("who", ["rater", "colleague"])
def test_while_an_appeal_is_open_nobody_re_rates(
    login, reviewer, colleague, covered_post, writes_nothing, who, appeal_state
):
    assert DecisionFactory(reviewer=reviewer, post=covered_post).action
    appeal = AppealFactory(post=covered_post, filed_by=UserFactory())
    if appeal_state == "in_review":
        start_review(appeal_id=appeal.pk, reviewer=colleague)
    client = login(reviewer if who == "rater" else colleague)
    page = text(client.get(post_url(covered_post)))
    assert APPEAL_OPEN in page and FORM not in page
    with writes_nothing(covered_post):
        response = rate(client, covered_post, verdict=Verdict.TRUE, change_reason=REASON)
    assert response.status_code == 409  # the page again, with what was typed (issue 29)
    assert APPEAL_OPEN in text(response)


@pytest.mark.parametrize("ending", ["upheld", "withdrawn"])
def test_once_the_appeal_is_closed_the_raters_organisation_re_rates_again_with_a_reason(
    login, reviewer, colleague, covered_post, writes_nothing, ending
):
    assert DecisionFactory(reviewer=reviewer, post=covered_post).action
    owner = UserFactory()
    appeal = AppealFactory(post=covered_post, filed_by=owner)
    if ending == "upheld":
        decide_appeal(appeal_id=appeal.pk, reviewer=colleague, outcome=AppealStatus.UPHELD, reason="The study is fake.")
    else:
        withdraw_appeal(appeal_id=appeal.pk, owner=owner)
    client = login(reviewer)
    page = text(client.get(post_url(covered_post)))
    assert APPEAL_OPEN not in page and FORM in page
    with writes_nothing(covered_post):
        without_reason = client.post(post_url(covered_post), {**GOOD, "verdict": Verdict.PARTLY_FALSE})
    assert "Say why the rating changes" in field_block(text(without_reason), "change_reason")
    rate(client, covered_post, verdict=Verdict.PARTLY_FALSE, change_reason=REASON)
    assert (current(covered_post).verdict, current(covered_post).change_reason) == (Verdict.PARTLY_FALSE, REASON)


def test_the_appeals_reversal_is_the_one_change_to_a_rating_under_appeal(login, reviewer, colleague, covered_post):
    assert DecisionFactory(reviewer=reviewer, post=covered_post).action
    under_appeal = current(covered_post)
    appeal = AppealFactory(post=covered_post, filed_by=UserFactory())
    client = login(colleague)
    assert APPEAL_OPEN in text(client.get(post_url(covered_post)))  # not through the rating form...
    response = client.post(f"/queue/appeals/{appeal.pk}/", {  # ...but through the appeal's decision
        "outcome": "reversed", "reason": "The study is authentic.",
            "public_rationale": "New evidence.", "new_verdict": "true", "version": appeal.version,
    })
    assert response.status_code == 302
    reversal = current(covered_post)
    assert (reversal.verdict, reversal.reviewer, reversal.organisation_id) == (Verdict.TRUE, colleague,
                                                                             organisation_id_of(reviewer))
    assert reversal.change_reason.startswith(f"appeal {appeal.pk} reversed")
    under_appeal.refresh_from_db()
    assert (under_appeal.is_current, under_appeal.superseded_by_id) == (False, reversal.pk)
    assert Appeal.objects.get().new_rating == reversal


def test_an_organisation_decides_the_appeals_against_its_ratings_even_where_it_no_longer_covers(
    login, reviewer, colleague, organisation, covered_post
):
    assert DecisionFactory(reviewer=reviewer, post=covered_post).action
    appeal = AppealFactory(post=covered_post, filed_by=UserFactory())
    Organisation.objects.filter(pk=organisation.pk).update(languages=["nl"])
    client = login(colleague)
    assert "Save decision" in text(client.get(f"/queue/appeals/{appeal.pk}/"))  # the desk offers the decision
    client.raise_request_exception = True
    response = client.post(f"/queue/appeals/{appeal.pk}/", {
        "outcome": "reversed", "reason": "The study is authentic.",
            "public_rationale": "New evidence.", "new_verdict": "true", "version": appeal.version,
    })
    # The rating stays the organisation's to answer for: the appeal's decision is not a new claim on the post.
    assert response.status_code == 302
    appeal.refresh_from_db()
    assert appeal.status == AppealStatus.REVERSED
    assert current(covered_post) == appeal.new_rating


def test_the_rater_cannot_decide_the_appeal_against_their_own_rating(login, reviewer, covered_post, writes_nothing):
    assert DecisionFactory(reviewer=reviewer, post=covered_post).action
    appeal = AppealFactory(post=covered_post, filed_by=UserFactory())
    client = login(reviewer)
    with writes_nothing(covered_post):
        response = client.post(f"/queue/appeals/{appeal.pk}/", {
            "outcome": "reversed", "reason": "I was wrong.",
                "public_rationale": "New evidence.", "new_verdict": "true", "version": appeal.version,
        })
    assert response.status_code == 403
    assert "You made this rating, so another member of your organisation must decide the appeal." in text(response)


# Roles: staff, page owners and platform users never rate, claim or edit a rating


@pytest.mark.parametrize(
    "make_user",
    [StaffFactory, lambda: StaffFactory(is_superuser=True), UserFactory, PlatformUserFactory],
    ids=["trust-and-safety", "superuser-staff", "page-owner", "platform"],
)
@pytest.mark.parametrize("state", ["queued", "rated"])
def test_staff_page_owners_and_platform_users_cannot_claim_rate_or_edit_a_rating(
    login, reviewer, covered_post, writes_nothing, make_user, state
):
    if state == "rated":
        assert DecisionFactory(reviewer=reviewer, post=covered_post).action
    user = make_user()
    covered_post.page.owners.add(user)  # even the owner of the post's page
    client = login(user)
    with writes_nothing(covered_post):
        responses = [
            client.get(post_url(covered_post)),
            client.post(post_url(covered_post), {**GOOD, "change_reason": REASON}),
            client.post(f"/queue/posts/{covered_post.pk}/claim/"),
            client.post("/queue/claim-next/"),
        ]
    assert [r.status_code for r in responses] == [403, 403, 403, 403]


# A politician's page


def test_a_politicians_post_can_be_neither_claimed_nor_rated(login, reviewer, writes_nothing):
    post = PostFactory(language="fr", country="FR", page__is_politician=True, queue_state=QueueState.NOT_ELIGIBLE)
    client = login(reviewer)
    page = text(client.get(post_url(post)))
    assert POLITICIAN in page and FORM not in page
    with writes_nothing(post):
        refused_rating = rate(client, post)
        refused_claim = claim(client, post)
    assert POLITICIAN in text(refused_rating)
    assert "Posts from politicians' pages are not fact-checked." in text(refused_claim)


def test_a_rated_post_whose_page_became_a_politicians_is_not_re_rated(login, reviewer, covered_post, writes_nothing):
    assert DecisionFactory(reviewer=reviewer, post=covered_post).action
    set_politician(staff=StaffFactory(), page_id=covered_post.page_id, is_politician=True, reason="An MP's page.")
    client = login(reviewer)
    assert POLITICIAN in text(client.get(post_url(covered_post)))
    with writes_nothing(covered_post):
        response = rate(client, covered_post, change_reason=REASON)
    assert POLITICIAN in text(response)
