"""The admin site staff work in all day: its index shows the queues and the machinery at a glance.

`FactdeskAdminConfig` replaces django.contrib.admin in INSTALLED_APPS so that `admin.site`
(and every `@admin.register`) is a `FactdeskAdminSite`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib import admin
from django.contrib.admin.apps import AdminConfig
from django.db.models import Count, Q
from django.urls import reverse_lazy
from django.utils import timezone

from core.admin_base import number


@dataclass(frozen=True)
class QueueFailures:
    queue: str
    failed: int | None  # None: Redis could not be asked


@dataclass(frozen=True)
class AdminVitals:
    queue_depth: int
    oldest_unclaimed_at: datetime | None
    oldest_unclaimed_age: timedelta | None
    oldest_unclaimed_id: int | None
    oldest_unclaimed_external_id: str
    overdue_appeals: int
    # Open appeals that no active account may decide (moderation.appeal_states.nobody_can_decide).
    undecidable_appeals: int
    open_removal_appeals: int
    # Queued posts no fact-checker may claim (factcheck.selectors.queued_nobody_covers).
    uncovered_posts: int
    # Posts with open reports of harm, and of them those past the 24-hour target, as the reports desk writes
    # them ("1,000+" past its cap: moderation.report_queue.waiting_counts).
    open_reports: str
    overdue_reports: str
    jobs_in_process: bool
    failed_jobs: list[QueueFailures]

    @property
    def shown(self) -> dict[str, str]:
        """The counts as the page writes them, with thousands separators."""
        counts = ("queue_depth", "overdue_appeals", "undecidable_appeals", "open_removal_appeals", "uncovered_posts")
        return {name: number(getattr(self, name)) for name in counts}


def failed_job_counts() -> list[QueueFailures]:
    """Each RQ queue's failed-job registry size, asked with a glance's time-out (core.resilience: while Redis hung,
    the index took as long as the hang); a Redis that does not answer is reported, not raised, and once one has
    not answered the other queues are not asked (each would wait as long)."""
    from rq import Queue

    from core.resilience import OUTAGE, glancing_redis

    counts, connections, answering = [], {}, True
    for name, queue in settings.RQ_QUEUES.items():
        failed: int | None = None
        if answering:
            url = queue["URL"]
            try:
                if url not in connections:
                    connections[url] = glancing_redis(url)
                failed = Queue(name, connection=connections[url]).failed_job_registry.count
            except OUTAGE:
                answering = False
        counts.append(QueueFailures(queue=name, failed=failed))
    return counts


def admin_vitals(*, now: datetime | None = None) -> AdminVitals:
    """The index page's figures in six queries (plus one Redis call per queue)."""
    from factcheck.models import Post, QueueState
    from factcheck.selectors import queued_nobody_covers
    from moderation.appeal_states import nobody_can_decide
    from moderation.appeals import DECISION_TARGET
    from moderation.models import OPEN_STATUSES, Appeal, AppealKind
    from moderation.report_queue import waiting_counts

    now = now or timezone.now()
    # Both read the partial index on queued posts (the oldest: a top-1 sort of it, as Min() was).
    queued_posts = Post.objects.filter(queue_state=QueueState.QUEUED)
    depth = queued_posts.count()
    oldest = (queued_posts.filter(first_flagged_at__isnull=False).order_by("first_flagged_at", "id")
              .values("id", "external_id", "first_flagged_at").first())
    appeals = Appeal.objects.filter(status__in=OPEN_STATUSES).aggregate(
        overdue=Count("id", filter=Q(created_at__lt=now - DECISION_TARGET)),
        removals=Count("id", filter=Q(kind=AppealKind.REMOVAL)),
    )
    reports = waiting_counts(now=now)
    in_process = settings.FACTDESK_JOBS_IN_PROCESS
    oldest_at = oldest["first_flagged_at"] if oldest else None
    return AdminVitals(
        queue_depth=depth,
        oldest_unclaimed_at=oldest_at,
        oldest_unclaimed_age=now - oldest_at if oldest_at else None,
        oldest_unclaimed_id=oldest["id"] if oldest else None,
        oldest_unclaimed_external_id=oldest["external_id"] if oldest else "",
        overdue_appeals=appeals["overdue"],
        undecidable_appeals=nobody_can_decide(Appeal.objects.all()).count(),
        open_removal_appeals=appeals["removals"],
        uncovered_posts=queued_nobody_covers().count(),
        open_reports=reports.open_shown,
        overdue_reports=reports.overdue_shown,
        jobs_in_process=in_process,
        failed_jobs=[] if in_process else failed_job_counts(),
    )


class FactdeskAdminSite(admin.AdminSite):
    site_header = "Factdesk trust and safety"
    site_title = "Factdesk admin"
    index_title = "At a glance"
    # "View site": staff's own pages in the app, the reports desk (its navigation reaches the appeals desk).
    # Not "/" (Django's default): the home page sends staff to the admin, so the link led back here.
    site_url = reverse_lazy("moderation:staff_reports")

    def has_permission(self, request) -> bool:
        # is_staff alone is not enough: the admin is trust-and-safety's (and superusers') tool.
        user = request.user
        return user.is_active and user.is_staff and (user.is_superuser or getattr(user, "is_trust_safety", False))

    @property
    def login_form(self):  # noqa: ANN201 - read by AdminSite.login; imported late, as this module loads with the apps
        from accounts.forms import AdminSignInForm

        return AdminSignInForm  # an over-long username is a wrong sign-in, not a 500

    def each_context(self, request) -> dict:
        context = super().each_context(request)
        if not getattr(request.user, "is_trust_safety", False):
            context["site_url"] = None  # a superuser outside the role: the desks would refuse them (no link)
        return context

    def index(self, request, extra_context=None):
        context = {"vitals": admin_vitals(), **(extra_context or {})}
        return super().index(request, extra_context=context)

    def get_urls(self) -> list:
        # Without the "view on site" redirect (r/<content type>/<id>/): no model has a get_absolute_url,
        # because the fact-checkers' post page refuses staff; the post admin links its page on site (the
        # public page of its published rating) directly (moderation.admin.post_story.PostStoryAdmin).
        return [url for url in super().get_urls() if getattr(url, "name", None) != "view_on_site"]


class FactdeskAdminConfig(AdminConfig):
    default_site = "config.admin_site.FactdeskAdminSite"
