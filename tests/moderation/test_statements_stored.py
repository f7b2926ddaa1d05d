"""A statement of reasons is stored when its action is taken, and later changes never rewrite it.

The enforcement policy, the repeat-offender policy and the territorial scope in force when the
action was taken are what the owner was told; a change of any of them applies to actions taken
after it. The owner's portal shows the stored text, and the Transparency Database export holds no
personal data.
"""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from django.db import DatabaseError, connection, transaction
from django.utils.html import escape

from core.append_only import AppendOnlyError
from factcheck.members import organisation_of
from factcheck.models import Verdict
from factcheck.ratings import record_rating
from moderation.appeals import decide_appeal, file_appeal
from moderation.enforcement import apply_rating
from moderation.models import (
    Action,
    EnforcementPolicy,
    PageStanding,
    RepeatOffenderPolicy,
    StatementOfReasons,
)
from moderation.policy import save_policy
from moderation.staff_actions import lift_action, override_action, remove_post
from moderation.statements.transparency import MONETARY_SUSPENSION, VISIBILITY_DEMOTED, VISIBILITY_LABELLED
from tests.factories import (
    DecisionFactory,
    FactCheckerFactory,
    FlagFactory,
    OrganisationFactory,
    PageFactory,
    PlatformUserFactory,
    PostFactory,
    StaffFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db

OLD_LABEL = "False information. Checked by independent fact-checkers."
NEW_LABEL = "Independent fact-checkers found this false (new wording)."
NEW_SCOPE = ["DE", "FR"]
STATEMENT_FIELDS = ["what", "scope", "facts", "ground", "automation", "automated_detection", "automated_decision",
                    "appeal_kinds", "appeal_by", "how_to_appeal", "puid", "created_at"]


def stored_bytes(sor: StatementOfReasons) -> str:
    """The row exactly as PostgreSQL holds it (jsonb included), as text."""
    table = connection.ops.quote_name(StatementOfReasons._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT row_to_json(s)::text FROM {table} s WHERE s.id = %s", [sor.pk])
        return cursor.fetchone()[0]


def snapshot(sor: StatementOfReasons) -> tuple:
    sor = StatementOfReasons.objects.get(pk=sor.pk)
    return (
        stored_bytes(sor),
        {field: getattr(sor, field) for field in STATEMENT_FIELDS},
        json.dumps(sor.transparency, sort_keys=True),
    )


def change_everything(staff, settings) -> None:
    """Every input of a statement that staff or deployment can change, changed."""
    policy = EnforcementPolicy.objects.get(verdict=Verdict.FALSE)
    policy.feed_multiplier = Decimal("0.3")
    policy.label = NEW_LABEL
    assert save_policy(row=policy, changed_by=staff, reason="New wording") == {
        "feed_multiplier": ["0.200", "0.300"], "label": [OLD_LABEL, NEW_LABEL],
    }
    repeat = RepeatOffenderPolicy.current()
    repeat.strike_threshold = 1
    repeat.page_multiplier = Decimal("0.25")
    assert set(save_policy(row=repeat, changed_by=staff, reason="Stricter")) == {"strike_threshold", "page_multiplier"}
    settings.FACTDESK_TERRITORIAL_SCOPE = NEW_SCOPE


@pytest.fixture
def owner(db):
    return UserFactory(username="stored-owner")


@pytest.fixture
def page(owner):
    page = PageFactory(name="Stored Statements Page")
    page.owners.add(owner)
    return page


@pytest.fixture
def staff(db):
    return StaffFactory(username="stored-staff")


def test_a_stored_statement_is_not_rewritten_by_policy_scope_or_later_decisions(factchecker, staff, page, settings):
    before_post, after_post = PostFactory(page=page), PostFactory(page=page)
    DecisionFactory(reviewer=factchecker, post=before_post)
    old = Action.objects.get(post=before_post).statement
    kept = snapshot(old)
    assert "80% less" in old.what and OLD_LABEL in old.what
    assert old.transparency["territorial_scope"] == list(settings.FACTDESK_TERRITORIAL_SCOPE) != NEW_SCOPE
    assert "decision_monetary" not in old.transparency

    change_everything(staff, settings)
    assert snapshot(old) == kept

    # A new action carries the values in force now.
    DecisionFactory(reviewer=factchecker, post=after_post)
    action = Action.objects.get(post=after_post)
    assert (action.feed_multiplier, action.label) == (Decimal("0.3"), NEW_LABEL)
    new = action.statement
    assert "70% less" in new.what and NEW_LABEL in new.what and OLD_LABEL not in new.what
    # The owner's wording follows the post's country (GB), not the export's scope setting.
    assert new.scope == old.scope == "Applies in the United Kingdom."
    t = new.transparency
    assert t["territorial_scope"] == NEW_SCOPE
    assert t["decision_visibility"] == [VISIBILITY_DEMOTED, VISIBILITY_LABELLED]
    assert t["decision_monetary"] == MONETARY_SUSPENSION  # one strike is now enough
    assert PageStanding.objects.get(page=page).is_repeat_offender
    # ...while the old statement still says what was said then, though its post was redistributed.
    assert snapshot(old) == kept

    # Later decisions on the old action's post end it; its statement stays as it was.
    colleague = FactCheckerFactory(organisation=organisation_of(factchecker))
    DecisionFactory(reviewer=colleague, post=before_post, verdict=Verdict.PARTLY_FALSE,
                    change_reason="Part of it checks out.")
    lift_action(actor=staff, action_id=Action.objects.get(post=before_post, ended_at__isnull=True).pk,
                reason="Old news.")
    assert snapshot(old) == kept
    assert StatementOfReasons.objects.filter(action__post=before_post).count() == 2  # one per restricting action


def test_a_stored_statement_cannot_be_rewritten_even_by_sql(factchecker, page):
    post = PostFactory(page=page)
    DecisionFactory(reviewer=factchecker, post=post)
    sor = Action.objects.get(post=post).statement
    kept = snapshot(sor)
    sor.what = "Nothing happened."
    with pytest.raises(AppendOnlyError):
        sor.save()
    with pytest.raises(DatabaseError), transaction.atomic():
        StatementOfReasons.objects.filter(pk=sor.pk).update(what="Nothing happened.")
    table = connection.ops.quote_name(StatementOfReasons._meta.db_table)
    with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"UPDATE {table} SET transparency = '{{}}'::jsonb WHERE id = %s", [sor.pk])
    assert snapshot(sor) == kept


def test_the_owner_portal_shows_the_stored_text_after_the_rules_changed(
    login, owner, factchecker, staff, page, settings
):
    rated, removed = PostFactory(page=page), PostFactory(page=page)
    DecisionFactory(reviewer=factchecker, post=rated)
    remove_post(staff=staff, post_id=removed.pk, ground="violence", reason="Calls for an attack on the town hall.")
    statements = {post.pk: Action.objects.get(post=post).statement for post in (rated, removed)}
    original_scope = statements[rated.pk].scope
    change_everything(staff, settings)

    client = login(owner)
    for post in (rated, removed):
        detail = client.get(f"/appeals/posts/{post.pk}/")
        assert detail.status_code == 200
        html = detail.content.decode()
        sor = statements[post.pk]
        for text in (sor.what, sor.scope, sor.ground, sor.facts, sor.automation, sor.how_to_appeal):
            assert escape(text) in html, text
        # Not the statement the rules in force now would give.
        assert original_scope in html
        assert escape(NEW_LABEL) not in html and "70% less" not in html


def test_the_transparency_export_holds_no_personal_data(settings):
    org = OrganisationFactory(name="Veritas Checks")
    people = [
        UserFactory(username="ophelia_owner_zq", email="ophelia.private@mailbox.example", first_name="Ophelia",
                    last_name="Quenby"),
        FactCheckerFactory(username="felix_rater_zq", email="felix.rater@veritas.example", first_name="Felix",
                           last_name="Raterman", organisation=org),
        FactCheckerFactory(username="carla_colleague_zq", email="carla.c@veritas.example", first_name="Carla",
                           last_name="Colleaguesen", organisation=org),
        StaffFactory(username="stan_staffer_zq", email="stan.staffer@platform.example", first_name="Stanislaw",
                     last_name="Staffordshire"),
        StaffFactory(username="sue_second_zq", email="sue.second@platform.example", first_name="Susannah",
                     last_name="Secondwood"),
        PlatformUserFactory(username="pete_platform_zq", email="pete.platform@platform.example", first_name="Peregrine",
                            last_name="Platt"),
    ]
    owner, rater, colleague, staff, second_staff, platform = people
    page = PageFactory(name="Community Garden News")
    page.owners.add(owner)
    posts = PostFactory.create_batch(5, page=page)
    for post, source in zip(
        posts, ["user_report", "trusted_flagger", "classifier", "partner", "user_report"], strict=True
    ):
        FlagFactory(post=post, source=source, submitted_by=platform, reason="Reported by the platform.")

    # A rating; a correction accepted with a new verdict; an override; a removal, its appeal
    # reversed; and a repeat offender's page along the way.
    DecisionFactory(reviewer=rater, post=posts[0], rationale="The mayor never said this; the transcript is linked.")
    appeal = file_appeal(owner=owner, post_id=posts[0].pk, kind="correction", statement="I fixed the quote.",
                         correction_details="The quote now matches the transcript.")
    decide_appeal(appeal_id=appeal.pk, reviewer=colleague, outcome="reversed", reason="The quote is now accurate.",
                  public_rationale="New evidence.", new_verdict=Verdict.MISSING_CONTEXT)
    DecisionFactory(reviewer=rater, post=posts[1], rationale="The chart is from 2011.")
    override_action(staff=staff, action_id=Action.objects.get(post=posts[1], ended_at__isnull=True).pk,
                    feed_multiplier="0.7", label="Old chart.", reason="The page is a history blog.")
    DecisionFactory(reviewer=rater, post=posts[2], rationale="The photo is from another country.")
    DecisionFactory(reviewer=rater, post=posts[3], rationale="No such study exists.")
    DecisionFactory(reviewer=rater, post=posts[4], rationale="The event never took place.")  # the third live strike
    assert PageStanding.objects.get(page=page).is_repeat_offender
    removal = remove_post(staff=staff, post_id=posts[3].pk, ground="hate", reason="Slurs against a group.")
    appeal = file_appeal(owner=owner, post_id=posts[3].pk, kind="removal",
                         statement="It quotes the slur to condemn it.")
    decide_appeal(appeal_id=appeal.pk, reviewer=second_staff, outcome="reversed", reason="Counter-speech.")
    assert Action.objects.get(pk=removal.pk).end_reason == "reversed"

    statements = list(StatementOfReasons.objects.filter(action__post__page=page).order_by("id"))
    assert len(statements) == 8  # five False ratings, the new Missing context, the override, the removal
    assert [sor.transparency.get("decision_monetary") for sor in statements][-2:] == [MONETARY_SUSPENSION] * 2
    secrets = [
        value for person in people for value in (person.username, person.email, person.first_name, person.last_name)
    ]
    for sor in statements:
        exported = json.dumps(sor.transparency, ensure_ascii=False).lower()
        assert "@" not in exported, sor.transparency
        for secret in secrets:
            assert secret.lower() not in exported, (secret, sor.transparency)
        # The plain-language statement the owner reads names teams, never people.
        told = " ".join([sor.what, sor.scope, sor.facts, sor.ground, sor.automation, sor.how_to_appeal]).lower()
        for secret in secrets:
            assert secret.lower() not in told, (secret, told)


def test_the_whole_eu_and_eea_reads_as_words_not_thirty_codes(factchecker, settings):
    from moderation.statements.transparency import COUNTRY_CODES

    settings.FACTDESK_TERRITORIAL_SCOPE = list(COUNTRY_CODES)
    post = PostFactory(country="DE")
    rating = record_rating(claim_if_unclaimed=True, reviewer=factchecker, post_id=post.pk, verdict="false",
                           rationale="Invented.", sources=["https://evidence.example/1"])
    apply_rating(rating_id=rating.pk)
    statement = StatementOfReasons.objects.get(action__post=post)
    assert statement.scope == "Applies in the EU and the EEA."
    assert statement.transparency["territorial_scope"] == list(COUNTRY_CODES)  # the export keeps the codes


def test_a_statement_names_the_flags_that_started_its_kind_of_action():
    from tests.scenarios import reported_post

    # People flagged the claim; a classifier reported the threat in it to trust and safety.
    post = reported_post(reports=[("misinformation", "user_report"), ("violence", "classifier")])
    rating = record_rating(reviewer=FactCheckerFactory(), post_id=post.pk, verdict=Verdict.FALSE, rationale="No.",
                           sources=["https://source.example"], claim_if_unclaimed=True)
    apply_rating(rating_id=rating.pk)
    fact_check = StatementOfReasons.objects.get(action__post=post, action__kind="fact_check")
    assert (fact_check.automated_detection, fact_check.transparency["source_type"]) == (False, "SOURCE_ARTICLE_16")
    removal = remove_post(staff=StaffFactory(), post_id=post.pk, ground="violence", reason="A threat.")
    statement = StatementOfReasons.objects.get(action=removal)
    assert (statement.automated_detection, statement.transparency["source_type"]) == (True, "SOURCE_VOLUNTARY")


def test_detection_is_automated_only_when_a_classifier_flag_came_first():
    # PRODUCT.md: "Yes" when a classifier flag started it. A person's report that a classifier later echoed is not.
    from datetime import timedelta

    from django.utils import timezone

    from tests.scenarios import reported_post

    hour_ago = timezone.now() - timedelta(hours=1)
    by_person = reported_post(reports=[("misinformation", "user_report")], at=hour_ago)
    reported_post(post=by_person, reports=[("misinformation", "classifier")])
    by_classifier = reported_post(reports=[("misinformation", "classifier")], at=hour_ago)
    reported_post(post=by_classifier, reports=[("misinformation", "user_report")])
    for post in (by_person, by_classifier):
        rating = record_rating(reviewer=FactCheckerFactory(), post_id=post.pk, verdict=Verdict.FALSE, rationale="No.",
                               sources=["https://source.example"], claim_if_unclaimed=True)
        apply_rating(rating_id=rating.pk)
    first_by_person = StatementOfReasons.objects.get(action__post=by_person)
    first_by_classifier = StatementOfReasons.objects.get(action__post=by_classifier)
    assert (first_by_person.automated_detection, first_by_person.transparency["automated_detection"]) == (False, "No")
    assert (first_by_classifier.automated_detection,
            first_by_classifier.transparency["automated_detection"]) == (True, "Yes")
