"""Notices e-mailed as digests (moderation.notice_delivery): the notices one person is sent together go out as one
e-mail, a line and a link for each post, while the portal keeps one notification per post; a lone notice reads as
before; no notice is e-mailed twice in two e-mails, nor lost, however often a job runs or wherever a worker dies;
and a link in a notice e-mail leads only where its recipient can go when it is sent.

A False rating that reached 50 copies on one owner's pages sent that owner 50 e-mails at once, and an owner who
had left a page was sent, for the appeal they had filed as its owner, to the post's page, which answers them 404.
"""

from __future__ import annotations

import re
import threading
from datetime import timedelta

import django_rq
import pytest
from django.conf import settings
from django.core import mail
from django.core.mail.backends.locmem import EmailBackend as LocmemBackend
from django.utils import timezone

from factcheck.members import organisation_of
from factcheck.models import Page, Post, QueueState
from factcheck.models_membership import Membership
from moderation import jobs
from moderation.appeals import decide_appeal, file_appeal
from moderation.models import NoticeEmail, Notification, NotificationKind
from moderation.notice_delivery import compose_email, email_notices, record_notifications, send_unsent_emails
from moderation.notice_emails import DIGEST_LISTS
from tests import scenarios
from tests.factcheck.matching_helpers import CLAIM, EXACT_COPY, WORKER, arrive, flag, post
from tests.factories import (
    FactCheckerFactory,
    OrganisationFactory,
    PageFactory,
    PostFactory,
    RatingFactory,
    UserFactory,
)
from tests.jobs_support import redriven
from tests.pg import Backend, wait_until_blocked

PUBLIC = settings.FACTDESK_PUBLIC_URL
PORTAL_NOTIFICATIONS = f"{PUBLIC}/appeals/?notifications=open#notifications"


def portal_post(target: Post) -> str:
    return f"{PUBLIC}/appeals/posts/{target.pk}/"


def mails_to(user) -> list[mail.EmailMessage]:
    return [message for message in mail.outbox if message.to == [user.email]]


def listed(message: mail.EmailMessage) -> list[tuple[str, str]]:
    """A digest's lines: (what happened, its link)."""
    return re.findall(r"^- (.+)\n  (\S+)$", message.body, re.MULTILINE)


def notify(user, posts: list[Post], *, subject: str = "Your post {} was rated False") -> list[Notification]:
    """A notice to `user` about each post, stored as the pipeline stores them (one statement), jobs not run."""
    return record_notifications([
        Notification(user=user, kind=NotificationKind.DECISION, post=target, subject=subject.format(target.external_id),
                     body=f"Body of the notice on {target.external_id}.", created_at=timezone.now())
        for target in posts
    ])


class SentThenKilled(LocmemBackend):
    """The SMTP server takes the message, then the worker dies before its transaction commits: the e-mail is out,
    and nothing the send wrote is."""

    deaths = 0

    def send_messages(self, messages):
        sent = super().send_messages(messages)
        if type(self).deaths:
            type(self).deaths -= 1
            raise SystemExit("worker killed")
        return sent


# One rating, many copies -----------------------------------------------------------------------------------------

