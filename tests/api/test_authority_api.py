"""Who may rate, through the JSON API (PRODUCT.md, "Who may change a decision").

POST /api/v1/posts/{external_id}/ratings against every rule of factcheck.ratings._authorise,
each refusal with its status and code (config/api.py, REFUSAL_STATUS) and proof that nothing
was written: no Rating, Claim, AuditEvent or Action row, no work scheduled after commit, the
current rating, the post's claims and its queue state as they were.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from audit.models import AuditEvent
from factcheck.claims import claim_post
from factcheck.members import organisation_id_of
from factcheck.models import Claim, ClaimStatus, Organisation, Post, QueueState, Rating
from factcheck.pages import set_politician
from factcheck.withdrawal import withdraw_flag
from moderation.appeals import decide_appeal, start_review, withdraw_appeal
from moderation.models import Appeal, AppealStatus
from tests import scenarios
from tests.api.helpers import post_json
from tests.authority import OUTSIDE, current
from tests.conftest import bearer_client
from tests.factories import (
    DecisionFactory,
    FactCheckerFactory,
    OrganisationFactory,
    PageFactory,
    PlatformUserFactory,
    PostFactory,
    StaffFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db

VALID = {
    "verdict": "false",
    "rationale": "The quote was never said; the original speech is archived.",
    "sources": ["https://archive.example/speech"],
}
REASON = "The full recording, found since, shows the quote is cut."
DISPUTE = {
    "kind": "dispute",
    "statement": "The quote is real: the full video shows it.",
    "evidence_urls": ["https://video.example/full"],
}


# Helpers


def rate(client, post: Post, **changes):
    return post_json(client, f"/api/v1/posts/{post.external_id}/ratings", {**VALID, **changes})


def refused(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.content
    error = response.json()["error"]
    assert error["code"] == code
    return error


def file_dispute(owner, post: Post) -> Appeal:
    post.page.owners.add(owner)
    response = post_json(bearer_client(owner), f"/api/v1/posts/{post.external_id}/appeals", DISPUTE)
    assert response.status_code == 201, response.content
    return Appeal.objects.get(pk=response.json()["id"])


@pytest.fixture
def reviewer_client(reviewer):
    return bearer_client(reviewer)


@pytest.fixture
def covered_post(db) -> Post:
    """Rated, it is asserted to have an action (DecisionFactory's), so "no Action row written" means something."""
    return PostFactory(language="fr", country="FR", page=PageFactory())




# Coverage


@OUTSIDE
def test_rating_a_post_outside_coverage_is_403_outside_coverage_and_writes_nothing(
    reviewer_client, writes_nothing, language, country
):
    post = PostFactory(language=language, country=country)
    with writes_nothing(post):
        response = rate(reviewer_client, post)
    error = refused(response, 403, "outside_coverage")
    assert (
        "outside what Vérifions covers (French in France); it can be read but not claimed or rated."
        in error["message"]
    )


@OUTSIDE
def test_a_post_outside_coverage_can_be_read(reviewer_client, writes_nothing, language, country):
    post = PostFactory(language=language, country=country)
    with writes_nothing(post):
        response = reviewer_client.get(f"/api/v1/posts/{post.external_id}")
    assert response.status_code == 200
    assert response.json()["external_id"] == post.external_id


def test_re_rating_after_coverage_narrowed_is_403_outside_coverage_even_for_the_rater(
    reviewer, reviewer_client, organisation, covered_post, writes_nothing
):
    assert DecisionFactory(reviewer=reviewer, post=covered_post).action
    Organisation.objects.filter(pk=organisation.pk).update(countries=["BE"])
    with writes_nothing(covered_post):
        response = rate(reviewer_client, covered_post, change_reason=REASON)
    refused(response, 403, "outside_coverage")


@pytest.mark.parametrize(
    "languages, countries, language, country",
    [([], [], "sw", "KE"), (["en"], [], "en", "NZ"), ([], ["GB"], "cy", "GB")],
    ids=["lists-none", "languages-only", "countries-only"],
)
def test_an_empty_coverage_list_covers_all_so_the_post_is_rated(languages, countries, language, country):
    reviewer = FactCheckerFactory(organisation=OrganisationFactory(languages=languages, countries=countries))
    post = PostFactory(language=language, country=country)
    assert rate(bearer_client(reviewer), post).status_code == 201
    assert current(post).reviewer == reviewer


# The live claim


def test_an_unclaimed_post_is_claimed_and_the_claim_completed_with_the_rating(
    reviewer, reviewer_client, covered_post
):
    response = rate(reviewer_client, covered_post)
    assert response.status_code == 201
    the_claim = Claim.objects.get(post=covered_post)  # exactly one
    assert (the_claim.reviewer, the_claim.status) == (reviewer, ClaimStatus.COMPLETED)
    assert the_claim.ended_at is not None
    rating = Rating.objects.get(pk=response.json()["id"])
    assert (rating.claim_id, rating.reviewer, rating.is_current) == (the_claim.pk, reviewer, True)
    # Claimed, completed and rated at one instant: one transaction.
    assert the_claim.claimed_at == the_claim.ended_at == rating.created_at
    events = AuditEvent.objects.filter(post_id=covered_post.pk).order_by("id")
    assert [(e.verb, e.actor_id) for e in events] == [("claim.created", reviewer.pk), ("rating.recorded", reviewer.pk)]
    covered_post.refresh_from_db()
    assert covered_post.queue_state == QueueState.RATED


def test_when_the_rating_fails_the_claim_taken_for_it_is_not_kept(
    reviewer_client, covered_post, writes_nothing, monkeypatch
):
    def broken(*args, **kwargs):
        raise RuntimeError("the disk is full")

    monkeypatch.setattr("factcheck.ratings.complete_claim", broken)  # fails after the claim was taken
    with writes_nothing(covered_post):
        response = rate(reviewer_client, covered_post)
    assert response.status_code == 500
    assert not Claim.objects.exists()


def test_the_callers_own_claim_is_completed_not_duplicated(reviewer, reviewer_client, covered_post):
    own = claim_post(reviewer=reviewer, post_id=covered_post.pk)
    assert rate(reviewer_client, covered_post).status_code == 201
    assert list(Claim.objects.values_list("pk", "status")) == [(own.pk, ClaimStatus.COMPLETED)]
    assert current(covered_post).claim_id == own.pk


@pytest.mark.parametrize("holder_is", ["colleague", "other-organisation"])
def test_a_post_another_reviewer_holds_is_409_already_claimed_and_writes_nothing(
    reviewer_client, colleague, covered_post, writes_nothing, holder_is
):
    holder = colleague if holder_is == "colleague" else FactCheckerFactory()
    claim_post(reviewer=holder, post_id=covered_post.pk)
    with writes_nothing(covered_post):
        response = rate(reviewer_client, covered_post)
    error = refused(response, 409, "already_claimed")
    assert error["message"] == "Another reviewer holds the claim on this post."


def test_a_lapsed_claim_of_another_reviewer_does_not_hold_the_post(reviewer, reviewer_client, covered_post):
    lapsed = claim_post(reviewer=FactCheckerFactory(), post_id=covered_post.pk)
    Claim.objects.filter(pk=lapsed.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert rate(reviewer_client, covered_post).status_code == 201
    assert list(Claim.objects.order_by("pk").values_list("reviewer_id", "status")) == [
        (lapsed.reviewer_id, ClaimStatus.EXPIRED), (reviewer.pk, ClaimStatus.COMPLETED),
    ]


# Re-rating: the rating's organisation, with a reason, never under an open appeal


@pytest.mark.parametrize("who", ["rater", "colleague"])
def test_the_raters_organisation_re_rates_with_change_reason_and_supersedes_the_rating(
    reviewer, colleague, covered_post, who
):
    assert DecisionFactory(reviewer=reviewer, post=covered_post).action
    earlier = current(covered_post)
    by = reviewer if who == "rater" else colleague
    response = rate(bearer_client(by), covered_post, verdict="partly_false", change_reason=REASON)
    assert response.status_code == 201
    now_current = current(covered_post)
    assert (now_current.pk, now_current.verdict, now_current.reviewer, now_current.change_reason) == (
        response.json()["id"], "partly_false", by, REASON
    )
    earlier.refresh_from_db()
    assert (earlier.is_current, earlier.superseded_by_id) == (False, now_current.pk)
    assert AuditEvent.objects.filter(verb="rating.superseded", target_id=str(earlier.pk), reason=REASON).exists()


@pytest.mark.parametrize("change_reason", [None, "", "   \n\t"], ids=["absent", "empty", "blank"])
def test_re_rating_without_change_reason_is_422_naming_the_field_and_writes_nothing(
    reviewer, reviewer_client, covered_post, writes_nothing, change_reason
):
    assert DecisionFactory(reviewer=reviewer, post=covered_post).action
    body = {} if change_reason is None else {"change_reason": change_reason}
    with writes_nothing(covered_post):
        response = rate(reviewer_client, covered_post, verdict="true", **body)
    error = refused(response, 422, "validation_error")
    assert [e["field"] for e in error["details"]["errors"]] == ["change_reason"]


@pytest.mark.parametrize("with_reason", [True, False], ids=["with-reason", "without-reason"])
def test_another_organisation_re_rating_is_403_not_your_rating_and_writes_nothing(
    reviewer, covered_post, writes_nothing, with_reason
):
    assert DecisionFactory(reviewer=reviewer, post=covered_post).action
    client = bearer_client(FactCheckerFactory(organisation=OrganisationFactory(languages=["fr"])))
    with writes_nothing(covered_post):
        response = rate(client, covered_post, verdict="true", **({"change_reason": REASON} if with_reason else {}))
    error = refused(response, 403, "not_your_rating")
    assert error["message"] == (
        "This post was rated False by Vérifions; only a member of that organisation can change the rating."
    )


@pytest.mark.parametrize("appeal_state", ["open", "in_review"])
@pytest.mark.parametrize("who", ["rater", "colleague"])
def test_while_an_appeal_is_open_re_rating_is_409_appeal_open_and_writes_nothing(
    reviewer, colleague, covered_post, writes_nothing, who, appeal_state
):
    assert DecisionFactory(reviewer=reviewer, post=covered_post).action
    appeal = file_dispute(UserFactory(), covered_post)
    if appeal_state == "in_review":
        start_review(appeal_id=appeal.pk, reviewer=colleague)
    client = bearer_client(reviewer if who == "rater" else colleague)
    with writes_nothing(covered_post):
        response = rate(client, covered_post, verdict="true", change_reason=REASON)
    refused(response, 409, "appeal_open")


@pytest.mark.parametrize("ending", ["upheld", "withdrawn"])
def test_once_the_appeal_is_closed_the_raters_organisation_re_rates_again_with_a_reason(
    reviewer, reviewer_client, colleague, covered_post, writes_nothing, ending
):
    assert DecisionFactory(reviewer=reviewer, post=covered_post).action
    owner = UserFactory()
    appeal = file_dispute(owner, covered_post)
    if ending == "upheld":
        decide_appeal(appeal_id=appeal.pk, reviewer=colleague, outcome=AppealStatus.UPHELD, reason="It is fabricated.")
    else:
        withdraw_appeal(appeal_id=appeal.pk, owner=owner)
    with writes_nothing(covered_post):
        refused(rate(reviewer_client, covered_post, verdict="partly_false"), 422, "validation_error")
    assert rate(reviewer_client, covered_post, verdict="partly_false", change_reason=REASON).status_code == 201
    assert (current(covered_post).verdict, current(covered_post).change_reason) == ("partly_false", REASON)


def test_the_appeals_reversal_supersedes_the_rating_under_appeal(
    reviewer, reviewer_client, colleague, covered_post
):
    assert DecisionFactory(reviewer=reviewer, post=covered_post).action
    under_appeal = current(covered_post)
    appeal = file_dispute(UserFactory(), covered_post)
    refused(rate(reviewer_client, covered_post, verdict="true", change_reason=REASON), 409, "appeal_open")
    decide_appeal(appeal_id=appeal.pk, reviewer=colleague, outcome=AppealStatus.REVERSED,
                  reason="The video is authentic.", public_rationale="New evidence.", new_verdict="true")
    reversal = current(covered_post)
    assert (reversal.verdict, reversal.reviewer, reversal.organisation_id) == ("true", colleague,
                                                                             organisation_id_of(reviewer))
    assert reversal.change_reason.startswith("appeal")
    under_appeal.refresh_from_db()
    assert (under_appeal.is_current, under_appeal.superseded_by_id) == (False, reversal.pk)
    body = reviewer_client.get(f"/api/v1/posts/{covered_post.external_id}").json()
    assert (body["rating"]["id"], body["rating"]["verdict"]) == (reversal.pk, "true")
    assert [a["status"] for a in body["appeals"]] == ["reversed"]


# Roles


@pytest.mark.parametrize(
    "make_user",
    [StaffFactory, lambda: StaffFactory(is_superuser=True), UserFactory, PlatformUserFactory],
    ids=["trust-and-safety", "superuser-staff", "page-owner", "platform"],
)
@pytest.mark.parametrize("state", ["queued", "rated"])
def test_staff_page_owners_and_platform_tokens_never_rate(
    reviewer, covered_post, writes_nothing, make_user, state
):
    if state == "rated":
        assert DecisionFactory(reviewer=reviewer, post=covered_post).action
    user = make_user()
    covered_post.page.owners.add(user)  # even the owner of the post's page
    client = bearer_client(user)
    with writes_nothing(covered_post):
        response = rate(client, covered_post, verdict="true", change_reason=REASON)
    error = refused(response, 403, "forbidden")
    assert "for the factchecker role" in error["message"]


# A politician's page


def test_a_politicians_post_is_422_rating_refused_and_writes_nothing(reviewer_client, writes_nothing):
    post = PostFactory(language="fr", country="FR", page__is_politician=True, queue_state=QueueState.NOT_ELIGIBLE)
    with writes_nothing(post):
        response = rate(reviewer_client, post)
    error = refused(response, 422, "rating_refused")
    assert error["message"] == "Posts and ads from politicians are not fact-checked."


def test_a_rated_post_whose_page_became_a_politicians_is_422_rating_refused(
    reviewer, reviewer_client, covered_post, writes_nothing
):
    assert DecisionFactory(reviewer=reviewer, post=covered_post).action
    set_politician(staff=StaffFactory(), page_id=covered_post.page_id, is_politician=True, reason="An MP's page.")
    with writes_nothing(covered_post):
        response = rate(reviewer_client, covered_post, verdict="true", change_reason=REASON)
    refused(response, 422, "rating_refused")


def test_a_post_not_waiting_for_a_fact_check_is_not_rated_through_the_api(reviewer_client):
    """The API claims the post it rates as the browser's claim does: not one only reported for harm (staff decide it,
    and its report would stay open beside a rating), nor one never flagged, nor one whose flags were withdrawn."""
    french = {"language": "fr", "country": "FR"}  # the reviewer's organisation's coverage
    harmful = scenarios.reported_post(reports=(("harassment", "user_report"),), **french)
    never = PostFactory(queue_state=QueueState.UNFLAGGED, flag_count=0, **french)
    platform = PlatformUserFactory()
    withdrawn = scenarios.reported_post(reports=(("misinformation", "user_report"),), platform=platform, **french)
    [key] = withdrawn.flags.values_list("idempotency_key", flat=True)
    withdraw_flag(sender=platform, idempotency_key=key, reason="Sent by mistake.")
    assert {Post.objects.get(pk=p.pk).queue_state for p in (harmful, never, withdrawn)} == {QueueState.UNFLAGGED}

    for post, code in ((harmful, "not_claimable"), (never, "not_claimable"), (withdrawn, "flags_withdrawn")):
        error = refused(rate(reviewer_client, post), 409, code)
        assert "flag" in error["message"]
        assert Post.objects.get(pk=post.pk).queue_state == QueueState.UNFLAGGED
    assert not Rating.objects.exists() and not Claim.objects.exists()

    queued = PostFactory(queue_state=QueueState.QUEUED, flag_count=1, **french)
    assert rate(reviewer_client, queued).status_code == 201  # a post in the queue is claimed and rated at once
