"""Staff say why they add a user, set or disable a password, delete a user or delete an organisation in the admin:
each page asks a reason, refuses the change without one (nothing changes, the page says so), and the audit event
keeps the reason with the values (never a password or its hash)."""

from __future__ import annotations

import pytest
from django.contrib.admin.models import LogEntry
from django.core.exceptions import ValidationError
from django.test import Client

from accounts.models import Role, User
from audit.models import AuditEvent, AuditVerb
from factcheck.member_changes import delete_organisation, delete_user
from factcheck.models import Organisation
from tests.admin.test_people_admin import USERS, events, log_text
from tests.factories import PASSWORD, FactCheckerFactory, OrganisationFactory, PageFactory, RatingFactory, UserFactory

pytestmark = pytest.mark.django_db

ORGANISATIONS = "/admin/factcheck/organisation/"
REQUIRED = "A reason is required: every change to a person&#x27;s account or access records why."


def no_people_events() -> bool:
    return not AuditEvent.objects.filter(verb__in=[
        AuditVerb.USER_CREATED, AuditVerb.USER_CHANGED, AuditVerb.USER_DELETED, AuditVerb.ORGANISATION_DELETED,
    ]).exists()


# Adding a user


def test_adding_a_user_without_a_reason_is_refused_and_nobody_is_made(admin):
    page = admin.get(f"{USERS}add/").content.decode()

    response = admin.post(f"{USERS}add/", {
        "username": "sam", "email": "sam@factdesk.example", "role": Role.TRUST_SAFETY, "usable_password": "false",
        "reason": "  ",
    })

    assert 'name="reason"' in page and "Reason for the change" in page
    assert response.status_code == 200 and REQUIRED in response.content.decode()
    assert not User.objects.filter(username="sam").exists() and no_people_events()


def test_a_user_added_is_audited_with_the_reason_role_organisation_and_staff_status(admin, root):
    response = admin.post(f"{USERS}add/", {
        "username": "sam", "email": "sam@factdesk.example", "role": Role.TRUST_SAFETY, "usable_password": "false",
        "reason": "Joins the trust-and-safety desk (ticket 4411).",
    })

    sam = User.objects.get(username="sam")
    assert response.status_code == 302 and sam.is_staff
    (event,) = events(AuditVerb.USER_CREATED)
    assert (event.actor, event.target_id, event.reason) == (root, str(sam.pk), "Joins the trust-and-safety desk "
                                                                              "(ticket 4411).")
    assert event.data == {"username": "sam", "role": "trust_safety", "organisation": "", "is_staff": "yes",
                          "is_superuser": "no", "password": "none"}
    assert "root created user sam (trust and safety, staff)" in log_text(admin)
    assert "Reason: Joins the trust-and-safety desk" in admin.get(f"{USERS}{sam.pk}/history/").content.decode()


# The password page


def password_page(admin: Client, user: User, **posted: str):
    return admin.post(f"{USERS}{user.pk}/password/", posted)


def test_the_password_page_asks_a_reason(admin):
    page = admin.get(f"{USERS}{UserFactory().pk}/password/").content.decode()

    assert 'name="reason"' in page and '<label for="id_reason"' in page


def test_setting_a_password_without_a_reason_is_refused_and_the_old_one_still_works(admin):
    nadia = UserFactory(username="nadia")

    response = password_page(admin, nadia, usable_password="true", password1="violet-harbour-42",
                             password2="violet-harbour-42", reason="")

    assert response.status_code == 200 and REQUIRED in response.content.decode()
    assert User.objects.get(pk=nadia.pk).check_password(PASSWORD) and no_people_events()


def test_changing_a_password_is_audited_with_the_reason_never_the_password(admin, root):
    nadia = UserFactory(username="nadia")

    response = password_page(admin, nadia, usable_password="true", password1="violet-harbour-42",
                             password2="violet-harbour-42", reason="Locked out; identity checked by phone.")

    assert response.status_code == 302 and Client().login(username="nadia", password="violet-harbour-42")
    (event,) = events(AuditVerb.USER_CHANGED)
    assert (event.actor, event.reason, event.data["changes"]) == (
        root, "Locked out; identity checked by phone.", {"password": ["set", "changed"]})
    stored = User.objects.get(pk=nadia.pk).password
    assert "violet" not in str(event.data) and stored not in str(event.data) and stored[:20] not in str(event.data)
    history = admin.get(f"{USERS}{nadia.pk}/history/").content.decode()
    assert "Password changed. Reason: Locked out; identity checked by phone." in history


