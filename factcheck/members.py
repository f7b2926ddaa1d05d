"""Users' place in Factdesk: a fact-checker's organisation (its Membership), a page owner's pages.

Here rather than in accounts because it names organisations and pages: accounts sits below the
review side and never imports it. organisation_of is the one way to read a user's organisation, check_place the
one rule of who has one; organisation_to_act_for refuses a fact-checker who has none (staff could leave one so in
the admin before check_place), who may read nothing of the fact-checkers' pages and act on nothing. Who may own a
page, and is told of its decisions, is `may_own_pages` (`page_owner_accounts` in a query). Staff's later changes to
people (audited) are factcheck.member_changes'.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.text import slugify

from accounts.models import Role, User
from accounts.password_reset import invite
from audit.models import AuditVerb
from audit.services import record_event
from core.reasons import control_problem, reason_problem, written
from core.refusals import Refusal
from factcheck.models import Membership, Organisation, Page

TRUST_SAFETY_GROUP = "trust_safety"


def organisation_of(user) -> Organisation | None:
    """The organisation `user` is a member of, or None (not a fact-checker, anonymous, or not yet placed).

    Load the user with select_related("membership__organisation") where it is read on every page."""
    try:
        membership = user.membership
    except (Membership.DoesNotExist, AttributeError):
        return None
    return membership.organisation


class NoOrganisation(Refusal):
    """A fact-checker who is a member of no organisation: whose coverage, queue and ratings would theirs be?"""

    code = "no_organisation"


NO_ORGANISATION = ("Your account belongs to no fact-checking organisation, so you cannot review, claim or rate "
                   "posts. Ask trust-and-safety staff to add you to your organisation.")


def organisation_to_act_for(user) -> Organisation:
    """The organisation a fact-checker reviews for; NoOrganisation if they have none. Without it their queue was
    every post (`covered_by(None)` is everything) and the pages that read its coverage failed."""
    organisation = organisation_of(user)
    if organisation is None:
        raise NoOrganisation(NO_ORGANISATION)
    return organisation


def organisation_id_of(user) -> int | None:
    """The id of organisation_of(user), without loading the organisation."""
    try:
        return user.membership.organisation_id
    except (Membership.DoesNotExist, AttributeError):
        return None


def opens_desk(user) -> bool:
    """Whether the fact-checkers' pages (the queue, a post's page: factcheck.views.factchecker_required) open for this
    person: a fact-checker of an organisation. They answer anyone else 403, so a notice links nobody else there
    (moderation.notice_links)."""
    return getattr(user, "is_factchecker", False) and organisation_id_of(user) is not None


def add_membership(*, user: User, organisation: Organisation) -> Membership:
    """Make `user` a member of `organisation` (moving it from any other)."""
    membership, _ = Membership.objects.update_or_create(user=user, defaults={"organisation": organisation})
    user.membership = membership
    return membership


# The codes of check_place's refusals, by which each interface words its own way to put it right.
NEEDS_ORGANISATION = "needs_organisation"
NOT_A_FACTCHECKER = "organisation_not_for_role"


def check_place(*, role: str, placed: bool) -> None:
    """A fact-checker belongs to an organisation (whose coverage they work in and whose ratings theirs are), and
    nobody else does: ValidationError otherwise, coded NEEDS_ORGANISATION or NOT_A_FACTCHECKER. `placed`: whether
    the user is, or is about to be, a member of one.

    The rule's one home: create_user (`add_user`, the admin's add page) and the admin's user page call it. The
    membership is its own table, and a check constraint cannot span two tables."""
    if role == Role.FACTCHECKER and not placed:
        raise ValidationError("A fact-checker must belong to a fact-checking organisation.", code=NEEDS_ORGANISATION)
    if role != Role.FACTCHECKER and placed:
        label = Role(role).label.lower() if role in Role.values else "user without a role"
        raise ValidationError(f"Only a fact-checker belongs to an organisation, not a {label}.",
                              code=NOT_A_FACTCHECKER)


def place_member(*, user: User, organisation: Organisation | None) -> None:
    """Make `user` a member of `organisation`, moving it from another (it joins the new one now), or of none.

    In the caller's transaction, which holds the user's lock (factcheck.member_changes)."""
    current = Membership.objects.filter(user=user).first()
    if organisation is None:
        if current is not None:
            current.delete()
    elif current is None:
        Membership.objects.create(user=user, organisation=organisation)
    elif current.organisation_id != organisation.pk:
        current.organisation, current.joined_at = organisation, timezone.now()
        current.save(update_fields=["organisation", "joined_at"])


def may_own_pages(*, role: str, is_active: bool) -> bool:
    """Whether an account may own pages: an active page-owner account. A fact-checker owning a page would be told
    of its own organisation's ratings as their subject, a platform or staff account is no page's owner, and a
    deactivated account reads nothing. The rule's one home: `add_user --page`, the admin's page owners
    (factcheck.member_changes.set_page_owners) and who is told of a page's decisions (moderation.notices, through
    `page_owner_accounts`)."""
    return role == Role.PAGE_OWNER and is_active


def page_owner_accounts(*, via: str = "") -> Q:
    """`may_own_pages` as a query condition on users (`via`: the path to the user, "user__" from a page's owner
    link)."""
    return Q(**{f"{via}role": Role.PAGE_OWNER, f"{via}is_active": True})


def check_page_owners(owners: Iterable[User], *, page: Page | None = None) -> None:
    """ValidationError naming each of `owners` that may not own a page (`may_own_pages`), and why. With `page`, its
    present owners are not checked: one deactivated since it was made an owner may stay (it is told nothing) until
    staff take it off, so that saving the page's other owners is not refused for it."""
    present = set(page.owners.values_list("pk", flat=True)) if page is not None and page.pk else set()
    problems = []
    for user in owners:
        if user.pk in present or may_own_pages(role=user.role, is_active=user.is_active):
            continue
        if not user.is_active:
            problems.append(f"{user.username}'s account is deactivated.")
        else:
            problems.append(f"{user.username} is {_AS_OWNER_SEES.get(user.role, 'an account without a role')}, not "
                            "a page owner.")
    if problems:
        raise ValidationError(" ".join(problems) + " Only an active page-owner account may own a page; add the "
                              "page owner's own account (or make one with the role Page owner).", code="not_an_owner")


