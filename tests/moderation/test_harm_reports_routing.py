"""Where a flag goes by its category, and what a removal does to the fact-checkers' queue (PRODUCT.md, "Reports
of harm go to trust-and-safety staff"): harm alone never reaches fact-checkers, both kinds reach both queues, a
removal takes a post out of the fact-checkers' hands (its claim ends, claiming and rating are refused) and a
restore puts it back as its flags say."""

from __future__ import annotations

import pytest
from django.utils import timezone

from audit.models import AuditEvent, AuditVerb
from factcheck.claims import PostRemoved, claim_post
from factcheck.matching.matcher import regroup_rated
from factcheck.models import Claim, ClaimStatus, FlagCategory, Post, QueueState, ReportOutcome, ReportStatus
from factcheck.pages import set_politician
from factcheck.queue import queued_posts
from factcheck.ratings import record_rating
from moderation.harm_reports import claim_report, decide_report
from moderation.models import ReportedPost
from moderation.report_queue import open_rows
from moderation.selectors import active_removal
from moderation.staff_actions import lift_action, remove_post
from tests.conftest import bearer_client
from tests.factories import FactCheckerFactory, StaffFactory
from tests.scenarios import reported_post

pytestmark = pytest.mark.django_db

HARM = [FlagCategory.VIOLENCE, FlagCategory.HATE, FlagCategory.HARASSMENT, FlagCategory.IMMINENT_HARM]


def in_checkers_queue(post: Post) -> bool:
    return queued_posts(organisation=None).filter(pk=post.pk).exists()


def in_reports_queue(post: Post) -> bool:
    return open_rows().filter(post=post).exists()


@pytest.mark.parametrize("category", HARM)
def test_a_report_of_harm_alone_goes_to_staff_and_never_to_the_fact_checkers_queue(category):
    post = reported_post(reports=[(category, "user_report")])
    assert post.queue_state == QueueState.UNFLAGGED and post.flag_count == 0
    assert not in_checkers_queue(post)
    assert in_reports_queue(post)
    [flag] = post.flags.all()
    assert (flag.category, flag.status, flag.outcome) == (category, ReportStatus.OPEN, "")


def test_a_misinformation_flag_goes_to_the_fact_checkers_queue_only():
    post = reported_post(reports=[("misinformation", "user_report")])
    assert post.queue_state == QueueState.QUEUED and post.flag_count == 1
    assert in_checkers_queue(post) and not in_reports_queue(post)
    assert not ReportedPost.objects.filter(post=post).exists()


def test_a_post_with_both_kinds_is_in_both_queues_and_counts_only_misinformation_for_the_fact_checkers():
    post = reported_post(reports=[("misinformation", "user_report"), ("hate", "trusted_flagger"),
                                  ("violence", "user_report")])
    assert in_checkers_queue(post) and in_reports_queue(post)
    assert post.flag_count == 1  # the queue's figures count the flags for review only
    row = ReportedPost.objects.get(post=post)
    assert (row.open_reports, row.trusted, row.severity) == (2, True, 2)


def test_a_report_of_harm_arriving_later_does_not_take_a_queued_post_out_of_the_fact_checkers_queue():
    post = reported_post(reports=[("misinformation", "classifier")])
    reported_post(post=post, reports=[("harassment", "user_report")])
    post.refresh_from_db()
    assert post.queue_state == QueueState.QUEUED and in_reports_queue(post)


