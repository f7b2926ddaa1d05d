"""Redis is not on the critical path of people: what degrades, and how, when it is down.

`Breaker` remembers that Redis just failed, so that a request does not pay a connection
time-out for every call while it is down; `FallbackCache` is the cache the API's rate limit
counts in: Redis when it answers, a process-local memory cache while it does not (each web
process then counts its own requests, so the limit is approximate, never a refusal because Redis
is gone). Jobs that cannot be enqueued are re-driven by the reconcilers (core.jobs).
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from django.core.cache.backends.base import BaseCache
from django.core.cache.backends.locmem import LocMemCache
from django.core.cache.backends.redis import RedisCache

logger = logging.getLogger(__name__)

# What a Redis outage raises: refused or reset connections, time-outs, protocol errors.
try:
    from redis.exceptions import RedisError
except ImportError:  # pragma: no cover - redis is a pinned dependency
    RedisError = OSError  # type: ignore[misc,assignment]
OUTAGE = (RedisError, OSError)
# How long a page that only looks at Redis (/healthz, the admin's index) waits for it, to connect and for each
# answer: a Redis that hangs (a partition, a stalled server) costs it this, not as long as the hang.
GLANCE_SECONDS = 0.5


def glancing_redis(url: str):
    """A connection for a quick look at Redis (RQ's own connections wait for an answer for ever)."""
    from redis import Redis

    return Redis.from_url(url, socket_connect_timeout=GLANCE_SECONDS, socket_timeout=GLANCE_SECONDS)


class Breaker:
    """Open for `cool_down` seconds after a failure: callers skip Redis meanwhile."""

    def __init__(self, name: str, cool_down: float = 5.0) -> None:
        self.name = name
        self.cool_down = cool_down
        self._open_until = 0.0
        self._lock = threading.Lock()

    @property
    def open(self) -> bool:
        return time.monotonic() < self._open_until

    def trip(self, exc: BaseException) -> None:
        with self._lock:
            if not self.open:
                logger.warning("%s: Redis unavailable (%s); falling back for %.0f s", self.name, exc, self.cool_down)
            self._open_until = time.monotonic() + self.cool_down

    def reset(self) -> None:
        self._open_until = 0.0


class FallbackCache(BaseCache):
    """Redis while it answers; a local memory cache while it does not.

    OPTIONS are Django's RedisCache OPTIONS (give it short socket time-outs); `LOCATION` the Redis URL.
    """

    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(params)
        self.redis = RedisCache(server, params)
        self.local = LocMemCache(f"fallback-{server}", {"TIMEOUT": params.get("TIMEOUT", 300)})
        self.breaker = Breaker("cache")

    @property
    def shared(self) -> bool:
        """Whether what this process writes now reaches Redis, where other processes (workers) read it."""
        return not self.breaker.open

    def _call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        if not self.breaker.open:
            try:
                return getattr(self.redis, method)(*args, **kwargs)
            except OUTAGE as exc:
                self.breaker.trip(exc)
        return getattr(self.local, method)(*args, **kwargs)

    def get(self, key, default=None, version=None):
        return self._call("get", key, default, version=version)

    def set(self, key, value, timeout=300, version=None):  # noqa: A003 - Django's cache API
        return self._call("set", key, value, timeout, version=version)

    def add(self, key, value, timeout=300, version=None):
        return self._call("add", key, value, timeout, version=version)

    def touch(self, key, timeout=300, version=None):
        return self._call("touch", key, timeout, version=version)

    def delete(self, key, version=None):
        return self._call("delete", key, version=version)

    def get_many(self, keys, version=None):
        return self._call("get_many", keys, version=version)

    def set_many(self, data, timeout=300, version=None):
        return self._call("set_many", data, timeout, version=version)

    def delete_many(self, keys, version=None):
        return self._call("delete_many", keys, version=version)

    def has_key(self, key, version=None):
        return self._call("has_key", key, version=version)

    def incr(self, key, delta=1, version=None):
        return self._call("incr", key, delta, version=version)

    def clear(self):
        return self._call("clear")
