"""What owners are told when a rating is replaced: true and complete.

An appeal decided after the rating it was against was replaced (the post, or the claim it copies, re-rated, or the
rating reversed on another owner's appeal) does not say that rating "stands": its notice and the portal say it was
replaced, and what the post is rated now (nor is its decider told it stands); so does the portal when the rating
(or a removal) was replaced or lifted after the appeal was decided. A re-rating's and a reversal's notices name the
verdict replaced as well as the new one, for the post's own owners and for the owners of its copies.

The claim, its copies and the helpers are tests/moderation/test_propagation.py's.
"""

from __future__ import annotations

import re
from html import unescape

import pytest
from django.core import mail
from django.utils import timezone

from factcheck.members import organisation_of
from moderation.appeals import decide_appeal, file_appeal
from moderation.enforcement import apply_rating
from moderation.models import Action, Notification, NotificationKind
from moderation.notice_delivery import email_notices
from moderation.propagation import propagate_rating
from moderation.staff_actions import lift_action, remove_post
from tests import scenarios
from tests.factcheck.matching_helpers import post
from tests.factories import DecisionFactory, FactCheckerFactory, RatingFactory, StaffFactory, UserFactory
from tests.moderation.test_propagation import decided_claim_and_copies, dispute, owned

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner(db):
    return UserFactory()


@pytest.fixture
def colleague(factchecker):
    """Another member of the rating's organisation: may re-rate and decide appeals of the rater's rating."""
    return FactCheckerFactory(organisation=organisation_of(factchecker))


def emailed(user, kind: str):
    """The e-mail that carries the user's latest notice of this kind, as notice_delivery sends it."""
    notice = Notification.objects.filter(user=user, kind=kind).latest("id")
    # The user's earlier notices went out when they were made (their jobs do not run here): this one goes alone.
    Notification.objects.filter(user=user, id__lt=notice.id, emailed_at__isnull=True).update(emailed_at=timezone.now())
    email_notices(user_id=user.pk)
    notice.refresh_from_db()
    assert notice.emailed_at is not None and notice.email.notifications.count() == 1, "e-mailed alone, in full"
    return next(message for message in reversed(mail.outbox) if message.subject == f"[Factdesk] {notice.subject}")


def outcome_lines(client, target) -> list[str]:
    """The outcome lines of the appeals on the owner's page of the post, as text."""
    html = client.get(f"/appeals/posts/{target.pk}/").content.decode()
    lines = re.findall(r'<p class="small outcome">(.*?)</p>', html, re.S)
    return [" ".join(unescape(re.sub(r"<[^>]+>", "", line)).split()) for line in lines]


def re_rate_claim(source, *, reviewer, verdict: str):
    """The claim rated again, and the decisions its jobs would take (its own, its copies')."""
    rating = RatingFactory(reviewer=reviewer, post=source, verdict=verdict, rationale="Some of it holds.",
                           change_reason="New evidence.")
    apply_rating(rating_id=rating.pk)
    propagate_rating(rating_id=rating.pk)
    return rating


# An appeal decided after the rating it was against was replaced ------------------------------------------

def test_a_dispute_of_a_copy_not_accepted_after_the_claim_was_re_rated_says_the_rating_was_replaced(
    factchecker, colleague, owner, login
):
    source, _ = decided_claim_and_copies(factchecker)
    copy = owned(post("copy-1"), owner)
    appeal = dispute(owner, copy)
    re_rate_claim(source, reviewer=colleague, verdict="partly_false")

    decide_appeal(appeal_id=appeal.pk, reviewer=colleague, outcome="upheld", reason="It is the same claim.")

    message = emailed(owner, NotificationKind.APPEAL_DECIDED)
    assert message.subject == "[Factdesk] Your appeal on post copy-1 was not accepted"
    assert ("did not accept it. The rating it was against, False, has since been replaced: your post is now rated "
            "Partly false.") in message.body
    assert "stands" not in message.body
    [line] = outcome_lines(login(owner), copy)
    assert ("Your appeal was not accepted. The rating it was against, False, has since been replaced: your post is "
            "now rated Partly false.") in line
    assert "stands" not in line


def test_a_dispute_of_a_copy_not_accepted_after_the_claims_rating_was_reversed_on_another_appeal(
    factchecker, colleague, owner, login
):
    source, _ = decided_claim_and_copies(factchecker)
    claim_owner = UserFactory()
    owned(source, claim_owner)
    copy = owned(post("copy-1"), owner)
    of_the_copy, of_the_claim = dispute(owner, copy), dispute(claim_owner, source)
    reversed_ = decide_appeal(appeal_id=of_the_claim.pk, reviewer=colleague, outcome="reversed",
                              reason="The post quotes the study fairly.", public_rationale="The study exists.",
                              new_verdict="missing_context")
    propagate_rating(rating_id=reversed_.new_rating_id)

    decide_appeal(appeal_id=of_the_copy.pk, reviewer=colleague, outcome="upheld", reason="It is the same claim.")

    body = emailed(owner, NotificationKind.APPEAL_DECIDED).body
    assert ("The rating it was against, False, has since been replaced: your post is now rated Missing context."
            in body)
    assert "The rating False stands" not in body
    [line] = outcome_lines(login(owner), copy)
    assert "has since been replaced: your post is now rated Missing context." in line and "stands" not in line


