"""Redis goes down and comes back: people keep working, and nothing they did is lost or done twice.

The app is pointed at a redis-server of the test's own (tests/servers.py), which the test kills
with SIGKILL and starts again, empty, on the same port. Everything goes through real HTTP
(django.test.Client, CSRF checks on for the browser) and a real RQ worker.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from datetime import timedelta

import pytest
from django.core import mail
from django.test import Client
from django.utils import timezone

import core.jobs
from core.resilience import Breaker
from factcheck.models import Rating, Verdict
from factcheck.ratings import record_rating
from moderation.enforcement import reconcile_decisions
from moderation.models import Appeal, EnforcementPolicy, Notification, PostDistribution, RatingDecision
from moderation.notice_delivery import SENDING, send_unsent_emails
from tests.conftest import bearer_client
from tests.factories import (
    PASSWORD,
    FactCheckerFactory,
    OrganisationFactory,
    PageFactory,
    PlatformUserFactory,
    PostFactory,
    UserFactory,
)
from tests.servers import RedisServer

# After this long the reconciler and the e-mail sweep treat a missing job as lost.
EMAIL_SWEEP_DELAY = SENDING + timedelta(seconds=1)  # send_unsent_emails: notices older than SENDING
DROPPED = re.compile(r"could not enqueue (\S+);|Redis is down: (\S+) not enqueued")


@pytest.fixture
def private_redis(settings, monkeypatch):
    """The app's jobs, cache and health check on a redis-server that this test may kill."""
    server = RedisServer()
    server.start()
    settings.REDIS_URL = server.url
    settings.FACTDESK_JOBS_IN_PROCESS = False
    settings.RQ_QUEUES = {name: {**queue, "URL": server.url} for name, queue in settings.RQ_QUEUES.items()}
    # A new CACHES setting makes Django build caches["default"] anew (django.test.signals).
    settings.CACHES = {
        "default": {
            "BACKEND": "core.resilience.FallbackCache", "LOCATION": server.url, "KEY_PREFIX": "factdesk",
            "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5},
        }
    }
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    # core.jobs keeps one enqueue connection per URL and a breaker for the process; a fresh breaker
    # with a short cool-down lets the test see it close again without waiting 5 s.
    core.jobs._enqueue_connection.cache_clear()
    monkeypatch.setattr(core.jobs, "_breaker", Breaker("jobs", cool_down=0.3))
    yield server
    server.kill()
    core.jobs._enqueue_connection.cache_clear()


def csrf_token(response) -> str:
    match = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', response.content.decode())
    assert match, "the page has no form with a CSRF token"
    return match.group(1)


