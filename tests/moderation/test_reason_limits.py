"""Reasons have a length limit everywhere, and cleaning a statement's text is linear (issue 28, finding 11).

The statement of reasons stripped e-mail addresses with a pattern that tried every position of a long run
of letters and scanned to its end (quadratic), before cutting the text to 5,000 characters; and the admin's
reason fields had no limit: a 20,000-character removal reason took 3.8 s, 100,000 a 500, 1 MB killed the
worker. Now the text is cut before it is cleaned, the pattern starts only where a run starts, and every
reason field refuses what is too long with an error next to it, keeping the rest of the form.
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import pytest

from core.contact_details import EMAIL
from moderation.appeals import file_appeal
from moderation.models import Action, ActionKind, Appeal, AppealStatus, RemovalGround, RepeatOffenderPolicy
from moderation.staff_actions import RemovalRefused, remove_post
from moderation.statements import reasons
from moderation.statements import transparency as tdb
from moderation.statements.reasons import EMAIL_MARGIN, MAX_FACTS, build_statement
from tests.factories import PageFactory, PostFactory, StaffFactory, UserFactory
from tests.scenarios import removed_post, reported_post

pytestmark = pytest.mark.django_db

ONE_MB = "x" * 1_000_000
TOO_LONG = "Keep the reason to 2,000 characters (it has 1,000,000)."


def facts_of(reason: str) -> str:
    """The statement's `decision_facts` for a removal with this reason (the action unsaved: the domain's own
    limit would refuse such a reason long before a statement is written)."""
    post = PostFactory()
    action = Action(post=post, kind=ActionKind.REMOVAL, ground=RemovalGround.HATE, reason=reason,
                    feed_multiplier=Decimal("0"), puid="fd-action-test", created_at=datetime(2026, 5, 1, tzinfo=UTC))
    statement = build_statement(action=action, post=post, flag_sources=set(), started_by=None, standing=None,
                                notice_at=action.created_at)
    return statement.transparency["decision_facts"]


# Cleaning: cut first, then a linear pattern


def test_the_text_is_cut_before_it_is_cleaned(monkeypatch):
    seen: list[int] = []
    clean = reasons.without_contact_details

    def spy(text):
        seen.append(len(text))
        return clean(text)

    monkeypatch.setattr(reasons, "without_contact_details", spy)
    facts_of("Mail me: someone@example.org. " + "a" * 1_000_000)
    assert seen and max(seen) <= MAX_FACTS + EMAIL_MARGIN


def test_the_email_pattern_starts_only_where_a_run_of_address_characters_starts():
    # Why it is linear: a match may begin only at a run's first character, so each run is scanned from one
    # start, not from each of its positions (which made 'a' * 20,000 take 1.9 s, 100,000 about 50 s).
    assert EMAIL.match("john.doe@example.org", 1) is None
    assert EMAIL.match("john.doe@example.org", 0).group() == "john.doe@example.org"
    assert EMAIL.search("write to john.doe@example.org, or not").group() == "john.doe@example.org"
    assert EMAIL.search("x@y@bar.com").group() == "y@bar.com"


@pytest.mark.parametrize(("reason", "facts"), [
    ("a" * 50_000 + "@", "a" * (MAX_FACTS - 1) + "…"),
    ("x@" + "b" * 100_000, "x@" + "b" * (MAX_FACTS - 3) + "…"),
    ("a." * 50_000 + "@b", ("a." * 50_000)[: MAX_FACTS - 1] + "…"),
    ("Ask jo@example.org. " + ".a" * 50_000, ("Ask [e-mail address removed]. " + ".a" * 50_000)[: MAX_FACTS - 1] + "…"),
])
def test_adversarial_100kb_reasons_are_cleaned_and_cut(reason, facts):
    assert facts_of(reason) == facts
    assert tdb.statement_problems({"decision_facts": reason})  # and checking it completes too


def test_an_address_the_first_cut_splits_is_not_left_behind_in_part():
    reason = " " * (MAX_FACTS + EMAIL_MARGIN - 9) + "someone@example.org and more"
    assert "@" not in facts_of(reason)


def test_short_reasons_keep_their_words_and_lose_their_addresses():
    assert facts_of("Posted the home address of jane.doe+x@mail.example.co.uk twice.") == (
        "Posted the home address of [e-mail address removed] twice.")


@pytest.mark.parametrize(("reason", "facts"), [
    ("Call +44 7700 900123 or +33 1 23 45 67 89.", "Call [phone number removed] or [phone number removed]."),
    ("Her number, 07700 900123, and (555) 123-4567 and 555-123-4567 were posted.",
     "Her number, [phone number removed], and [phone number removed] and [phone number removed] were posted."),
    # Figures stay figures: a fact-check's rationale is full of them.
    ("600 calories, 100 000 000 views, 2024-2025, +5%, +20 000 jobs, 0.5 mg, 1,000,000, ISBN 978-3-16-148410-0.",
     "600 calories, 100 000 000 views, 2024-2025, +5%, +20 000 jobs, 0.5 mg, 1,000,000, ISBN 978-3-16-148410-0."),
])
def test_telephone_numbers_leave_the_statement_and_figures_stay(reason, facts):
    """PRODUCT.md: no personal data in the export; a rationale's pasted number reached decision_facts."""
    assert facts_of(reason) == facts


