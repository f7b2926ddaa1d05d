"""The appeal state machine: filing rules, one decision per appeal, and recomputation on reversal."""

from __future__ import annotations

import threading
from datetime import timedelta
from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError
from django.db import connection
from django.utils import timezone

from factcheck.members import organisation_of
from factcheck.models import Rating
from factcheck.ratings import AppealOpen, NotYourRating, record_rating
from moderation.appeals import (
    AppealConflict,
    AppealRefused,
    NotAllowed,
    decide_appeal,
    file_appeal,
    start_review,
    withdraw_appeal,
)
from moderation.enforcement import apply_rating
from moderation.models import Appeal, AppealEvent, AppealStatus, Notification, PageStanding, PostDistribution
from moderation.staff_actions import remove_post
from tests import scenarios
from tests.factories import FactCheckerFactory, PageFactory, PostFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner(db):
    return UserFactory()


@pytest.fixture
def rated_post(owner, factchecker):
    return scenarios.rated_post(rater=factchecker, owner=owner)


@pytest.fixture
def colleague(factchecker):
    return FactCheckerFactory(organisation=organisation_of(factchecker))


def dispute(owner, post, **kw):
    return file_appeal(owner=owner, post_id=post.pk, kind="dispute", statement="The quote is real.",
                       evidence_urls=["https://video.example/full"], **kw)


def test_owner_files_a_dispute_and_the_organisation_is_notified(owner, rated_post, factchecker, colleague):
    appeal = dispute(owner, rated_post)
    assert appeal.status == AppealStatus.OPEN and appeal.rating.is_current
    assert list(appeal.events.values_list("to_status", flat=True)) == ["open"]
    notified = set(Notification.objects.filter(kind="appeal_received").values_list("user_id", flat=True))
    assert notified == {colleague.pk}  # the rater is not asked to judge their own rating


def test_only_owners_of_the_page_can_file(rated_post, factchecker):
    for user in (UserFactory(), factchecker):
        with pytest.raises(NotAllowed):
            dispute(user, rated_post)


def test_one_open_appeal_per_decision(owner, rated_post):
    dispute(owner, rated_post)
    with pytest.raises(AppealConflict):
        dispute(owner, rated_post)


def test_the_filing_window_closes_after_six_months(owner, rated_post):
    with pytest.raises(AppealRefused, match="window"):
        dispute(owner, rated_post, now=timezone.now() + timedelta(days=186))


def test_statement_length_and_evidence_urls_are_checked(owner, rated_post):
    with pytest.raises(ValidationError) as too_long:
        file_appeal(owner=owner, post_id=rated_post.pk, kind="dispute", statement="x" * 2001)
    assert "statement" in too_long.value.message_dict
    with pytest.raises(ValidationError) as bad_url:
        file_appeal(owner=owner, post_id=rated_post.pk, kind="dispute", statement="ok",
                    evidence_urls=["javascript:alert(1)"])
    assert "evidence_urls" in bad_url.value.message_dict


def test_a_correction_may_say_what_was_corrected_in_its_statement_alone(owner, rated_post):
    # PRODUCT.md's API files every appeal as {"kind", "statement", "evidence_urls"}.
    appeal = file_appeal(owner=owner, post_id=rated_post.pk, kind="correction",
                         statement="We fixed the second paragraph: it now says 12%.")
    assert (appeal.kind, appeal.correction_details, appeal.status) == ("correction", "", "open")


def test_a_removal_appeal_needs_a_removal(owner, rated_post):
    with pytest.raises(AppealRefused):
        file_appeal(owner=owner, post_id=rated_post.pk, kind="removal", statement="Why?")


def test_a_reversed_dispute_never_defaults_its_new_verdict(owner, rated_post, colleague):
    appeal = dispute(owner, rated_post)
    with pytest.raises(ValidationError) as refused:
        decide_appeal(appeal_id=appeal.pk, reviewer=colleague, outcome="reversed", reason="The video is authentic.")
    assert refused.value.message_dict["new_verdict"] == ["Choose the verdict that replaces the current rating."]
    # Issue 29: a reversal also publishes its own rationale, never the note to the owner.
    assert list(refused.value.message_dict) == ["new_verdict", "public_rationale"]
    appeal.refresh_from_db()
    assert appeal.status == AppealStatus.OPEN and appeal.new_rating is None
    assert Rating.objects.get(post=rated_post, is_current=True).verdict == "false"


