"""Every caller of the one consequence pipeline (moderation.pipeline.carry_out), and everything each one does.

For each caller the test states the complete outcome exactly: the post's actions, the page's
strikes and standing, the post's distribution, the feed entries appended, the statements of
reasons stored, the audit verbs written for the post and the owner's notices. A `Watch` taken
just before the call sees only the rows that call appended.
"""

from __future__ import annotations

from collections import Counter

import pytest

from factcheck.models import Post, QueueState, Verdict
from moderation.appeals import decide_appeal, file_appeal
from moderation.enforcement import apply_rating
from moderation.models import (
    Action,
    ActionKind,
    DecisionOutcome,
    DistributionChange,
    EndReason,
    Notification,
    NotificationKind,
    PostDistribution,
    RatingDecision,
    StatementOfReasons,
    StrikeKind,
)
from moderation.models.appeals import FILING_WINDOW
from moderation.staff_actions import lift_action, override_action, remove_post
from moderation.statements.reasons import CATEGORY_BY_GROUND, appeal_deadline, appeal_steps
from moderation.statements.transparency import (
    CATEGORY_CIVIC_DISCOURSE,
    VISIBILITY_DEMOTED,
    VISIBILITY_LABELLED,
    VISIBILITY_REMOVED,
)
from tests.factories import (
    DecisionFactory,
    RatingFactory,
)
from tests.moderation.pipeline.watch import (
    ACTIVE,
    FALSE_LABEL,
    PARTLY_LABEL,
    D,
    V,
    Watch,
    actions_of,
    check_statement,
    distribution_of,
    notices_of,
    standing_of,
    strikes_of,
    the_action,
)

pytestmark = pytest.mark.django_db


def test_a_false_rating_on_a_fresh_post(factchecker, owner, post):
    rating = RatingFactory(reviewer=factchecker, post=post, verdict=Verdict.FALSE, rationale="The quote is invented.")
    watch = Watch()
    decision = apply_rating(rating_id=rating.pk)

    action = the_action(post)
    assert actions_of(post) == [(ActionKind.FACT_CHECK, D("0.2"), FALSE_LABEL, ACTIVE)]
    assert (action.rating_id, action.verdict, action.warn_sharers, action.created_by) == (
        rating.pk, "false", True, None
    )
    assert strikes_of(post.page) == [(action.pk, StrikeKind.FACT_CHECK, True)]
    assert standing_of(post.page) == (1, False, D("1"))
    assert distribution_of(post) == (D("0.2"), [FALSE_LABEL], False)
    assert watch.feed() == [(post.pk, D("0.2"), [FALSE_LABEL], False, "rated False")]
    assert DistributionChange.objects.get(post=post).warn_sharers is True
    [sor] = watch.statements()
    check_statement(sor, action, visibility=[VISIBILITY_DEMOTED, VISIBILITY_LABELLED],
                    category=CATEGORY_CIVIC_DISCOURSE)
    assert watch.verbs(post) == Counter({V.DECISION_APPLIED: 1, V.ACTION_CREATED: 1, V.STRIKE_CREATED: 1})
    assert notices_of(watch) == [(owner.pk, NotificationKind.DECISION, f"Your post {post.external_id} was rated False")]
    body = watch.notices()[0].body
    assert appeal_steps(sor) in body and appeal_deadline(sor.appeal_by) in body and sor.what in body
    assert sor.how_to_appeal == f"{appeal_steps(sor)} {appeal_deadline(sor.appeal_by)}"
    assert [(d.rating_id, d.post_id, d.outcome, d.action_id) for d in watch.decisions()] == [
        (rating.pk, post.pk, DecisionOutcome.APPLIED, action.pk)
    ]
    assert decision == watch.decisions()[0]


