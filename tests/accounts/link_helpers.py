"""What the tests of links that set a password share (tests/accounts/test_invitations.py, tests/admin/
test_new_invitations.py): the public address the e-mails' links are built from, the link found in an e-mail, the
page it opens, and a first password set through it as a person would."""

from __future__ import annotations

import re

import pytest
from django.test import Client

NEW_PASSWORD = "a long walk to the harbour lights"
LINK = re.compile(r"https://factdesk\.example\.org(/accounts/reset/(\S+)/(\S+)/)")  # the link, its uid, its token


@pytest.fixture(autouse=True)
def public_url(settings):
    settings.FACTDESK_PUBLIC_URL = "https://factdesk.example.org"


def link_in(message) -> str:
    found = LINK.search(message.body)
    assert found, message.body
    return found.group(1)


def opened(link: str) -> str:
    return Client().get(link, follow=True).content.decode()


def set_password(link: str) -> int:
    """A first password set with the link, as the invitee does: the page it opens asks for one."""
    browser = Client()
    form_page = browser.get(link, follow=True)
    assert "Choose your password" in form_page.content.decode()
    return browser.post(form_page.redirect_chain[-1][0],
                        {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD}).status_code
