"""One rating's decision is one e-mail to each owner (moderation.notice_delivery, "One rating's decision, one
e-mail"), however many transactions decide its copies, and whether the owner has the rated post, copies, or both;
held notices are never held for ever.

An owner with 600 copies of one rated claim on their pages was sent three e-mails about the one decision (its
copies are decided 250 a transaction, and an urgent worker e-mailed each transaction's notices as it committed),
and an owner of the rated post and of copies of it one e-mail about the post and another about the copies.
"""

from __future__ import annotations

from datetime import timedelta

import django_rq
from django.conf import settings
from django.core import mail
from django.utils import timezone
from rq import SimpleWorker

from core.jobs import URGENT_QUEUES
from factcheck.models import Page, QueueState
from moderation import propagation
from moderation.models import NoticeHold, Notification, NotificationKind
from moderation.notice_delivery import HOLD, send_unsent_emails
from moderation.propagation import CHUNK, reconcile_matches
from tests.factcheck.matching_helpers import CLAIM, EXACT_COPY, WORKER, arrive, flag, post
from tests.factories import RatingFactory, UserFactory
from tests.moderation.test_notice_digest import PORTAL_NOTIFICATIONS, listed, mails_to, portal_post


def run_urgent_worker() -> None:
    """What `jobworker --urgent` does beside the general worker (RQ_URGENT_WORKERS): decisions, notices, webhooks."""
    queues = [django_rq.get_queue(name) for name in URGENT_QUEUES]
    SimpleWorker(queues, connection=queues[0].connection).work(burst=True, with_scheduler=False)


def copies_on_pages_of(owner, *, count: int, source_page: str = "page-source") -> list[str]:
    """A claim ("source", on `source_page`) and `count` copies of it on three pages of `owner`, all matched before
    the claim is rated (their matching jobs are left to the test's worker)."""
    arrive(flag("source", CLAIM, page=source_page))
    names = [f"copy-{n:03}" for n in range(count)]
    arrive(*(flag(name, EXACT_COPY, page=f"owner-page-{n % 3}") for n, name in enumerate(names)))
    for page in Page.objects.filter(external_id__startswith="owner-page-"):
        page.owners.add(owner)
    return names


@WORKER
def test_an_owner_of_600_copies_of_one_rated_claim_gets_one_email_listing_50_and_how_many_more(
    factchecker, run_worker, monkeypatch
):
    owner = UserFactory()
    names = copies_on_pages_of(owner, count=600)
    run_worker()
    assert {post(name).queue_state for name in names} == {QueueState.GROUPED}
    RatingFactory(reviewer=factchecker, post=post("source"), verdict="false")

    # The general worker decides the copies, CHUNK a transaction; the urgent worker beside it runs the e-mail jobs
    # each of those transactions enqueues as soon as it commits, before the next one is decided.
    decide = propagation.apply_to_copies
    chunks = []

    def then_the_urgent_worker(**arguments):
        decided = decide(**arguments)
        chunks.append(len(decided))
        run_urgent_worker()
        return decided

    monkeypatch.setattr(propagation, "apply_to_copies", then_the_urgent_worker)
    run_worker()

    assert chunks == [CHUNK, CHUNK, 600 - 2 * CHUNK]
    [digest] = mails_to(owner)
    # 600 copies, and the owner's three pages that their strikes made repeat offenders (test_standing_notices).
    assert digest.subject == ("[Factdesk] 603 notices: Your post copy-000 was matched to a claim rated False, "
                              "and 602 more")
    assert listed(digest) == [(f"Your post {name} was matched to a claim rated False", portal_post(post(name)))
                              for name in names[:50]]
    assert digest.body.endswith(f"\n\nAnd 553 more notices, not listed here. All your notices: {PORTAL_NOTIFICATIONS}")
    # The portal has a notice for each copy and each page, all carried by that one e-mail.
    notices = Notification.objects.filter(user=owner)
    assert notices.count() == 603 and len(set(notices.values_list("email_id", flat=True))) == 1
    assert notices.filter(kind=NotificationKind.STANDING).count() == 3
    assert not notices.filter(emailed_at__isnull=True).exists()


@WORKER
def test_an_owner_of_the_rated_post_and_of_its_copies_gets_one_email_of_the_decision(factchecker, run_worker):
    owner = UserFactory()
    names = copies_on_pages_of(owner, count=3, source_page="owner-page-source")
    run_worker()
    RatingFactory(reviewer=factchecker, post=post("source"), verdict="false")
    run_worker()  # the post's decision, its e-mail job, then the copies' job (the queues' order), then the e-mails

    [digest] = mail.outbox
    assert digest.to == [owner.email]
    assert digest.subject == "[Factdesk] 4 notices: Your post source was rated False, and 3 more"
    assert listed(digest) == [
        ("Your post source was rated False", portal_post(post("source"))),
        *((f"Your post {name} was matched to a claim rated False", portal_post(post(name))) for name in names),
    ]


@WORKER
def test_a_lost_propagation_job_holds_the_notices_only_until_the_hold_lapses_then_they_go_as_one_email(
    factchecker, run_worker
):
    owner = UserFactory()
    names = copies_on_pages_of(owner, count=3, source_page="owner-page-source")
    run_worker()
    RatingFactory(reviewer=factchecker, post=post("source"), verdict="false")
    rated_at = timezone.now()
    run_urgent_worker()  # the post's decision, and its e-mail job, which finds the notice held
    django_rq.get_queue("copies").empty()  # the propagation job is lost (Redis lost it, its retries spent)
    assert mail.outbox == []

    # The reconciler decides the copies a while later; their notices join the held one.
    after = settings.FACTDESK_RECONCILE_AFTER_SECONDS + 1
    assert reconcile_matches(now=rated_at + timedelta(seconds=after)) == 3
    run_worker()
    assert send_unsent_emails(now=rated_at + timedelta(minutes=2)) == 0
    assert mail.outbox == []

    assert NoticeHold.objects.exists()
    assert send_unsent_emails(now=rated_at + HOLD + timedelta(seconds=1)) == 1
    assert not NoticeHold.objects.exists()  # the lapsed hold's row is not left behind for good
    [digest] = mail.outbox
    assert digest.to == [owner.email]
    assert [subject for subject, _ in listed(digest)] == [
        "Your post source was rated False", *(f"Your post {name} was matched to a claim rated False" for name in names)
    ]
    assert not Notification.objects.filter(emailed_at__isnull=True).exists()

