"""Where a notice leads (moderation.notice_links): `/notifications/`, the owners' portal and the notice e-mails give
each reader a link only where they can go now, by one rule, whatever changed since the notice was written.

`/notifications/` linked by role alone: a fact-checker moved to another organisation, or left without one, was
sent to their old organisation's appeal, which answers them 404; the e-mails never linked a fact-checker to a post's
page on the desk, even when it opened for them.
"""

from __future__ import annotations

import html
import re
from types import SimpleNamespace

import pytest
from django.conf import settings
from django.core import mail

from accounts.models import Role, User
from factcheck.members import add_membership
from factcheck.models_membership import Membership
from moderation.appeals import file_appeal
from moderation.models import Notification
from moderation.notice_delivery import email_notices
from tests import scenarios
from tests.factories import FactCheckerFactory, OrganisationFactory, PageFactory, PostFactory, StaffFactory, UserFactory

pytestmark = pytest.mark.django_db

PUBLIC = settings.FACTDESK_PUBLIC_URL


def notices_on(response) -> list[tuple[str, str | None]]:
    """The notices a page lists, each as (its subject, the link it gives or None), as its reader sees them."""
    assert response.status_code == 200
    page = response.content.decode()
    notices = []
    for listing in re.findall(r'<ul class="notifications">(.*?)</ul>', page, re.S):
        for item in re.findall(r"<li>(.*?)</li>", listing, re.S):
            head = re.search(r'<div class="notification-head">(.*?)</div>', item, re.S).group(1)
            subject = html.unescape(re.sub(r"<[^>]+>|<time.*?</time>", "", head.split("<span")[0])).strip()
            link = re.search(r'<a href="([^"]+)"', item)
            notices.append((subject, html.unescape(link.group(1)) if link else None))
    return notices


def dispute(owner, post):
    return file_appeal(owner=owner, post_id=post.pk, kind="dispute", statement="The quote is real.")


def make_staff_a_fact_checker(user, organisation) -> None:
    User.objects.filter(pk=user.pk).update(role=Role.FACTCHECKER, is_staff=False)
    user.refresh_from_db()
    add_membership(user=user, organisation=organisation)


@pytest.fixture
def world(db) -> SimpleNamespace:
    """A page owner's rated post disputed before an organisation's fact-checkers, and their removed post appealed
    before staff; then each reader's place changes, as staff change it in the admin."""
    verifact = OrganisationFactory(name="Verifact", languages=["en"])
    faktenwerk = OrganisationFactory(name="Faktenwerk", languages=["de"])  # covers none of these posts
    owner, rater = UserFactory(username="olga"), FactCheckerFactory(organisation=verifact)
    w = SimpleNamespace(owner=owner, **{name: FactCheckerFactory(username=name, organisation=verifact)
                                        for name in ("stays", "moved", "placeless", "promoted")})
    w.staff, w.demoted, remover = StaffFactory(username="staff"), StaffFactory(username="demoted"), StaffFactory()
    page = PageFactory(name="Port news")
    page.owners.add(owner)
    w.rated = scenarios.rated_post(rater=rater, post=PostFactory(page=page, external_id="rated"))
    w.dispute = dispute(owner, w.rated)
    w.removed = scenarios.removed_post(staff=remover, post=PostFactory(page=page, external_id="removed"))
    w.removal = file_appeal(owner=owner, post_id=w.removed.pk, kind="removal", statement="It was a quotation.")
    w.left = scenarios.rated_post(rater=rater, owner=owner, external_id="left")
    w.left.page.owners.remove(owner)  # the owner handed that page over

    Membership.objects.filter(user=w.moved).update(organisation=faktenwerk)
    Membership.objects.filter(user=w.placeless).delete()
    User.objects.filter(pk=w.promoted.pk).update(role=Role.TRUST_SAFETY, is_staff=True)
    make_staff_a_fact_checker(w.demoted, faktenwerk)
    return w


