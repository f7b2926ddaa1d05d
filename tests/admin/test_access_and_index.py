"""Who reaches the admin, what its index shows, and the jobs dashboard behind it."""

from __future__ import annotations

import re
import signal
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

import pytest
from django.utils import timezone

from factcheck.claims import claim_post
from factcheck.models import Post, QueueState
from moderation.appeals import file_appeal, start_review, withdraw_appeal
from moderation.models import Appeal, AppealKind
from tests.factories import (
    DecisionFactory,
    FactCheckerFactory,
    OrganisationFactory,
    PageFactory,
    PostFactory,
    UserFactory,
)


def test_factcheckers_and_page_owners_are_sent_to_the_admin_login(client, factchecker, page_owner):
    for user in (factchecker, page_owner):
        assert not user.is_staff
        client.force_login(user)
        for url in ("/admin/", "/admin/factcheck/post/", "/admin/audit/auditevent/", "/admin/rq/"):
            response = client.get(url)
            assert response.status_code == 302 and "/login/" in response["Location"], (user.role, url)


def test_trust_safety_may_view_every_list_but_change_only_the_two_policies(staff_client, ts_user):
    assert ts_user.is_staff and not ts_user.is_superuser
    assert ts_user.has_perm("moderation.change_enforcementpolicy")
    assert ts_user.has_perm("moderation.change_repeatoffenderpolicy")
    assert not ts_user.has_perm("factcheck.change_rating")
    assert not ts_user.has_perm("audit.change_auditevent") and not ts_user.has_perm("audit.delete_auditevent")
    assert not ts_user.has_perm("factcheck.change_post")


def vitals_rows(body: str) -> dict[str, str]:
    """The index's "Queues and jobs" table as {row heading: cell text}, whitespace collapsed."""
    section = re.search(r'<section[^>]*id="factdesk-vitals".*?</section>', body, re.S)
    assert section, "the index has no vitals section"
    rows = re.findall(r"<tr>\s*<th[^>]*>(.*?)</th>\s*<td>(.*?)</td>\s*</tr>", section.group(0), re.S)

    def text(html: str) -> str:
        return re.sub(r"[ \t\r\n]+", " ", re.sub(r"<[^>]+>", "", html)).strip()  # keeps the \xa0 of timesince

    return {text(th): text(td) for th, td in rows}


def test_the_index_shows_the_queue_depth_oldest_unclaimed_post_overdue_appeals_and_failed_jobs_of_known_data(
    staff_client, settings, django_assert_max_num_queries
):
    now = timezone.now()
    # Queued: two posts. The older one is the oldest unclaimed post.
    oldest_flagged = (now - timedelta(days=2, hours=1)).replace(second=0, microsecond=0)
    PostFactory(first_flagged_at=oldest_flagged)
    PostFactory(first_flagged_at=now - timedelta(hours=3))
    # Not queued, though flagged earlier: claimed, rated, not eligible, never flagged.
    organisation = OrganisationFactory()
    checker, colleague = FactCheckerFactory(organisation=organisation), FactCheckerFactory(organisation=organisation)
    claim_post(reviewer=checker, post_id=PostFactory(first_flagged_at=now - timedelta(days=5)).pk)
    DecisionFactory(reviewer=checker, post=PostFactory(first_flagged_at=now - timedelta(days=6)))
    PostFactory(page=PageFactory(is_politician=True), queue_state=QueueState.NOT_ELIGIBLE,
                first_flagged_at=now - timedelta(days=9))
    PostFactory(queue_state=QueueState.UNFLAGGED, first_flagged_at=None, flag_count=0)

    # Appeals (each against its own rated post): open 25 h and in review 30 h are overdue;
    # open 23 h is not yet; withdrawn after 40 h is no longer open.
    owner = UserFactory()

    def appeal(hours_ago: int):
        post = PostFactory(first_flagged_at=now - timedelta(days=7))
        post.page.owners.add(owner)
        DecisionFactory(reviewer=checker, post=post)
        return file_appeal(owner=owner, post_id=post.pk, kind=AppealKind.DISPUTE, statement="The quote is real.",
                           now=now - timedelta(hours=hours_ago))

    appeal(25)
    start_review(appeal_id=appeal(30).pk, reviewer=colleague)
    appeal(23)
    withdraw_appeal(appeal_id=appeal(40).pk, owner=owner)
    assert Post.objects.count() == 10 and Appeal.objects.count() == 4

    if not settings.FACTDESK_JOBS_IN_PROCESS:  # two jobs in the default queue's failed registry
        import django_rq
        from rq.job import Job

        queue = django_rq.get_queue("default")
        for _ in range(2):
            job = Job.create(func=print, connection=queue.connection)
            job.save()
            queue.failed_job_registry.add(job, ttl=600)

    # One of them counts the reports of harm waiting (open, and overdue): tests/moderation/test_harm_reports_desk.py;
    # one the appeals nobody can decide: tests/moderation/test_appeals_nobody_can_decide.py; one the queued posts
    # nobody covers: tests/admin/test_uncovered_posts.py.
    with django_assert_max_num_queries(13):
        response = staff_client.get("/admin/")
    assert response.status_code == 200
    body = response.content.decode()
    rows = vitals_rows(body)
    assert rows["Queue depth"] == "2 queued posts"
    oldest = Post.objects.get(first_flagged_at=oldest_flagged)
    assert rows["Oldest unclaimed post"] == (
        f"post {oldest.external_id}, flagged 2\xa0days, 1\xa0hour ago "
        f"({oldest_flagged.day} {oldest_flagged:%b %Y, %H:%M} UTC)"
    )
    assert f'href="/admin/factcheck/post/{oldest.pk}/change/"' in body
    assert rows["Open removal appeals"] == "0 waiting for a staff decision"
    assert rows["Overdue appeals"] == "2 open for more than 24 hours"
    if settings.FACTDESK_JOBS_IN_PROCESS:
        assert rows["Failed jobs"] == "none queued: jobs run in-process (no Redis configured)"
    else:
        assert rows["Failed jobs"] == "decisions: 0; notices: 0; webhooks: 0; copies: 0; bulk: 0; default: 2"
    assert 'href="/admin/factcheck/post/?queue_state__exact=queued"' in body
    assert 'href="/admin/moderation/appeal/?overdue=yes"' in body
    assert 'href="/admin/rq/"' in body


