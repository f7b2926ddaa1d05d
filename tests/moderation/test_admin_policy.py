"""Staff edit the enforcement policy and repeat-offender numbers in the admin; every change is audited."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from django.test import Client

from audit.models import AuditEvent, AuditVerb
from factcheck.members import create_user
from moderation.models import DistributionChange, EnforcementPolicy, PostDistribution, RepeatOffenderPolicy
from tests.factories import PASSWORD, DecisionFactory, PageFactory, PostFactory


@pytest.fixture
def staff_client(client, db):
    create_user(username="sam", role="trust_safety", password=PASSWORD)
    assert client.login(username="sam", password=PASSWORD)
    return client


def policy_form(policy: EnforcementPolicy, **changes) -> dict:
    data = {
        "verdict": policy.verdict, "feed_multiplier": str(policy.feed_multiplier), "label": policy.label,
        "warn_sharers": "on" if policy.warn_sharers else "", "page_strike": "on" if policy.page_strike else "",
    }
    data.update(changes)
    return {k: v for k, v in data.items() if v != ""}


def test_staff_change_a_verdicts_multiplier_and_the_change_is_audited(staff_client):
    policy = EnforcementPolicy.objects.get(verdict="partly_false")
    url = f"/admin/moderation/enforcementpolicy/{policy.pk}/change/"
    assert staff_client.get(url).status_code == 200
    response = staff_client.post(
        url, policy_form(policy, feed_multiplier="0.4", reason="Too harsh for a mix."), follow=True
    )
    assert response.status_code == 200
    assert b"applies to new decisions" in response.content
    assert EnforcementPolicy.objects.get(pk=policy.pk).feed_multiplier == Decimal("0.4")
    event = AuditEvent.objects.get(verb=AuditVerb.POLICY_CHANGED)
    assert event.actor.username == "sam"
    assert event.data["changes"] == {"feed_multiplier": ["0.500", "0.400"]}


def test_a_multiplier_above_one_is_refused_in_the_admin(staff_client):
    policy = EnforcementPolicy.objects.get(verdict="false")
    response = staff_client.post(
        f"/admin/moderation/enforcementpolicy/{policy.pk}/change/", policy_form(policy, feed_multiplier="1.5")
    )
    assert response.status_code == 200
    assert b"Ensure this value is less than or equal to 1" in response.content
    assert EnforcementPolicy.objects.get(pk=policy.pk).feed_multiplier == Decimal("0.2")
    assert not AuditEvent.objects.filter(verb=AuditVerb.POLICY_CHANGED).exists()


def test_staff_change_the_repeat_offender_threshold(staff_client):
    policy = RepeatOffenderPolicy.current()
    response = staff_client.post(
        f"/admin/moderation/repeatoffenderpolicy/{policy.pk}/change/",
        {"strike_threshold": "5", "window_days": "90", "page_multiplier": "0.5", "reason": "Fewer false alarms."},
    )
    assert response.status_code == 302
    assert RepeatOffenderPolicy.current().strike_threshold == 5
    assert AuditEvent.objects.get(verb=AuditVerb.POLICY_CHANGED).data["changes"] == {"strike_threshold": ["3", "5"]}


def test_staff_can_read_but_never_edit_ratings_or_audit_events(staff_client):
    assert staff_client.get("/admin/factcheck/rating/").status_code == 200
    assert staff_client.get("/admin/audit/auditevent/").status_code == 200
    assert staff_client.get("/admin/audit/auditevent/add/").status_code == 403


def test_fact_checkers_and_page_owners_have_no_admin(client, factchecker, page_owner):
    for user in (factchecker, page_owner):
        client.force_login(user)
        response = client.get("/admin/moderation/enforcementpolicy/")
        assert response.status_code == 302 and "/admin/login/" in response["Location"]


def test_the_job_dashboard_is_for_staff_only(staff_client, factchecker):
    from django.test import Client

    assert staff_client.get("/admin/rq/").status_code == 200
    other = Client()
    other.force_login(factchecker)
    assert other.get("/admin/rq/").status_code == 302


def test_staff_see_appeals_and_the_overdue_filter_in_the_admin(staff_client):
    assert staff_client.get("/admin/moderation/appeal/").status_code == 200
    assert staff_client.get("/admin/moderation/appeal/?overdue=yes").status_code == 200
    assert staff_client.get("/admin/moderation/appeal/add/").status_code == 403


@pytest.mark.parametrize(("field", "value"), [("reason", "why\x07"), ("label", "bad\x1bthing")])
def test_a_control_character_in_the_reason_or_the_label_is_a_form_error_not_a_500(staff_client, field, value):
    policy = EnforcementPolicy.objects.get(verdict="satire")
    data = policy_form(policy, feed_multiplier="0.9", reason="Satire misleads some.")
    data[field] = value
    response = staff_client.post(f"/admin/moderation/enforcementpolicy/{policy.pk}/change/", data)
    assert response.status_code == 200
    assert "Take out the control characters" in response.content.decode()
    assert EnforcementPolicy.objects.get(pk=policy.pk).feed_multiplier == policy.feed_multiplier
    assert not AuditEvent.objects.filter(verb=AuditVerb.POLICY_CHANGED).exists()


def test_a_policy_label_with_contact_details_or_over_200_characters_is_a_form_error(staff_client):
    """The label the policy gives every post of its verdict is public: as an override's, no phone number in it."""
    policy = EnforcementPolicy.objects.get(verdict="satire")
    for label, message in (("Questions? Call 020 7946 0958", "leave out e-mail addresses and phone numbers"),
                           ("x" * 201, "Ensure this value has at most 200 characters")):
        data = policy_form(policy, feed_multiplier="0.9", reason="Clearer label.")
        data["label"] = label
        response = staff_client.post(f"/admin/moderation/enforcementpolicy/{policy.pk}/change/", data)
        assert response.status_code == 200 and message in response.content.decode()
        assert EnforcementPolicy.objects.get(pk=policy.pk).label == policy.label