def test_disabling_password_sign_in_needs_a_reason_and_is_audited(admin, root):
    rita = FactCheckerFactory(username="rita")
    disable = {"usable_password": "false", "unset-password": "Disable password-based authentication"}

    refused = password_page(admin, rita, **disable, reason="")
    assert REQUIRED in refused.content.decode() and User.objects.get(pk=rita.pk).has_usable_password()
    assert no_people_events()

    response = password_page(admin, rita, **disable, reason="Left Verifact; her account stays for the record.")

    assert response.status_code == 302 and not User.objects.get(pk=rita.pk).has_usable_password()
    (event,) = events(AuditVerb.USER_CHANGED)
    assert (event.actor, event.reason, event.data["changes"]) == (
        root, "Left Verifact; her account stays for the record.", {"password": ["set", "none"]})


# Deleting users


def test_deleting_a_user_without_a_reason_is_refused_and_nothing_is_deleted(admin):
    nadia = UserFactory(username="nadia")
    page = admin.get(f"{USERS}{nadia.pk}/delete/").content.decode()

    response = admin.post(f"{USERS}{nadia.pk}/delete/", {"post": "yes", "reason": ""})

    assert 'name="reason"' in page and "Reason for deleting" in page
    content = response.content.decode()
    assert response.status_code == 200 and REQUIRED in content and "Nothing was deleted." in content
    assert 'name="reason"' in content  # the confirmation again, to give one
    assert User.objects.filter(pk=nadia.pk).exists() and no_people_events() and not LogEntry.objects.exists()


def test_deleting_a_user_is_audited_with_the_reason_and_the_pages_they_owned(admin, root):
    nadia = UserFactory(username="nadia")
    PageFactory(external_id="daily-truth").owners.add(nadia)

    response = admin.post(f"{USERS}{nadia.pk}/delete/", {"post": "yes", "reason": "Duplicate of nadia2."})

    assert response.status_code == 302 and not User.objects.filter(pk=nadia.pk).exists()
    (event,) = events(AuditVerb.USER_DELETED)
    assert (event.actor, event.reason, event.data["username"], event.data["pages"]) == (
        root, "Duplicate of nadia2.", "nadia", ["daily-truth"])
    assert event.data["was"]["role"] == "page_owner" and event.data["was"]["password"] == "set"


def delete_selected(admin: Client, model_url: str, rows, **posted: str):
    return admin.post(model_url, {"action": "delete_selected", "_selected_action": [row.pk for row in rows],
                                  "post": "yes", **posted})


def test_deleting_selected_users_without_a_reason_is_refused_and_nothing_is_deleted(admin):
    users = [UserFactory(username="nadia"), UserFactory(username="omar")]
    confirmation = admin.post(USERS, {"action": "delete_selected", "_selected_action": [u.pk for u in users]})

    response = delete_selected(admin, USERS, users)

    assert 'name="reason"' in confirmation.content.decode()
    assert response.status_code == 200 and REQUIRED in response.content.decode()
    assert User.objects.filter(username__in=["nadia", "omar"]).count() == 2 and no_people_events()


def test_deleting_selected_users_audits_each_with_the_reason(admin, root):
    users = [UserFactory(username="nadia"), UserFactory(username="omar")]

    response = delete_selected(admin, USERS, users, reason="Test accounts from the pilot.")

    assert response.status_code == 302
    assert list(User.objects.values_list("username", flat=True)) == ["root"]
    assert sorted((e.actor, e.data["username"], e.reason) for e in events(AuditVerb.USER_DELETED)) == [
        (root, "nadia", "Test accounts from the pilot."), (root, "omar", "Test accounts from the pilot.")]