def test_sending_reports_to_fact_checkers_puts_the_post_in_their_queue_as_misinformation(ts_user):
    post = reported_post(reports=[("imminent_harm", "user_report"), ("imminent_harm", "partner")])
    claim_report(staff=ts_user, post_id=post.pk)
    decide_report(staff=ts_user, post_id=post.pk, outcome=ReportOutcome.SENT_TO_FACT_CHECKERS, reason="")
    post.refresh_from_db()
    assert post.queue_state == QueueState.QUEUED and post.flag_count == 2 and post.first_flagged_at is not None
    assert in_checkers_queue(post) and not in_reports_queue(post)
    assert set(post.flags.values_list("status", "outcome")) == {(ReportStatus.DECIDED,
                                                                 ReportOutcome.SENT_TO_FACT_CHECKERS)}
    # Rated by fact-checkers later, the reporters' answer stays what staff decided.
    rating = record_rating(reviewer=FactCheckerFactory(), post_id=post.pk, verdict="false", rationale="No.",
                           sources=["https://source.example"], claim_if_unclaimed=True)
    assert rating.post_id == post.pk
    assert set(post.flags.values_list("outcome", flat=True)) == {ReportOutcome.SENT_TO_FACT_CHECKERS}


def test_a_removal_takes_a_claimed_post_out_of_the_fact_checkers_hands_and_a_restore_puts_it_back():
    reviewer, staff = FactCheckerFactory(), StaffFactory()
    post = reported_post(reports=[("misinformation", "user_report"), ("violence", "user_report")])
    claim = claim_post(reviewer=reviewer, post_id=post.pk)

    removal = remove_post(staff=staff, post_id=post.pk, ground="violence", reason="Calls for an attack.")

    post.refresh_from_db()
    assert post.queue_state == QueueState.REMOVED and not in_checkers_queue(post)
    claim.refresh_from_db()
    assert (claim.status, claim.ended_at is not None) == (ClaimStatus.RELEASED, True)
    assert AuditEvent.objects.filter(verb=AuditVerb.CLAIM_RELEASED, target_id=str(claim.pk), actor=staff,
                                     reason="the post was removed by trust and safety").exists()
    # Every open flag, whatever it reported, is answered by the removal.
    assert set(post.flags.values_list("status", "outcome")) == {(ReportStatus.DECIDED, ReportOutcome.REMOVED)}
    assert not in_reports_queue(post)
    with pytest.raises(PostRemoved):
        claim_post(reviewer=FactCheckerFactory(), post_id=post.pk)
    with pytest.raises(PostRemoved):
        record_rating(reviewer=reviewer, post_id=post.pk, verdict="false", rationale="No.",
                      sources=["https://source.example"], claim_if_unclaimed=True)
    assert not Claim.objects.filter(post=post, status=ClaimStatus.ACTIVE).exists()

    lift_action(actor=staff, action_id=removal.pk, reason="A news report of an attack, not a call for one.")
    post.refresh_from_db()
    assert post.queue_state == QueueState.QUEUED and in_checkers_queue(post)
    assert claim_post(reviewer=reviewer, post_id=post.pk).status == ClaimStatus.ACTIVE


def test_a_removed_post_with_only_reports_of_harm_goes_back_unflagged_when_restored():
    staff = StaffFactory()
    post = reported_post(reports=[("hate", "user_report")])
    removal = remove_post(staff=staff, post_id=post.pk, ground="hate", reason="A slur.")
    assert Post.objects.get(pk=post.pk).queue_state == QueueState.REMOVED
    lift_action(actor=staff, action_id=removal.pk, reason="Quoted to condemn it.")
    assert Post.objects.get(pk=post.pk).queue_state == QueueState.UNFLAGGED


def test_flags_arriving_on_a_removed_post_never_queue_it_and_are_answered_at_once():
    staff = StaffFactory()
    post = reported_post(reports=[("misinformation", "user_report")])
    remove_post(staff=staff, post_id=post.pk, ground="imminent_harm_misinformation", reason="Drink bleach.")
    reported_post(post=post, reports=[("misinformation", "classifier"), ("violence", "user_report")])
    post.refresh_from_db()
    assert post.queue_state == QueueState.REMOVED and not in_checkers_queue(post) and not in_reports_queue(post)
    assert set(post.flags.values_list("status", "outcome")) == {(ReportStatus.DECIDED, ReportOutcome.REMOVED)}