@WORKER
def test_a_false_rating_reaching_many_copies_sends_each_owner_one_email_naming_each_of_their_posts(
    factchecker, run_worker
):
    owner, other_owner = UserFactory(), UserFactory()
    arrive(flag("source", CLAIM, page="page-source"))
    mine = [f"mine-{n}" for n in range(12)]
    theirs = [f"theirs-{n}" for n in range(3)]
    # The owner's copies on two pages of theirs, the other owner's on one: all before the claim is rated.
    arrive(*(flag(name, EXACT_COPY, page=f"owner-page-{n % 2}") for n, name in enumerate(mine)),
           *(flag(name, EXACT_COPY, page="other-page") for name in theirs))
    for page in Page.objects.filter(external_id__startswith="owner-page-"):
        page.owners.add(owner)
    Page.objects.get(external_id="other-page").owners.add(other_owner)
    run_worker()
    assert {post(name).queue_state for name in mine + theirs} == {QueueState.GROUPED}

    RatingFactory(reviewer=factchecker, post=post("source"), verdict="false")
    run_worker()  # the decision, the copies' decisions (one transaction), the e-mails

    [digest] = mails_to(owner)
    assert digest.subject == (f"[Factdesk] 14 notices: Your post {mine[0]} was matched to a claim rated False, "
                              "and 13 more")
    assert digest.body.startswith("You have 14 new notices in Factdesk, one line each below. "
                                  "Follow a notice's link to read it in full and act on it.")
    # Six strikes each: both of the owner's pages became repeat offenders, told after the posts (test_standing_notices).
    assert listed(digest) == [
        *((f"Your post {name} was matched to a claim rated False", portal_post(post(name))) for name in mine),
        *((f"Your page Page owner-page-{n} is now a repeat offender", PORTAL_NOTIFICATIONS) for n in (0, 1)),
    ]
    [theirs_mail] = mails_to(other_owner)
    assert listed(theirs_mail) == [
        *((f"Your post {name} was matched to a claim rated False", portal_post(post(name))) for name in theirs),
        ("Your page Page other-page is now a repeat offender", PORTAL_NOTIFICATIONS),  # three strikes
    ]
    # The portal still has one notice per post, each with its own reasons, all marked e-mailed.
    notices = Notification.objects.filter(user=owner, kind=NotificationKind.DECISION)
    assert sorted(notices.values_list("post__external_id", flat=True)) == sorted(mine)
    assert all("Their rationale:" in notice.body and notice.emailed_at for notice in notices)
    assert digest.extra_headers["Message-ID"] != theirs_mail.extra_headers["Message-ID"]


@pytest.mark.django_db
def test_notices_that_arrive_while_the_first_ones_job_waits_go_out_with_them(
    run_worker, django_capture_on_commit_callbacks
):
    owner = UserFactory()
    page = PageFactory()
    page.owners.add(owner)
    first, second = PostFactory(page=page), PostFactory(page=page)
    with django_capture_on_commit_callbacks(execute=True):
        notify(owner, [first])
    with django_capture_on_commit_callbacks(execute=True):
        notify(owner, [second])  # a second decision, while the first e-mail's job is still queued

    assert run_worker() == 2
    [digest] = mail.outbox
    assert listed(digest) == [(f"Your post {first.external_id} was rated False", portal_post(first)),
                              (f"Your post {second.external_id} was rated False", portal_post(second))]


@pytest.mark.django_db
def test_a_lone_notice_is_emailed_as_it_reads_in_the_portal():
    owner = UserFactory()
    target = scenarios.rated_post(owner=owner)
    [notice] = Notification.objects.filter(user=owner)

    assert email_notices(user_id=owner.pk) == 1
    [message] = mail.outbox
    assert message.subject == f"[Factdesk] {notice.subject}"
    assert message.body == f"{notice.body}\n\nOpen it in Factdesk: {portal_post(target)}"


# A digest's length ------------------------------------------------------------------------------------------------

@pytest.mark.django_db
def test_a_digest_lists_fifty_posts_and_says_how_many_more_with_the_link_to_all_the_owners_notices():
    owner = UserFactory()
    page = PageFactory()
    page.owners.add(owner)
    posts = PostFactory.create_batch(DIGEST_LISTS + 3, page=page)
    notify(owner, posts)

    assert email_notices(user_id=owner.pk) == 1
    [digest] = mail.outbox
    assert digest.subject.startswith(f"[Factdesk] 53 notices: Your post {posts[0].external_id} was rated False")
    assert listed(digest) == [(f"Your post {p.external_id} was rated False", portal_post(p)) for p in posts[:50]]
    assert digest.body.endswith(f"\n\nAnd 3 more notices, not listed here. All your notices: {PORTAL_NOTIFICATIONS}")
    assert posts[50].external_id not in digest.body
    # The three it counts are e-mailed too (by this one e-mail): a thousand copies are one e-mail, not twenty.
    assert not Notification.objects.filter(user=owner, emailed_at__isnull=True).exists()
    assert email_notices(user_id=owner.pk) == 0


