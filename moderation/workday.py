"""What waits for each person at work: the counts in the main navigation and the notifications list.

Fact-checkers: the open disputes and corrections of their organisation's ratings, the suggested copies
waiting for their organisation (factcheck.selectors.waiting_suggestions_everywhere), the conflicts between its
ratings and another organisation's (factcheck.conflicts.conflicts_of) and their unread notifications
(an appeal filed against their organisation's rating notifies its members: moderation.appeals.file_appeal).
Trust-and-safety staff: the open removal appeals, the posts with open reports of harm
(moderation.report_queue) and their unread notifications (a removal appeal notifies them). Page owners:
their unread notifications. Each person's counts cost one query whatever the number of rows (each count
capped, so it never walks more than COUNT_CAP + 1 index entries).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django.core.cache import cache
from django.db.models import QuerySet

from core.counting import capped_counts
from factcheck import selectors
from factcheck.conflicts import conflict_count_key, conflicts_of
from factcheck.members import organisation_of
from moderation.models import Notification
from moderation.report_queue import open_rows
from moderation.selectors import organisation_appeals, removal_appeals

# A count past this is shown as "99+": a number in the navigation is a nudge, not a report.
COUNT_CAP = 99


def unread_notifications(*, user) -> QuerySet[Notification]:
    return Notification.objects.filter(user=user, read_at__isnull=True)


def _capped(**querysets: QuerySet) -> dict[str, int]:
    """Each count up to COUNT_CAP + 1, all in one statement: the navigation costs one query."""
    return capped_counts(cap=COUNT_CAP, **querysets)


def shown(count: int | None) -> str:
    return "" if not count else (f"{COUNT_CAP}+" if count > COUNT_CAP else str(count))


@dataclass(frozen=True)
class WorkCounts:
    """What waits for one person; None where their role has no such work."""

    unread: int | None = None
    appeals: int | None = None
    suggestions: int | None = None
    conflicts: int | None = None
    removal_appeals: int | None = None
    reports: int | None = None

    @property
    def unread_shown(self) -> str:
        return shown(self.unread)

    @property
    def appeals_shown(self) -> str:
        return shown(self.appeals)

    @property
    def suggestions_shown(self) -> str:
        return shown(self.suggestions)

    @property
    def conflicts_shown(self) -> str:
        return shown(self.conflicts)

    @property
    def removal_appeals_shown(self) -> str:
        return shown(self.removal_appeals)

    @property
    def reports_shown(self) -> str:
        return shown(self.reports)


# The suggested copies an organisation could confirm walk the suggested pairs: at 100,000 of them, 30 ms
# (an organisation covering everything) to 390 ms (one language and country) against a signed-in page of
# 8.5 ms (bench/navigation.py). Counted at most once a minute per organisation (in the same statement as
# the other counts) and kept in the cache: the badge may be a minute late; the notifications page lists
# the pairs as they are.
SUGGESTION_COUNT_SECONDS = 60
# The conflicts join the organisation's current ratings to the unrejected pairs and the other post's rating: at
# 100,000 pairs and 2,400 or 10,400 current ratings of the organisation (20,000 in all), 19-43 ms a half on a busy
# 2-core machine (PostgreSQL hashes the pairs; index probes from the ratings, forced, took 7 ms for the smaller
# organisation and 134 ms for the larger). Counted once a minute too, in the same statement; marking a pair "not
# the same claim" forgets both organisations' counts (factcheck.conflicts), a re-rating shows within the minute.
CONFLICT_COUNT_SECONDS = 60


def _counted_a_minute(organisation) -> dict[str, tuple[str, Callable[[], tuple[QuerySet, QuerySet]], int]]:
    """The fact-checkers' counts kept in the cache between counts: name -> (cache key, its two halves as querysets,
    counted in the navigation's one statement and added up, and how many seconds it is kept)."""
    return {
        "suggestions": (f"suggestions-waiting:{organisation.pk}",
                        lambda: selectors.waiting_suggestions_everywhere(organisation=organisation),
                        SUGGESTION_COUNT_SECONDS),
        "conflicts": (conflict_count_key(organisation.pk), lambda: conflicts_of(organisation_id=organisation.pk),
                      CONFLICT_COUNT_SECONDS),
    }


def work_counts(*, user) -> WorkCounts:
    """The counts of what waits for `user`, by role, in one query (none for a visitor or a role without a
    desk; a fact-checker's suggestions are counted in it once a minute, and read from the cache between).
    `user.membership` is read as the page header reads it (accounts.backends loads it)."""
    if not getattr(user, "is_authenticated", False):
        return WorkCounts()
    if user.is_factchecker:
        organisation = organisation_of(user)
        if organisation is None:
            return WorkCounts(**_capped(unread=unread_notifications(user=user)))
        minute = _counted_a_minute(organisation)
        cached = cache.get_many([key for key, _, _ in minute.values()])
        known = {name: cached[key] for name, (key, _, _) in minute.items() if key in cached}
        counting = {"unread": unread_notifications(user=user),
                    "appeals": organisation_appeals(organisation_id=organisation.pk).open()}
        for name, (_, halves, _) in minute.items():
            if name not in known:
                counting[f"{name}_0"], counting[f"{name}_1"] = halves()
        counts = _capped(**counting)
        for name, (key, _, seconds) in minute.items():
            if name not in known:
                known[name] = counts.pop(f"{name}_0", 0) + counts.pop(f"{name}_1", 0)
                cache.set(key, known[name], seconds)
        return WorkCounts(**counts, **known)
    if user.is_trust_safety:
        return WorkCounts(**_capped(
            unread=unread_notifications(user=user), removal_appeals=removal_appeals().open(), reports=open_rows(),
        ))
    if user.is_page_owner:
        return WorkCounts(**_capped(unread=unread_notifications(user=user)))
    return WorkCounts()