def test_the_decider_is_not_told_a_replaced_rating_stands_either(factchecker, colleague, owner, login):
    source, _ = decided_claim_and_copies(factchecker)
    appeal = dispute(owner, owned(post("copy-1"), owner))
    re_rate_claim(source, reviewer=colleague, verdict="partly_false")

    response = login(colleague).post(f"/queue/appeals/{appeal.pk}/", {"outcome": "upheld",
                                                                       "reason": "It is the same claim."}, follow=True)

    said = " ".join(unescape(response.content.decode()).split())
    assert ("Appeal on post “copy-1” not accepted. The rating it was against, False, had been replaced meanwhile: the "
            "post is now rated Partly false. Its owner was told in the portal; the e-mail is pending.") in said
    assert "the decision stands" not in said


def test_the_portal_says_a_rating_kept_on_appeal_and_replaced_since_no_longer_stands(factchecker, colleague, owner,
                                                                                    login):
    appeal = scenarios.rated_post_with_open_dispute(owner=owner, rater=factchecker)
    decide_appeal(appeal_id=appeal.pk, reviewer=colleague, outcome="upheld", reason="The quote is invented.")
    client = login(owner)
    assert "Your appeal was not accepted: the rating stands." in outcome_lines(client, appeal.post)[0]

    DecisionFactory(post=appeal.post, reviewer=factchecker, verdict="partly_false", change_reason="New evidence.")

    [line] = outcome_lines(client, appeal.post)
    assert ("Your appeal was not accepted. The rating it was against, False, has since been replaced: your post is "
            "now rated Partly false. The quote is invented.") == line.split(": ", 1)[1]


def test_the_portal_says_a_removal_kept_on_appeal_and_lifted_since_no_longer_stands(owner, login):
    remover, decider = StaffFactory(), StaffFactory()
    removed = scenarios.removed_post(staff=remover)
    owned(removed, owner)
    appeal = file_appeal(owner=owner, post_id=removed.pk, kind="removal", statement="It was a quote.")
    decide_appeal(appeal_id=appeal.pk, reviewer=decider, outcome="upheld", reason="It targets a person.")
    client = login(owner)
    assert "Your appeal was not accepted: the removal stands." in outcome_lines(client, removed)[0]

    lift_action(actor=decider, action_id=Action.objects.get(post=removed).pk, reason="The person consented.")

    [line] = outcome_lines(client, removed)
    assert "Your appeal was not accepted. The removal has since been lifted: your post is restored." in line
    assert "stands" not in line

    # Removed again on another ground: the post is not restored, and the portal does not say it is.
    remove_post(staff=remover, post_id=removed.pk, ground="harassment", reason="It harasses a named person.")
    [line] = outcome_lines(client, removed)
    assert ("Your appeal was not accepted. The removal has since been lifted; your post was removed again later, "
            "by another decision.") in line
    assert "restored" not in line


# Re-rating and reversal notices name the verdict they replace --------------------------------------------

def test_a_re_rating_notice_names_the_verdict_it_replaces(factchecker, owner):
    rated = scenarios.rated_post(owner=owner, rater=factchecker)

    DecisionFactory(post=rated, reviewer=factchecker, verdict="partly_false", change_reason="New evidence.")

    message = emailed(owner, NotificationKind.DECISION)
    assert message.subject == f"[Factdesk] The rating of your post {rated.external_id} was changed from False to " \
                              "Partly false"
    assert (f"an independent fact-checker, changed the rating of your post {rated.external_id} on {rated.page.name} "
            "from False to Partly false.") in message.body

    DecisionFactory(post=rated, reviewer=factchecker, verdict="true", change_reason="The quote is on tape.")

    message = emailed(owner, NotificationKind.DECISION)
    assert message.subject == f"[Factdesk] The rating of your post {rated.external_id} was changed from Partly " \
                              "false to True"
    assert "from Partly false to True. The earlier fact-check's demotion and label are lifted" in message.body


def test_the_owner_of_a_copy_is_told_which_rating_of_the_claim_replaced_which(factchecker, colleague, owner):
    source, _ = decided_claim_and_copies(factchecker)
    owned(post("copy-1"), owner)

    re_rate_claim(source, reviewer=colleague, verdict="partly_false")

    message = emailed(owner, NotificationKind.DECISION)
    assert message.subject == "[Factdesk] The rating of your post copy-1 was changed from False to Partly false"
    assert ("changed the rating of the claim your post copy-1 on Page page-1 repeats from False to Partly false. "
            "Your post carries the claim's rating, so it is now rated Partly false too.") in message.body

    re_rate_claim(source, reviewer=colleague, verdict="true")

    message = emailed(owner, NotificationKind.DECISION)
    assert message.subject == "[Factdesk] The rating of your post copy-1 was changed from Partly false to True"
    assert "repeats from Partly false to True. The earlier fact-check's demotion and label are lifted" in message.body


def test_a_reversal_names_the_verdict_it_replaces_in_the_notice_the_portal_and_to_the_copies_owners(
    factchecker, colleague, owner, login
):
    source, _ = decided_claim_and_copies(factchecker)
    owned(source, owner)
    copy_owner = UserFactory()
    owned(post("copy-2"), copy_owner)
    appeal = dispute(owner, source)

    decided = decide_appeal(appeal_id=appeal.pk, reviewer=colleague, outcome="reversed",
                            reason="The post quotes the study fairly.", public_rationale="The study exists.",
                            new_verdict="missing_context")
    propagate_rating(rating_id=decided.new_rating_id)

    message = emailed(owner, NotificationKind.APPEAL_DECIDED)
    assert message.subject == ("[Factdesk] Your appeal on post source was accepted: the rating was changed from "
                               "False to Missing context")
    [line] = outcome_lines(login(owner), source)
    assert "Your appeal was accepted: the rating was changed from False to Missing context." in line
    to_the_copy = emailed(copy_owner, NotificationKind.DECISION)
    assert to_the_copy.subject == "[Factdesk] The rating of your post copy-2 was changed from False to Missing context"
