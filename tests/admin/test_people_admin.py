"""People in the admin: every change to a user, their organisation, an organisation's coverage and a page's owners
is an audit event with who, what (old and new values) and why; a fact-checker is never left without an
organisation; nothing is saved when a form is refused."""

from __future__ import annotations

import html
import re
from datetime import date, datetime, time
from typing import Any

import pytest
from django.core import mail
from django.forms import CheckboxInput, MultiWidget
from django.test import Client

from accounts.models import Role, User
from audit.models import AuditEvent, AuditVerb
from factcheck.members import create_user, organisation_of
from factcheck.models import Membership, Organisation
from tests.factories import FactCheckerFactory, OrganisationFactory, PageFactory, UserFactory

pytestmark = pytest.mark.django_db

USERS = "/admin/accounts/user/"
LOG = "/admin/audit/auditevent/"


def _posted(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, (date, time, datetime)):
        return value.isoformat()
    if isinstance(value, (list, tuple)):
        return [getattr(item, "pk", item) for item in value]
    return getattr(value, "pk", value)


def as_shown(page) -> dict[str, Any]:
    """What the browser would post back from an admin change page, unchanged: the main form and each inline."""
    forms = [page.context["adminform"].form]
    data: dict[str, Any] = {}
    for inline in page.context["inline_admin_formsets"]:
        management = inline.formset.management_form
        data.update({management[name].html_name: management[name].value() for name in management.fields})
        forms += inline.formset.forms
    for form in forms:
        for field in form:
            if field.field.disabled:
                continue
            names = [field.html_name] + ([field.html_initial_name] if field.field.show_hidden_initial else [])
            widget, value = field.field.widget, field.value()
            for name in names:  # a field with a callable default also posts its value as shown (Django compares)
                if isinstance(widget, CheckboxInput):
                    if value:
                        data[name] = "on"
                elif isinstance(widget, MultiWidget):
                    for i, part in enumerate(widget.decompress(value)):
                        data[f"{name}_{i}"] = _posted(part)
                else:
                    data[name] = _posted(value)
    return data


def change_user_page(admin: Client, user: User, **changes: Any):
    """Post `user`'s change page as shown, with `changes` (field names as posted)."""
    page = admin.get(f"{USERS}{user.pk}/change/")
    assert page.status_code == 200
    return admin.post(f"{USERS}{user.pk}/change/", {**as_shown(page), **changes})


def log_text(admin: Client) -> str:
    """The audit log's page as read: its sentences without their links."""
    return html.unescape(re.sub(r"<[^>]+>", "", admin.get(LOG).content.decode()))


def events(verb: str) -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(verb=verb).order_by("id"))


# Adding users


def test_a_user_added_in_the_admin_is_made_with_its_role_and_organisation_and_audited(admin, root):
    verifact = OrganisationFactory(name="Verifact")

    response = admin.post(f"{USERS}add/", {
        "username": "rita", "email": "rita@verifact.example", "role": Role.FACTCHECKER,
        "organisation": verifact.pk, "usable_password": "true",
        "password1": "violet-harbour-42", "password2": "violet-harbour-42", "reason": "Joined Verifact's desk.",
    })

    rita = User.objects.get(username="rita")
    assert response.status_code == 302 and response["Location"] == f"{USERS}{rita.pk}/change/"
    assert (rita.role, organisation_of(rita), rita.email) == (Role.FACTCHECKER, verifact, "rita@verifact.example")
    assert Client().login(username="rita", password="violet-harbour-42")
    (event,) = events(AuditVerb.USER_CREATED)
    assert (event.actor, event.target_id) == (root, str(rita.pk))
    assert event.data == {"username": "rita", "role": "factchecker", "organisation": "Verifact", "is_staff": "no",
                          "is_superuser": "no", "password": "set"}
    assert event.reason == "Joined Verifact's desk."
    assert "root created user rita (fact-checker, Verifact)" in log_text(admin)