def expected_links(w) -> dict[str, dict[str, str | None]]:
    """Each reader's notices by subject, with where each leads them now."""
    disputed = "New dispute appeal on post rated"
    appealed = "New removal appeal on post removed"
    return {
        "olga": {
            "Your post rated was rated False": f"/appeals/posts/{w.rated.pk}/",
            "Your post removed was removed": f"/appeals/posts/{w.removed.pk}/",
            "Your post left was rated False": None,  # no longer their page
        },
        "stays": {disputed: f"/queue/appeals/{w.dispute.pk}/"},
        "moved": {disputed: f"/queue/posts/{w.rated.pk}/"},  # the post's page opens for any fact-checker
        "placeless": {disputed: None},  # no desk page opens for a fact-checker of no organisation
        "promoted": {disputed: None},  # staff decide no disputes and open no fact-checker's pages
        "staff": {appealed: f"/staff/appeals/{w.removal.pk}/"},
        "demoted": {appealed: f"/queue/posts/{w.removed.pk}/"},
    }


def test_every_link_a_notice_gives_opens_for_its_reader_whatever_changed_since(world, client, login):
    for username, expected in expected_links(world).items():
        reader = User.objects.get(username=username)
        where = "/appeals/" if reader.is_page_owner else "/notifications/"
        notices = notices_on(login(reader).get(where))
        for subject, link in notices:
            if link is not None:
                assert login(reader).get(link).status_code == 200, (username, subject, link)
        assert dict(notices) == expected, username
        client.logout()


def test_the_email_links_each_reader_where_the_notice_leads_now_else_to_their_notifications(world, login):
    mail.outbox.clear()
    links = expected_links(world)
    for username in ("stays", "moved", "placeless", "promoted", "staff", "demoted"):
        reader = User.objects.get(username=username)
        email_notices(user_id=reader.pk)
        [message] = [m for m in mail.outbox if m.to == [reader.email]]
        [leads] = links[username].values()
        link = f"{PUBLIC}{leads or '/notifications/'}"
        assert message.body.endswith(f"\n\nOpen it in Factdesk: {link}"), (username, message.body)
        assert login(reader).get(link.removeprefix(PUBLIC)).status_code == 200, username


@pytest.mark.parametrize("notices", [1, 12])
def test_many_notices_are_each_linked_where_they_lead_in_the_queries_of_one(
    notices, login, django_assert_max_num_queries
):
    """A fact-checker who moved reads their old organisation's notices (each post's page) beside their new one's
    (each appeal): the page and the e-mail read where every notice leads in the notifications' own query."""
    owner, old, new = UserFactory(), OrganisationFactory(), OrganisationFactory()
    reader = FactCheckerFactory(organisation=old)
    posts = [scenarios.rated_post(org=old, owner=owner) for _ in range(notices)]
    for post in posts:
        dispute(owner, post)
    Membership.objects.filter(user=reader).update(organisation=new)
    appeals = [dispute(owner, scenarios.rated_post(org=new, owner=owner)) for _ in range(notices)]
    expected = {f"/queue/posts/{post.pk}/" for post in posts} | {f"/queue/appeals/{a.pk}/" for a in appeals}
    client = login(reader)

    # As tests/moderation/test_workday_notifications.py counts the page, whatever the number of notices.
    with django_assert_max_num_queries(11):
        response = client.get("/notifications/")
    assert {link for _subject, link in notices_on(response)} == expected

    mail.outbox.clear()
    # Unsent e-mails; the recipient's address, their notices locked, the e-mail made and its notices set; the e-mail
    # locked with its recipient, its notices counted, the recipient's organisation, the notices with where they
    # lead, marked e-mailed, the e-mail marked sent; the two transactions' savepoints (4).
    with django_assert_max_num_queries(15):
        email_notices(user_id=reader.pk)
    [message] = mail.outbox
    assert set(re.findall(rf"{re.escape(PUBLIC)}(/\S+)", message.body)) == expected
    assert Notification.objects.filter(user=reader, emailed_at__isnull=True).count() == 0
