"""What owners and deciders read around a rating's effect that staff lifted, overrode or restored (a review of
'Restore the rating's effect' left these): an overridden copy's appeal, an appeal of a copy whose match was lifted
and restored, the dashboard's and transparency report's counts, and the appeal window a restore gives."""

from __future__ import annotations

import html
from datetime import timedelta

import pytest
from django.utils import timezone

from factcheck.matching.matcher import match_new_posts
from factcheck.models import Post, Rating
from moderation.appeals import AppealRefused, decide_appeal, file_appeal
from moderation.enforcement import apply_rating
from moderation.models import Action, ActionKind, Appeal, Notification, PostDistribution
from moderation.propagation import apply_matches
from moderation.staff_actions import lift_action, override_action, restore_rating_effect
from reports.dsa import report_lines
from reports.figures import Scope, figures_for
from reports.rollup import roll_up_days
from tests.conftest import bearer_client
from tests.factcheck.matching_helpers import EXACT_COPY, arrive, flag, matched_action
from tests.factcheck.matching_helpers import post as named
from tests.factories import DecisionFactory, FactCheckerFactory, PostFactory, UserFactory
from tests.scenarios import rated_claim, rated_post

pytestmark = pytest.mark.django_db

REASON = "I lifted the wrong copy: its match stands."
STATEMENT = "My post does not make this claim: it quotes it to say it is false."


@pytest.fixture
def owner(db):
    return UserFactory(username="olivia")


def copy_of_rated_claim(*, rater, owner, at=None) -> Post:
    """A claim rated False by `rater`, decided, and an exact copy of it on `owner`'s page, matched (a matched rating:
    ×0.2, labelled). `at`: when both were decided."""
    source = rated_claim(rater=rater)
    apply_rating(rating_id=Rating.objects.get(post=source, is_current=True).pk, **({"now": at} if at else {}))
    arrive(flag("copy", EXACT_COPY, page="page-b"))
    copy = named("copy")
    copy.page.owners.add(owner)
    match_new_posts(post_ids=[copy.pk])
    apply_matches(post_ids=[copy.pk], **({"now": at} if at else {}))
    assert matched_action(copy) is not None
    return copy


def portal(client, owner, post: Post) -> str:
    client.force_login(owner)
    response = client.get(f"/appeals/posts/{post.pk}/")
    assert response.status_code == 200
    return html.unescape(response.content.decode())


# --- 1. An overridden copy's appeal -------------------------------------------------------------------------------


def test_an_overridden_copy_that_is_still_demoted_can_be_disputed_in_the_portal_and_the_api(
        client, ts_user, factchecker, owner):
    copy = copy_of_rated_claim(rater=factchecker, owner=owner)
    override_action(staff=ts_user, action_id=matched_action(copy).pk, feed_multiplier="0.5", label="",
                    reason="Demotion too harsh for a quote.")

    page = portal(client, owner, copy)
    assert "File appeal" in page and 'value="dispute"' in page
    assert "This post has no current fact-check rating" not in page

    response = bearer_client(owner).post(f"/api/v1/posts/{copy.external_id}/appeals", {
        "kind": "dispute", "statement": STATEMENT}, content_type="application/json")
    assert response.status_code == 201, response.content
    appeal = Appeal.objects.get(pk=response.json()["id"])
    # Against the match, decided by the claim's organisation: accepting it unlinks the copy, override and all.
    assert appeal.action.kind == ActionKind.MATCHED_RATING and appeal.rating.post.external_id == "source"
    decide_appeal(appeal_id=appeal.pk, reviewer=FactCheckerFactory(organisation=factchecker.membership.organisation),
                  outcome="reversed", reason="Right: it quotes the claim to refute it.")
    assert not Action.objects.filter(post=copy, ended_at__isnull=True).exists()
    assert PostDistribution.objects.get(post=copy).labels == []


def test_an_overridden_copy_left_unrestricted_says_there_is_nothing_to_appeal_in_the_portal_and_the_api(
        client, ts_user, factchecker, owner):
    copy = copy_of_rated_claim(rater=factchecker, owner=owner)
    override_action(staff=ts_user, action_id=matched_action(copy).pk, feed_multiplier="1", label="",
                    reason="Not demoted while we check the match.")
    nothing = ("Trust and safety set aside the effect of the match: your post is not demoted or labelled for it "
               "now, so there is nothing to appeal.")

    page = portal(client, owner, copy)
    assert nothing in page
    assert "File appeal" not in page and "Nothing to appeal: this post has no current rating" not in page

    response = bearer_client(owner).post(f"/api/v1/posts/{copy.external_id}/appeals", {
        "kind": "dispute", "statement": STATEMENT}, content_type="application/json")
    assert response.status_code == 422
    assert response.json()["error"]["message"] == nothing


