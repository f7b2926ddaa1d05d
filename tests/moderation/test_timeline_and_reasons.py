"""The owner's view of a decision: a plain-language statement of reasons and the post's timeline."""

from __future__ import annotations

import pytest

from factcheck.members import organisation_of
from factcheck.ratings import record_rating
from moderation.appeals import decide_appeal, file_appeal
from moderation.enforcement import apply_rating
from moderation.models import Action
from moderation.statements.reasons import MISINFORMATION_POLICY
from moderation.timeline import post_timeline
from tests.factories import FactCheckerFactory, FlagFactory, PostFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def story(factchecker):
    owner = UserFactory()
    post = PostFactory()
    post.page.owners.add(owner)
    FlagFactory(post=post, source="classifier")
    rating = record_rating(claim_if_unclaimed=True, reviewer=factchecker, post_id=post.pk, verdict="false",
                           rationale="The quote is invented.", sources=["https://a.example"])
    apply_rating(rating_id=rating.pk)
    return owner, post


def test_statement_of_reasons_says_what_why_automation_and_how_to_appeal(story, factchecker):
    _, post = story
    sor = Action.objects.get(post=post).statement
    assert "80% less" in sor.what and "False information" in sor.what
    assert sor.ground == MISINFORMATION_POLICY
    assert sor.facts == f"Rated False by {organisation_of(factchecker).name}: The quote is invented."
    assert sor.automated_detection and not sor.automated_decision
    assert "classifier" in sor.automation and "a person" in sor.automation
    assert f"{sor.appeal_by.day} {sor.appeal_by:%b %Y}" in sor.how_to_appeal
    assert sor.scope == "Applies in the United Kingdom."  # from the post's country (the factories' posts are GB)


def test_timeline_names_the_organisation_for_owners_and_the_person_for_staff(story, factchecker):
    owner, post = story
    colleague = FactCheckerFactory(organisation=organisation_of(factchecker))
    appeal = file_appeal(owner=owner, post_id=post.pk, kind="dispute", statement="It is a real quote.")
    decide_appeal(appeal_id=appeal.pk, reviewer=colleague, outcome="upheld", reason="No source for the quote.")
    owner_view = post_timeline(post, for_owner=True)
    titles = [e.title for e in owner_view]
    assert titles[0].startswith("Flagged") and "Rated False" in titles and "Appeal not accepted" in titles
    assert all(factchecker.username not in e.by and colleague.username not in e.by for e in owner_view)
    staff_view = post_timeline(post, for_owner=False)
    assert any(colleague.username in e.by for e in staff_view if e.title == "Appeal upheld")
    assert next(e for e in owner_view if e.title == "Appeal not accepted").detail == "No source for the quote."
