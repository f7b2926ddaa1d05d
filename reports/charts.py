"""The dashboard's charts, tables and CSV files, all built from one `Figures` (reports.figures).

Each chart is a set of columns: the same columns make the table beside the chart, its CSV file
and the small bar panels drawn as server-side SVG (one panel per series, each with its own name,
so no chart relies on colour). Nothing here reads the database.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date

from django.utils.html import escape
from django.utils.safestring import mark_safe

from core.csv_download import safe_cell
from core.formatting import day as day_text
from core.formatting import duration
from factcheck.models import FlagCategory, FlagSource, ReportOutcome, Verdict
from moderation.appeals import DECISION_TARGET
from moderation.models import AppealKind
from reports.figures import APPEAL_KINDS, DECISION_KINDS, VERDICTS, DayFigures, Figures, Person
from reports.notices import CATEGORIES, OUTCOMES, SOURCES, split
from reports.rollup import DecisionKind

PANEL_WIDTH, PANEL_HEIGHT, GAP = 300, 64, 1


@dataclass(frozen=True)
class Column:
    label: str
    csv: str  # the CSV header: a stable, machine-friendly name
    value: Callable[[object], float | int | str | None]
    show: Callable[[object], str] = lambda v: "–" if v is None else f"{v:,}" if isinstance(v, int) else str(v)
    panel: bool = True  # drawn as a bar panel (dates and names are not)


@dataclass
class Bar:
    x: float
    y: float
    width: float
    height: float
    title: str


@dataclass
class Panel:
    title: str
    summary: str
    peak: str
    bars: list[Bar]

    @property
    def svg_bars(self) -> str:
        """The bars' <rect>s, written here rather than by the template: a 90-day page draws some 2,000 of
        them, and four template filters each made them half of the page's time."""
        return mark_safe("".join(
            f'<rect x="{b.x:.2f}" y="{b.y:.2f}" width="{b.width:.2f}" height="{b.height:.2f}">'
            f"<title>{escape(b.title)}</title></rect>" for b in self.bars))


@dataclass
class Chart:
    slug: str
    title: str
    intro: str
    columns: list[Column]
    rows: list[object]
    summary: list[str] = field(default_factory=list)
    per_day: bool = True

    @property
    def header(self) -> list[str]:
        return [c.label for c in self.columns]

    @property
    def table(self) -> list[list[str]]:
        return [[c.show(c.value(row)) for c in self.columns] for row in self.rows]

    @property
    def panels(self) -> list[Panel]:
        if not self.per_day:
            return []
        return [panel for c in self.columns if c.panel and (panel := self._panel(c))]

    def _panel(self, column: Column) -> Panel | None:
        values = [column.value(row) for row in self.rows]
        numbers = [v for v in values if isinstance(v, int | float)]
        if not numbers:
            return None
        peak = max(numbers)
        width = PANEL_WIDTH / len(values)
        bars = []
        for n, (row, value) in enumerate(zip(self.rows, values, strict=True)):
            height = 0.0 if not value or not peak else max(PANEL_HEIGHT * value / peak, 1.0)
            bars.append(Bar(x=n * width, y=PANEL_HEIGHT - height, width=max(width - GAP, 0.5), height=height,
                            title=f"{day_text(row.day)}: {column.show(value)}"))
        total = sum(numbers) if isinstance(numbers[0], int) and column.csv not in STOCKS else None
        summary = f"{total:,} in all" if total is not None else f"latest {column.show(numbers[-1])}"
        return Panel(title=column.label, summary=summary, peak=column.show(peak), bars=bars)

    @property
    def ranking(self) -> list[dict]:
        """Per-person charts: each row's bars as a share of the busiest row (ratings and appeals decided)."""
        if self.per_day or not self.rows:
            return []
        peak = max(max(p.ratings, p.appeals_decided) for p in self.rows) or 1
        return [{"name": p.name, "organisation": p.organisation, "ratings": p.ratings,
                 "appeals": p.appeals_decided, "ratings_width": round(100 * p.ratings / peak, 1),
                 "appeals_width": round(100 * p.appeals_decided / peak, 1)} for p in self.rows]

    def csv_text(self) -> str:
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow([c.csv for c in self.columns])
        for row in self.rows:
            writer.writerow([safe_cell(c.value(row)) for c in self.columns])
        return out.getvalue()