def wait_until_breaker_closes() -> None:
    deadline = time.monotonic() + 5
    while core.jobs._breaker.open:
        assert time.monotonic() < deadline, "the jobs breaker stayed open"
        time.sleep(0.05)


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_people_keep_working_while_redis_is_down_and_the_reconcilers_finish_the_work_once(
    private_redis, settings, run_worker, caplog
):
    settings.AXES_ENABLED = True  # the real login lockout, which keeps its attempts in PostgreSQL
    organisation = OrganisationFactory()
    reviewer = FactCheckerFactory(organisation=organisation)  # rates in the browser
    api_reviewer = FactCheckerFactory(organisation=organisation)  # rates through the API; decides appeals
    owner = UserFactory()
    page = PageFactory()
    page.owners.add(owner)
    browser_post, api_post, appealed_post = PostFactory(page=page), PostFactory(page=page), PostFactory(page=page)

    # Before the outage: a rating decided by the worker, its owner's e-mail sent. Everything is drained.
    earlier = record_rating(
        reviewer=reviewer, post_id=appealed_post.pk, verdict=Verdict.FALSE, rationale="A fabricated quote.",
        sources=["https://evidence.example/quote"], claim_if_unclaimed=True,
    )
    assert run_worker() == 2  # the decision, then the owner's e-mail
    assert RatingDecision.objects.filter(rating=earlier).count() == 1
    before_outage = set(Notification.objects.values_list("id", flat=True))
    assert len(mail.outbox) == len(before_outage) == 1
    mail.outbox.clear()

    private_redis.kill()

    # The fact-checker signs in through the form, opens the queue, claims a post and rates it.
    browser = Client(enforce_csrf_checks=True)
    login_page = browser.get("/accounts/login/")
    assert login_page.status_code == 200
    signed_in = browser.post(
        "/accounts/login/",
        {"username": reviewer.username, "password": PASSWORD, "csrfmiddlewaretoken": csrf_token(login_page)},
    )
    assert (signed_in.status_code, signed_in["Location"]) == (302, "/")
    assert browser.get("/")["Location"] == "/queue/"
    queue = browser.get("/queue/")
    assert queue.status_code == 200
    assert f'href="/queue/posts/{browser_post.pk}/"' in queue.content.decode()
    post_page = browser.get(f"/queue/posts/{browser_post.pk}/")
    claimed = browser.post(f"/queue/posts/{browser_post.pk}/claim/", {"csrfmiddlewaretoken": csrf_token(post_page)})
    assert (claimed.status_code, claimed["Location"]) == (302, f"/queue/posts/{browser_post.pk}/")
    post_page = browser.get(f"/queue/posts/{browser_post.pk}/")
    assert "Save rating" in post_page.content.decode()
    rated = browser.post(f"/queue/posts/{browser_post.pk}/", {
        "verdict": Verdict.FALSE, "rationale": "The study it cites does not exist.",
        "sources": "https://journal.example/archive", "article_url": "",
        "csrfmiddlewaretoken": csrf_token(post_page),
    })
    assert (rated.status_code, rated["Location"]) == (302, "/queue/")
    assert "Rating saved" in browser.get("/queue/").content.decode()

    # Another fact-checker rates through the API; the page owner appeals the earlier decision.
    api_rating = bearer_client(api_reviewer).post(
        f"/api/v1/posts/{api_post.external_id}/ratings",
        {"verdict": Verdict.PARTLY_FALSE, "rationale": "Half of the numbers are wrong.",
         "sources": ["https://stats.example/table"]},
        content_type="application/json",
    )
    assert api_rating.status_code == 201, api_rating.content
    appeal = bearer_client(owner).post(
        f"/api/v1/posts/{appealed_post.external_id}/appeals",
        {"kind": "dispute", "statement": "The quote is real: the full video shows it.",
         "evidence_urls": ["https://video.example/full"]},
        content_type="application/json",
    )
    assert appeal.status_code == 201, appeal.content

    health = Client().get("/healthz")
    assert health.status_code == 200
    assert health.json() == {"database": "ok", "redis": "down", "workers": "unknown", "worker_count": 0,
                             "unserved_queues": None, "migrations": "ok", "unapplied_apps": []}

    # What the code does meanwhile: the rows are committed, and each job that could not be
    # enqueued was logged and dropped. No decision exists for the two new ratings, so their
    # posts keep their distribution; no e-mail went out (the appeal's notice waits unsent).
    ratings = {post.pk: Rating.objects.get(post=post, is_current=True) for post in (browser_post, api_post)}
    assert not RatingDecision.objects.filter(rating__in=ratings.values()).exists()
    assert not PostDistribution.objects.filter(post__in=[browser_post, api_post]).exists()
    assert Appeal.objects.get(post=appealed_post).status == "open"
    waiting = Notification.objects.exclude(id__in=before_outage)
    assert [(n.user_id, n.kind, n.emailed_at) for n in waiting] == [(api_reviewer.pk, "appeal_received", None)]
    assert mail.outbox == []
    # Each job is logged as dropped: tried and refused, or skipped while the breaker was open.
    dropped = Counter(
        match.group(1) or match.group(2)
        for record in caplog.records if record.name == "core.jobs"
        for match in [DROPPED.match(record.getMessage())] if match
    )
    assert dropped == {"apply_rating": 2, "moderation.jobs.email_notices": 1}

    # Redis is back (empty: the outage lost whatever it held); the periodic jobs run.
    private_redis.start()
    wait_until_breaker_closes()
    after_delay = timezone.now() + timedelta(seconds=settings.FACTDESK_RECONCILE_AFTER_SECONDS + 1)
    assert reconcile_decisions(now=after_delay) == 2
    # The owner's two "rated" notices, each decision's e-mail job enqueued as it committed: the first job takes both,
    # as one e-mail, and the second finds nothing left.
    assert run_worker() == 2
    assert send_unsent_emails(now=timezone.now() + EMAIL_SWEEP_DELAY) == 1  # the appeal's notice
    # Run again, nothing is left to do: each was done once.
    assert reconcile_decisions(now=after_delay) == 0
    assert send_unsent_emails(now=timezone.now() + EMAIL_SWEEP_DELAY) == 0
    assert run_worker() == 0

    for rating in [earlier, *ratings.values()]:
        assert RatingDecision.objects.filter(rating=rating, post_id=rating.post_id).count() == 1
    for post, verdict in ((browser_post, Verdict.FALSE), (api_post, Verdict.PARTLY_FALSE)):
        policy = EnforcementPolicy.objects.get(verdict=verdict)
        distribution = PostDistribution.objects.get(post=post)
        assert (distribution.multiplier, distribution.labels) == (policy.feed_multiplier, [policy.label])
    feed = bearer_client(PlatformUserFactory()).get("/api/v1/decisions")
    assert {d["post"] for d in feed.json()["decisions"]} >= {browser_post.external_id, api_post.external_id}

    new = list(Notification.objects.exclude(id__in=before_outage).select_related("user"))
    assert len(new) == 3 and all(n.emailed_at is not None for n in new)
    [appeal_notice] = [n for n in new if n.kind == "appeal_received"]
    rated = [n.subject for n in sorted(new, key=lambda n: n.pk) if n.user_id == owner.pk]
    sent = Counter((m.to[0], m.subject) for m in mail.outbox)
    assert sent == Counter({
        (owner.email, f"[Factdesk] 2 notices: {rated[0]}, and 1 more"): 1,
        (api_reviewer.email, f"[Factdesk] {appeal_notice.subject}"): 1,
    })
    [digest] = [m for m in mail.outbox if m.to == [owner.email]]
    assert all(f"- {subject}\n" in digest.body for subject in rated)


@pytest.mark.django_db
def test_the_api_rate_limit_counts_in_memory_while_redis_is_down(private_redis, settings):
    settings.API_RATE_LIMIT = "3/m"
    private_redis.kill()
    client, other = bearer_client(PlatformUserFactory()), bearer_client(PlatformUserFactory())

    statuses = [client.get("/api/v1/tokens").status_code for _ in range(4)]

    assert statuses == [200, 200, 200, 429]
    refused = client.get("/api/v1/tokens")
    assert refused.status_code == 429
    assert refused.json()["error"]["code"] == "throttled"
    assert other.get("/api/v1/tokens").status_code == 200  # each token holder has a limit of its own
    assert Client().get("/healthz").json()["redis"] == "down"