def test_a_rerating_by_the_same_organisation_from_false_to_partly_false(factchecker, colleague, owner, post):
    first = DecisionFactory(reviewer=factchecker, post=post, verdict=Verdict.FALSE).rating
    old = the_action(post)
    second = RatingFactory(reviewer=colleague, post=post, verdict=Verdict.PARTLY_FALSE,
                           change_reason="A second source confirms part of it.")
    watch = Watch()
    apply_rating(rating_id=second.pk)

    new = the_action(post, rating=second)
    assert actions_of(post) == [
        (ActionKind.FACT_CHECK, D("0.2"), FALSE_LABEL, EndReason.SUPERSEDED),
        (ActionKind.FACT_CHECK, D("0.5"), PARTLY_LABEL, ACTIVE),
    ]
    first.refresh_from_db()
    assert not first.is_current and first.superseded_by_id == second.pk
    assert strikes_of(post.page) == [(old.pk, StrikeKind.FACT_CHECK, False)]  # partly false gives none
    assert standing_of(post.page) == (0, False, D("1"))
    assert distribution_of(post) == (D("0.5"), [PARTLY_LABEL], False)
    assert watch.feed() == [(post.pk, D("0.5"), [PARTLY_LABEL], False, "rated Partly false")]
    [sor] = watch.statements()
    check_statement(sor, new, visibility=[VISIBILITY_DEMOTED, VISIBILITY_LABELLED], category=CATEGORY_CIVIC_DISCOURSE)
    assert StatementOfReasons.objects.filter(action=old).count() == 1  # the first one's stays
    assert watch.verbs(post) == Counter({
        V.ACTION_ENDED: 1, V.STRIKE_ENDED: 1, V.DECISION_APPLIED: 1, V.ACTION_CREATED: 1,
    })
    assert notices_of(watch) == [
        (owner.pk, NotificationKind.DECISION,
         f"The rating of your post {post.external_id} was changed from False to Partly false")
    ]


def test_a_true_rating_lifts_the_earlier_false(factchecker, post):
    DecisionFactory(reviewer=factchecker, post=post, verdict=Verdict.FALSE)
    old = the_action(post)
    true = RatingFactory(reviewer=factchecker, post=post, verdict=Verdict.TRUE,
                         change_reason="The full video shows it was said.")
    watch = Watch()
    apply_rating(rating_id=true.pk)

    assert actions_of(post) == [(ActionKind.FACT_CHECK, D("0.2"), FALSE_LABEL, EndReason.SUPERSEDED)]
    assert strikes_of(post.page) == [(old.pk, StrikeKind.FACT_CHECK, False)]
    assert standing_of(post.page) == (0, False, D("1"))
    assert distribution_of(post) == (D("1"), [], False)
    assert watch.feed() == [(post.pk, D("1"), [], False, "rated True")]
    assert watch.statements() == []  # nothing restricts the post any more
    assert watch.verbs(post) == Counter({V.ACTION_ENDED: 1, V.STRIKE_ENDED: 1, V.DECISION_APPLIED: 1})
    assert [(d.rating_id, d.outcome, d.action_id) for d in watch.decisions()] == [
        (true.pk, DecisionOutcome.APPLIED, None)
    ]
    # The owner's notice: see test_the_owner_is_told_when_a_true_rating_lifts_the_earlier_false.


@pytest.mark.parametrize("verdict", [Verdict.TRUE, Verdict.NOT_ELIGIBLE])
def test_the_owner_is_told_when_a_true_rating_lifts_the_earlier_false(factchecker, owner, post, verdict):
    DecisionFactory(reviewer=factchecker, post=post, verdict=Verdict.FALSE)
    lifting = RatingFactory(reviewer=factchecker, post=post, verdict=verdict,
                            change_reason="The full video shows it was said.")
    watch = Watch()
    apply_rating(rating_id=lifting.pk)
    assert actions_of(post) == [(ActionKind.FACT_CHECK, D("0.2"), FALSE_LABEL, EndReason.SUPERSEDED)]
    assert distribution_of(post) == (D("1"), [], False)
    notices = notices_of(watch)
    assert [(user_id, kind) for user_id, kind, _ in notices] == [(owner.pk, NotificationKind.DECISION)]
    body = Notification.objects.get(user=owner, post=post, subject=notices[0][2]).body
    # Lifted from the post; not "shown normally again", which a repeat offender's page is not (its x0.5 stays).
    assert "demotion and label are lifted from your post" in body and "normally" not in body