def test_a_user_whose_work_is_on_record_is_not_deleted_and_the_page_says_to_deactivate_them(admin):
    rita = FactCheckerFactory(username="rita")
    RatingFactory(reviewer=rita)

    page = admin.get(f"{USERS}{rita.pk}/delete/").content.decode()
    admin.post(f"{USERS}{rita.pk}/delete/", {"post": "yes", "reason": "Left."})

    assert "Cannot delete user" in page and "To end their access, untick “Active” on their page" in page
    assert User.objects.filter(pk=rita.pk).exists() and not events(AuditVerb.USER_DELETED)


# Deleting organisations


def test_deleting_an_organisation_without_a_reason_is_refused_and_nothing_is_deleted(admin):
    verifact = OrganisationFactory(name="Verifact")

    single = admin.post(f"{ORGANISATIONS}{verifact.pk}/delete/", {"post": "yes"})
    bulk = delete_selected(admin, ORGANISATIONS, [verifact])

    for response in (single, bulk):
        assert response.status_code == 200 and REQUIRED in response.content.decode()
    assert Organisation.objects.filter(pk=verifact.pk).exists() and no_people_events()


@pytest.mark.parametrize("how", ["its delete page", "delete selected"])
def test_deleting_an_organisation_is_audited_with_the_reason_and_what_it_was(admin, root, how):
    verifact = OrganisationFactory(name="Verifact", url="https://verifact.example", languages=["fr"])
    reason = "Never started: its fact-checkers joined Faktenwerk."

    if how == "its delete page":
        response = admin.post(f"{ORGANISATIONS}{verifact.pk}/delete/", {"post": "yes", "reason": reason})
    else:
        response = delete_selected(admin, ORGANISATIONS, [verifact], reason=reason)

    assert response.status_code == 302 and not Organisation.objects.filter(pk=verifact.pk).exists()
    (event,) = events(AuditVerb.ORGANISATION_DELETED)
    assert (event.actor, event.target_id, event.reason) == (root, str(verifact.pk), reason)
    assert event.data == {"name": "Verifact", "was": {"name": "Verifact", "url": "https://verifact.example",
                                                      "languages": "fr", "countries": ""}}
    assert "root deleted organisation Verifact" in log_text(admin)


def test_an_organisation_with_members_is_not_deleted_and_the_page_says_to_move_them(admin):
    verifact = OrganisationFactory(name="Verifact")
    FactCheckerFactory(organisation=verifact)

    page = admin.get(f"{ORGANISATIONS}{verifact.pk}/delete/").content.decode()
    admin.post(f"{ORGANISATIONS}{verifact.pk}/delete/", {"post": "yes", "reason": "Closed."})

    assert "Move its members to another organisation first" in page
    assert Organisation.objects.filter(pk=verifact.pk).exists() and not events(AuditVerb.ORGANISATION_DELETED)


def test_an_organisation_someone_joined_after_its_delete_page_was_shown_is_not_deleted(root):
    # The page found nobody; a member joined before the confirmation: the domain, under the lock, refuses.
    verifact = OrganisationFactory(name="Verifact")
    FactCheckerFactory(organisation=verifact)

    with pytest.raises(ValidationError, match="Verifact has members: move them to another organisation first."):
        delete_organisation(organisation_id=verifact.pk, by=root, reason="Closed.")

    assert Organisation.objects.filter(pk=verifact.pk).exists() and not events(AuditVerb.ORGANISATION_DELETED)


def test_a_user_or_organisation_another_staff_member_deleted_meanwhile_is_refused_not_a_500(root):
    """Two staff confirming the same deletion: the second found no row under its lock (DoesNotExist, a 500 in the
    admin, and a history entry for a row "Delete selected" had not deleted); it is said as a refusal (a review)."""
    gone_user, gone_organisation = UserFactory(), OrganisationFactory()
    user_id, organisation_id = gone_user.pk, gone_organisation.pk
    gone_user.delete()
    gone_organisation.delete()

    with pytest.raises(ValidationError, match="This user was deleted meanwhile.") as refused:
        delete_user(user_id=user_id, by=root, reason="A leaver.")
    assert refused.value.code == "already_deleted"
    with pytest.raises(ValidationError, match="This organisation was deleted meanwhile."):
        delete_organisation(organisation_id=organisation_id, by=root, reason="Closed.")
    assert not events(AuditVerb.USER_DELETED) and not events(AuditVerb.ORGANISATION_DELETED)
