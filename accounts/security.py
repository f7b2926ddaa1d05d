"""Who is signing in from where: the client's address, for the login lockout (django-axes) and the API's
limit on failed tokens (accounts.api_auth). One function, so that both count the same address.

X-Forwarded-For is a list of addresses, each appended by a proxy; whatever its left part says, the
client wrote. Only the entries written by the proxies the deployment trusts
(settings.FACTDESK_TRUSTED_PROXIES) are believed: with N of them, the client is the N-th entry from the
right (the right-most one no trusted proxy vouches for being a proxy). With none, or a header shorter
than the proxies would have made it, it is the connection's own address: a forged header can then
neither spread one client's failures over many addresses nor pin them on someone else's.
"""

from __future__ import annotations

import ipaddress

from django.conf import settings
from django.core import checks
from django.http import HttpRequest


def valid_address(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def client_ip(request: HttpRequest) -> str:
    """The client's address (see the module's note)."""
    remote = request.META.get("REMOTE_ADDR", "")
    proxies = settings.FACTDESK_TRUSTED_PROXIES
    if proxies:
        hops = [hop.strip() for hop in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
        if len(hops) >= proxies and valid_address(hops[-proxies]):
            return hops[-proxies]
    return remote


@checks.register(checks.Tags.security, deploy=True)
def check_trusted_proxies(app_configs=None, **kwargs) -> list[checks.CheckMessage]:  # noqa: ANN001 - Django's
    if settings.BEHIND_PROXY and not settings.FACTDESK_TRUSTED_PROXIES:
        return [checks.Warning(
            "BEHIND_PROXY is on but FACTDESK_TRUSTED_PROXIES is 0: every client has the proxy's address, so one "
            "client's failed sign-ins and API tokens lock the others out.",
            hint="Set FACTDESK_TRUSTED_PROXIES to the number of proxies in front that append to X-Forwarded-For "
                 "(1 for one nginx with $proxy_add_x_forwarded_for).",
            id="factdesk.W001",
        )]
    return []
