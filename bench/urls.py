"""The app's URLs plus the trivial view that is the floor of the queue-page figure."""

from django.http import HttpRequest, HttpResponse
from django.urls import include, path


def trivial(request: HttpRequest) -> HttpResponse:
    # No query and no template: what a request costs through the middleware stack alone.
    return HttpResponse("ok", content_type="text/plain")


urlpatterns = [
    path("bench/trivial/", trivial, name="bench-trivial"),
    path("", include("config.urls")),
]
