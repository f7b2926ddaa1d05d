"""Who reaches the admin, what its index shows, and the jobs dashboard behind it."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from factcheck.models import Post, QueueState
from moderation.models import Appeal
from tests.factories import PostFactory


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


def test_the_index_shows_queue_depth_oldest_unclaimed_post_overdue_appeals_failed_jobs_and_the_rq_link(
    populate, staff_client, django_assert_max_num_queries
):
    populate(24)
    oldest = PostFactory(first_flagged_at=timezone.now() - timedelta(days=2, hours=1))
    queued = Post.objects.filter(queue_state=QueueState.QUEUED).count()
    with django_assert_max_num_queries(10):
        response = staff_client.get("/admin/")
    body = response.content.decode()
    assert response.status_code == 200
    assert f"{queued} queued posts" in body
    assert "flagged 2\xa0days, 1\xa0hour ago" in body and oldest.first_flagged_at.strftime("%Y-%m-%d") in body
    overdue = Appeal.objects.filter(status="open", created_at__lt=timezone.now() - timedelta(hours=24)).count()
    assert overdue
    assert f"{overdue} open for more than 24 hours" in body
    assert "default: 0" in body
    assert 'href="/admin/rq/"' in body


def test_the_index_reports_failed_jobs_as_unavailable_when_redis_is_down(staff_client, monkeypatch, settings):
    import django_rq
    from redis.exceptions import ConnectionError as RedisConnectionError

    settings.FACTDESK_JOBS_IN_PROCESS = False

    def down(name):
        raise RedisConnectionError("Connection refused")

    monkeypatch.setattr(django_rq, "get_queue", down)
    response = staff_client.get("/admin/")
    assert response.status_code == 200
    assert "default: unavailable" in response.content.decode()


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