def test_a_rated_post_that_is_removed_keeps_its_rating_but_cannot_be_rated_again():
    reviewer = FactCheckerFactory()
    post = reported_post(reports=[("misinformation", "user_report")])
    record_rating(reviewer=reviewer, post_id=post.pk, verdict="false", rationale="No.",
                  sources=["https://source.example"], claim_if_unclaimed=True)
    from moderation.enforcement import apply_rating  # the job after commit

    apply_rating(rating_id=post.ratings.get().pk)
    remove_post(staff=StaffFactory(), post_id=post.pk, ground="imminent_harm_misinformation", reason="Poison.")
    post.refresh_from_db()
    assert post.queue_state == QueueState.RATED and active_removal(post) is not None
    with pytest.raises(PostRemoved):
        record_rating(reviewer=reviewer, post_id=post.pk, verdict="partly_false", rationale="Changed.",
                      sources=["https://source.example"], change_reason="New evidence.")


def test_rating_a_removed_post_through_the_api_is_refused_409_post_removed(factchecker):
    post = reported_post(reports=[("misinformation", "user_report")])
    claim_post(reviewer=factchecker, post_id=post.pk)
    remove_post(staff=StaffFactory(), post_id=post.pk, ground="hate", reason="A slur.")
    response = bearer_client(factchecker).post(
        f"/api/v1/posts/{post.external_id}/ratings",
        {"verdict": "false", "rationale": "Invented.", "sources": ["https://source.example/a"]},
        content_type="application/json",
    )
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "post_removed"
    assert not post.ratings.exists()


def test_claiming_and_rating_a_removed_post_in_the_browser_say_so_plainly(client, factchecker):
    post = reported_post(reports=[("misinformation", "user_report")])
    remove_post(staff=StaffFactory(), post_id=post.pk, ground="violence", reason="A threat.")
    client.force_login(factchecker)
    response = client.post(f"/queue/posts/{post.pk}/claim/", follow=True)
    assert "Trust and safety removed this post" in response.content.decode()
    page = client.get(f"/queue/posts/{post.pk}/").content.decode()
    assert "Trust and safety removed this post" in page
    assert 'name="verdict"' not in page  # no rating form is offered
    response = client.post(f"/queue/posts/{post.pk}/", {"verdict": "false", "rationale": "No.",
                                                         "sources": "https://source.example"}, follow=True)
    assert "Trust and safety removed this post" in response.content.decode()
    assert not post.ratings.exists()


def test_a_rating_answers_the_posts_open_misinformation_flags_with_rated():
    post = reported_post(reports=[("misinformation", "user_report"), ("misinformation", "partner"),
                                  ("harassment", "user_report")])
    rating = record_rating(reviewer=FactCheckerFactory(), post_id=post.pk, verdict="true", rationale="Accurate.",
                           sources=["https://source.example"], claim_if_unclaimed=True)
    from moderation.enforcement import apply_rating

    apply_rating(rating_id=rating.pk, now=timezone.now())
    outcomes = dict(post.flags.values_list("category", "outcome").order_by("category"))
    assert outcomes == {"misinformation": ReportOutcome.RATED, "harassment": ""}  # harm waits for staff
    # A misinformation flag on a post that is rated already is answered the moment it arrives.
    reported_post(post=post, reports=[("misinformation", "classifier")])
    latest = post.flags.order_by("-id").first()
    assert (latest.status, latest.outcome) == (ReportStatus.DECIDED, ReportOutcome.RATED)


def test_a_post_removed_on_a_politicians_page_stays_out_of_the_queue_when_the_page_is_unmarked():
    staff = StaffFactory()
    post = reported_post(reports=[("misinformation", "user_report")])
    set_politician(staff=staff, page_id=post.page_id, is_politician=True, reason="An MP's page.")
    removal = remove_post(staff=staff, post_id=post.pk, ground="violence", reason="A threat.")
    assert Post.objects.get(pk=post.pk).queue_state == QueueState.NOT_ELIGIBLE  # it kept its state
    set_politician(staff=staff, page_id=post.page_id, is_politician=False, reason="Not an MP after all.")
    post.refresh_from_db()
    assert post.queue_state == QueueState.REMOVED and not in_checkers_queue(post)
    with pytest.raises(PostRemoved):
        claim_post(reviewer=FactCheckerFactory(), post_id=post.pk)
    lift_action(actor=staff, action_id=removal.pk, reason="A quote, not a threat.")
    assert Post.objects.get(pk=post.pk).queue_state == QueueState.QUEUED


