"""Every caller of the one consequence pipeline (moderation.pipeline.carry_out), and everything each one does.

For each caller the test states the complete outcome exactly: the post's actions, the page's
strikes and standing, the post's distribution, the feed entries appended, the statements of
reasons stored, the audit verbs written for the post and the owner's notices. A `Watch` taken
just before the call sees only the rows that call appended.
"""

from __future__ import annotations

import re
from collections import Counter
from datetime import timedelta
from decimal import Decimal

import django_rq
import pytest
from django.db.models import Max
from django.utils import timezone

from audit.models import AuditEvent, AuditVerb
from factcheck.members import create_user
from factcheck.models import Rating, Verdict
from factcheck.ratings import record_rating
from moderation import jobs
from moderation.appeals import decide_appeal, file_appeal
from moderation.enforcement import apply_rating, reconcile_decisions
from moderation.models import (
    Action,
    ActionKind,
    DecisionOutcome,
    DistributionChange,
    EndReason,
    Notification,
    NotificationKind,
    PageStanding,
    PostDistribution,
    RatingDecision,
    StatementOfReasons,
    Strike,
    StrikeKind,
)
from moderation.models.appeals import FILING_WINDOW
from moderation.reasons import CATEGORY_BY_GROUND, TAXONOMY_BY_GROUND, appeal_deadline, appeal_steps
from moderation.staff_actions import lift_action, override_action, remove_post
from moderation.transparency import (
    AUTOMATED_NOT,
    CATEGORY_CIVIC_DISCOURSE,
    KEYWORD_MISINFORMATION,
    MONETARY_SUSPENSION,
    VISIBILITY_DEMOTED,
    VISIBILITY_LABELLED,
    VISIBILITY_REMOVED,
)
from tests.factories import PASSWORD, FactCheckerFactory, PageFactory, PostFactory, StaffFactory, UserFactory

pytestmark = pytest.mark.django_db

D = Decimal
FALSE_LABEL = "False information. Checked by independent fact-checkers."
PARTLY_LABEL = "Partly false information."
ACTIVE = None  # the end reason of an action that has not ended

V = AuditVerb


# ---------------------------------------------------------------------------------------------
# What a call appended, and the state it left


def _max_id(model) -> int:
    return model.objects.aggregate(m=Max("id"))["m"] or 0


class Watch:
    """The rows appended after this point: audit events, feed entries, notifications, statements."""

    def __init__(self) -> None:
        self.audit = _max_id(AuditEvent)
        self.feed_id = _max_id(DistributionChange)
        self.notification = _max_id(Notification)
        self.statement = _max_id(StatementOfReasons)
        self.decision = _max_id(RatingDecision)

    def verbs(self, post) -> Counter:
        return Counter(AuditEvent.objects.filter(id__gt=self.audit, post_id=post.pk).values_list("verb", flat=True))

    def all_events(self):
        return AuditEvent.objects.filter(id__gt=self.audit).order_by("id")

    def feed(self, post=None) -> list[tuple]:
        rows = DistributionChange.objects.filter(id__gt=self.feed_id).order_by("id")
        if post is not None:
            rows = rows.filter(post=post)
        return [(row.post_id, row.multiplier, row.labels, row.removed, row.cause) for row in rows]

    def notices(self) -> list[Notification]:
        return list(Notification.objects.filter(id__gt=self.notification).order_by("id"))

    def statements(self) -> list[StatementOfReasons]:
        return list(StatementOfReasons.objects.filter(id__gt=self.statement).order_by("id"))

    def decisions(self) -> list[RatingDecision]:
        return list(RatingDecision.objects.filter(id__gt=self.decision).order_by("id"))

    def nothing_appended(self) -> bool:
        return (
            not self.all_events().exists() and not self.feed() and not self.notices() and not self.statements()
            and not self.decisions()
        )


def actions_of(post) -> list[tuple]:
    """(kind, multiplier, label, end reason or ACTIVE), oldest first; ended_at agrees with end_reason."""
    rows = []
    for action in Action.objects.filter(post=post).order_by("id"):
        assert (action.ended_at is None) == (action.end_reason == ""), action
        rows.append((action.kind, action.feed_multiplier, action.label, action.end_reason or ACTIVE))
    return rows


