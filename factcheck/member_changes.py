"""Staff's changes to people and their access, each one audit event with the old and new values and why.

What the admin's user, organisation and page pages call (factcheck.admin_people, factcheck.admin): a user's
account (role, active, staff and superuser status, groups, permissions, names, address, dates) and organisation,
a user's password (set, or password sign-in disabled), deleting a user, an organisation's name, address and
coverage, deleting an organisation, a page's owners. Each function locks the row it changes, reads what the log
records of it before and after the change, and writes one event of what differs (none when nothing does), through
audit.services. Creating a user is factcheck.members' create_user, the rule of a user's place (a fact-checker
belongs to an organisation) its check_place, and the rule that staff say why (a password, a deletion, a new
account: refused without a reason) its staff_reason.

Not durable: the admin saves each change inside a transaction of its own.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.contrib.auth.models import Group, Permission
from django.core.exceptions import ValidationError
from django.db import transaction

from accounts.models import User
from audit.models import AuditVerb
from audit.services import record_event
from factcheck.claims import end_claims_beyond_reach, lock_claimed_posts
from factcheck.members import check_page_owners, check_place, organisation_id_of, place_member, staff_reason
from factcheck.models import Membership, Organisation, Page

# The user's own columns staff may change; change_user saves no other, so nothing changes unrecorded.
USER_FIELDS = ("username", "first_name", "last_name", "email", "role", "is_active", "is_staff", "is_superuser",
               "last_login", "date_joined")
ORGANISATION_FIELDS = ("name", "url", "languages", "countries")
Changes = dict[str, list[str]]  # field -> [old, new], as text


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, (list, tuple)):
        return ", ".join(str(item) for item in value)
    return "" if value is None else str(value)


def access_of(user: User) -> dict[str, str]:
    """What the audit log records of a user, each as text: its columns in USER_FIELDS, whether it has a password
    ("set" or "none"), its groups, its own permissions and its organisation."""
    membership = Membership.objects.filter(user=user).select_related("organisation").first()
    return {
        **{name: _text(getattr(user, name)) for name in USER_FIELDS},
        "password": "set" if user.has_usable_password() else "none",
        "groups": ", ".join(sorted(user.groups.values_list("name", flat=True))),
        "permissions": ", ".join(sorted(
            f"{app}.{codename}" for app, codename in
            user.user_permissions.values_list("content_type__app_label", "codename"))),
        "organisation": membership.organisation.name if membership else "",
    }


def _differences(before: Mapping[str, str], after: Mapping[str, str]) -> Changes:
    return {name: [before.get(name, ""), value] for name, value in after.items() if before.get(name, "") != value}


def _locked_user(user_id: int) -> User:
    # NO KEY: claims, ratings and audit rows reference users, and no change here touches the key. Two staff
    # saving one user serialise, so each event's old values are what the other left. See docs/concurrency.md.
    return User.objects.select_for_update(no_key=True).get(pk=user_id)


@dataclass
class UserChange:
    user: User
    changes: Changes = field(default_factory=dict)
    claims_released: int = 0  # change_user: the claims that ended with it (end_claims_beyond_reach)


@contextmanager
def recording_user_change(*, user_id: int, by: User, reason: str = "") -> Iterator[UserChange]:
    """A user, locked, for the caller to change inside the block; on leaving it, one USER_CHANGED event of what
    changed (the password as "set", "none" or "changed", never its hash), found in `.changes`. What changed is
    read back from the database, whatever instance the block saved (change_user, change_password)."""
    with transaction.atomic():
        user = _locked_user(user_id)
        before, before_hash = access_of(user), user.password
        change = UserChange(user=user)
        yield change
        stored = User.objects.get(pk=user_id)
        change.changes = _differences(before, access_of(stored))
        if stored.password != before_hash and "password" not in change.changes and before["password"] == "set":
            change.changes["password"] = ["set", "changed"]  # a disabled password disabled again is no change
        if change.changes:
            record_event(actor=by, verb=AuditVerb.USER_CHANGED, target=stored, reason=reason,
                         data={"username": stored.username, "changes": change.changes})


def change_user(
    *,
    user_id: int,
    by: User,
    values: Mapping[str, Any],
    organisation: Organisation | None,
    groups: Iterable[Group] | None = None,
    permissions: Iterable[Permission] | None = None,
    reason: str = "",
) -> UserChange:
    """Staff's change of a user (the admin's user page): the columns in `values` (of USER_FIELDS), its groups
    and its own permissions when given (None: unchanged), and its organisation (None: none), as one audited
    change. Refused (ValidationError, nothing saved) when the user would be a fact-checker without an
    organisation, or in one without being a fact-checker (check_place). Returns the change: what changed
    (`.changes`) and how many claims ended with it (`.claims_released`), for the page to say."""
    unknown = set(values) - set(USER_FIELDS)
    if unknown:
        raise ValueError(f"change_user changes only {', '.join(USER_FIELDS)}, not {', '.join(sorted(unknown))}")
    with recording_user_change(user_id=user_id, by=by, reason=reason) as change:
        user = change.user
        # Only a change of role, active flag or organisation can put a claim out of the user's reach: its posts are
        # locked before the user row is written (factcheck.claims.lock_claimed_posts says why), and a rename locks none.
        reach = (any(values[name] != getattr(user, name) for name in ("role", "is_active") if name in values)
                 or organisation_id_of(user) != (organisation.pk if organisation is not None else None))
        if reach:
            lock_claimed_posts(reviewer_ids=[user_id])
        for name, value in values.items():
            setattr(user, name, value)
        check_place(role=user.role, placed=organisation is not None)
        if values:
            user.save(update_fields=list(values))
        if groups is not None:
            user.groups.set(groups)
        if permissions is not None:
            user.user_permissions.set(permissions)
        place_member(user=user, organisation=organisation)
        if reach:  # the claims the user may no longer hold end with the change
            change.claims_released = end_claims_beyond_reach(reviewer_ids=[user_id], actor=by)
    return change


def change_password(*, user_id: int, by: User, password: str | None, reason: str) -> Changes:
    """Staff set a user's password, or disable password sign-in (`password` None: the person can no longer sign in
    with one, and a reset link does not give one back once they have signed in), with a reason: one USER_CHANGED
    event of the password as "none", "set" or "changed", never the password or its hash. Refused (ValidationError,
    nothing changed) without a reason (staff_reason). Returns what changed."""
    reason = staff_reason(reason)
    with recording_user_change(user_id=user_id, by=by, reason=reason) as change:
        if password is None:
            change.user.set_unusable_password()
        else:
            change.user.set_password(password)
        change.user.save(update_fields=["password"])
    return change.changes


@transaction.atomic
def delete_user(*, user_id: int, by: User, reason: str) -> None:
    """Delete a user (staff, in the admin), audited with why, what the account was and the pages it owned (their
    ownership goes with it). Refused (ValidationError, nothing deleted) without a reason, and for staff's own
    account (the event names them as its actor). A user named in the history (who made a rating, acted in the
    audit log, filed an appeal) cannot be deleted at all: its rows refer to it (PROTECT), which the admin says
    before anyone confirms, and deactivating the account is the way to end its access."""
    reason = staff_reason(reason)
    if user_id == by.pk:
        raise ValidationError("You cannot delete your own account.", code="own_account")
    try:
        user = _locked_user(user_id)
    except User.DoesNotExist:  # another staff member deleted it since the page was shown
        raise ValidationError("This user was deleted meanwhile.", code="already_deleted") from None
    record_event(actor=by, verb=AuditVerb.USER_DELETED, target=user, reason=reason, data={
        "username": user.username, "was": access_of(user),
        "pages": sorted(user.pages.values_list("external_id", flat=True)),
    })
    user.delete()


@transaction.atomic
def change_organisation(*, organisation: Organisation, by: User, reason: str = "") -> Changes:
    """Save staff's change of an organisation, or a new one: its name, address and coverage (the languages and
    countries its fact-checkers may claim and rate in), audited with the old and new values. Returns what
    changed."""
    before: dict[str, str] = {}
    members: list[int] = []
    if organisation.pk is not None:
        # NO KEY: members and ratings reference the organisation, and its key does not change (docs/concurrency.md).
        stored = Organisation.objects.select_for_update(no_key=True).get(pk=organisation.pk)
        before = {name: _text(getattr(stored, name)) for name in ORGANISATION_FIELDS}
        if (stored.languages, stored.countries) != (organisation.languages, organisation.countries):
            # Its coverage changes: its members' claimed posts are locked before the row is written
            # (factcheck.claims.lock_claimed_posts says why); a rename locks none.
            members = list(organisation.memberships.values_list("user_id", flat=True))
            lock_claimed_posts(reviewer_ids=members)
        organisation.save(update_fields=list(ORGANISATION_FIELDS))
    else:
        organisation.save()
    after = {name: _text(getattr(organisation, name)) for name in ORGANISATION_FIELDS}  # as save() normalised them
    changes = _differences(before, after)
    if members:  # its coverage may have narrowed past posts its members hold: those claims end with the change
        end_claims_beyond_reach(reviewer_ids=members, actor=by)
    if changes:
        record_event(actor=by, verb=AuditVerb.ORGANISATION_CHANGED, target=organisation, reason=reason,
                     data={"name": organisation.name, "created": not before, "changes": changes})
    return changes


@transaction.atomic
def delete_organisation(*, organisation_id: int, by: User, reason: str) -> None:
    """Delete an organisation (superusers, in the admin), audited with why and what it was. Refused
    (ValidationError, nothing deleted) without a reason, while anyone belongs to it (move them first: a
    fact-checker needs one), and once it has made a rating (ratings are history and name their organisation)."""
    reason = staff_reason(reason)
    # A full lock, not NO KEY: the row goes, so a member joining it meanwhile (whose insert checks its key) waits,
    # then finds it gone, and this finds no member joined after the check below (docs/concurrency.md).
    try:
        organisation = Organisation.objects.select_for_update(no_key=False).get(pk=organisation_id)
    except Organisation.DoesNotExist:  # another superuser deleted it since the page was shown
        raise ValidationError("This organisation was deleted meanwhile.", code="already_deleted") from None
    if organisation.memberships.exists():
        raise ValidationError(f"{organisation.name} has members: move them to another organisation first.",
                              code="has_members")
    if organisation.ratings.exists():
        raise ValidationError(f"{organisation.name} has made ratings, which are kept for good: it stays.",
                              code="has_ratings")
    record_event(actor=by, verb=AuditVerb.ORGANISATION_DELETED, target=organisation, reason=reason,
                 data={"name": organisation.name,
                       "was": {name: _text(getattr(organisation, name)) for name in ORGANISATION_FIELDS}})
    organisation.delete()


@transaction.atomic
def set_page_owners(*, page_id: int, by: User, owners: Iterable[User], reason: str = "") -> Changes:
    """Give a page these owners (staff, in the admin: ownership moved to another account), audited with who owned
    it before and after. Returns what changed. Refused (ValidationError, nothing changed) when it would add an
    account that may not own a page (members.check_page_owners: only active page-owner accounts); an owner
    deactivated since it was added may stay (it is told nothing) or be taken off."""
    # NO KEY: owners are rows of their own, so posts arriving on the page meanwhile need not wait (set_politician's
    # full lock is for them). Two changes of one page's owners serialise (docs/concurrency.md).
    page = Page.objects.select_for_update(no_key=True).get(pk=page_id)
    owners = list(owners)
    check_page_owners(owners, page=page)
    before = {"owners": ", ".join(sorted(page.owners.values_list("username", flat=True)))}
    page.owners.set(owners)
    changes = _differences(before, {"owners": ", ".join(sorted(page.owners.values_list("username", flat=True)))})
    if changes:
        record_event(actor=by, verb=AuditVerb.PAGE_OWNERS_CHANGED, target=page, reason=reason,
                     data={"page": page.pk, "changes": changes})
    return changes

