"""Each signed-in person sees times in their own time zone (User.time_zone; UTC by default)."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.utils import timezone


class UserTimeZoneMiddleware:
    """Activate the user's time zone for the request (after AuthenticationMiddleware).

    The API is left alone: its timestamps are ISO 8601 with their offset, whoever asks.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        zone = None
        if not request.path.startswith("/api/"):
            user = getattr(request, "user", None)
            zone = user.zone if user is not None and user.is_authenticated else None
        if zone is None:
            timezone.deactivate()
        else:
            timezone.activate(zone)
        try:
            return self.get_response(request)
        finally:
            timezone.deactivate()
