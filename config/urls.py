from importlib.util import find_spec

from django.contrib import admin
from django.contrib.admin.views.decorators import staff_member_required
from django.http import Http404, HttpRequest, HttpResponse
from django.urls import include, path
from django_rq import urls as rq_urls

from config.api import api
from config.health import healthz
from config.rq_admin import guarded_patterns


@staff_member_required
def no_rq_scheduler(request: HttpRequest, scheduler_index: int) -> HttpResponse:
    # django-rq's rq-scheduler page raises ImproperlyConfigured (a 500) when rq-scheduler is not
    # installed; Factdesk schedules with rq's own cron (config/cron.py), so the page does not exist.
    raise Http404("rq-scheduler is not installed: there are no rq-scheduler jobs.")


# Before django-rq's own patterns, which they shadow (tests/test_authorisation_matrix.py).
without_rq_scheduler = [] if find_spec("rq_scheduler") else [
    path("admin/rq/schedulers/<int:scheduler_index>/", no_rq_scheduler, name="no_rq_scheduler"),
]

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    *without_rq_scheduler,
    # django-rq's pages, each answering a missing id with 404 and a Redis outage with 503; mounted here only
    # (settings.RQ_SHOW_ADMIN_LINK is off: no unguarded copy under /admin/django_rq/dashboard/).
    path("admin/rq/", include((guarded_patterns(rq_urls.urlpatterns), rq_urls.app_name))),
    path("admin/", admin.site.urls),
    path("api/", api.urls),
    path("accounts/", include("accounts.urls")),
    path("", include("reports.urls")),
    path("", include("moderation.urls")),
    path("", include("factcheck.urls")),
]
