"""Only an active page-owner account may own a page, in the admin as on the command line, and only such accounts are
told of a page's decisions.

Before, the admin's page owners took any account (a fact-checker of the organisation that rates the page, a
deactivated platform account), which was then e-mailed the owners' notices, while `add_user --role factchecker --page`
was refused.
"""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.test import Client

from accounts.models import User
from audit.models import AuditEvent, AuditVerb
from factcheck.member_changes import set_page_owners
from moderation.models import Notification
from tests import scenarios
from tests.factories import PASSWORD, FactCheckerFactory, PageFactory, PlatformUserFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def root() -> User:
    return User.objects.create_superuser(username="root", email="root@example.org", password=PASSWORD)


@pytest.fixture
def admin(root) -> Client:
    client = Client()
    assert client.login(username="root", password=PASSWORD)
    return client


def owners_page(page) -> str:
    return f"/admin/factcheck/page/{page.pk}/change/"


@pytest.mark.parametrize(("make", "said"), [
    (lambda: FactCheckerFactory(username="fiona"), "fiona is a fact-checker, not a page owner."),
    (lambda: PlatformUserFactory(username="feed2", is_active=False), "feed2's account is deactivated."),
    (lambda: PlatformUserFactory(username="feed3"), "feed3 is a platform account, not a page owner."),
    (lambda: UserFactory(username="olga", is_active=False), "olga's account is deactivated."),
])
def test_the_admin_refuses_an_owner_that_is_not_an_active_page_owner_account(admin, make, said):
    page = PageFactory()
    account = make()

    response = admin.post(owners_page(page), {"owners": str(account.pk), "reason": "Onboarding."})

    assert response.status_code == 200
    page_text = response.content.decode().replace("&#x27;", "'")
    assert said in page_text and "Only an active page-owner account may own a page" in page_text
    assert not page.owners.exists() and not AuditEvent.objects.filter(verb=AuditVerb.PAGE_OWNERS_CHANGED).exists()


def test_the_admin_takes_an_active_page_owner_and_keeps_an_owner_deactivated_since(admin):
    page = PageFactory()
    old, new = UserFactory(username="old"), UserFactory(username="new")
    page.owners.add(old)
    User.objects.filter(pk=old.pk).update(is_active=False)

    response = admin.post(owners_page(page), {"owners": f"{old.pk},{new.pk}", "reason": "A second owner."})

    assert response.status_code == 302
    assert set(page.owners.values_list("username", flat=True)) == {"old", "new"}


def test_set_page_owners_and_add_user_refuse_a_fact_checker_alike(root):
    page = PageFactory(external_id="daily-truth")
    with pytest.raises(ValidationError, match="is a fact-checker, not a page owner"):
        set_page_owners(page_id=page.pk, by=root, owners=[FactCheckerFactory()], reason="Onboarding.")
    with pytest.raises(CommandError, match="--page is only for page owners"):
        call_command("add_user", "fiona", "--role", "factchecker", "--org", "Verifact", "--page", "daily-truth")
    assert not page.owners.exists()


def test_an_owner_that_is_not_a_page_owner_account_is_not_told_of_the_pages_decisions():
    """A fact-checker made an owner before the rule (the admin took any account) is not e-mailed the owners'
    notices of its own organisation's ratings."""
    page = PageFactory()
    owner, fact_checker = UserFactory(), FactCheckerFactory()
    page.owners.add(owner, fact_checker)

    post = scenarios.rated_post(page=page)

    assert list(Notification.objects.filter(post=post).values_list("user", flat=True)) == [owner.pk]
