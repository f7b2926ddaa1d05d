"""Absolute links to the public site, for e-mails, feeds and exports: built from FACTDESK_PUBLIC_URL, never
from a request's Host header (which a client chooses).

FACTDESK_PUBLIC_URL may carry a path prefix when the site is served under one
("https://example.org/factdesk"): the prefix is kept, so it is written there and nowhere else.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.urls import get_script_prefix, reverse


def public_url(path: str) -> str:
    """An absolute URL on the public site: `path` ("/claims/7/") under FACTDESK_PUBLIC_URL, prefix and all."""
    return settings.FACTDESK_PUBLIC_URL.rstrip("/") + path


def public_reverse(viewname: str, *, kwargs: dict[str, Any] | None = None) -> str:
    """`public_url` of a named URL. reverse() puts this process's script prefix in front (a request's
    SCRIPT_NAME, FORCE_SCRIPT_NAME); FACTDESK_PUBLIC_URL already has the prefix, so it is taken off: the
    link is the same whether a request or a worker builds it."""
    path = reverse(viewname, kwargs=kwargs)
    return public_url("/" + path.removeprefix(get_script_prefix()))
