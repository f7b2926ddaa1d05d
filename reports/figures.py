"""What the dashboard, its CSV downloads and GET /api/v1/stats show: read from the roll-up tables.

`figures_for` reads one scope's days in a fixed number of queries (the roll-up rows, the days
computed, and the names of the reviewers and organisations they mention), whatever the range or
the volume behind it; it never reads flags, ratings, actions or appeals themselves.
`scope_of` is the rule of who sees what: staff the whole program, a fact-checker their
organisation, nobody else anything.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta

from django.contrib.auth import get_user_model

from core.refusals import Refusal
from factcheck.members import organisation_of
from factcheck.models import Organisation, Verdict
from factcheck.timestamps import EARLIEST
from moderation.appeals import DECISION_TARGET
from moderation.models import AppealKind, AppealStatus
from reports.models import DailyFigure, Metric, RolledUpDay
from reports.notices import histogram_median, within_target
from reports.rollup import DecisionKind, percentile

DEFAULT_DAYS = 7
PRESETS = (7, 30, 90)
MAX_DAYS = 366
DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
FIRST_DAY = EARLIEST.date()


class NoFigures(Refusal):
    """Only staff and fact-checkers have figures to see."""

    code = "forbidden"


class BadRange(Refusal):
    code = "invalid_range"


@dataclass(frozen=True)
class Scope:
    organisation: Organisation | None  # None: the whole program (staff)

    @property
    def name(self) -> str:
        return self.organisation.name if self.organisation else "the whole program"


def scope_of(user) -> Scope:
    if getattr(user, "is_trust_safety", False) or getattr(user, "is_superuser", False):
        return Scope(organisation=None)
    if getattr(user, "is_factchecker", False) and organisation_of(user) is not None:
        return Scope(organisation=organisation_of(user))
    raise NoFigures("Figures are for trust-and-safety staff and fact-checkers.")


def _day(value: str, *, name: str) -> date:
    if DAY.match(value):
        try:
            return date.fromisoformat(value)
        except ValueError:
            pass
    raise BadRange(f"'{name}' must be a date YYYY-MM-DD, not {value[:40]!r}.", details={"field": name})


def check_days(first: date, last: date, *, today: date, names: tuple[str, str]) -> None:
    """Days from 2000 (nothing earlier is a real post: factcheck.timestamps) to tomorrow (a UTC day that
    has begun somewhere), the first not after the last; anything else is refused, never left to overflow."""
    tomorrow = today + timedelta(days=1)
    for name, value in zip(names, (first, last), strict=True):
        if not FIRST_DAY <= value <= tomorrow:
            raise BadRange(f"'{name}' must be a day from {FIRST_DAY.isoformat()} to {tomorrow.isoformat()}.",
                           details={"field": name})
    if first > last:
        raise BadRange(f"'{names[0]}' must be on or before '{names[1]}'.", details={"field": names[0]})


def date_range(*, start: str | None, end: str | None, today: date | None = None) -> tuple[date, date]:
    """The range asked for (both days included): the last 7 days to today when nothing is asked."""
    today = today or datetime.now(UTC).date()
    last = _day(end, name="to") if end else today
    if start:
        first = _day(start, name="from")
    else:
        # The default week ends on `last`: check it first, so that a bad `to` is refused as 'to' (not as
        # the 'from' derived from it) and never reaches date arithmetic that overflows (year 1).
        check_days(last, last, today=today, names=("to", "to"))
        first = max(last - timedelta(days=DEFAULT_DAYS - 1), FIRST_DAY)
    check_days(first, last, today=today, names=("from", "to"))
    if (last - first).days + 1 > MAX_DAYS:
        raise BadRange(f"A range is at most {MAX_DAYS} days.", details={"field": "from"})
    return first, last


@dataclass
class Person:
    id: int
    name: str
    organisation: str
    ratings: int = 0
    appeals_decided: int = 0


@dataclass
class DayFigures:
    day: date
    computed: bool
    through: datetime | None = None
    queue_depth: int | None = None
    queue_oldest_seconds: float | None = None
    first_ratings: int = 0
    time_to_rating_p50: float | None = None
    time_to_rating_p90: float | None = None
    ratings: dict[str, int] = field(default_factory=dict)
    decisions: dict[str, int] = field(default_factory=dict)
    appeals_filed: dict[str, int] = field(default_factory=dict)
    appeals_closed: dict[str, int] = field(default_factory=dict)
    appeals_open: int | None = None
    appeals_overdue: int | None = None
    # The program's notices (reports.notices): keyed "category:source" and "category:outcome" (first decisions;
    # corrections keyed "category:outcome" or "category:reopened").
    notices_received: dict[str, int] = field(default_factory=dict)
    notices_decided: dict[str, int] = field(default_factory=dict)
    notices_corrected: dict[str, int] = field(default_factory=dict)
    reports_open: int | None = None
    reports_overdue: int | None = None

    @property
    def ratings_total(self) -> int:
        return sum(self.ratings.values())

    @property
    def appeals_reversed(self) -> int:
        return self.appeals_closed.get(AppealStatus.REVERSED, 0)

    @property
    def appeals_withdrawn(self) -> int:
        return self.appeals_closed.get(AppealStatus.WITHDRAWN, 0)

    @property
    def appeals_decided(self) -> int:
        return self.appeals_closed.get(AppealStatus.UPHELD, 0) + self.appeals_reversed


@dataclass
class Figures:
    scope: Scope
    start: date
    end: date
    days: list[DayFigures]
    decide_seconds: list[float]  # each appeal decided in the range, sorted
    reviewers: list[Person]
    organisations: list[Person]  # staff only: one row per organisation
    # Reports of harm decided in the range, by wait in minutes (reports.notices.wait_bucket); staff only.
    report_waits: Counter[int] = field(default_factory=Counter)

    @property
    def missing_days(self) -> list[date]:
        return [d.day for d in self.days if not d.computed]

    @property
    def appeal_median_seconds(self) -> float | None:
        return percentile(self.decide_seconds, 0.5) if self.decide_seconds else None

    @property
    def report_median_seconds(self) -> float | None:
        return histogram_median(self.report_waits)

    @property
    def reports_within_target(self) -> int:
        return within_target(self.report_waits)

    @property
    def appeals_within_target(self) -> int:
        return sum(1 for seconds in self.decide_seconds if seconds <= DECISION_TARGET.total_seconds())

    def total(self, attribute: str, key: str | None = None) -> int:
        if key is None:
            return sum(getattr(d, attribute) or 0 for d in self.days)
        return sum(getattr(d, attribute).get(key, 0) for d in self.days)


VERDICTS = [value for value, _ in Verdict.choices]
APPEAL_KINDS = [value for value, _ in AppealKind.choices]
DECISION_KINDS = list(DecisionKind.values)


def figures_for(scope: Scope, *, start: date, end: date) -> Figures:
    """One scope's figures for the days from `start` to `end`, both included."""
    organisation_id = scope.organisation.pk if scope.organisation else None
    days = {start + timedelta(days=n): DayFigures(day=start + timedelta(days=n), computed=False)
            for n in range((end - start).days + 1)}
    for done in RolledUpDay.objects.filter(day__gte=start, day__lte=end):
        days[done.day].computed, days[done.day].through = True, done.through
        # A computed day with no queue rows had an empty queue, not an unknown one.
        days[done.day].queue_depth = days[done.day].appeals_open = days[done.day].appeals_overdue = 0
        days[done.day].reports_open = days[done.day].reports_overdue = 0
    rows = DailyFigure.objects.filter(day__gte=start, day__lte=end, organisation_id=organisation_id)
    decide_seconds: list[float] = []
    report_waits: Counter[int] = Counter()
    reviewers: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    organisations: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for day, metric, key, value in rows.values_list("day", "metric", "key", "value"):
        figures = days[day]
        if not figures.computed:
            continue  # written between the two reads: shown from the next read on, whole
        match metric:
            case Metric.QUEUE_DEPTH:
                figures.queue_depth = int(value)
            case Metric.QUEUE_OLDEST:
                figures.queue_oldest_seconds = value
            case Metric.FIRST_RATINGS:
                figures.first_ratings = int(value)
            case Metric.TIME_TO_RATING_P50:
                figures.time_to_rating_p50 = value
            case Metric.TIME_TO_RATING_P90:
                figures.time_to_rating_p90 = value
            case Metric.RATINGS:
                figures.ratings[key] = int(value)
            case Metric.DECISIONS:
                figures.decisions[key] = int(value)
            case Metric.APPEALS_FILED:
                figures.appeals_filed[key] = int(value)
            case Metric.APPEALS_CLOSED:
                figures.appeals_closed[key] = int(value)
            case Metric.APPEALS_OPEN:
                figures.appeals_open = int(value)
            case Metric.APPEALS_OVERDUE:
                figures.appeals_overdue = int(value)
            case Metric.APPEAL_DECIDE_SECONDS:
                decide_seconds.append(value)
            case Metric.REVIEWER_RATINGS:
                reviewers[int(key)][0] += int(value)
            case Metric.REVIEWER_APPEALS:
                reviewers[int(key)][1] += int(value)
            case Metric.ORGANISATION_RATINGS:
                organisations[int(key)][0] += int(value)
            case Metric.ORGANISATION_APPEALS:
                organisations[int(key)][1] += int(value)
            case Metric.NOTICES_RECEIVED:
                figures.notices_received[key] = int(value)
            case Metric.NOTICES_DECIDED:
                figures.notices_decided[key] = int(value)
            case Metric.NOTICES_CORRECTED:
                figures.notices_corrected[key] = int(value)
            case Metric.REPORTS_OPEN:
                figures.reports_open = int(value)
            case Metric.REPORTS_OVERDUE:
                figures.reports_overdue = int(value)
            case Metric.REPORT_WAIT_MINUTES:
                report_waits[int(key)] += int(value)
    decide_seconds.sort()
    return Figures(
        scope=scope, start=start, end=end, days=list(days.values()), decide_seconds=decide_seconds,
        reviewers=_people(reviewers, scope), organisations=_organisations(organisations), report_waits=report_waits,
    )


def _people(counts: dict[int, list[int]], scope: Scope) -> list[Person]:
    if not counts:
        return []
    users = get_user_model().objects.filter(pk__in=counts).select_related("membership__organisation")
    # In an organisation's figures a reviewer's work was for that organisation: where they are now
    # (another organisation, perhaps) is not the organisation's to know.
    people = [Person(id=user.pk, name=user.get_full_name() or user.username,
                     organisation=scope.organisation.name if scope.organisation else
                     getattr(organisation_of(user), "name", "Trust and safety"),
                     ratings=counts[user.pk][0], appeals_decided=counts[user.pk][1]) for user in users]
    return sorted(people, key=lambda p: (-p.ratings - p.appeals_decided, p.name))


def _organisations(counts: dict[int, list[int]]) -> list[Person]:
    if not counts:
        return []
    found = Organisation.objects.filter(pk__in=counts).only("pk", "name")
    rows = [Person(id=o.pk, name=o.name, organisation=o.name, ratings=counts[o.pk][0],
                   appeals_decided=counts[o.pk][1]) for o in found]
    return sorted(rows, key=lambda p: (-p.ratings - p.appeals_decided, p.name))