def test_the_rater_cannot_decide_but_a_colleague_can_reverse_and_distribution_is_restored(
    owner, rated_post, factchecker, colleague
):
    appeal = dispute(owner, rated_post)
    with pytest.raises(NotAllowed, match="made this rating"):
        decide_appeal(appeal_id=appeal.pk, reviewer=factchecker, outcome="reversed", reason="x")
    with pytest.raises(NotAllowed):
        decide_appeal(appeal_id=appeal.pk, reviewer=FactCheckerFactory(), outcome="reversed", reason="x")
    start_review(appeal_id=appeal.pk, reviewer=colleague)
    decided = decide_appeal(appeal_id=appeal.pk, reviewer=colleague, outcome="reversed",
                            public_rationale="New evidence.", new_verdict="true", reason="The video is authentic.")
    assert decided.status == AppealStatus.REVERSED and decided.new_rating.verdict == "true"
    # Every organisation's post page shows why a rating changed: which appeal, not the note to the owner.
    assert decided.new_rating.change_reason == f"appeal {appeal.pk} reversed"
    assert decided.outcome_reason == "The video is authentic."
    distribution = PostDistribution.objects.get(post=rated_post)
    assert (distribution.multiplier, distribution.labels) == (Decimal("1"), [])
    assert [e.to_status for e in AppealEvent.objects.filter(appeal=appeal)] == ["open", "in_review", "reversed"]
    assert Notification.objects.filter(user=owner, kind="appeal_decided").exists()


def test_a_decided_appeal_cannot_be_decided_again_or_withdrawn(owner, rated_post, colleague):
    appeal = dispute(owner, rated_post)
    decide_appeal(appeal_id=appeal.pk, reviewer=colleague, outcome="upheld", reason="The quote is invented.")
    with pytest.raises(AppealConflict, match="already upheld"):
        decide_appeal(appeal_id=appeal.pk, reviewer=colleague, outcome="reversed", reason="changed my mind")
    with pytest.raises(AppealConflict):
        withdraw_appeal(appeal_id=appeal.pk, owner=owner)
    assert PostDistribution.objects.get(post=rated_post).multiplier == Decimal("0.2")


def test_an_accepted_correction_needs_and_applies_the_new_verdict(owner, rated_post, colleague):
    appeal = file_appeal(owner=owner, post_id=rated_post.pk, kind="correction", statement="Fixed the figure.",
                         correction_details="Second paragraph now says 12%, not 40%.")
    with pytest.raises(ValidationError):
        decide_appeal(appeal_id=appeal.pk, reviewer=colleague, outcome="reversed", reason="ok")
    decide_appeal(appeal_id=appeal.pk, reviewer=colleague, outcome="reversed", reason="Corrected.",
                  public_rationale="New evidence.", new_verdict="missing_context")
    assert PostDistribution.objects.get(post=rated_post).labels == ["Missing context."]


def test_owner_withdraws_an_open_appeal(owner, rated_post):
    appeal = dispute(owner, rated_post)
    assert withdraw_appeal(appeal_id=appeal.pk, owner=owner).status == AppealStatus.WITHDRAWN
    dispute(owner, rated_post)  # the decision can be appealed again


def test_a_reversed_removal_is_lifted_by_other_staff(owner, staff_user):
    from accounts.models import Role

    post = PostFactory()
    post.page.owners.add(owner)
    staff_user.role = Role.TRUST_SAFETY
    staff_user.save(update_fields=["role"])
    remove_post(staff=staff_user, post_id=post.pk, ground="harassment", reason="Targets a private person.")
    assert PostDistribution.objects.get(post=post).removed
    appeal = file_appeal(owner=owner, post_id=post.pk, kind="removal", statement="It is satire about a public figure.")
    with pytest.raises(NotAllowed):
        decide_appeal(appeal_id=appeal.pk, reviewer=staff_user, outcome="reversed", reason="x")
    other = UserFactory(role=Role.TRUST_SAFETY, is_staff=True)
    decide_appeal(appeal_id=appeal.pk, reviewer=other, outcome="reversed", reason="Public figure, no harassment.")
    distribution = PostDistribution.objects.get(post=post)
    assert (distribution.removed, distribution.multiplier) == (False, Decimal("1"))