def test_a_fresh_true_rating_changes_nothing_and_tells_nobody(factchecker, post):
    rating = RatingFactory(reviewer=factchecker, post=post, verdict=Verdict.TRUE)
    watch = Watch()
    apply_rating(rating_id=rating.pk)
    assert actions_of(post) == [] and strikes_of(post.page) == []
    assert standing_of(post.page) == (0, False, D("1"))
    assert not PostDistribution.objects.filter(post=post).exists() and watch.feed() == []
    assert watch.statements() == [] and watch.notices() == []
    assert watch.verbs(post) == Counter({V.DECISION_APPLIED: 1})


def test_a_dispute_reversed_on_appeal(factchecker, colleague, owner, post):
    original = DecisionFactory(reviewer=factchecker, post=post, verdict=Verdict.FALSE).rating
    old = the_action(post)
    appeal = file_appeal(owner=owner, post_id=post.pk, kind="dispute", statement="The quote is real.",
                         evidence_urls=["https://video.example/full"])
    watch = Watch()
    decided = decide_appeal(appeal_id=appeal.pk, reviewer=colleague, outcome="reversed",
                            public_rationale="New evidence.", new_verdict="true", reason="The video is authentic.")

    new_rating = decided.new_rating
    assert (new_rating.verdict, new_rating.reviewer_id, new_rating.is_current) == ("true", colleague.pk, True)
    original.refresh_from_db()
    assert not original.is_current and original.superseded_by_id == new_rating.pk
    assert actions_of(post) == [(ActionKind.FACT_CHECK, D("0.2"), FALSE_LABEL, EndReason.REVERSED)]
    assert Action.objects.get(pk=old.pk).ended_by_id is None  # the enforcement policy ended it, for the new rating
    assert strikes_of(post.page) == [(old.pk, StrikeKind.FACT_CHECK, False)]
    assert standing_of(post.page) == (0, False, D("1"))
    assert distribution_of(post) == (D("1"), [], False)
    assert watch.feed() == [(post.pk, D("1"), [], False, "rated True")]
    assert watch.statements() == []
    assert watch.verbs(post) == Counter({
        V.APPEAL_CHANGED: 1, V.RATING_SUPERSEDED: 1, V.RATING_RECORDED: 1,
        V.ACTION_ENDED: 1, V.STRIKE_ENDED: 1, V.DECISION_APPLIED: 1,
    })
    assert [(d.rating_id, d.outcome, d.action_id) for d in watch.decisions()] == [
        (new_rating.pk, DecisionOutcome.APPLIED, None)
    ]
    # One notice, "appeal decided", linked to the appeal; not a "rated" notice as well.
    assert notices_of(watch) == [
        (owner.pk, NotificationKind.APPEAL_DECIDED,
         f"Your appeal on post {post.external_id} was accepted: the rating was changed from False to True")
    ]
    notice = watch.notices()[0]
    assert notice.appeal_id == appeal.pk and notice.post_id == post.pk
    assert "The rating was changed from False to True" in notice.body and "The video is authentic." in notice.body


