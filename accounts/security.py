"""Who is signing in from where, for the login lockout (django-axes)."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest


def client_ip(request: HttpRequest) -> str:
    """The client's address: behind the TLS proxy (BEHIND_PROXY), the one it appended to X-Forwarded-For.

    Only the last entry is the proxy's own word; anything before it came from the client and can be forged.
    """
    if settings.BEHIND_PROXY:
        forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
        last = forwarded.split(",")[-1].strip()
        if last:
            return last
    return request.META.get("REMOTE_ADDR", "")
