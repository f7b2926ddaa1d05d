"""Reading settings from the environment: each value is read one way, and one that cannot be meant is refused at
start with ImproperlyConfigured naming its variable, rather than taken as something else (`EMAIL_USE_TLS=Y` as
off) or failing later (a bad API_RATE_LIMIT as a 500 on every API request).
"""

from __future__ import annotations

import logging
import math
import os
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

from core.rate_windows import parse_rate

TRUE = {"1", "true", "yes", "on", "y"}
FALSE = {"0", "false", "no", "off", "n"}


def env_bool(name: str, default: bool) -> bool:
    """On or off, in any case: 1/0, true/false, yes/no, on/off, y/n; unset or empty is the default."""
    raw = os.environ.get(name, "")
    value = raw.strip().lower()
    if not value:
        return default
    if value in TRUE:
        return True
    if value in FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be on or off (1/0, true/false, yes/no, on/off, y/n), not {raw!r}.")


def env_int(name: str, default: int, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """A whole number, at least `minimum` and at most `maximum` where a smaller or larger one makes no sense."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        value = default
    else:
        try:
            value = int(raw)
        except ValueError:
            raise ImproperlyConfigured(f"{name} must be a whole number, not {raw!r}.") from None
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        bounds = (f"between {minimum} and {maximum}" if minimum is not None and maximum is not None
                  else f"at least {minimum}" if minimum is not None else f"at most {maximum}")
        raise ImproperlyConfigured(f"{name} must be {bounds}, not {value}.")
    return value


def env_seconds(name: str, default: float, *, maximum: float | None = None, zero: bool = False) -> float:
    """A number of seconds, a fraction allowed (`2.5`): above 0 (or 0 as well where `zero`), at most `maximum`.
    `nan` and `inf`, which float() takes, are refused: no time-out or lag is meant by them."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a number of seconds, not {raw!r}.") from None
    low = "0 or more" if zero else "above 0"
    if not (math.isfinite(value) and (value >= 0 if zero else value > 0) and (maximum is None or value <= maximum)):
        bounds = low if maximum is None else f"{low} and at most {maximum:g}"
        raise ImproperlyConfigured(f"{name} must be a number of seconds, {bounds}, not {raw!r}.")
    return value


def env_site_url(name: str, default: str) -> str:
    """The absolute address of a site that links are built under: http or https, a host, a path prefix allowed
    (`https://example.org/factdesk`). Without a scheme (`factdesk.example.org`), with another one, or with a query
    or fragment, every link built on it would lead nowhere."""
    raw = os.environ.get(name, "").strip() or default
    try:
        parts = urlsplit(raw)
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number
    except ValueError:
        parts = None
    if not parts or parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
        raise ImproperlyConfigured(
            f"{name} must be the site's address starting with https:// or http://, such as "
            f"https://factdesk.example.org (a path prefix may follow), not {raw!r}."
        )
    return raw


def env_list(name: str, default: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


def env_share(name: str, default: str) -> float:
    """A setting between 0 and 1, refused at start with its name if it is not one."""
    raw = os.environ.get(name, default)
    try:
        value = float(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a number between 0 and 1, not {raw!r}.") from None
    if not 0 < value <= 1:
        raise ImproperlyConfigured(f"{name} must be above 0 and at most 1, not {raw!r}.")
    return value


def env_log_level(name: str, default: str) -> str:
    """A logging level's name in any case (`debug`, `WARNING`), as logging knows it (upper case)."""
    raw = os.environ.get(name, "").strip() or default
    level = raw.upper()
    if level not in logging.getLevelNamesMapping():
        raise ImproperlyConfigured(
            f"{name} must be one of DEBUG, INFO, WARNING, ERROR or CRITICAL (any case), not {raw!r}."
        )
    return level


def env_rate(name: str, default: str) -> str:
    """A rate as the API's limits read it on every request (core.rate_windows.parse_rate): checked once here."""
    raw = os.environ.get(name, "").strip() or default
    try:
        parse_rate(raw)
    except ValueError:
        raise ImproperlyConfigured(
            f"{name} must be a number of requests per period, such as 6000/m or 100/5m (periods s, m, h, d), "
            f"not {raw!r}."
        ) from None
    return raw
