"""What a reconciler says when it re-drove work: one warning a run, written here for every reconciler.

A reconciler is a periodic job (reports.periodic) that re-drives work whose own job was lost or late: a rating's
decision, a copy's rating, a post's matching or embedding, a media sweep, an e-mail, a webhook delivery. Each job
runs right after its commit, so normally a reconciler finds nothing. When it does find something the team should
hear of it: Redis was down, a worker was killed, a queue is behind. So a run that re-drove anything logs one
WARNING on the logger `factdesk.reconcilers` naming each kind, how many and how long the oldest had waited
(docs/operations.md, "Logs"); a run that found nothing says nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from django.utils import timezone

from core.formatting import duration

logger = logging.getLogger("factdesk.reconcilers")

# Ids a warning lists; more are counted, not listed (a Redis outage can leave thousands).
LOGGED_IDS = 20
LOST_OR_LATE = "their jobs were lost or late"


@dataclass(frozen=True)
class Redriven:
    """Work of one kind that a reconciler's run re-drove."""

    kind: str  # what, in the plural: "ratings still without a decision 30 s after they were made"
    count: int
    oldest: datetime | None  # since when the oldest of them waited (made, arrived, rated, due)
    ids: Sequence[int] = ()  # the first LOGGED_IDS are listed, named by `id_label`
    id_label: str = "ids"


def past_grace(kind: str, since: Iterable[datetime], *, now: datetime, grace: int) -> Redriven:
    """The items of a run that had waited `grace` seconds or more (`since`: when each began to wait), for a reconciler
    that takes the young ones too: a young one's own job is most likely still on its way, not lost."""
    late = [moment for moment in since if (now - moment).total_seconds() >= grace]
    return Redriven(kind, len(late), min(late, default=None))


def waited(since: datetime, *, now: datetime) -> str:
    """How long since `since`: "45 s" under a minute (a reconciler's usual wait), else core.formatting.duration."""
    seconds = (now - since).total_seconds()
    return f"{max(int(seconds), 0)} s" if seconds < 60 else duration(seconds)


def _described(part: Redriven, *, now: datetime) -> str:
    """ "ratings still without a decision 30 s after they were made: 3, the oldest waiting 5 min (rating ids 1, 2 and
    1 more)"."""
    text = f"{part.kind}: {part.count}"
    if part.oldest is not None:
        text += f", the oldest waiting {waited(part.oldest, now=now)}"
    if part.ids:
        listed = ", ".join(str(pk) for pk in part.ids[:LOGGED_IDS])
        more = f" and {len(part.ids) - LOGGED_IDS} more" if len(part.ids) > LOGGED_IDS else ""
        text += f" ({part.id_label} {listed}{more})"
    return text


def warn_redriven(*found: Redriven, now: datetime | None = None, why: str = LOST_OR_LATE) -> None:
    """One warning for a reconciler's run, naming every kind of work it re-drove (`why` says how it came to be
    left); nothing when it re-drove none. `now` is the run's own clock (tests pass one in the future)."""
    done = [part for part in found if part.count]
    if not done:
        return
    now = now or timezone.now()
    logger.warning("reconciler re-drove %s - %s", "; ".join(_described(part, now=now) for part in done), why)
