"""GET /api/v1/stats: the dashboard's figures as JSON, with the dashboard's scoping (reports.figures)."""

from __future__ import annotations

from datetime import date, datetime

from django.http import HttpRequest
from ninja import Field, Query, Router, Schema
from ninja.decorators import decorate_view

from accounts.api_auth import TokenAuth
from accounts.models import Role
from core.api_errors import errors_for
from core.replicas import reads_from_replica
from factcheck.flag_input import DAY
from moderation.appeals import DECISION_TARGET
from reports.figures import (
    APPEAL_KINDS,
    DECISION_KINDS,
    VERDICTS,
    DayFigures,
    Figures,
    Person,
    date_range,
    figures_for,
    scope_of,
)
from reports.notices import CATEGORIES, CORRECTIONS, OUTCOMES, SOURCES, split

router = Router(tags=["figures"])
DAY_PATTERN = r"^\d{4}-\d{2}-\d{2}$"
# What the document shows of the query parameters (config/api.py puts it in): real days from 2000 to next year
# (factcheck.flag_input.DAY); reports.figures.check_days refuses a day after tomorrow with 422, which a pattern
# cannot say.
DOCUMENTED_PARAMETERS = {("/api/v1/stats", name): {"type": "string", "pattern": DAY} for name in ("from", "to")}


class ScopeOut(Schema):
    organisation: str | None = Field(description="The organisation the figures cover; null for the whole program.")


class NoticesDayOut(Schema):
    by_category: dict[str, int] = Field(description="Notices (flags) received that day, by category.")
    by_source: dict[str, int] = Field(description="The same notices by source.")
    by_category_and_source: dict[str, int] = Field(description="Keyed `category:source`.")
    decided: dict[str, int] = Field(description="Notices answered that day, by outcome: each notice's first decision, "
                                    "counted on the day it was made whatever became of it.")
    corrected: dict[str, int] = Field(description="Decisions corrected that day, by what the notice became: "
                                      "`reopened`, or the outcome it was given again.")
    reports_open: int = Field(description="Reports of harm open at the end of the day.")
    reports_overdue: int = Field(description="Of them, open for more than 24 hours.")


class DayOut(Schema):
    date: date
    computed: bool = Field(description="False for a day the roll-up job has not computed yet (its figures are null).")
    through: datetime | None = Field(
        description="The moment the day's figures run to (its end, or the last run for today)."
    )
    queue_depth: int | None = Field(description="Posts waiting for a rating at the end of the day.")
    queue_oldest_seconds: int | None = Field(description="How long the oldest waiting post had waited.")
    first_ratings: int | None
    time_to_rating_median_seconds: int | None
    time_to_rating_p90_seconds: int | None
    ratings: dict[str, int] | None = Field(description="Ratings made that day, by verdict.")
    decisions: dict[str, int] | None = Field(description="Actions taken that day: " + ", ".join(DECISION_KINDS) + ".")
    appeals_filed: dict[str, int] | None = Field(description="By kind: " + ", ".join(APPEAL_KINDS) + ".")
    appeals_decided: int | None
    appeals_reversed: int | None
    appeals_withdrawn: int | None
    appeals_open: int | None = Field(description="Open at the end of the day.")
    appeals_overdue: int | None = Field(description="Open at the end of the day for more than 24 hours.")
    notices: NoticesDayOut | None = Field(
        None, description="The program's notices and reports of harm: staff only (null for an organisation).")


class AppealsOut(Schema):
    decided: int
    reversed: int
    median_seconds_to_decide: int | None
    decided_within_target: int
    target_seconds: int


class ReportDecisionsOut(Schema):
    decided: int = Field(description="Reports of harm decided in the range.")
    median_seconds_to_decide: int | None = Field(description="From each report's receipt to its decision "
                                                 "(to the minute under an hour, the quarter hour under a day).")
    decided_within_target: int
    target_seconds: int


class ThroughputOut(Schema):
    id: int
    name: str
    organisation: str
    ratings: int
    appeals_decided: int


class StatsOut(Schema):
    scope: ScopeOut
    from_: date = Field(alias="from")
    to: date
    days: list[DayOut]
    totals: dict[str, int] = Field(description="Ratings by verdict and decisions by kind over the range.")
    appeals: AppealsOut
    reports: ReportDecisionsOut | None = Field(
        None, description="Reports of harm: staff only (null for an organisation).")
    organisations: list[ThroughputOut] = Field(description="Staff only (empty for an organisation).")
    reviewers: list[ThroughputOut]


def _seconds(value: float | None) -> int | None:
    return None if value is None else round(value)