def test_a_correction_accepted_with_a_new_verdict(factchecker, colleague, owner, post):
    DecisionFactory(reviewer=factchecker, post=post, verdict=Verdict.FALSE)
    old = the_action(post)
    appeal = file_appeal(owner=owner, post_id=post.pk, kind="correction", statement="Fixed the figure.",
                         correction_details="Second paragraph now says 12%, not 40%.")
    watch = Watch()
    decided = decide_appeal(appeal_id=appeal.pk, reviewer=colleague, outcome="reversed", reason="Corrected.",
                            public_rationale="The corrected post gives 12%; one figure is still wrong.",
                            new_verdict=Verdict.PARTLY_FALSE)

    new = the_action(post, rating=decided.new_rating)
    assert decided.new_rating.verdict == "partly_false"
    assert actions_of(post) == [
        (ActionKind.FACT_CHECK, D("0.2"), FALSE_LABEL, EndReason.REVERSED),
        (ActionKind.FACT_CHECK, D("0.5"), PARTLY_LABEL, ACTIVE),
    ]
    assert strikes_of(post.page) == [(old.pk, StrikeKind.FACT_CHECK, False)]
    assert standing_of(post.page) == (0, False, D("1"))
    assert distribution_of(post) == (D("0.5"), [PARTLY_LABEL], False)
    assert watch.feed() == [(post.pk, D("0.5"), [PARTLY_LABEL], False, "rated Partly false")]
    [sor] = watch.statements()
    check_statement(sor, new, visibility=[VISIBILITY_DEMOTED, VISIBILITY_LABELLED], category=CATEGORY_CIVIC_DISCOURSE)
    # Issue 29: the facts relied on are the new rating's public rationale, not the note to the owner.
    assert "The corrected post gives 12%; one figure is still wrong." in sor.facts and "Corrected." not in sor.facts
    assert watch.verbs(post) == Counter({
        V.APPEAL_CHANGED: 1, V.RATING_SUPERSEDED: 1, V.RATING_RECORDED: 1,
        V.ACTION_ENDED: 1, V.STRIKE_ENDED: 1, V.DECISION_APPLIED: 1, V.ACTION_CREATED: 1,
    })
    assert notices_of(watch) == [
        (owner.pk, NotificationKind.APPEAL_DECIDED,
         f"Your appeal on post {post.external_id} was accepted: the rating was changed from False to Partly false")
    ]
    assert "The rating was changed from False to Partly false" in watch.notices()[0].body


def test_a_removal(staff, owner, post):
    watch = Watch()
    removal = remove_post(staff=staff, post_id=post.pk, ground="harassment", reason="Targets a private person.")

    assert actions_of(post) == [(ActionKind.REMOVAL, D("0"), "", ACTIVE)]
    assert (removal.ground, removal.created_by_id, removal.rating_id) == ("harassment", staff.pk, None)
    assert strikes_of(post.page) == [(removal.pk, StrikeKind.COMMUNITY_STANDARDS, True)]
    assert standing_of(post.page) == (0, False, D("1"))  # community-standards strikes are counted apart
    assert distribution_of(post) == (D("0"), [], True)
    assert watch.feed() == [(post.pk, D("0"), [], True, "removed (Harassment)")]
    [sor] = watch.statements()
    check_statement(sor, removal, visibility=[VISIBILITY_REMOVED], category=CATEGORY_BY_GROUND["harassment"])
    assert sor.transparency["category"] == "STATEMENT_CATEGORY_CYBER_VIOLENCE"
    assert sor.transparency["decision_facts"] == "Targets a private person."
    # The post leaves the fact-checkers' queue (post.routed): it is never claimed or rated while removed.
    assert watch.verbs(post) == Counter({V.ACTION_CREATED: 1, V.STRIKE_CREATED: 1, V.POST_ROUTED: 1})
    assert Post.objects.get(pk=post.pk).queue_state == QueueState.REMOVED
    assert notices_of(watch) == [(owner.pk, NotificationKind.DECISION, f"Your post {post.external_id} was removed")]
    assert watch.decisions() == []