def strikes_of(page) -> list[tuple]:
    """(action id, kind, active), oldest first."""
    return [(s.action_id, s.kind, s.ended_at is None) for s in Strike.objects.filter(page=page).order_by("id")]


def standing_of(page) -> tuple:
    standing = PageStanding.objects.get(page=page)
    return standing.active_strikes, standing.is_repeat_offender, standing.page_multiplier


def distribution_of(post) -> tuple:
    row = PostDistribution.objects.get(post=post)
    return row.multiplier, row.labels, row.removed


def check_statement(sor: StatementOfReasons, action: Action, *, visibility: list[str], category: str,
                    monetary: bool = False) -> None:
    t = sor.transparency
    assert sor.action_id == action.pk
    assert sor.puid == action.puid == t["puid"]
    assert re.fullmatch(r"[a-zA-Z0-9_-]{1,500}", t["puid"])
    assert t["decision_visibility"] == visibility
    assert t["category"] == category
    if category == CATEGORY_CIVIC_DISCOURSE:
        assert t["category_specification"] == [KEYWORD_MISINFORMATION]
    else:  # a removal: the keywords of its ground, if any
        taxonomy = next(tax for tax in TAXONOMY_BY_GROUND.values() if tax["category"] == category)
        assert t.get("category_specification") == taxonomy.get("category_specification")
    assert t["automated_decision"] == AUTOMATED_NOT and sor.automated_decision is False
    assert t.get("decision_monetary") == (MONETARY_SUSPENSION if monetary else None)


def notices_of(watch: Watch) -> list[tuple]:
    return [(n.user_id, n.kind, n.subject) for n in watch.notices()]


# ---------------------------------------------------------------------------------------------
# People and posts


@pytest.fixture
def owner(db):
    return UserFactory(username="pipeline-owner")


@pytest.fixture
def page(owner):
    page = PageFactory(name="Pipeline Page")
    page.owners.add(owner)
    return page


@pytest.fixture
def post(page):
    return PostFactory(page=page)


@pytest.fixture
def colleague(factchecker):
    return FactCheckerFactory(organisation=factchecker.organisation)


@pytest.fixture
def staff(db):
    return create_user(username="pipeline-staff", role="trust_safety", password=PASSWORD)


@pytest.fixture
def other_staff(db):
    return StaffFactory(username="pipeline-other-staff")


def record(reviewer, post, verdict: str, *, rationale: str = "See the sources.", change_reason: str = "") -> Rating:
    return record_rating(
        reviewer=reviewer, post_id=post.pk, verdict=verdict, rationale=rationale,
        sources=["https://evidence.example/1"], claim_if_unclaimed=True, change_reason=change_reason,
    )


def rate(reviewer, post, verdict: str, **kw) -> Rating:
    rating = record(reviewer, post, verdict, **kw)
    apply_rating(rating_id=rating.pk)
    return rating


def the_action(post, **filters) -> Action:
    return Action.objects.get(post=post, **filters)


# ---------------------------------------------------------------------------------------------
# Callers, one by one


def test_a_false_rating_on_a_fresh_post(factchecker, owner, post):
    rating = record(factchecker, post, Verdict.FALSE, rationale="The quote is invented.")
    watch = Watch()
    decision = apply_rating(rating_id=rating.pk)

    action = the_action(post)
    assert actions_of(post) == [(ActionKind.FACT_CHECK, D("0.2"), FALSE_LABEL, ACTIVE)]
    assert (action.rating_id, action.verdict, action.warn_sharers, action.created_by) == (rating.pk, "false", True, None)
    assert strikes_of(post.page) == [(action.pk, StrikeKind.FACT_CHECK, True)]
    assert standing_of(post.page) == (1, False, D("1"))
    assert distribution_of(post) == (D("0.2"), [FALSE_LABEL], False)
    assert watch.feed() == [(post.pk, D("0.2"), [FALSE_LABEL], False, "rated False")]
    assert DistributionChange.objects.get(post=post).warn_sharers is True
    [sor] = watch.statements()
    check_statement(sor, action, visibility=[VISIBILITY_DEMOTED, VISIBILITY_LABELLED], category=CATEGORY_CIVIC_DISCOURSE)
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
    first = rate(factchecker, post, Verdict.FALSE)
    old = the_action(post)
    second = record(colleague, post, Verdict.PARTLY_FALSE, change_reason="A second source confirms part of it.")
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
        (owner.pk, NotificationKind.DECISION, f"Your post {post.external_id} was rated Partly false")
    ]