def test_the_index_says_none_waiting_and_no_overdue_appeals_on_an_empty_queue(staff_client):
    PostFactory(queue_state=QueueState.RATED, first_flagged_at=timezone.now() - timedelta(days=3))
    rows = vitals_rows(staff_client.get("/admin/").content.decode())
    assert rows["Queue depth"] == "0 queued posts"
    assert rows["Oldest unclaimed post"] == "none waiting"
    assert rows["Overdue appeals"] == "0 open for more than 24 hours"


class Hung(Exception):  # not an OSError, which the code under test catches (the builtin TimeoutError is one)
    pass


@contextmanager
def deadline(seconds: int) -> Iterator[None]:
    def hung(signum, frame):
        raise Hung(f"no answer within {seconds} s")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def redis_at(settings, url: str) -> None:
    settings.FACTDESK_JOBS_IN_PROCESS = False
    settings.RQ_QUEUES = {name: {**queue, "URL": url} for name, queue in settings.RQ_QUEUES.items()}


def test_the_index_reports_failed_jobs_as_unavailable_when_redis_is_down(staff_client, settings):
    with socket.socket() as closed:  # a port nothing listens on: the connection is refused
        closed.bind(("127.0.0.1", 0))
        redis_at(settings, f"redis://127.0.0.1:{closed.getsockname()[1]}/0")
    response = staff_client.get("/admin/")
    assert response.status_code == 200
    assert "default: unavailable" in response.content.decode()


def test_the_index_answers_while_redis_hangs(staff_client, settings):
    """A Redis that takes connections and never answers (a network partition, a stalled server) held the index
    for as long as it hung; it is asked with a short timeout, once."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)  # connections complete in the backlog; nothing is ever read or written
        redis_at(settings, f"redis://127.0.0.1:{silent.getsockname()[1]}/0")
        # Asked once with core.resilience.GLANCE_SECONDS (0.5 s); before, each queue waited on the silent socket
        # (redis-py's 5 s each, 30 s in all).
        with deadline(10):
            answer = staff_client.get("/admin/")
    body = answer.content.decode()
    assert answer.status_code == 200
    assert all(f"{name}: unavailable" in body for name in settings.RQ_QUEUES)


def test_the_index_counts_failed_jobs_from_each_queues_failed_registry(staff_client, settings):
    if settings.FACTDESK_JOBS_IN_PROCESS:
        pytest.skip("needs REDIS_URL")
    import django_rq
    from rq.job import Job

    queue = django_rq.get_queue("default")
    job = Job.create(func=print, connection=queue.connection)
    job.save()
    queue.failed_job_registry.add(job, ttl=600)
    assert "default: 1" in staff_client.get("/admin/").content.decode()


def test_the_rq_dashboard_is_for_staff_only(client, staff_client, page_owner):
    assert staff_client.get("/admin/rq/").status_code == 200
    assert client.get("/admin/rq/").status_code == 302
    client.force_login(page_owner)
    assert client.get("/admin/rq/").status_code == 302
