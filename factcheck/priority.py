"""The review-queue priority of a post and its parts.

Spread velocity weighs most (up to 60 points), then flags weighted by source (up to 30),
then time waiting in the queue (up to 10). Each part is on a log scale and capped, so one
huge number cannot drown the others and people can read the score.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings

VELOCITY_POINTS = 60.0
FLAG_POINTS = 30.0
AGE_POINTS = 10.0
# Caps: 1,000,000 shares-and-views per hour, 100 weighted flags, 3 days waiting.
VELOCITY_CAP_LOG10 = 6.0
FLAG_CAP_LOG10 = 2.0
AGE_CAP_HOURS = 72.0
# Scores are kept to the tenth of a point that people read them in (the queue, the post page). Finer,
# nearly every queued post's scores moved between two of refresh_priorities' 5-minute passes and
# each pass rewrote the whole queue (every index of the table, for each post); to the tenth, the
# age part moves once in 43 minutes and the velocity part of a post a day old once in half an hour.
SCORE_DECIMALS = 1
# What a post's priority is computed from: compute_priority's arguments besides `now`, named as the post's fields.
PRIORITY_INPUTS = ("views", "shares", "posted_at", "flag_weight", "first_flagged_at")
# A post's stored score columns, in the order of Priority.stored.
SCORE_COLUMNS = ("priority", "velocity_score", "flag_score", "age_score")


@dataclass(frozen=True)
class Priority:
    velocity: float  # shares and views per hour since posting
    velocity_score: float
    flag_score: float
    age_score: float

    @property
    def total(self) -> float:
        return round(self.velocity_score + self.flag_score + self.age_score, SCORE_DECIMALS)

    @property
    def stored(self) -> tuple[float, float, float, float]:
        """The values of SCORE_COLUMNS."""
        return self.total, self.velocity_score, self.flag_score, self.age_score


def source_weight(source: str) -> float:
    return settings.FACTDESK_FLAG_SOURCE_WEIGHTS.get(source, 1.0)


def compute_priority(
    *, views: int, shares: int, posted_at: datetime, flag_weight: float, first_flagged_at: datetime | None,
    now: datetime,
) -> Priority:
    hours_live = max((now - posted_at).total_seconds() / 3600, 1.0)
    velocity = (views + shares) / hours_live
    velocity_score = VELOCITY_POINTS * min(math.log10(1 + velocity) / VELOCITY_CAP_LOG10, 1.0)
    flag_score = FLAG_POINTS * min(math.log10(1 + flag_weight) / FLAG_CAP_LOG10, 1.0)
    hours_waiting = max((now - first_flagged_at).total_seconds() / 3600, 0.0) if first_flagged_at else 0.0
    age_score = AGE_POINTS * min(hours_waiting / AGE_CAP_HOURS, 1.0)
    return Priority(
        velocity=round(velocity, 2),
        velocity_score=round(velocity_score, SCORE_DECIMALS),
        flag_score=round(flag_score, SCORE_DECIMALS),
        age_score=round(age_score, SCORE_DECIMALS),
    )


def priority_of(post, *, now: datetime) -> Priority:
    """The priority of a Post row as of `now`."""
    return compute_priority(**{name: getattr(post, name) for name in PRIORITY_INPUTS}, now=now)