def test_a_user_added_with_password_based_authentication_disabled_has_no_password_and_it_is_recorded(admin):
    response = admin.post(f"{USERS}add/", {
        "username": "nadia", "email": "nadia@pages.example", "role": Role.PAGE_OWNER, "usable_password": "false",
        "reason": "Owns the Daily Truth page.",
    })

    nadia = User.objects.get(username="nadia")
    assert response.status_code == 302 and not nadia.has_usable_password()
    (event,) = events(AuditVerb.USER_CREATED)
    assert (event.data["role"], event.data["organisation"], event.data["password"]) == ("page_owner", "", "none")


def test_a_user_added_without_a_password_is_invited_by_name_to_set_one(
    admin, root, django_capture_on_commit_callbacks, run_worker
):
    root.first_name, root.last_name = "Ana", "Ruiz"
    root.save(update_fields=["first_name", "last_name"])
    with django_capture_on_commit_callbacks(execute=True):
        response = admin.post(f"{USERS}add/", {
            "username": "nadia", "email": "nadia@pages.example", "role": Role.PAGE_OWNER, "usable_password": "false",
            "reason": "Owns the Daily Truth page.",
        }, follow=True)

    assert "An invitation to set a password is e-mailed to nadia@pages.example. Its link works for 7 days;" \
        in response.content.decode()
    run_worker()
    (message,) = mail.outbox
    assert message.to == ["nadia@pages.example"] and message.subject == "Set your Factdesk password"
    assert message.body.startswith("Ana Ruiz made a Factdesk account for you (Page owner). Your username is nadia.")


def test_adding_a_person_nobody_could_sign_in_as_is_refused(admin):
    response = admin.post(f"{USERS}add/", {
        "username": "nadie", "role": Role.TRUST_SAFETY, "usable_password": "false", "reason": "New staff.",
    })

    assert response.status_code == 200
    assert "Nobody could ever sign in to this account: give their e-mail address" in response.content.decode()
    assert not User.objects.filter(username="nadie").exists() and not events(AuditVerb.USER_CREATED)


def test_adding_a_fact_checker_without_an_organisation_is_refused_naming_the_problem(admin):
    response = admin.post(f"{USERS}add/", {
        "username": "rita", "role": Role.FACTCHECKER, "usable_password": "false", "reason": "New reviewer.",
    })

    assert response.status_code == 200
    assert ("A fact-checker must belong to a fact-checking organisation. Choose the organisation they review for."
            in response.content.decode())
    assert not User.objects.filter(username="rita").exists() and not events(AuditVerb.USER_CREATED)


def test_an_organisation_for_anyone_but_a_fact_checker_is_refused_on_the_add_page(admin):
    response = admin.post(f"{USERS}add/", {
        "username": "sam", "role": Role.PAGE_OWNER, "organisation": OrganisationFactory().pk,
        "usable_password": "false", "reason": "New page owner.",
    })

    assert "Only a fact-checker belongs to an organisation, not a page owner." in response.content.decode()
    assert not User.objects.filter(username="sam").exists()


# Changing users


def test_a_role_change_with_its_organisation_is_one_audited_change_with_old_and_new_values_and_the_reason(
    admin, root
):
    owner = UserFactory(username="nadia")
    verifact = OrganisationFactory(name="Verifact")
    page = admin.get(f"{USERS}{owner.pk}/change/")
    data = {**as_shown(page), "role": Role.FACTCHECKER, "membership-TOTAL_FORMS": "1",
            "membership-0-organisation": verifact.pk, "reason": "Joined Verifact's desk."}

    response = admin.post(f"{USERS}{owner.pk}/change/", data)

    assert response.status_code == 302
    owner.refresh_from_db()
    assert (owner.role, organisation_of(owner)) == (Role.FACTCHECKER, verifact)
    (event,) = events(AuditVerb.USER_CHANGED)
    assert (event.actor, event.target_type, event.target_id, event.reason) == (
        root, "accounts.user", str(owner.pk), "Joined Verifact's desk.")
    assert event.data["changes"] == {"role": ["page_owner", "factchecker"], "organisation": ["", "Verifact"]}
    log = log_text(admin)
    assert "root changed" in log and "role Page owner → Fact-checker; organisation — → Verifact" in log
    history = admin.get(f"{USERS}{owner.pk}/history/").content.decode()
    assert "Reason: Joined Verifact" in history