# --- 2. A copy's appeal filed before its match was lifted and restored ---------------------------------------------


def test_a_copy_s_open_appeal_names_the_match_in_force_after_a_lift_and_a_restore(client, ts_user, factchecker, owner):
    copy = copy_of_rated_claim(rater=factchecker, owner=owner)
    appeal = file_appeal(owner=owner, post_id=copy.pk, kind="dispute", statement=STATEMENT)
    lift_action(actor=ts_user, action_id=matched_action(copy).pk, reason="Lifted the wrong copy.")
    restored = restore_rating_effect(staff=ts_user, post_id=copy.pk, reason=REASON)

    appeal.refresh_from_db()
    assert appeal.action == restored  # the match in force, not the ended action
    # The owner reads that their appeal stands against the match as restored, and is not offered a second one.
    page = portal(client, owner, copy)
    assert 'id="rating-appeal-open"' in page and "File appeal" not in page
    assert "Trust and safety restored the match's effect" in page
    # The decider reads the same, on the appeal's page and its timeline.
    decider = FactCheckerFactory(organisation=factchecker.membership.organisation)
    client.force_login(decider)
    detail = html.unescape(client.get(f"/queue/appeals/{appeal.pk}/").content.decode())
    assert "Trust and safety restored the match's effect" in detail
    assert "this appeal is now against the match as restored" in detail
    assert "Matched rating action restored: distribution ×0.2" in detail


# --- 3. A restore is counted as a restoration, not as a new demotion --------------------------------------------


def test_a_restore_counts_as_a_restoration_not_a_new_demotion_on_the_dashboard_and_the_dsa_report(ts_user, factchecker):
    post = rated_post(rater=factchecker)
    lift_action(actor=ts_user, action_id=Action.objects.get(post=post).pk, reason="Lifted by mistake.")
    restore_rating_effect(staff=ts_user, post_id=post.pk, reason=REASON)
    today = timezone.now().date()

    roll_up_days(start=today, end=today)
    decisions = figures_for(Scope(organisation=None), start=today, end=today).days[0].decisions
    assert (decisions.get("demotion"), decisions.get("label"), decisions.get("restoration")) == (1, 1, 1)

    lines = {(line.section, line.item): line.count for line in report_lines(start=today, end=today)}
    assert lines[("actions_by_type", "demotion")] == 1
    assert lines[("actions_by_type", "restoration")] == 1
    assert lines[("actions", "total")] == 2  # each with its statement of reasons


# --- 4. The appeal window after a restore ----------------------------------------------------------------------


def test_a_restore_after_the_window_closed_gives_a_new_window_in_the_notice_the_portal_and_filing(
        client, ts_user, factchecker, owner):
    long_ago = timezone.now() - timedelta(days=200)
    copy = copy_of_rated_claim(rater=factchecker, owner=owner, at=long_ago)
    lift_action(actor=ts_user, action_id=matched_action(copy).pk, reason="Lifted the wrong copy.")

    restored = restore_rating_effect(staff=ts_user, post_id=copy.pk, reason=REASON)

    until = restored.statement.appeal_by.date()
    assert until > timezone.now().date()
    notice = Notification.objects.filter(user=owner, post=copy).latest("id")
    assert f"You can appeal until {until:%-d %b %Y}." in notice.body
    page = portal(client, owner, copy)
    assert "File appeal" in page and "window to appeal" not in page
    appeal = file_appeal(owner=owner, post_id=copy.pk, kind="dispute", statement=STATEMENT)
    assert appeal.decision_notice_at == restored.created_at


def test_a_post_s_own_rating_restored_after_its_window_closed_can_be_disputed_again(ts_user, factchecker, owner):
    post = PostFactory()
    post.page.owners.add(owner)
    long_ago = timezone.now() - timedelta(days=300)
    DecisionFactory(post=post, reviewer=factchecker, created_at=long_ago, decided_at=long_ago)
    lift_action(actor=ts_user, action_id=Action.objects.get(post=post).pk, reason="Lifted by mistake.")
    with pytest.raises(AppealRefused, match="The 6-month window to appeal this decision closed"):
        file_appeal(owner=owner, post_id=post.pk, kind="dispute", statement=STATEMENT)

    restored = restore_rating_effect(staff=ts_user, post_id=post.pk, reason=REASON)

    appeal = file_appeal(owner=owner, post_id=post.pk, kind="dispute", statement=STATEMENT)
    assert appeal.decision_notice_at == restored.created_at
    # A later override of the restored effect keeps the restore's window, as it keeps the rating's.
    override = override_action(staff=ts_user, action_id=restored.pk, feed_multiplier="0.5", label="",
                               reason="Demotion too harsh.")
    assert override.statement.appeal_by == restored.statement.appeal_by
