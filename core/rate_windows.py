"""Counting requests in fixed windows of time, in the cache: the one mechanism of the API's limits.

A count lives under `<name>:<who>:<window number>` and is raised with the cache's INCR, which Redis does
atomically: requests served at once by several threads and processes are each counted. (Reading a list,
changing it in Python and writing it back, as ninja's SimpleRateThrottle does, lost about three in four of
1,000 parallel requests' counts, and none was ever refused.) While Redis is down each process keeps its own
counts (core.resilience.FallbackCache).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from django.core.cache import cache
from ninja.throttling import SimpleRateThrottle


def parse_rate(rate: str) -> tuple[int, int]:
    """"6000/m" -> (6000, 60): requests allowed and the window's seconds, as ninja reads a rate."""
    reading = SimpleRateThrottle(rate)
    return reading.num_requests, reading.duration


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
        """Whole seconds until the sliding count is back under `allowed` (at least 1)."""
        if current < allowed and previous:
            # previous * (1 - t / period) + current < allowed, t counted from the window's start
            seconds = self.period * (1 - (allowed - current) / previous) - self.into
        elif current < allowed:
            seconds = 0.0
        else:  # this window's count alone is over: wait for it to become the previous one and fade
            seconds = self.left + self.period * (1 - allowed / current)
        return max(1, math.ceil(seconds))