def test_deactivating_a_user_is_audited(admin, root):
    rita = FactCheckerFactory(username="rita")
    data = as_shown(admin.get(f"{USERS}{rita.pk}/change/"))
    del data["is_active"]  # the box unticked

    response = admin.post(f"{USERS}{rita.pk}/change/", {**data, "reason": "Left the organisation."})

    assert response.status_code == 302
    rita.refresh_from_db()
    assert not rita.is_active
    (event,) = events(AuditVerb.USER_CHANGED)
    assert (event.data["changes"], event.reason) == ({"is_active": ["yes", "no"]}, "Left the organisation.")


def test_moving_a_fact_checker_to_another_organisation_is_audited(admin):
    verifact, faktenwerk = OrganisationFactory(name="Verifact"), OrganisationFactory(name="Faktenwerk")
    rita = FactCheckerFactory(username="rita", organisation=verifact)

    change_user_page(admin, rita, **{"membership-0-organisation": faktenwerk.pk, "reason": "Moved to Berlin."})

    assert organisation_of(User.objects.get(pk=rita.pk)) == faktenwerk
    (event,) = events(AuditVerb.USER_CHANGED)
    assert event.data["changes"] == {"organisation": ["Verifact", "Faktenwerk"]}


def test_deleting_a_membership_with_the_role_is_audited(admin):
    rita = FactCheckerFactory(username="rita", organisation=OrganisationFactory(name="Verifact"))

    response = change_user_page(admin, rita, role=Role.PAGE_OWNER, **{"membership-0-DELETE": "on",
                                                                       "reason": "Now runs a page."})

    assert response.status_code == 302
    assert not Membership.objects.filter(user=rita).exists()
    (event,) = events(AuditVerb.USER_CHANGED)
    assert event.data["changes"] == {"role": ["factchecker", "page_owner"], "organisation": ["Verifact", ""]}


@pytest.mark.parametrize("how", ["membership deleted", "role given, no organisation"])
def test_a_fact_checker_without_an_organisation_is_refused_and_nothing_changes(admin, how):
    if how == "membership deleted":
        user = FactCheckerFactory(username="rita", organisation=OrganisationFactory(name="Verifact"))
        changes = {"membership-0-DELETE": "on"}
    else:
        user = UserFactory(username="rita")
        changes = {"role": Role.FACTCHECKER}

    response = change_user_page(admin, user, **changes, reason="Tidying up.")

    assert response.status_code == 200
    assert ("A fact-checker must belong to a fact-checking organisation. Choose their organisation under "
            "“Organisation” below") in response.content.decode()
    after = User.objects.get(pk=user.pk)
    assert (after.role, organisation_of(after) is None) == (user.role, how != "membership deleted")
    assert not events(AuditVerb.USER_CHANGED)


def test_a_change_without_a_reason_is_refused(admin):
    rita = FactCheckerFactory(username="rita")

    response = change_user_page(admin, rita, email="new@verifact.example", reason="")

    assert "A reason is required" in response.content.decode()
    assert User.objects.get(pk=rita.pk).email == rita.email and not events(AuditVerb.USER_CHANGED)


def test_setting_a_password_in_the_admin_is_audited_without_the_password(admin, root):
    nadia = create_user(username="nadia", role=Role.PAGE_OWNER, password=None, email="nadia@pages.example")

    response = admin.post(f"{USERS}{nadia.pk}/password/", {
        "usable_password": "true", "password1": "violet-harbour-42", "password2": "violet-harbour-42",
        "reason": "She asked for one by phone.",
    })

    assert response.status_code == 302
    (event,) = events(AuditVerb.USER_CHANGED)
    assert (event.actor, event.data["changes"]) == (root, {"password": ["none", "set"]})
    assert "violet" not in str(event.data) and User.objects.get(pk=nadia.pk).password not in str(event.data)


