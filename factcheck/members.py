"""Creating users with their place in Factdesk: a fact-checker's organisation, a page owner's pages.

Here rather than in accounts because it names organisations and pages: accounts sits below the
review side and never imports it.
"""

from __future__ import annotations

from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.db import transaction

from accounts.models import Role, User
from audit.models import AuditVerb
from audit.services import record_event
from factcheck.models import Organisation, Page

TRUST_SAFETY_GROUP = "trust_safety"


@transaction.atomic
def create_user(
    *,
    username: str,
    role: str,
    password: str | None,
    organisation_name: str | None = None,
    page_external_ids: list[str] | None = None,
    email: str = "",
) -> User:
    if role not in Role.values:
        raise ValidationError(f"unknown role {role!r}; choose one of {', '.join(Role.values)}")
    if User.objects.filter(username=username).exists():
        raise ValidationError(f"a user named {username!r} already exists")
    organisation = None
    if role == Role.FACTCHECKER:
        if not organisation_name:
            raise ValidationError("a fact-checker needs --org NAME")
        organisation, _ = Organisation.objects.get_or_create(name=organisation_name)
    elif organisation_name:
        raise ValidationError("--org is only for fact-checkers")
    if page_external_ids and role != Role.PAGE_OWNER:
        raise ValidationError("--page is only for page owners")
    user = User(username=username, role=role, organisation=organisation, email=email)
    user.is_staff = role == Role.TRUST_SAFETY
    if password:
        user.set_password(password)
    else:
        user.set_unusable_password()
    user.save()
    if role == Role.TRUST_SAFETY:
        user.groups.add(Group.objects.get(name=TRUST_SAFETY_GROUP))
    for external_id in page_external_ids or []:
        page, _ = Page.objects.get_or_create(external_id=external_id, defaults={"name": external_id})
        page.owners.add(user)
    record_event(actor=None, verb=AuditVerb.USER_CREATED, target=user, data={"role": role})
    return user
