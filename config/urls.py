from django.contrib import admin
from django.urls import include, path

from config.api import api
from config.health import healthz

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("admin/rq/", include("django_rq.urls")),
    path("admin/", admin.site.urls),
    path("api/", api.urls),
    path("accounts/", include("accounts.urls")),
    path("", include("moderation.urls")),
    path("", include("factcheck.urls")),
]