# Every reason field: a 1 MB reason is a form error, not a 500, and the rest of the form is kept


def test_a_1mb_removal_reason_in_the_admin_is_a_form_error(staff_client):
    post = PostFactory()
    response = staff_client.post(f"/admin/factcheck/post/{post.pk}/remove/", {"ground": "violence", "reason": ONE_MB})
    assert response.status_code == 200
    html = response.content.decode()
    assert TOO_LONG in html
    assert '<option value="violence" selected>' in html  # the ground chosen is kept
    assert not Action.objects.filter(post=post).exists()


def test_a_1mb_lift_reason_in_the_admin_is_a_form_error(staff_client):
    removal = Action.objects.get(post=removed_post(), kind=ActionKind.REMOVAL)
    response = staff_client.post(f"/admin/moderation/action/{removal.pk}/lift/", {"reason": ONE_MB})
    assert response.status_code == 200 and TOO_LONG in response.content.decode()
    assert Action.objects.get(pk=removal.pk).ended_at is None


def test_a_1mb_policy_change_reason_is_a_form_error_and_keeps_the_numbers_typed(staff_client):
    policy = RepeatOffenderPolicy.current()
    response = staff_client.post(f"/admin/moderation/repeatoffenderpolicy/{policy.pk}/change/", {
        "strike_threshold": "4", "window_days": "60", "page_multiplier": "0.5", "reason": ONE_MB})
    assert response.status_code == 200
    html = response.content.decode()
    assert TOO_LONG in html and 'name="window_days" value="60"' in html
    assert RepeatOffenderPolicy.current().window_days == 90


def test_a_1mb_appeal_decision_reason_is_a_form_error(login):
    owner = UserFactory()
    post = PostFactory(page=PageFactory())
    post.page.owners.add(owner)
    remove_post(staff=StaffFactory(), post_id=post.pk, ground="hate", reason="Slurs.")
    appeal = file_appeal(owner=owner, post_id=post.pk, kind="removal", statement="A quotation.")
    response = login(StaffFactory()).post(f"/staff/appeals/{appeal.pk}/", {"outcome": "reversed", "reason": ONE_MB})
    assert response.status_code == 200
    html = response.content.decode()
    assert "Keep the reason to 2,000 characters (it has 1,000,000)." in html
    assert 'value="reversed" id="id_outcome_1" checked' in html or 'value="reversed" checked' in html
    assert Appeal.objects.get(pk=appeal.pk).status == AppealStatus.OPEN


def test_a_1mb_harm_report_decision_reason_is_a_form_error(staff_client):
    post = reported_post(reports=[("harassment", "user_report")])
    staff_client.post(f"/staff/reports/{post.pk}/claim/")
    response = staff_client.post(f"/staff/reports/{post.pk}/", {
        "decision": "removed", "removed-ground": "harassment", "removed-reason": ONE_MB,
        "removed-up_to_flag": max(post.flags.values_list("pk", flat=True)),
    })
    assert response.status_code == 400  # the desk's answer to a form with errors
    assert TOO_LONG in response.content.decode()
    assert not Action.objects.filter(post=post).exists()


def test_the_domain_refuses_a_long_staff_reason_whoever_calls_it():
    with pytest.raises(RemovalRefused, match="Keep the reason to 2,000 characters"):
        remove_post(staff=StaffFactory(), post_id=PostFactory().pk, ground="hate", reason="r" * 2001)