# Once, and never lost ---------------------------------------------------------------------------------------------

@pytest.mark.django_db
def test_an_email_job_run_twice_sends_each_notice_once(
    owner_with_posts, run_worker, django_capture_on_commit_callbacks
):
    owner, posts = owner_with_posts
    with django_capture_on_commit_callbacks(execute=True):
        notify(owner, posts)
    # The same job delivered again (a worker died between sending and acknowledging), and the sweep behind them.
    django_rq.get_queue("notices").enqueue(jobs.email_notices, [owner.pk])
    assert run_worker() == 2
    assert send_unsent_emails(now=timezone.now() + timedelta(minutes=5)) == 0
    assert [m.to for m in mail.outbox] == [[owner.email]]
    assert len(listed(mail.outbox[0])) == 3
    assert NoticeEmail.objects.get().sent_at is not None


@pytest.mark.django_db
def test_a_worker_killed_after_sending_sends_the_same_email_again_and_a_later_notice_apart(owner_with_posts, settings):
    owner, posts = owner_with_posts
    settings.EMAIL_BACKEND = f"{__name__}.SentThenKilled"
    SentThenKilled.deaths = 1
    notify(owner, posts[:2])
    with pytest.raises(SystemExit):
        email_notices(user_id=owner.pk)
    [first] = mail.outbox
    assert not Notification.objects.filter(emailed_at__isnull=False).exists()  # its transaction never committed

    [late] = notify(owner, posts[2:])  # arrives before the job is retried
    assert email_notices(user_id=owner.pk) == 2
    again, alone = mail.outbox[1:]
    # The retry sends the e-mail that was out, whole and alone, as the same message; the late notice on its own.
    assert (again.subject, again.body, again.extra_headers) == (first.subject, first.body, first.extra_headers)
    assert alone.subject == f"[Factdesk] {late.subject}"
    assert alone.extra_headers["Message-ID"] != first.extra_headers["Message-ID"]
    carried = {n.pk: n.email_id for n in Notification.objects.filter(user=owner)}
    assert len(set(carried.values())) == 2 and all(carried.values())
    assert not Notification.objects.filter(emailed_at__isnull=True).exists()


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_two_jobs_composing_one_owners_email_at_once_put_each_notice_in_one_email(monkeypatch):
    owner = UserFactory()
    page = PageFactory()
    page.owners.add(owner)
    notify(owner, PostFactory.create_batch(3, page=page))
    manager = NoticeEmail.objects
    create = manager.create

    def pausing_create(**fields):
        # The first composer holds the owner's pending notifications, its e-mail not yet committed.
        if threading.current_thread().name == "first":
            first.reached("locked")
            first.wait_for("commit")
        return create(**fields)

    monkeypatch.setattr(manager, "create", pausing_create)
    first = Backend(lambda backend: compose_email(user_id=owner.pk, now=timezone.now()), name="first")
    second = Backend(lambda backend: compose_email(user_id=owner.pk, now=timezone.now()), name="second")
    try:
        first.start()
        first.wait_until_reached("locked")
        second.start()
        wait = wait_until_blocked(second, by=first, statement='"moderation_notification"')
        assert wait.blocking_pids == [first.pid]
        first.release("commit")
        composed, nothing = first.join(), second.join()
    finally:
        first.stop()
        second.stop()

    assert isinstance(composed, NoticeEmail) and nothing is None
    assert set(Notification.objects.values_list("email_id", flat=True)) == {composed.pk}
    assert email_notices(user_id=owner.pk) == 1 and len(listed(mail.outbox[0])) == 3


