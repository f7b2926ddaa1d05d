"""Counting requests in fixed windows of time, in the cache: the one mechanism of the API's limits.

A count lives under `<name>:<who>:<window number>` and is raised with the cache's INCR, which Redis does
atomically: requests served at once by several threads and processes are each counted. (Reading a list,
changing it in Python and writing it back, as ninja's SimpleRateThrottle does, lost about three in four of
1,000 parallel requests' counts, and none was ever refused.) While Redis is down each process keeps its own
counts (core.resilience.FallbackCache).
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass

from django.core.cache import cache

# ninja's notation (SimpleRateThrottle.parse_rate), read here without importing ninja: settings check the limits
# with it at start (config.env.env_rate), before ninja can be imported.
PERIODS = {"s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "hour": 3600, "d": 86400, "day": 86400}
RATE = re.compile(rf"(\d+)/(\d*)({'|'.join(PERIODS)})?")


def parse_rate(rate: str) -> tuple[int, int]:
    """"6000/m" -> (6000, 60), "100/5m" -> (100, 300), "10/30" -> (10, 30): requests allowed and the window's
    seconds. ValueError for anything else, and for 0 requests or 0 s (every request refused, or a division by 0)."""
    match = RATE.fullmatch(rate.strip())
    if not match or not (match[2] or match[3]):
        raise ValueError(f"Invalid rate format: {rate}")
    allowed = int(match[1])
    period = int(match[2] or 1) * (PERIODS[match[3]] if match[3] else 1)
    if not allowed or not period:
        raise ValueError(f"Invalid rate: {rate} (no request allowed, or a window of 0 s)")
    return allowed, period


@dataclass(frozen=True)
class Windows:
    """The current and the previous window of `period` seconds for one counted thing (`name`, `who`)."""

    name: str
    who: str
    period: int
    number: int  # the current window's
    into: float  # seconds since the current window began

    @classmethod
    def now(cls, *, name: str, who: object, period: int) -> Windows:
        number, into = divmod(time.time(), period)
        return cls(name=name, who=str(who), period=period, number=int(number), into=into)

    @property
    def left(self) -> float:
        """Seconds until the current window ends."""
        return self.period - self.into

    def key(self, number: int) -> str:
        return f"{self.name}:{self.who}:{number}"

    def counts(self) -> tuple[int, int]:
        """(previous window's count, current window's count)."""
        previous, current = self.key(self.number - 1), self.key(self.number)
        found = cache.get_many([previous, current])
        return found.get(previous, 0), found.get(current, 0)

    def previous(self) -> int:
        """The previous window's count."""
        return cache.get(self.key(self.number - 1), 0)

    def add(self) -> int:
        """Count one in the current window, atomically; the current window's count after it."""
        key, timeout = self.key(self.number), 2 * self.period + 1
        cache.add(key, 0, timeout)
        try:
            return cache.incr(key)
        except ValueError:  # expired between the two calls
            cache.set(key, 1, timeout)
            return 1

    def sliding(self, previous: int, current: int) -> float:
        """The count over the last `period` seconds, the previous window's weighted by how much of it they hold."""
        return previous * (1 - self.into / self.period) + current

    def wait_for(self, allowed: int, previous: int, current: int) -> int:
        """Whole seconds until one more request is allowed: until the sliding count with it, the retry counted as
        every request is, is at most `allowed` (at least 1). A client that waits this long is answered."""
        room = allowed - current - 1  # what the previous window's weighted count may be then, in this window
        if room >= 0:
            # previous * (1 - (into + t) / period) <= room
            seconds = self.period * (1 - room / previous) - self.into if previous else 0.0
        else:  # this window's count alone is too many: wait for it to become the previous one and fade
            # current * (1 - t' / period) + 1 <= allowed, t' into the next window
            seconds = self.left + self.period * (1 - (allowed - 1) / current)
        return max(1, math.ceil(seconds + 0.001))  # not on the boundary itself, where rounding may say one too many