_AS_OWNER_SEES = {Role.FACTCHECKER: "a fact-checker", Role.TRUST_SAFETY: "trust-and-safety staff",
                  Role.PLATFORM: "a platform account"}


REASON_REQUIRED = "A reason is required: every change to a person's account or access records why."


def staff_reason(reason: str) -> str:
    """The reason a staff member gives for a change to people, as the audit log keeps it (core.reasons.written):
    ValidationError when there is none, or it is too long or holds control characters. Every change staff make to
    an account (here and in factcheck.member_changes) states why."""
    reason = written(reason)
    if not reason:
        raise ValidationError(REASON_REQUIRED, code="reason_required")
    if problem := reason_problem(reason):
        raise ValidationError(problem, code="reason")
    return reason


@transaction.atomic
def create_user(
    *,
    username: str,
    role: str,
    password: str | None,
    organisation_name: str | None = None,
    page_external_ids: list[str] | None = None,
    email: str = "",
    is_active: bool = True,
    is_superuser: bool = False,
    create_pages: bool = False,
    by: User | None = None,
    reason: str = "",
) -> User:
    """A user with one role and its place (a fact-checker's organisation, a page owner's pages), audited as made
    by `by` (staff in the admin, who must give a `reason`: staff_reason), or by Factdesk (`add_user`, the demo
    seed, an import), with its role, organisation, staff status and whether it has a password.

    A fact-checker must have an organisation, and nobody else has one (check_place): a ValidationError otherwise.
    An organisation that does not exist is made (it covers every language and country until staff set its
    coverage: `manage.py add_user` says so); one that differs from an existing one only in case or surrounding
    spaces is refused, naming it: "--org verifact" had made a second organisation covering everything.
    A superuser (`add_user --superuser`: the administrator who adds organisations and people in the admin) has no
    role, or trust-and-safety staff's (check_superuser_role). An account with an address and no password is
    e-mailed an invitation to set one once the transaction commits (accounts.password_reset.invite). A page owner's
    pages are the platform's, known once it flags one of their posts: an id no page has is refused unless
    `create_pages` (`add_user --create-page`), as a typo had made an empty page that looked real in the portal.
    Not durable: `manage.py add_user` (durable) and the demo seed call it inside their own transaction."""
    if is_superuser:
        check_superuser_role(role)
    elif role not in Role.values:
        raise ValidationError(f"unknown role {role!r}; choose one of {', '.join(Role.values)}")
    if by is not None:
        reason = staff_reason(reason)
    _check_username_and_email(username, email)
    if User.objects.filter(username=username).exists():
        raise ValidationError(f"a user named {username!r} already exists")
    try:
        check_place(role=role, placed=bool(organisation_name))
    except ValidationError as refused:
        raise ValidationError({NEEDS_ORGANISATION: "a fact-checker needs --org NAME",
                               NOT_A_FACTCHECKER: "--org is only for fact-checkers"}[refused.code]) from refused
    organisation = _organisation_named(organisation_name) if organisation_name else None
    if page_external_ids and not may_own_pages(role=role, is_active=is_active):
        raise ValidationError("--page is only for page owners")
    user = User(username=username, role=role, email=email, is_active=is_active)
    user.is_staff = role == Role.TRUST_SAFETY or is_superuser
    user.is_superuser = is_superuser
    if password:
        user.set_password(password)
    else:
        user.set_unusable_password()
    user.save()
    if organisation is not None:
        add_membership(user=user, organisation=organisation)
    if role == Role.TRUST_SAFETY:
        user.groups.add(Group.objects.get(name=TRUST_SAFETY_GROUP))
    for page in _pages_named(page_external_ids or [], create=create_pages):
        page.owners.add(user)
    record_event(actor=by, verb=AuditVerb.USER_CREATED, target=user, reason=reason, data={
        "username": username, "role": role, "organisation": organisation.name if organisation else "",
        "is_staff": "yes" if user.is_staff else "no", "is_superuser": "yes" if is_superuser else "no",
        "password": "set" if password else "none",
    })
    invite(user=user, by=by)
    return user