def _person(person: Person) -> dict:
    return {"id": person.id, "name": person.name, "organisation": person.organisation,
            "ratings": person.ratings, "appeals_decided": person.appeals_decided}


def _notices(day: DayFigures) -> dict:
    by_category, by_source = split(day.notices_received, position=0), split(day.notices_received, position=1)
    decided, corrected = split(day.notices_decided, position=1), split(day.notices_corrected, position=1)
    return {
        "by_category": {c: by_category.get(c, 0) for c in CATEGORIES},
        "by_source": {k: by_source.get(k, 0) for k in SOURCES},
        "by_category_and_source": {f"{c}:{k}": day.notices_received.get(f"{c}:{k}", 0)
                                   for c in CATEGORIES for k in SOURCES},
        "decided": {o: decided.get(o, 0) for o in OUTCOMES},
        "corrected": {o: corrected.get(o, 0) for o in CORRECTIONS},
        "reports_open": day.reports_open or 0, "reports_overdue": day.reports_overdue or 0,
    }


def stats_out(figures: Figures) -> dict:
    days = []
    for d in figures.days:
        if not d.computed:
            days.append({"date": d.day, "computed": False, **{k: None for k in DayOut.model_fields
                                                               if k not in ("date", "computed")}})
            continue
        days.append({
            "date": d.day, "computed": True, "through": d.through, "queue_depth": d.queue_depth,
            "queue_oldest_seconds": _seconds(d.queue_oldest_seconds), "first_ratings": d.first_ratings,
            "time_to_rating_median_seconds": _seconds(d.time_to_rating_p50),
            "time_to_rating_p90_seconds": _seconds(d.time_to_rating_p90),
            "ratings": {v: d.ratings.get(v, 0) for v in VERDICTS},
            "decisions": {k: d.decisions.get(k, 0) for k in DECISION_KINDS},
            "appeals_filed": {k: d.appeals_filed.get(k, 0) for k in APPEAL_KINDS},
            "appeals_decided": d.appeals_decided,
            "appeals_reversed": d.appeals_reversed,
            "appeals_withdrawn": d.appeals_withdrawn,
            "appeals_open": d.appeals_open, "appeals_overdue": d.appeals_overdue,
            "notices": None if figures.scope.organisation else _notices(d),
        })
    totals = {f"ratings_{v}": figures.total("ratings", v) for v in VERDICTS}
    totals |= {f"decisions_{k}": figures.total("decisions", k) for k in DECISION_KINDS}
    return {
        "scope": {"organisation": figures.scope.organisation.name if figures.scope.organisation else None},
        "from": figures.start, "to": figures.end, "days": days, "totals": totals,
        "appeals": {
            "decided": len(figures.decide_seconds),
            "reversed": figures.total("appeals_reversed"),
            "median_seconds_to_decide": _seconds(figures.appeal_median_seconds),
            "decided_within_target": figures.appeals_within_target,
            "target_seconds": int(DECISION_TARGET.total_seconds()),
        },
        "reports": None if figures.scope.organisation else {
            "decided": sum(figures.report_waits.values()),
            "median_seconds_to_decide": _seconds(figures.report_median_seconds),
            "decided_within_target": figures.reports_within_target,
            "target_seconds": int(DECISION_TARGET.total_seconds()),
        },
        "organisations": [_person(p) for p in figures.organisations],
        "reviewers": [_person(p) for p in figures.reviewers],
    }


@router.get(
    "/stats",
    auth=TokenAuth(Role.TRUST_SAFETY, Role.FACTCHECKER),
    response={200: StatsOut, **errors_for(403, 422)},
    by_alias=True,
    summary="The dashboard's figures for a range of days (staff: the program; fact-checkers: their organisation)",
)
@decorate_view(reads_from_replica)  # around the whole operation, its JSON included; the token is read on the primary
def stats(
    request: HttpRequest,
    start: str | None = Query(None, alias="from", pattern=DAY_PATTERN, description="First day (UTC), YYYY-MM-DD; "
                              "default: six days before `to`."),
    end: str | None = Query(None, alias="to", pattern=DAY_PATTERN, description="Last day (UTC), YYYY-MM-DD; "
                            "default: today. At most 366 days in all."),
) -> dict:
    """Staff get the whole program (with each organisation's throughput); a fact-checker gets their
    organisation. Days are UTC. Figures come from the daily roll-up, kept current every 5 minutes:
    a day not computed yet has `computed: false` and null figures. Other roles get 403."""
    scope = scope_of(request.auth)  # type: ignore[attr-defined]
    first, last = date_range(start=start, end=end)
    return stats_out(figures_for(scope, start=first, end=last))
