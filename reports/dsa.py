"""The DSA transparency report (Art. 15 and 24): counts of actions and appeals for a date range, as CSV.

Actions are counted from the statements of reasons stored when each was taken (what the platform
told the owner and the Transparency Database), so the report and the statements cannot disagree:
by type (demotion, label, removal, as reports.rollup classifies them, and restoration: a rating's effect
that staff restored after lifting or overriding it by mistake, with a statement of its own, is not a new
demotion), by ground (the misinformation policy, or the community standard a removal was made under), by the source of
detection, and by automated detection and automated decision. Appeals (complaints, Art. 20) are
counted by kind and outcome among those decided in the range, with the median time to decide.
Flags received come first, by source (user notices under Art. 16, trusted flaggers under Art. 22),
then every notice by category and source, its outcome, and the median time from receipt to decision
per category (Art. 15(1)(b): reports.notices); what Factdesk never does (out-of-court disputes,
suspensions) is reported as none.
It is a command (`manage.py transparency_report`) and a staff download on the dashboard; it
counts the stored rows in the database directly (grouped there, not read row by row), since a
regulator's report is rare and must be exact.
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from dataclasses import dataclass
from datetime import date

from django.db.models import Count, Q
from django.db.models.fields.json import KT

from factcheck.models import Flag, FlagSource
from moderation.models import Appeal, AppealKind, AppealStatus, RemovalGround, StatementOfReasons
from moderation.statements import transparency as tdb
from reports.notices import notice_lines
from reports.rollup import DecisionKind, day_bounds, decision_kinds, percentile

MISINFORMATION_POLICY = "misinformation_policy"
GROUNDS = {MISINFORMATION_POLICY: "Misinformation policy (fact-checking)",
           **{g: f"Community standard: {label}" for g, label in RemovalGround.choices}}
SOURCES = {
    tdb.SOURCE_ARTICLE_16: "Notice from a user (Art. 16)",
    tdb.SOURCE_TRUSTED_FLAGGER: "Trusted flagger (Art. 22)",
    tdb.SOURCE_VOLUNTARY: "Own initiative (classifiers, partners, matching)",
}
AUTOMATED_DECISIONS = {
    tdb.AUTOMATED_NOT: "Not automated",
    tdb.AUTOMATED_PARTIALLY: "Partially automated (a matched copy of a rated claim)",
}
FLAG_SOURCES = {
    FlagSource.USER_REPORT: "Notices from users (Art. 16)",
    FlagSource.TRUSTED_FLAGGER: "Notices from trusted flaggers (Art. 22)",
    FlagSource.CLASSIFIER: "Flags from the platform's classifiers (own initiative)",
    FlagSource.PARTNER: "Flags from partners (own initiative)",
}
HEADER = ["section", "item", "label", "count", "median_seconds_to_decide"]
# The report's action types (reports.rollup.decision_kinds): what an action did, or a restoration of a rating's effect.
ACTION_TYPES = (DecisionKind.DEMOTION, DecisionKind.LABEL, DecisionKind.REMOVAL, DecisionKind.RESTORATION)


@dataclass(frozen=True)
class Line:
    section: str
    item: str
    label: str
    count: int
    median_seconds: int | None = None

    def cells(self) -> list:
        return [
            self.section, self.item, self.label, self.count, "" if self.median_seconds is None else self.median_seconds
        ]


def _median(values: list[float]) -> int | None:
    return round(percentile(sorted(values), 0.5)) if values else None


def report_lines(*, start: date, end: date) -> list[Line]:
    """The report for the days from `start` to `end`, both included (UTC)."""
    since, _ = day_bounds(start)
    _, until = day_bounds(end)
    # Counted in the database, grouped by what the report distinguishes: a year of actions is a few
    # dozen groups here, not a row (and its stored JSON) per action in this process.
    groups = (StatementOfReasons.objects.filter(action__created_at__gte=since, action__created_at__lt=until)
              .values_list("action__kind", "action__feed_multiplier", Q(action__label=""), "action__restored",
                           "action__ground", "automated_detection", "automated_decision",
                           KT("transparency__source_type"))
              .annotate(n=Count("id")).order_by())
    types, grounds, sources, detection, decision = Counter(), Counter(), Counter(), Counter(), Counter()
    total = 0
    for kind, multiplier, unlabelled, restored, ground, detected, decided, source, n in groups:
        total += n
        for kind_of in decision_kinds(kind=kind, feed_multiplier=multiplier, label="" if unlabelled else "label",
                                      restored=restored):
            if kind_of in ACTION_TYPES:
                types[kind_of] += n
        grounds[ground or MISINFORMATION_POLICY] += n
        sources[source or tdb.SOURCE_VOLUNTARY] += n
        detection["yes" if detected else "no"] += n
        decision[tdb.AUTOMATED_PARTIALLY if decided else tdb.AUTOMATED_NOT] += n

    lines = [Line("actions", "total", "Actions taken (each with a statement of reasons)", total)]
    lines += [Line("actions_by_type", k, DecisionKind(k).label, types[k]) for k in ACTION_TYPES]
    lines += [Line("actions_by_ground", k, label, grounds[k]) for k, label in GROUNDS.items()]
    lines += [Line("actions_by_detection_source", k, label, sources[k]) for k, label in SOURCES.items()]
    lines += [Line("actions_by_automated_detection", k, label, detection[k])
              for k, label in (("yes", "Detected by automated means"), ("no", "Detected by people"))]
    lines += [Line("actions_by_automated_decision", k, label, decision[k]) for k, label in AUTOMATED_DECISIONS.items()]
    notices = [Line(*values) for values in notice_lines(since, until)]
    return _notice_lines(since, until) + notices + lines + _appeal_lines(since, until) + NOT_APPLICABLE


def _notice_lines(since, until) -> list[Line]:
    """Flags received (Art. 15(1)(b): notices under Art. 16, and trusted flaggers' under Art. 22)."""
    received = Counter(dict(Flag.objects.filter(received_at__gte=since, received_at__lt=until)
                            .values_list("source").annotate(n=Count("id")).order_by()))
    return [Line("flags_received", source, FLAG_SOURCES[source], received[source]) for source in FLAG_SOURCES]


def _appeal_lines(since, until) -> list[Line]:
    received = Counter(
        Appeal.objects.filter(created_at__gte=since, created_at__lt=until).values_list("kind", flat=True)
    )
    closed = (Appeal.objects.filter(decided_at__gte=since, decided_at__lt=until)
              .values_list("kind", "status", "created_at", "decided_at"))
    outcomes: Counter = Counter()
    waits: dict[str, list[float]] = {}
    for kind, status, created_at, decided_at in closed:
        outcomes[(kind, status)] += 1
        if status != AppealStatus.WITHDRAWN:
            waited = (decided_at - created_at).total_seconds()
            waits.setdefault(kind, []).append(waited)
            waits.setdefault("all", []).append(waited)
    kinds = [(k, label.split(" (")[0]) for k, label in AppealKind.choices]
    lines = [Line("appeals_received", k, label, received[k]) for k, label in kinds]
    for kind, label in kinds:
        for status in (AppealStatus.UPHELD, AppealStatus.REVERSED, AppealStatus.WITHDRAWN):
            lines.append(Line("appeals_by_outcome", f"{kind}:{status}",
                              f"{label}: {AppealStatus(status).label.lower()}", outcomes[(kind, status)]))
    decided = [(k, label) for k, label in kinds] + [("all", "All appeals")]
    lines += [
        Line("appeals_decided", k, label, len(waits.get(k, [])), _median(waits.get(k, []))) for k, label in decided
    ]
    return lines


# Art. 24(1): what Factdesk never does is reported as none, so the reader need not guess.
NOT_APPLICABLE = [
    Line("out_of_court_disputes", "submitted", "Disputes submitted to out-of-court settlement bodies (Art. 21): "
         "not handled through Factdesk", 0),
    Line("suspensions", "accounts", "Accounts suspended (Art. 23): none, Factdesk demotes repeat offenders and "
         "never suspends", 0),
]


def report_csv(*, start: date, end: date) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(HEADER)
    writer.writerow(["period", f"{start.isoformat()}/{end.isoformat()}", "Days covered (UTC), both included", "", ""])
    for line in report_lines(start=start, end=end):
        writer.writerow(line.cells())
    return out.getvalue()
