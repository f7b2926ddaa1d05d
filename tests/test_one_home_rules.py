"""One home per rule (STYLE.md): the error summary, the CSV cell, "under appeal" and "restricts" each exist
once, and every caller that used a copy of them asks the one home."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.utils import timezone

from core.csv_download import safe_cell
from core.error_summary import error_summary
from factcheck import ratings
from factcheck.members import organisation_of
from factcheck.models import Rating, Verdict
from factcheck.rated import open_appeals_against, with_appeal_state
from moderation import forms as moderation_forms
from moderation.appeals import decide_appeal, file_appeal
from moderation.models import Action, ActionKind, EnforcementPolicy
from moderation.policy import ONE, restricting_actions, restricts
from tests import scenarios
from tests.factories import FactCheckerFactory, PostFactory, UserFactory


def test_the_appeal_forms_error_summary_is_the_one_of_every_form():
    assert moderation_forms.error_summary is error_summary


@pytest.mark.parametrize(("value", "cell"), [
    (-2, "-2"), (Decimal("-0.5"), "-0.5"), (-1.25, "-1.25"), (0, "0"), ("-2", "'-2"), ("=A1", "'=A1"),
])
def test_a_negative_figure_stays_a_number_and_text_that_looks_like_a_formula_does_not(value, cell):
    # The dashboard's CSV files (reports.charts) and the lists' (core.csv_download) share this one rule.
    assert safe_cell(value) == cell


@pytest.mark.django_db
def test_under_appeal_is_one_rule_for_the_rated_list_and_the_refusal_to_rerate(factchecker):
    owner = UserFactory()
    colleague = FactCheckerFactory(organisation=organisation_of(factchecker))
    disputed = scenarios.rated_post(rater=factchecker, owner=owner, external_id="disputed")
    decided = scenarios.rated_post(rater=factchecker, owner=owner, external_id="decided")
    quiet = scenarios.rated_post(rater=factchecker, owner=owner, external_id="quiet")
    file_appeal(owner=owner, post_id=disputed.pk, kind="dispute", statement="The quote is real.")
    upheld = file_appeal(owner=owner, post_id=decided.pk, kind="dispute", statement="It is satire.")
    decide_appeal(appeal_id=upheld.pk, reviewer=colleague, outcome="upheld", reason="It is not.")
    listed = {r.post.external_id: r.under_appeal
              for r in with_appeal_state(Rating.objects.filter(is_current=True).select_related("post"))}
    assert listed == {"disputed": True, "decided": False, "quiet": False}
    for post in (disputed, decided, quiet):
        rating = Rating.objects.get(post=post, is_current=True)
        assert open_appeals_against(rating).exists() is ratings._has_open_appeal(rating) is listed[post.external_id]


@pytest.mark.django_db
def test_restricts_and_its_query_agree_for_every_verdicts_policy_and_every_action_kind():
    post, now = PostFactory(), timezone.now()
    effects = [(row.feed_multiplier, row.label) for row in EnforcementPolicy.objects.all()]
    assert {row.verdict for row in EnforcementPolicy.objects.all()} >= {Verdict.FALSE, Verdict.TRUE}
    effects += [(ONE, ""), (ONE, "Missing context."), (Decimal("0.5"), ""), (Decimal("0"), "")]
    actions = [Action.objects.create(post=post, kind=kind, feed_multiplier=multiplier, label=label, created_at=now)
               for kind in ActionKind.values for multiplier, label in effects]
    ended = Action.objects.create(post=post, kind=ActionKind.REMOVAL, feed_multiplier=0, created_at=now,
                                  ended_at=now)
    queried = set(restricting_actions().filter(post=post).values_list("pk", flat=True))
    assert queried == {action.pk for action in actions if restricts(action)}
    assert {a.kind for a in actions if a.pk in queried} == set(ActionKind.values)  # each kind has both answers
    assert {a.kind for a in actions if a.pk not in queried} == set(ActionKind.values) - {ActionKind.REMOVAL}
    assert ended.pk not in queried  # an ended action restricts nothing now