@pytest.mark.django_db
def test_notices_whose_jobs_were_lost_go_out_as_one_email_by_the_sweep_which_warns_of_it(owner_with_posts, caplog):
    owner, posts = owner_with_posts
    notify(owner, posts)  # committed, but their job never ran (Redis was down)
    assert send_unsent_emails(now=timezone.now()) == 0  # too fresh: their job may still be on its way
    assert redriven(caplog) == []

    assert send_unsent_emails(now=timezone.now() + timedelta(seconds=61)) == 1
    [digest] = mail.outbox
    assert len(listed(digest)) == 3
    assert redriven(caplog) == ["reconciler re-drove e-mails of notices still unsent a minute after they were made: 1, "
                                "the oldest waiting 1 min - their jobs were lost or late"]


# Where a link leads -----------------------------------------------------------------------------------------------

@pytest.mark.django_db
def test_an_owner_who_left_the_page_is_linked_to_their_notices_not_to_a_post_they_can_no_longer_open(
    factchecker, login
):
    ex_owner, owner = UserFactory(), UserFactory()
    target = scenarios.rated_post(rater=factchecker, owner=ex_owner)
    target.page.owners.add(owner)
    appeal = file_appeal(owner=ex_owner, post_id=target.pk, kind="dispute", statement="The quote is real.")
    Notification.objects.update(emailed_at=timezone.now())  # the decision's e-mails went out then
    target.page.owners.remove(ex_owner)  # they hand the page over; the appeal is decided later
    colleague = FactCheckerFactory(organisation=organisation_of(factchecker))
    decide_appeal(appeal_id=appeal.pk, reviewer=colleague, outcome="upheld", reason="The rating stands.")

    email_notices(user_id=ex_owner.pk)
    email_notices(user_id=owner.pk)
    [to_ex_owner], [to_owner] = mails_to(ex_owner), mails_to(owner)
    assert to_ex_owner.body.endswith(f"\n\nOpen it in Factdesk: {PORTAL_NOTIFICATIONS}")
    assert to_owner.body.endswith(f"\n\nOpen it in Factdesk: {portal_post(target)}")
    # What each link opens for its recipient.
    client = login(ex_owner)
    assert client.get(portal_post(target).removeprefix(PUBLIC)).status_code == 404
    portal = client.get(PORTAL_NOTIFICATIONS.removeprefix(PUBLIC))
    assert portal.status_code == 200 and "was not accepted" in portal.content.decode()
    # Where they read it, it does not link to the post either; for the page's owner it does.
    post_href = f'href="{portal_post(target).removeprefix(PUBLIC)}"'
    assert post_href not in portal.content.decode()
    assert post_href in login(owner).get("/appeals/").content.decode()


@pytest.mark.django_db
def test_a_fact_checker_who_moved_organisation_is_linked_to_the_posts_page_not_to_the_appeal(factchecker, login):
    owner = UserFactory()
    target = scenarios.rated_post(rater=factchecker, owner=owner)
    colleague = FactCheckerFactory(organisation=organisation_of(factchecker))
    stays = FactCheckerFactory(organisation=organisation_of(factchecker))
    appeal = file_appeal(owner=owner, post_id=target.pk, kind="dispute", statement="The quote is real.")
    Membership.objects.filter(user=colleague).update(organisation=OrganisationFactory())

    email_notices(user_id=colleague.pk)
    email_notices(user_id=stays.pk)
    # The post's page on the desk opens for any fact-checker (moderation.notice_links); the appeal no longer does.
    assert mails_to(colleague)[0].body.endswith(f"\n\nOpen it in Factdesk: {PUBLIC}/queue/posts/{target.pk}/")
    assert mails_to(stays)[0].body.endswith(f"\n\nOpen it in Factdesk: {PUBLIC}/queue/appeals/{appeal.pk}/")
    assert login(colleague).get(f"/queue/appeals/{appeal.pk}/").status_code == 404
    assert login(colleague).get(f"/queue/posts/{target.pk}/").status_code == 200


@pytest.fixture
def owner_with_posts(db) -> tuple:
    owner = UserFactory()
    page = PageFactory()
    page.owners.add(owner)
    return owner, PostFactory.create_batch(3, page=page)