# Figures that are a level at the end of each day, not a count over it: never summed.
STOCKS = {"waiting_posts", "oldest_waiting_seconds", "median_seconds", "p90_seconds", "appeals_open",
          "appeals_overdue", "reports_open", "reports_overdue"}


def _date(row: DayFigures) -> str:
    return row.day.isoformat()


def _seconds(value: float | None) -> int | None:
    return None if value is None else round(value)


def _wait(value: int | None) -> str:
    return "–" if value is None else duration(value)


def _date_column() -> Column:
    return Column("Day", "date", _date, show=lambda v: day_text(date.fromisoformat(v)), panel=False)


def _computed(getter: Callable[[DayFigures], int | float | None]) -> Callable[[object], int | float | None]:
    """A day never rolled up shows a dash, not a zero."""
    return lambda row: getter(row) if row.computed else None


def queue_chart(figures: Figures) -> Chart:
    return Chart(
        slug="queue", title="Queue depth and oldest waiting post",
        intro="Posts waiting for a rating at the end of each day (copies waiting with their group count "
              "one each), and how long the oldest of them had waited.",
        columns=[
            _date_column(),
            Column("Waiting posts", "waiting_posts", _computed(lambda d: d.queue_depth)),
            Column("Oldest waiting", "oldest_waiting_seconds", _computed(lambda d: _seconds(d.queue_oldest_seconds)),
                   show=_wait),
        ],
        rows=figures.days,
    )


def time_to_rating_chart(figures: Figures) -> Chart:
    return Chart(
        slug="time-to-rating", title="Time from first flag to rating",
        intro="For the posts rated for the first time each day: the median and the 90th percentile of "
              "the time since their first flag.",
        columns=[
            _date_column(),
            Column("Posts rated", "posts_rated", _computed(lambda d: d.first_ratings)),
            Column("Median", "median_seconds", _computed(lambda d: _seconds(d.time_to_rating_p50)), show=_wait),
            Column("90th percentile", "p90_seconds", _computed(lambda d: _seconds(d.time_to_rating_p90)), show=_wait),
        ],
        rows=figures.days,
    )


def ratings_chart(figures: Figures) -> Chart:
    labels = dict(Verdict.choices)
    # Every verdict is a column (a CSV's columns never depend on the range); only those used are drawn.
    return Chart(
        slug="ratings", title="Ratings by verdict",
        intro="Every rating made each day, including those later superseded on appeal or re-rated.",
        columns=[
            _date_column(),
            *(Column(labels[v], v, _computed(lambda d, v=v: d.ratings.get(v, 0)),
                     panel=bool(figures.total("ratings", v))) for v in VERDICTS),
            Column("All ratings", "total", _computed(lambda d: d.ratings_total)),
        ],
        rows=figures.days,
    )


def decisions_chart(figures: Figures) -> Chart:
    return Chart(
        slug="decisions", title="Decisions by kind",
        intro="Actions taken each day. A fact-check that demotes a post and labels it counts in both; "
              "matched ratings (copies of a rated claim) also count in what they do. A rating's effect that "
              "trust and safety restored after lifting or overriding it by mistake counts as a restoration only, "
              "not as a new demotion or label.",
        columns=[
            _date_column(),
            *(
                Column(DecisionKind(k).label, k, _computed(lambda d, k=k: d.decisions.get(k, 0)))
                for k in DECISION_KINDS
            ),
        ],
        rows=figures.days,
    )


def appeals_chart(figures: Figures) -> Chart:
    kinds = dict(AppealKind.choices)
    median = figures.appeal_median_seconds
    target = DECISION_TARGET.total_seconds()
    decided = len(figures.decide_seconds)
    summary = [
        f"Median time to decide: {duration(median)} (target {duration(target)})" if median is not None
        else "No appeal was decided in these days.",
    ]
    if decided:
        summary.append(f"{figures.appeals_within_target:,} of {decided:,} decided within {duration(target)}")
    return Chart(
        slug="appeals", title="Appeals",
        intro="Appeals filed, decided, reversed and withdrawn each day; open and overdue (open for more "
              "than 24 hours) at the end of each day.",
        columns=[
            _date_column(),
            Column("Filed", "filed", _computed(lambda d: sum(d.appeals_filed.values()))),
            *(Column(f"Filed: {kinds[k].split(' (')[0].lower()}", f"filed_{k}",
                     _computed(lambda d, k=k: d.appeals_filed.get(k, 0)), panel=False) for k in APPEAL_KINDS),
            Column("Decided", "decided", _computed(lambda d: d.appeals_decided)),
            Column("Reversed", "reversed", _computed(lambda d: d.appeals_reversed)),
            Column("Withdrawn", "withdrawn", _computed(lambda d: d.appeals_withdrawn),
                   panel=False),
            Column("Open", "appeals_open", _computed(lambda d: d.appeals_open), panel=False),
            Column("Overdue", "appeals_overdue", _computed(lambda d: d.appeals_overdue)),
        ],
        rows=figures.days,
        summary=summary,
    )