def test_a_true_rating_lifts_the_earlier_false(factchecker, post):
    rate(factchecker, post, Verdict.FALSE)
    old = the_action(post)
    true = record(factchecker, post, Verdict.TRUE, change_reason="The full video shows it was said.")
    watch = Watch()
    apply_rating(rating_id=true.pk)

    assert actions_of(post) == [(ActionKind.FACT_CHECK, D("0.2"), FALSE_LABEL, EndReason.SUPERSEDED)]
    assert strikes_of(post.page) == [(old.pk, StrikeKind.FACT_CHECK, False)]
    assert standing_of(post.page) == (0, False, D("1"))
    assert distribution_of(post) == (D("1"), [], False)
    assert watch.feed() == [(post.pk, D("1"), [], False, "rated True")]
    assert watch.statements() == []  # nothing restricts the post any more
    assert watch.verbs(post) == Counter({V.ACTION_ENDED: 1, V.STRIKE_ENDED: 1, V.DECISION_APPLIED: 1})
    assert [(d.rating_id, d.outcome, d.action_id) for d in watch.decisions()] == [(true.pk, DecisionOutcome.APPLIED, None)]
    # The owner's notice: see test_the_owner_is_told_when_a_true_rating_lifts_the_earlier_false.


@pytest.mark.parametrize("verdict", [Verdict.TRUE, Verdict.NOT_ELIGIBLE])
def test_the_owner_is_told_when_a_true_rating_lifts_the_earlier_false(factchecker, owner, post, verdict):
    rate(factchecker, post, Verdict.FALSE)
    lifting = record(factchecker, post, verdict, change_reason="The full video shows it was said.")
    watch = Watch()
    apply_rating(rating_id=lifting.pk)
    assert actions_of(post) == [(ActionKind.FACT_CHECK, D("0.2"), FALSE_LABEL, EndReason.SUPERSEDED)]
    assert distribution_of(post) == (D("1"), [], False)
    notices = notices_of(watch)
    assert [(user_id, kind) for user_id, kind, _ in notices] == [(owner.pk, NotificationKind.DECISION)]
    assert "shown normally again" in Notification.objects.get(user=owner, post=post, subject=notices[0][2]).body


def test_a_fresh_true_rating_changes_nothing_and_tells_nobody(factchecker, post):
    rating = record(factchecker, post, Verdict.TRUE)
    watch = Watch()
    apply_rating(rating_id=rating.pk)
    assert actions_of(post) == [] and strikes_of(post.page) == []
    assert standing_of(post.page) == (0, False, D("1"))
    assert not PostDistribution.objects.filter(post=post).exists() and watch.feed() == []
    assert watch.statements() == [] and watch.notices() == []
    assert watch.verbs(post) == Counter({V.DECISION_APPLIED: 1})


def test_a_dispute_reversed_on_appeal(factchecker, colleague, owner, post):
    original = rate(factchecker, post, Verdict.FALSE)
    old = the_action(post)
    appeal = file_appeal(owner=owner, post_id=post.pk, kind="dispute", statement="The quote is real.",
                         evidence_urls=["https://video.example/full"])
    watch = Watch()
    decided = decide_appeal(appeal_id=appeal.pk, reviewer=colleague, outcome="reversed",
                            new_verdict="true", reason="The video is authentic.")

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
        (owner.pk, NotificationKind.APPEAL_DECIDED, f"Your appeal on post {post.external_id} was accepted: the rating was changed to True")
    ]
    notice = watch.notices()[0]
    assert notice.appeal_id == appeal.pk and notice.post_id == post.pk
    assert "The rating was changed from False to True" in notice.body and "The video is authentic." in notice.body