SUPERUSER_ROLES = ("", Role.TRUST_SAFETY)


def check_superuser_role(role: str) -> None:
    """A superuser administers Factdesk (adds organisations and people in the admin, where every right is theirs): it
    has no role, or trust-and-safety staff's. A fact-checker's, page owner's or the platform's work is done by an
    account of its own, whose rights are that role's (a superuser passes every permission check)."""
    if role not in SUPERUSER_ROLES:
        raise ValidationError(f"a superuser has no role or the role {Role.TRUST_SAFETY.value}, not {role!r}: give the "
                              "person a second account for that work")


def _check_username_and_email(username: str, email: str) -> None:
    """The model's own rules, which a command does not run: an empty or over-long name, characters a username
    may not have (a 200-character name was a database error), an address that is not one."""
    field = User._meta.get_field("username")
    if not username.strip():
        raise ValidationError("the username is empty")
    if len(username) > field.max_length:
        raise ValidationError(f"a username has at most {field.max_length} characters ({len(username)} given)")
    field.run_validators(username)
    if email:
        User._meta.get_field("email").run_validators(email)


def _organisation_named(name: str) -> Organisation:
    found = Organisation.objects.filter(name=name).first()
    if found is not None:
        return found
    alike = Organisation.objects.filter(name__iexact=name.strip()).values_list("name", flat=True).first()
    if alike is not None:
        raise ValidationError(f"there is no organisation named {name!r}; did you mean {alike!r}?")
    field = Organisation._meta.get_field("name")
    if not name.strip() or name != name.strip():
        raise ValidationError(f"an organisation's name is not blank and has no spaces around it: {name!r}")
    if len(name) > field.max_length:
        raise ValidationError(f"an organisation's name has at most {field.max_length} characters ({len(name)} given)")
    if problem := control_problem(name):
        raise ValidationError(f"the organisation's name: {problem}")
    return Organisation.objects.create(name=name)


def _pages_named(external_ids: list[str], *, create: bool) -> list[Page]:
    pages = []
    for external_id in external_ids:
        page = Page.objects.filter(external_id=external_id).first()
        if page is None and not create:
            alike = Page.objects.filter(external_id__iexact=external_id.strip()).values_list(
                "external_id", flat=True).first()
            hint = f"did you mean {alike!r}? " if alike else ""
            raise ValidationError(f"there is no page {external_id!r}: {hint}a page is known once the platform has "
                                  "flagged one of its posts; give --create-page to make it now, empty")
        pages.append(page or Page.objects.create(external_id=external_id, name=external_id))
    return pages


IMPORTER_PREFIX = "import-"


def is_importer_account(user) -> bool:
    """Whether `user` is an organisation's importer account (`importer_account`), not a person."""
    return user is not None and user.username.startswith(IMPORTER_PREFIX)


@transaction.atomic
def importer_account(*, organisation_name: str, organisation_url: str = "") -> User:
    """The system member that records an organisation's imported ratings (`import-<org slug>`).

    Found or created with its organisation (by name, whatever its case: "Politifact" in one file
    is the "PolitiFact" of another; the url is kept if the organisation had none). A fact-checker,
    so every rule of who may rate applies to it as to a person, but inactive with an unusable
    password: nobody can sign in as it. Not durable: an import batch's transaction creates it with
    the batch's first rating of the organisation.
    """
    organisation = Organisation.objects.filter(name__iexact=organisation_name).order_by("id").first()
    created = organisation is None
    if organisation is None:
        organisation = Organisation.objects.create(name=organisation_name, url=organisation_url)
    if not created and organisation_url and not organisation.url:
        organisation.url = organisation_url
        organisation.save(update_fields=["url"])
    found = User.objects.filter(username__startswith=IMPORTER_PREFIX, membership__organisation=organisation,
                                role=Role.FACTCHECKER, is_active=False).order_by("id").first()
    if found is not None:
        return found
    slug = slugify(organisation_name)[:100] or "organisation"
    username = f"{IMPORTER_PREFIX}{slug}"
    if User.objects.filter(username=username).exists():
        # Another organisation's name slugs the same ("Fact Check" and "Fact-Check"): tell them apart.
        username = f"{username}-{hashlib.sha1(organisation_name.encode()).hexdigest()[:8]}"
    return create_user(username=username, role=Role.FACTCHECKER, password=None,
                       organisation_name=organisation.name, is_active=False)