def test_a_restore_lifts_the_removal(staff, owner, post):
    removal = remove_post(staff=staff, post_id=post.pk, ground="violence", reason="Calls for an attack.")
    watch = Watch()
    lift_action(actor=staff, action_id=removal.pk, reason="It is a news report.")

    assert actions_of(post) == [(ActionKind.REMOVAL, D("0"), "", EndReason.LIFTED)]
    assert Action.objects.get(pk=removal.pk).ended_by_id == staff.pk
    assert strikes_of(post.page) == [(removal.pk, StrikeKind.COMMUNITY_STANDARDS, False)]
    assert standing_of(post.page) == (0, False, D("1"))
    assert distribution_of(post) == (D("1"), [], False)
    assert watch.feed() == [(post.pk, D("1"), [], False, "removal lifted")]
    assert watch.statements() == []
    assert StatementOfReasons.objects.filter(action=removal).count() == 1
    # Back in the fact-checkers' queue, as its flags say (post.routed).
    assert watch.verbs(post) == Counter({V.ACTION_ENDED: 1, V.STRIKE_ENDED: 1, V.POST_ROUTED: 1})
    assert Post.objects.get(pk=post.pk).queue_state == QueueState.QUEUED
    assert notices_of(watch) == [(owner.pk, NotificationKind.DECISION, f"Your post {post.external_id} was restored")]
    assert "It is a news report." in watch.notices()[0].body


def test_a_restore_of_a_rated_post_returns_it_to_its_fact_check_distribution(factchecker, staff, owner, post):
    DecisionFactory(reviewer=factchecker, post=post, verdict=Verdict.FALSE)
    fact_check = the_action(post)
    removal = remove_post(staff=staff, post_id=post.pk, ground="imminent_harm_misinformation",
                          reason="Tells people to drink bleach.")
    assert distribution_of(post) == (D("0"), [FALSE_LABEL], True)
    watch = Watch()
    lift_action(actor=staff, action_id=removal.pk, reason="The page deleted the instructions.")

    assert actions_of(post) == [
        (ActionKind.FACT_CHECK, D("0.2"), FALSE_LABEL, ACTIVE),
        (ActionKind.REMOVAL, D("0"), "", EndReason.LIFTED),
    ]
    assert strikes_of(post.page) == [
        (fact_check.pk, StrikeKind.FACT_CHECK, True), (removal.pk, StrikeKind.COMMUNITY_STANDARDS, False),
    ]
    assert standing_of(post.page) == (1, False, D("1"))
    assert distribution_of(post) == (D("0.2"), [FALSE_LABEL], False)
    assert watch.feed() == [(post.pk, D("0.2"), [FALSE_LABEL], False, "removal lifted")]
    assert watch.statements() == []
    assert watch.verbs(post) == Counter({V.ACTION_ENDED: 1, V.STRIKE_ENDED: 1})
    assert notices_of(watch) == [(owner.pk, NotificationKind.DECISION, f"Your post {post.external_id} was restored")]
    assert StatementOfReasons.objects.get(action=removal).transparency["category"] == (
        "STATEMENT_CATEGORY_RISK_FOR_PUBLIC_SECURITY"
    )


def test_a_removal_appeal_reversed_restores_with_one_notice(staff, other_staff, owner, post):
    removal = remove_post(staff=staff, post_id=post.pk, ground="hate", reason="Slurs.")
    appeal = file_appeal(owner=owner, post_id=post.pk, kind="removal", statement="It quotes the slur to condemn it.")
    watch = Watch()
    decide_appeal(appeal_id=appeal.pk, reviewer=other_staff, outcome="reversed", reason="Counter-speech.")

    assert actions_of(post) == [(ActionKind.REMOVAL, D("0"), "", EndReason.REVERSED)]
    assert Action.objects.get(pk=removal.pk).ended_by_id == other_staff.pk
    assert strikes_of(post.page) == [(removal.pk, StrikeKind.COMMUNITY_STANDARDS, False)]
    assert standing_of(post.page) == (0, False, D("1"))
    assert distribution_of(post) == (D("1"), [], False)
    assert watch.feed() == [(post.pk, D("1"), [], False, "removal reversed")]
    assert watch.statements() == []
    assert watch.verbs(post) == Counter({V.APPEAL_CHANGED: 1, V.ACTION_ENDED: 1, V.STRIKE_ENDED: 1, V.POST_ROUTED: 1})
    assert notices_of(watch) == [
        (owner.pk, NotificationKind.APPEAL_DECIDED,
         f"Your appeal on post {post.external_id} was accepted: the post is restored")
    ]
    assert "The removal was lifted: your post is shown again." in watch.notices()[0].body