def test_a_repeat_offender_policy_reason_with_a_control_character_is_a_form_error(staff_client):
    policy = RepeatOffenderPolicy.current()
    response = staff_client.post(f"/admin/moderation/repeatoffenderpolicy/{policy.pk}/change/", {
        "strike_threshold": 5, "window_days": policy.window_days, "page_multiplier": str(policy.page_multiplier),
        "reason": "x\x1b[31m",
    })
    assert response.status_code == 200 and "Take out the control characters" in response.content.decode()
    assert RepeatOffenderPolicy.current().strike_threshold == policy.strike_threshold


def test_a_new_page_multiplier_reaches_repeat_offenders_at_once_and_the_feed_names_the_policy(
    staff_client, settings, django_capture_on_commit_callbacks, factchecker
):
    """The admin had said "past decisions keep their terms" while the next hourly pass applied the new numbers
    to every page, and the feed said "page became a repeat offender" of a page that already was one."""
    settings.FACTDESK_JOBS_IN_PROCESS = True
    page = PageFactory()
    innocent = PostFactory(page=page, queue_state="unflagged")
    for post in PostFactory.create_batch(3, page=page):
        DecisionFactory(reviewer=factchecker, post=post)
    assert PostDistribution.objects.get(post=innocent).multiplier == Decimal("0.5")
    policy = RepeatOffenderPolicy.current()

    with django_capture_on_commit_callbacks(execute=True):
        response = staff_client.post(
            f"/admin/moderation/repeatoffenderpolicy/{policy.pk}/change/",
            {"strike_threshold": "3", "window_days": "90", "page_multiplier": "0.25", "reason": "Harder on repeats."},
            follow=True,
        )

    assert "recomputed under the new numbers at once" in response.content.decode()
    assert "past decisions keep their terms" not in response.content.decode()
    assert PostDistribution.objects.get(post=innocent).multiplier == Decimal("0.25")
    assert DistributionChange.objects.filter(post=innocent).latest("id").cause == (
        "the repeat-offender policy changed the page multiplier"
    )
    assert AuditEvent.objects.get(verb=AuditVerb.POLICY_CHANGED).data["applies_to"] == "every page's standing, from now"