def notices_chart(figures: Figures) -> Chart:
    """Notices by category and source, their outcomes, and reports of harm waiting (the program's only)."""
    categories, sources, outcomes = dict(FlagCategory.choices), dict(FlagSource.choices), dict(ReportOutcome.choices)
    median = figures.report_median_seconds
    target = DECISION_TARGET.total_seconds()
    decided = sum(figures.report_waits.values())
    summary = [
        f"Median time from a report of harm to its decision: {duration(median)} (target {duration(target)})"
        if median is not None else "No report of harm was decided in these days.",
    ]
    if decided:
        summary.append(f"{figures.reports_within_target:,} of {decided:,} decided within {duration(target)}")
    return Chart(
        slug="notices", title="Notices and reports of harm",
        intro="Flags received each day by category and source (each a notice; reports of harm are decided by "
              "trust-and-safety staff, misinformation by fact-checkers), notices answered each day by outcome (a "
              "notice's first decision), decisions corrected each day (reopened, decided again, overruled), and "
              "reports of harm open and overdue (open for more than 24 hours) at the end of each day.",
        columns=[
            _date_column(),
            *(Column(f"Received: {categories[c].lower()}", f"received_{c}",
                     _computed(lambda d, c=c: split(d.notices_received, position=0).get(c, 0))) for c in CATEGORIES),
            *(Column(f"From {sources[k].lower()}s", f"from_{k}",
                     _computed(lambda d, k=k: split(d.notices_received, position=1).get(k, 0)), panel=False)
              for k in SOURCES),
            *(Column(f"Answered: {outcomes[o].lower()}", f"answered_{o}",
                     _computed(lambda d, o=o: split(d.notices_decided, position=1).get(o, 0)), panel=False)
              for o in OUTCOMES),
            Column("Decisions corrected", "corrected", _computed(lambda d: sum(d.notices_corrected.values())),
                   panel=False),
            Column("Reports of harm open", "reports_open", _computed(lambda d: d.reports_open), panel=False),
            Column("Overdue", "reports_overdue", _computed(lambda d: d.reports_overdue)),
        ],
        rows=figures.days,
        summary=summary,
    )


def _people_chart(slug: str, title: str, intro: str, people: list[Person], *, with_organisation: bool) -> Chart:
    columns = [Column("Name", "name", lambda p: p.name, panel=False)]
    if with_organisation:
        columns.append(Column("Organisation", "organisation", lambda p: p.organisation, panel=False))
    columns += [Column("Ratings", "ratings", lambda p: p.ratings, panel=False),
                Column("Appeals decided", "appeals_decided", lambda p: p.appeals_decided, panel=False)]
    return Chart(slug=slug, title=title, intro=intro, columns=columns, rows=people, per_day=False)


def throughput_charts(figures: Figures) -> list[Chart]:
    charts = []
    if figures.scope.organisation is None:
        charts.append(_people_chart(
            "organisations", "Throughput by organisation",
            "Ratings made and appeals decided by each organisation in these days.",
            figures.organisations, with_organisation=False))
    charts.append(_people_chart(
        "reviewers", "Throughput by reviewer",
        "Ratings made and appeals decided by each person in these days.",
        figures.reviewers, with_organisation=figures.scope.organisation is None))
    return charts


def all_charts(figures: Figures) -> list[Chart]:
    # Notices are the program's (reports of harm are no organisation's): staff's dashboard only.
    notices = [notices_chart(figures)] if figures.scope.organisation is None else []
    return [queue_chart(figures), time_to_rating_chart(figures), ratings_chart(figures),
            decisions_chart(figures), appeals_chart(figures), *notices, *throughput_charts(figures)]
