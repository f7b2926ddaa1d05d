"""Shared fixtures: users of each role, API clients with tokens, and a real RQ worker."""

from __future__ import annotations

import pytest
from django.test import Client

from accounts.models import ApiToken
from tests.factories import PASSWORD, FactCheckerFactory, PlatformUserFactory, StaffFactory, UserFactory

# The authority suites' shared fixtures (organisation, reviewer, colleague, writes_nothing).
pytest_plugins = ["tests.authority", "tests.history_flush"]  # history_flush: the teardown may TRUNCATE history


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    # The production hasher costs ~100 ms per password; it is not what the suite tests.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _no_login_lockout(settings):
    # Client.login() authenticates without a request, which django-axes cannot check; the lockout's
    # own tests (tests/accounts/test_lockout.py) switch it back on and sign in through the form.
    settings.AXES_ENABLED = False


@pytest.fixture(autouse=True)
def _clean_redis(settings):
    """Each test starts with an empty Redis test database (REDIS_URL points at a spare db)."""
    if settings.FACTDESK_JOBS_IN_PROCESS:
        from django.core.cache import cache

        cache.clear()  # without Redis the API's counters (rates, failed tokens) live in this process's memory
        yield
        return
    import django_rq

    connection = django_rq.get_connection("default")
    connection.flushdb()
    yield
    connection.flushdb()


@pytest.fixture
def run_worker():
    """Run the RQ queue to empty with a real worker in this process (same DB connection)."""
    import django_rq
    from rq import SimpleWorker

    def run() -> int:
        """Returns how many jobs finished; fails the test if any job failed."""
        # Decisions first, then notices, webhooks, bulk work (the queue order of every worker: core.jobs.QUEUES).
        from core.jobs import QUEUES

        queues = [django_rq.get_queue(name) for name in QUEUES]
        before = sum(queue.finished_job_registry.count for queue in queues)
        SimpleWorker(queues, connection=queues[0].connection).work(burst=True, with_scheduler=False)
        for queue in queues:
            failed = queue.failed_job_registry
            if failed.count:
                job = queue.fetch_job(failed.get_job_ids()[0])
                pytest.fail(f"{failed.count} job(s) failed: {job.func_name}\n{job.latest_result().exc_string}")
        return sum(queue.finished_job_registry.count for queue in queues) - before

    return run


@pytest.fixture
def factchecker(db):
    return FactCheckerFactory()


@pytest.fixture
def platform_user(db):
    return PlatformUserFactory()


@pytest.fixture
def staff_user(db):
    return StaffFactory()


@pytest.fixture
def page_owner(db):
    return UserFactory()


def bearer_client(user) -> Client:
    _, raw = ApiToken.issue(user=user)
    return Client(headers={"Authorization": f"Bearer {raw}"})


@pytest.fixture
def platform_client(platform_user) -> Client:
    return bearer_client(platform_user)


@pytest.fixture
def factchecker_client(factchecker) -> Client:
    return bearer_client(factchecker)


@pytest.fixture
def ts_user(db):
    """A trust-and-safety member with the group's admin rights (as `add_user --role trust_safety` makes one)."""
    from factcheck.members import create_user

    return create_user(username="sam", role="trust_safety", password=PASSWORD)


@pytest.fixture
def staff_client(ts_user) -> Client:
    """A browser signed in as `ts_user`."""
    client = Client()
    assert client.login(username=ts_user.username, password=PASSWORD)
    return client


@pytest.fixture
def login(client):
    def log_in(user) -> Client:
        assert client.login(username=user.username, password=PASSWORD)
        return client

    return log_in