def grouped_pair() -> tuple[Post, Post]:
    """A claim's first post and a copy waiting with it, both flagged for fact-checkers."""
    root = reported_post(reports=[("misinformation", "user_report")])
    copy = reported_post(reports=[("misinformation", "user_report")])
    Post.objects.filter(pk=copy.pk).update(duplicate_of=root, queue_state=QueueState.GROUPED)
    return root, Post.objects.get(pk=copy.pk)


def test_a_removed_grouped_copy_whose_first_post_is_released_stays_out_of_the_queue():
    staff = StaffFactory()
    root, copy = grouped_pair()
    remove_post(staff=staff, post_id=copy.pk, ground="violence", reason="A threat.")
    assert Post.objects.get(pk=copy.pk).queue_state == QueueState.GROUPED
    with pytest.raises(PostRemoved):  # refused as removed, whatever state it kept
        claim_post(reviewer=FactCheckerFactory(), post_id=copy.pk)
    remove_post(staff=staff, post_id=root.pk, ground="violence", reason="A threat.")  # releases its group
    copy.refresh_from_db()
    assert (copy.queue_state, copy.duplicate_of_id) == (QueueState.REMOVED, None) and not in_checkers_queue(copy)
    with pytest.raises(PostRemoved):
        claim_post(reviewer=FactCheckerFactory(), post_id=copy.pk)


def test_a_removed_grouped_copy_takes_no_rating_from_its_first_post_until_the_removal_is_lifted():
    staff = StaffFactory()
    root, copy = grouped_pair()
    removal = remove_post(staff=staff, post_id=copy.pk, ground="hate", reason="A slur.")
    record_rating(reviewer=FactCheckerFactory(), post_id=root.pk, verdict="false", rationale="No.",
                  sources=["https://source.example"], claim_if_unclaimed=True)
    assert Post.objects.get(pk=copy.pk).queue_state == QueueState.GROUPED
    lift_action(actor=staff, action_id=removal.pk, reason="Quoted to condemn it.")
    assert regroup_rated().count == 1
    assert Post.objects.get(pk=copy.pk).queue_state == QueueState.MATCHED


def test_a_report_of_harm_on_a_rated_post_that_was_removed_is_answered_by_the_removal():
    post = reported_post(reports=[("misinformation", "user_report")])
    record_rating(reviewer=FactCheckerFactory(), post_id=post.pk, verdict="false", rationale="No.",
                  sources=["https://source.example"], claim_if_unclaimed=True)
    remove_post(staff=StaffFactory(), post_id=post.pk, ground="violence", reason="A threat.")
    assert Post.objects.get(pk=post.pk).queue_state == QueueState.RATED
    reported_post(post=post, reports=[("violence", "user_report")])
    latest = post.flags.order_by("-id").first()
    assert (latest.status, latest.outcome) == (ReportStatus.DECIDED, ReportOutcome.REMOVED)
    assert not in_reports_queue(post)


def test_a_new_report_refreshes_the_rows_reach_velocity_with_the_reach_it_brings():
    post = reported_post(reports=[("violence", "user_report")], views=100, shares=0)
    before = ReportedPost.objects.get(post=post).velocity
    post.views = 1_000_000  # the platform sends the post's reach now with the next report
    reported_post(post=post, reports=[("violence", "classifier")])
    assert Post.objects.get(pk=post.pk).views == 1_000_000
    assert ReportedPost.objects.get(post=post).velocity > before * 1000
