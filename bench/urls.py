"""The app's URLs plus the views that are the floors of the queue-page figures."""

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.template import Context, Engine
from django.urls import include, path

from factcheck.models import Post, QueueState

FLOOR_TEMPLATE = Engine().from_string(
    "<!doctype html><title>queue floor</title><ol>{% for p in posts %}"
    "<li>{{ p.external_id }} {{ p.text }} {{ p.priority }}</li>{% endfor %}</ol>"
)


def trivial(request: HttpRequest) -> HttpResponse:
    # No query and no template: what a request costs through the middleware stack alone.
    return HttpResponse("ok", content_type="text/plain")


@login_required
def queue_floor(request: HttpRequest) -> HttpResponse:
    """The issue's floor: signed in, behind the same middleware, one indexed query (the queue order's partial
    index) for 25 posts, rendered in a minimal template."""
    posts = Post.objects.filter(queue_state=QueueState.QUEUED).order_by("-priority", "first_flagged_at").values(
        "external_id", "text", "priority"
    )[:25]
    return HttpResponse(FLOOR_TEMPLATE.render(Context({"posts": list(posts)})))


urlpatterns = [
    path("bench/trivial/", trivial, name="bench-trivial"),
    path("bench/queue-floor/", queue_floor, name="bench-queue-floor"),
    path("", include("config.urls")),
]