def test_a_lift_of_a_fact_check_action(factchecker, staff, owner, post):
    rating = DecisionFactory(reviewer=factchecker, post=post, verdict=Verdict.FALSE).rating
    action = the_action(post)
    watch = Watch()
    lift_action(actor=staff, action_id=action.pk, reason="Published by a museum, as history.")

    assert actions_of(post) == [(ActionKind.FACT_CHECK, D("0.2"), FALSE_LABEL, EndReason.LIFTED)]
    assert Action.objects.get(pk=action.pk).ended_by_id == staff.pk
    assert strikes_of(post.page) == [(action.pk, StrikeKind.FACT_CHECK, False)]
    assert standing_of(post.page) == (0, False, D("1"))
    assert distribution_of(post) == (D("1"), [], False)
    assert watch.feed() == [(post.pk, D("1"), [], False, "fact-check lifted")]
    assert watch.statements() == []
    assert watch.verbs(post) == Counter({V.ACTION_ENDED: 1, V.STRIKE_ENDED: 1})
    assert notices_of(watch) == [(owner.pk, NotificationKind.DECISION, f"Your post {post.external_id} was cleared")]
    rating.refresh_from_db()
    assert rating.is_current  # the rating itself stands
    assert watch.decisions() == []


def test_an_override(factchecker, staff, owner, post):
    rating = DecisionFactory(reviewer=factchecker, post=post, verdict=Verdict.FALSE).rating
    original = the_action(post)
    decided_at = RatingDecision.objects.get(rating=rating, post=post).decided_at
    watch = Watch()
    override = override_action(staff=staff, action_id=original.pk, feed_multiplier="0.6", label="Disputed claim.",
                               reason="Satire account; demotion too harsh.")

    assert actions_of(post) == [
        (ActionKind.FACT_CHECK, D("0.2"), FALSE_LABEL, EndReason.OVERRIDDEN),
        (ActionKind.OVERRIDE, D("0.6"), "Disputed claim.", ACTIVE),
    ]
    assert (override.rating_id, override.verdict, override.created_by_id) == (rating.pk, "false", staff.pk)
    assert strikes_of(post.page) == [(original.pk, StrikeKind.FACT_CHECK, False)]  # the override strikes nothing
    assert standing_of(post.page) == (0, False, D("1"))
    assert distribution_of(post) == (D("0.6"), ["Disputed claim."], False)
    assert watch.feed() == [(post.pk, D("0.6"), ["Disputed claim."], False, "staff override")]
    [sor] = watch.statements()
    check_statement(sor, override, visibility=[VISIBILITY_DEMOTED, VISIBILITY_LABELLED],
                    category=CATEGORY_CIVIC_DISCOURSE)
    assert sor.transparency["decision_facts"] == "Satire account; demotion too harsh."
    assert "set by trust-and-safety staff" in sor.ground
    assert sor.appeal_by == decided_at + FILING_WINDOW  # appeals are against the rating: its decision opens the window
    assert watch.verbs(post) == Counter({V.ACTION_ENDED: 1, V.STRIKE_ENDED: 1, V.ACTION_CREATED: 1})
    assert notices_of(watch) == [
        (owner.pk, NotificationKind.DECISION, f"The distribution of your post {post.external_id} was changed")
    ]