def test_reversal_drops_a_page_below_the_repeat_offender_threshold(owner, factchecker, colleague):
    page = PageFactory()
    page.owners.add(owner)
    posts = PostFactory.create_batch(3, page=page)
    for post in posts:
        apply_rating(rating_id=record_rating(claim_if_unclaimed=True, reviewer=factchecker, post_id=post.pk,
                                             verdict="false", rationale="No.", sources=["https://a.example"]).pk)
    assert PageStanding.objects.get(page=page).is_repeat_offender
    appeal = dispute(owner, posts[0])
    decide_appeal(appeal_id=appeal.pk, reviewer=colleague, outcome="reversed",
                  public_rationale="New evidence.", new_verdict="true", reason="Accurate after all.")
    assert not PageStanding.objects.get(page=page).is_repeat_offender
    assert PostDistribution.objects.get(post=posts[1]).multiplier == Decimal("0.2")


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_two_reviewers_deciding_at_once_one_wins_the_other_is_told():
    owner = UserFactory()
    rater = FactCheckerFactory()
    first, second = (FactCheckerFactory(organisation=organisation_of(rater)) for _ in range(2))
    post = PostFactory()
    post.page.owners.add(owner)
    apply_rating(rating_id=record_rating(claim_if_unclaimed=True, reviewer=rater, post_id=post.pk, verdict="false",
                                         rationale="No.", sources=["https://a.example"]).pk)
    appeal = dispute(owner, post)
    barrier = threading.Barrier(2)
    outcomes: dict[str, str] = {}

    def decide(name, reviewer, outcome):
        try:
            barrier.wait()
            decide_appeal(appeal_id=appeal.pk, reviewer=reviewer, outcome=outcome, reason=f"{name} decided",
                          public_rationale="New evidence.", new_verdict="true" if outcome == "reversed" else "")
            outcomes[name] = "won"
        except AppealConflict as exc:
            outcomes[name] = str(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=decide, args=("a", first, "upheld")),
               threading.Thread(target=decide, args=("b", second, "reversed"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes.values())[1] == "won"
    assert "already" in sorted(outcomes.values())[0]
    appeal.refresh_from_db()
    assert AppealEvent.objects.filter(appeal=appeal, to_status__in=["upheld", "reversed"]).count() == 1


def test_while_a_dispute_is_open_only_its_decision_changes_the_rating(owner, rated_post, colleague, factchecker):
    appeal = dispute(owner, rated_post)
    rating = Rating.objects.get(post=rated_post, is_current=True)
    with pytest.raises(NotYourRating):  # another organisation never
        record_rating(claim_if_unclaimed=True, reviewer=FactCheckerFactory(), post_id=rated_post.pk,
                      verdict="true", rationale="Mixed.", sources=["https://b.example"], change_reason="x")
    for member in (factchecker, colleague):  # not the rater, not a colleague: only the appeal's decision
        with pytest.raises(AppealOpen):
            record_rating(claim_if_unclaimed=True, reviewer=member, post_id=rated_post.pk, verdict="true",
                          rationale="Mixed.", sources=["https://b.example"], change_reason="New evidence.")
    assert list(Rating.objects.filter(post=rated_post).values_list("pk", flat=True)) == [rating.pk]
    decided = decide_appeal(appeal_id=appeal.pk, reviewer=colleague, outcome="reversed", reason="The quote is real.",
                            public_rationale="New evidence.", new_verdict="true")
    assert decided.new_rating.is_current and decided.new_rating.change_reason == f"appeal {decided.pk} reversed"


def test_reversing_a_removal_that_staff_lifted_meanwhile_is_a_conflict_not_an_error(owner):
    from factcheck.members import create_user

    sam = create_user(username="sam", role="trust_safety", password="x" * 12)
    kim = create_user(username="kim", role="trust_safety", password="x" * 12)
    post = PostFactory()
    post.page.owners.add(owner)
    action = remove_post(staff=sam, post_id=post.pk, ground="hate", reason="Slur.")
    appeal = file_appeal(owner=owner, post_id=post.pk, kind="removal", statement="Quoted for criticism.")
    from moderation.staff_actions import lift_action

    lee = create_user(username="lee", role="trust_safety", password="x" * 12)  # not sam: he made the removal
    lift_action(actor=lee, action_id=action.pk, reason="Quoted in criticism.")
    # Lifting the removal granted its appeal (issue 28, finding 15): a decision after that is told so.
    with pytest.raises(AppealConflict, match="already reversed"):
        decide_appeal(appeal_id=appeal.pk, reviewer=kim, outcome="reversed", reason="Agreed.")


def test_taking_an_appeal_into_review_twice_from_one_page_is_not_a_conflict(owner, rated_post, colleague):
    # A double-click on "Take into review": the second, sent with the page's version, said the appeal had changed
    # since the page was opened ("someone took it into review"), about the reviewer's own first click.
    appeal = dispute(owner, rated_post)
    version = appeal.version
    start_review(appeal_id=appeal.pk, reviewer=colleague, expected_version=version)
    again = start_review(appeal_id=appeal.pk, reviewer=colleague, expected_version=version)
    assert again.status == AppealStatus.IN_REVIEW and again.reviewer_id == colleague.pk
    assert AppealEvent.objects.filter(appeal=appeal, to_status=AppealStatus.IN_REVIEW).count() == 1


def test_an_accepted_dispute_publishes_the_ratings_sources_not_the_owners_evidence(owner, rated_post, colleague,
                                                                                   client):
    """The owner's evidence URLs are checked only as http links (an advert, credentials in a link pass): accepted, the
    new rating keeps the sources its organisation checked, and the claim page publishes those alone."""
    sources = Rating.objects.get(post=rated_post, is_current=True).sources
    appeal = file_appeal(owner=owner, post_id=rated_post.pk, kind="dispute", statement="The figure is current.",
                         evidence_urls=["http://buy-my-pills.example/?ref=factcheck",
                                        "https://user:hunter2@intranet.example/"])
    decided = decide_appeal(appeal_id=appeal.pk, reviewer=colleague, outcome="reversed", new_verdict="missing_context",
                            public_rationale="The figure was out of date.", reason="Your evidence showed it.")

    assert decided.new_rating.sources == sources
    assert Appeal.objects.get(pk=appeal.pk).evidence_urls == ["http://buy-my-pills.example/?ref=factcheck",
                                                              "https://user:hunter2@intranet.example/"]
    claim_page = client.get(f"/claims/{decided.new_rating.pk}/").content.decode()
    assert "The figure was out of date." in claim_page
    assert "buy-my-pills" not in claim_page and "hunter2" not in claim_page
