from django.contrib import admin
from django.urls import include, path
from django_rq import urls as rq_urls

from config.api import api
from config.health import healthz
from config.rq_admin import guarded_patterns

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    # django-rq's pages, each answering a missing id with 404 and a Redis outage with 503.
    path("admin/rq/", include((guarded_patterns(rq_urls.urlpatterns), rq_urls.app_name))),
    path("admin/", admin.site.urls),
    path("api/", api.urls),
    path("accounts/", include("accounts.urls")),
    path("", include("moderation.urls")),
    path("", include("factcheck.urls")),
]