def test_a_correction_accepted_with_a_new_verdict(factchecker, colleague, owner, post):
    rate(factchecker, post, Verdict.FALSE)
    old = the_action(post)
    appeal = file_appeal(owner=owner, post_id=post.pk, kind="correction", statement="Fixed the figure.",
                         correction_details="Second paragraph now says 12%, not 40%.")
    watch = Watch()
    decided = decide_appeal(appeal_id=appeal.pk, reviewer=colleague, outcome="reversed", reason="Corrected.",
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
    assert "Correction appeal reversed: Corrected." in sor.facts
    assert watch.verbs(post) == Counter({
        V.APPEAL_CHANGED: 1, V.RATING_SUPERSEDED: 1, V.RATING_RECORDED: 1,
        V.ACTION_ENDED: 1, V.STRIKE_ENDED: 1, V.DECISION_APPLIED: 1, V.ACTION_CREATED: 1,
    })
    assert notices_of(watch) == [
        (owner.pk, NotificationKind.APPEAL_DECIDED, f"Your appeal on post {post.external_id} was accepted: the rating was changed to Partly false")
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
    assert watch.verbs(post) == Counter({V.ACTION_CREATED: 1, V.STRIKE_CREATED: 1})
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
    assert watch.verbs(post) == Counter({V.ACTION_ENDED: 1, V.STRIKE_ENDED: 1})
    assert notices_of(watch) == [(owner.pk, NotificationKind.DECISION, f"Your post {post.external_id} was restored")]
    assert "It is a news report." in watch.notices()[0].body


def test_a_restore_of_a_rated_post_returns_it_to_its_fact_check_distribution(factchecker, staff, owner, post):
    rate(factchecker, post, Verdict.FALSE)
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
    assert watch.verbs(post) == Counter({V.APPEAL_CHANGED: 1, V.ACTION_ENDED: 1, V.STRIKE_ENDED: 1})
    assert notices_of(watch) == [
        (owner.pk, NotificationKind.APPEAL_DECIDED, f"Your appeal on post {post.external_id} was accepted: the post is restored")
    ]
    assert "The removal was lifted: your post is shown again." in watch.notices()[0].body


def test_a_lift_of_a_fact_check_action(factchecker, staff, owner, post):
    rating = rate(factchecker, post, Verdict.FALSE)
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
    rating = rate(factchecker, post, Verdict.FALSE)
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


# ---------------------------------------------------------------------------------------------
# Repeat offenders


def test_three_false_ratings_make_a_repeat_offender_and_a_reversal_ends_it_at_once(factchecker, colleague, owner, page):
    posts = PostFactory.create_batch(3, page=page)
    innocent = PostFactory(page=page, queue_state="unflagged")
    first, second = rate(factchecker, posts[0], Verdict.FALSE), rate(factchecker, posts[1], Verdict.FALSE)
    assert standing_of(page) == (2, False, D("1"))
    for p in posts[:2]:
        assert "decision_monetary" not in the_action(p).statement.transparency
    assert not PostDistribution.objects.filter(post=innocent).exists()

    third = record(factchecker, posts[2], Verdict.FALSE)
    watch = Watch()
    apply_rating(rating_id=third.pk)

    actions = [the_action(p) for p in posts]
    assert standing_of(page) == (3, True, D("0.5"))
    assert PageStanding.objects.get(page=page).monetisation_suspended
    assert strikes_of(page) == [(a.pk, StrikeKind.FACT_CHECK, True) for a in actions]
    for p in posts:
        assert distribution_of(p) == (D("0.1"), [FALSE_LABEL], False)  # 0.2 x 0.5
    assert distribution_of(innocent) == (D("0.5"), [], False)
    # Every post of the page, the rated one included, in one feed entry each.
    assert sorted(watch.feed()) == sorted(
        [(p.pk, D("0.1"), [FALSE_LABEL], False, "page became a repeat offender") for p in posts]
        + [(innocent.pk, D("0.5"), [], False, "page became a repeat offender")]
    )
    [sor] = watch.statements()
    check_statement(sor, actions[2], visibility=[VISIBILITY_DEMOTED, VISIBILITY_LABELLED],
                    category=CATEGORY_CIVIC_DISCOURSE, monetary=True)
    for a in actions[:2]:  # the earlier statements are not rewritten
        assert "decision_monetary" not in StatementOfReasons.objects.get(action=a).transparency
    assert watch.verbs(posts[2]) == Counter({V.DECISION_APPLIED: 1, V.ACTION_CREATED: 1, V.STRIKE_CREATED: 1})
    assert [(e.verb, e.target_id, e.data) for e in watch.all_events().filter(post_id__isnull=True)] == [
        (V.STANDING_CHANGED, str(page.pk), {"repeat_offender": True, "active_strikes": 3})
    ]
    assert notices_of(watch) == [
        (owner.pk, NotificationKind.DECISION, f"Your post {posts[2].external_id} was rated False")
    ]

    # The owner disputes the first rating; a colleague reverses it: under the threshold at once.
    appeal = file_appeal(owner=owner, post_id=posts[0].pk, kind="dispute", statement="It is a real quote.")
    watch = Watch()
    decide_appeal(appeal_id=appeal.pk, reviewer=colleague, outcome="reversed",
                  new_verdict="true", reason="The quote is real.")

    assert standing_of(page) == (2, False, D("1"))
    assert not PageStanding.objects.get(page=page).monetisation_suspended
    assert strikes_of(page) == [(actions[0].pk, StrikeKind.FACT_CHECK, False)] + [
        (a.pk, StrikeKind.FACT_CHECK, True) for a in actions[1:]
    ]
    assert actions_of(posts[0]) == [(ActionKind.FACT_CHECK, D("0.2"), FALSE_LABEL, EndReason.REVERSED)]
    assert distribution_of(posts[0]) == (D("1"), [], False)
    for p in posts[1:]:
        assert distribution_of(p) == (D("0.2"), [FALSE_LABEL], False)
    assert distribution_of(innocent) == (D("1"), [], False)
    assert sorted(watch.feed()) == sorted(
        [(posts[0].pk, D("1"), [], False, "page is no longer a repeat offender")]
        + [(p.pk, D("0.2"), [FALSE_LABEL], False, "page is no longer a repeat offender") for p in posts[1:]]
        + [(innocent.pk, D("1"), [], False, "page is no longer a repeat offender")]
    )
    assert watch.statements() == []
    assert "decision_monetary" in StatementOfReasons.objects.get(action=actions[2]).transparency  # what was said stays
    assert watch.verbs(posts[0]) == Counter({
        V.APPEAL_CHANGED: 1, V.RATING_SUPERSEDED: 1, V.RATING_RECORDED: 1,
        V.ACTION_ENDED: 1, V.STRIKE_ENDED: 1, V.DECISION_APPLIED: 1,
    })
    assert [(e.verb, e.data) for e in watch.all_events().filter(post_id__isnull=True)] == [
        (V.STANDING_CHANGED, {"repeat_offender": False, "active_strikes": 2})
    ]
    assert notices_of(watch) == [
        (owner.pk, NotificationKind.APPEAL_DECIDED, f"Your appeal on post {posts[0].external_id} was accepted: the rating was changed to True")
    ]
    assert (first.pk, second.pk) == tuple(a.rating_id for a in actions[:2])


def test_a_new_decision_on_a_repeat_offenders_page_says_monetisation_is_suspended(factchecker, page):
    posts = PostFactory.create_batch(4, page=page)
    for p in posts[:3]:
        rate(factchecker, p, Verdict.FALSE)
    watch = Watch()
    rate(factchecker, posts[3], Verdict.PARTLY_FALSE)  # no strike of its own

    action = the_action(posts[3])
    assert standing_of(page) == (3, True, D("0.5"))
    assert distribution_of(posts[3]) == (D("0.25"), [PARTLY_LABEL], False)
    assert watch.feed() == [(posts[3].pk, D("0.25"), [PARTLY_LABEL], False, "rated Partly false")]
    [sor] = watch.statements()
    check_statement(sor, action, visibility=[VISIBILITY_DEMOTED, VISIBILITY_LABELLED],
                    category=CATEGORY_CIVIC_DISCOURSE, monetary=True)


# ---------------------------------------------------------------------------------------------
# Every road to a decision gives the same consequences, once


def consequences(post) -> dict:
    """Everything a rating's decision left on its post, in terms that do not name the post or its page."""

    def plain(text: str) -> str:
        text = text.replace(post.external_id, "<post>").replace(post.page.name, "<page>")
        return re.sub(r"\d{2} \w+ \d{4}", "<date>", text)

    statements = []
    for sor in StatementOfReasons.objects.filter(action__post=post).order_by("id"):
        transparency = {k: v for k, v in sor.transparency.items() if k not in ("puid", "content_date", "application_date")}
        assert sor.transparency["puid"] == sor.puid == sor.action.puid
        statements.append((sor.what, sor.scope, sor.facts, sor.ground, sor.automation, sor.appeal_kinds,
                           plain(sor.how_to_appeal), transparency))
    return {
        "actions": [
            (a.kind, a.verdict, a.feed_multiplier, a.label, a.warn_sharers, a.end_reason, a.ended_at is None,
             a.created_by_id)
            for a in Action.objects.filter(post=post).order_by("id")
        ],
        "strikes": [(s.kind, s.ended_at is None) for s in Strike.objects.filter(action__post=post).order_by("id")],
        "standing": standing_of(post.page),
        "distribution": distribution_of(post),
        "reasons": [{k: v for k, v in r.items() if k != "action_id"} for r in PostDistribution.objects.get(post=post).reasons],
        "feed": [(c.multiplier, c.labels, c.removed, c.warn_sharers, c.cause)
                 for c in DistributionChange.objects.filter(post=post).order_by("id")],
        "statements": statements,
        "audit": Counter(AuditEvent.objects.filter(post_id=post.pk).values_list("verb", "actor_label")),
        "notices": [(n.user_id, n.kind, plain(n.subject), plain(n.body))
                    for n in Notification.objects.filter(post=post).order_by("id")],
        "decisions": [(d.outcome, d.action_id is not None) for d in RatingDecision.objects.filter(post=post)],
    }


def test_the_reconciler_and_a_real_worker_give_what_a_direct_apply_gives_and_twice_changes_nothing(
    factchecker, owner, run_worker, django_capture_on_commit_callbacks
):
    def new_post():
        page = PageFactory()  # one page each: their strikes must not add up
        page.owners.add(owner)
        return PostFactory(page=page)

    direct, reconciled, worked = new_post(), new_post(), new_post()
    rationale = "The photo is from another year."

    rating = record(factchecker, direct, Verdict.FALSE, rationale=rationale)
    apply_rating(rating_id=rating.pk)

    # The job was lost (Redis down): nothing was enqueued; the reconciler finds the rating later.
    with django_capture_on_commit_callbacks(execute=False):
        lost = record(factchecker, reconciled, Verdict.FALSE, rationale=rationale)
    assert run_worker() == 0
    assert not RatingDecision.objects.filter(rating=lost).exists()
    assert reconcile_decisions(now=timezone.now() + timedelta(minutes=5)) == 1

    # The normal road: the job enqueued after commit, run by a real worker.
    with django_capture_on_commit_callbacks(execute=True):
        record(factchecker, worked, Verdict.FALSE, rationale=rationale)
    assert run_worker() == 1

    expected = consequences(direct)
    assert expected["actions"] == [("fact_check", "false", D("0.2"), FALSE_LABEL, True, "", True, None)]
    assert expected["feed"] == [(D("0.2"), [FALSE_LABEL], False, True, "rated False")]
    assert len(expected["statements"]) == 1 and len(expected["notices"]) == 1
    assert consequences(reconciled) == expected
    assert consequences(worked) == expected

    # Again, by every road: nothing new anywhere.
    watch = Watch()
    for post in (direct, reconciled, worked):
        apply_rating(rating_id=Rating.objects.get(post=post).pk)
    assert reconcile_decisions(now=timezone.now() + timedelta(minutes=5)) == 0
    for post in (direct, reconciled, worked):
        django_rq.get_queue("default").enqueue(jobs.apply_rating, Rating.objects.get(post=post).pk)
    assert run_worker() == 3
    assert watch.nothing_appended()
    for post in (direct, reconciled, worked):
        assert consequences(post) == expected


@pytest.mark.parametrize("verdict", [Verdict.TRUE, Verdict.PARTLY_FALSE])
def test_a_rerating_applied_twice_changes_nothing_the_second_time(factchecker, post, verdict):
    rate(factchecker, post, Verdict.FALSE)
    rating = record(factchecker, post, verdict, change_reason="New evidence.")
    apply_rating(rating_id=rating.pk)
    before = consequences(post)
    watch = Watch()
    apply_rating(rating_id=rating.pk)
    assert watch.nothing_appended()
    assert consequences(post) == before