def test_deleting_a_user_is_audited_with_what_the_account_was(admin, root):
    nadia = UserFactory(username="nadia")

    response = admin.post(f"{USERS}{nadia.pk}/delete/", {"post": "yes", "reason": "Made by mistake."})

    assert response.status_code == 302 and not User.objects.filter(pk=nadia.pk).exists()
    (event,) = events(AuditVerb.USER_DELETED)
    assert (event.actor, event.target_id, event.data["username"], event.data["was"]["role"]) == (
        root, str(nadia.pk), "nadia", "page_owner")
    assert "root deleted user nadia" in log_text(admin)


# Organisations and pages


def test_changing_an_organisations_coverage_is_audited_with_old_and_new_lists(admin, root):
    verifact = OrganisationFactory(name="Verifact", languages=["fr"], countries=["FR"])
    page = admin.get(f"/admin/factcheck/organisation/{verifact.pk}/change/")
    data = {**as_shown(page), "languages": '["fr", "de"]', "countries": '["FR", "BE"]',
            "reason": "Now covers Belgium and German."}

    response = admin.post(f"/admin/factcheck/organisation/{verifact.pk}/change/", data)

    assert response.status_code == 302
    verifact.refresh_from_db()
    assert (verifact.languages, verifact.countries) == (["fr", "de"], ["FR", "BE"])
    (event,) = events(AuditVerb.ORGANISATION_CHANGED)
    assert (event.actor, event.reason) == (root, "Now covers Belgium and German.")
    assert event.data["changes"] == {"languages": ["fr", "fr, de"], "countries": ["FR", "FR, BE"]}
    assert "root changed organisation Verifact: countries FR → FR, BE; languages fr → fr, de" in log_text(admin)


def test_an_organisation_saved_unchanged_writes_no_event_and_a_change_needs_a_reason(admin):
    verifact = OrganisationFactory(name="Verifact", languages=["fr"])
    url = f"/admin/factcheck/organisation/{verifact.pk}/change/"
    shown = as_shown(admin.get(url))

    refused = admin.post(url, {**shown, "languages": '["de"]', "reason": ""})
    unchanged = admin.post(url, {**shown, "reason": "Checked."})

    assert "A reason is required" in refused.content.decode() and unchanged.status_code == 302
    assert Organisation.objects.get(pk=verifact.pk).languages == ["fr"] and not events(AuditVerb.ORGANISATION_CHANGED)


def test_moving_a_pages_ownership_to_another_owner_is_audited(admin, root):
    alice, bob = UserFactory(username="alice"), UserFactory(username="bob")
    page = PageFactory(name="Daily Truth")
    page.owners.add(alice)
    url = f"/admin/factcheck/page/{page.pk}/change/"

    response = admin.post(url, {**as_shown(admin.get(url)), "owners": str(bob.pk), "reason": "Sold to Bob."})

    assert response.status_code == 302
    assert list(page.owners.all()) == [bob]
    (event,) = events(AuditVerb.PAGE_OWNERS_CHANGED)
    assert (event.actor, event.target_id, event.reason) == (root, str(page.pk), "Sold to Bob.")
    assert event.data["changes"] == {"owners": ["alice", "bob"]}
    assert "changed who owns" in log_text(admin)


def test_trust_and_safety_read_organisations_and_pages_without_a_reason_field(staff_client):
    organisation, page = OrganisationFactory(), PageFactory()

    for url in (f"/admin/factcheck/organisation/{organisation.pk}/change/", f"/admin/factcheck/page/{page.pk}/change/"):
        response = staff_client.get(url)
        assert response.status_code == 200 and 'name="reason"' not in response.content.decode()