def test_the_row_of_true_which_takes_no_action_is_shown_not_offered_for_editing(staff_client):
    """Staff changed True's row to x0.5 with a label, were told it applied, and True ratings still did nothing."""
    policy = EnforcementPolicy.objects.get(verdict="true")
    url = f"/admin/moderation/enforcementpolicy/{policy.pk}/change/"
    page = staff_client.get(url).content.decode()
    assert "takes no action of its own, whatever is set" in page
    assert 'name="_save"' not in page
    response = staff_client.post(url, policy_form(policy, feed_multiplier="0.5", reason="Label true posts."))
    assert response.status_code == 403
    assert EnforcementPolicy.objects.get(pk=policy.pk).feed_multiplier == policy.feed_multiplier


def test_a_form_opened_before_someone_elses_save_is_refused_and_undoes_nothing(staff_client):
    policy = EnforcementPolicy.objects.get(verdict="false")
    url = f"/admin/moderation/enforcementpolicy/{policy.pk}/change/"
    seen = re.search(r'name="seen" value="([^"]+)"', staff_client.get(url).content.decode()).group(1)
    # Meanwhile tariq opens the same form and lowers the multiplier.
    create_user(username="tariq", role="trust_safety", password=PASSWORD)
    tariq = Client()
    assert tariq.login(username="tariq", password=PASSWORD)
    tariq_seen = re.search(r'name="seen" value="([^"]+)"', tariq.get(url).content.decode()).group(1)
    assert tariq_seen == seen
    tariq.post(url, policy_form(policy, feed_multiplier="0.1", seen=tariq_seen, reason="Stronger demotion."))
    assert EnforcementPolicy.objects.get(pk=policy.pk).feed_multiplier == Decimal("0.1")

    # sam's form still shows 0.2 and changes only the label: saving it would set the multiplier back.
    stale = policy_form(policy, label="False. Checked by fact-checkers.", seen=seen, reason="Shorter label.")
    response = staff_client.post(url, stale)
    assert response.status_code == 200
    page = response.content.decode()
    assert "This policy was changed by tariq at" in page and "your change was not saved" in page
    kept = EnforcementPolicy.objects.get(pk=policy.pk)
    assert (kept.feed_multiplier, kept.label) == (Decimal("0.1"), policy.label)
    assert AuditEvent.objects.filter(verb=AuditVerb.POLICY_CHANGED).count() == 1
    # The form shows the values in force, tariq's multiplier among them, and the reason sam typed: sent as shown,
    # with the label changed again, it undoes nothing.
    assert re.search(r'name="feed_multiplier" value="0.100"', page) and "Shorter label." in page
    shown = {name: re.search(rf'name="{name}" value="([^"]*)"', page).group(1)
             for name in ("feed_multiplier", "label", "seen")}
    staff_client.post(url, {**stale, **shown, "label": "False. Checked by fact-checkers."})
    saved = EnforcementPolicy.objects.get(pk=policy.pk)
    assert (saved.feed_multiplier, saved.label) == (Decimal("0.1"), "False. Checked by fact-checkers.")


def test_saving_a_policy_unchanged_keeps_its_version_so_nobody_elses_form_is_refused(staff_client):
    policy = EnforcementPolicy.objects.get(verdict="false")
    url = f"/admin/moderation/enforcementpolicy/{policy.pk}/change/"
    seen = re.search(r'name="seen" value="([^"]+)"', staff_client.get(url).content.decode()).group(1)
    staff_client.post(url, policy_form(policy, seen=seen, reason="Looked, changed nothing."))  # "Nothing changed."
    assert EnforcementPolicy.objects.get(pk=policy.pk).updated_at.isoformat() == seen
    staff_client.post(url, policy_form(policy, label="False.", seen=seen, reason="Shorter."))
    assert EnforcementPolicy.objects.get(pk=policy.pk).label == "False."
