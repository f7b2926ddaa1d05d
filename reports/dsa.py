"""The DSA transparency report (Art. 15 and 24): counts of actions and appeals for a date range, as CSV.

Actions are counted from the statements of reasons stored when each was taken (what the platform
told the owner and the Transparency Database), so the report and the statements cannot disagree:
by type (demotion, label, removal, as reports.rollup classifies them), by ground (the
misinformation policy, or the community standard a removal was made under), by the source of
detection, and by automated detection and automated decision. Appeals (complaints, Art. 20) are
counted by kind and outcome among those decided in the range, with the median time to decide.
It is a command (`manage.py transparency_report`) and a staff download on the dashboard; it
reads the stored rows directly, once, since a regulator's report is rare and must be exact.
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from dataclasses import dataclass
from datetime import date

from moderation import transparency as tdb
from moderation.models import Appeal, AppealKind, AppealStatus, RemovalGround, StatementOfReasons
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
HEADER = ["section", "item", "label", "count", "median_seconds_to_decide"]


@dataclass(frozen=True)
class Line:
    section: str
    item: str
    label: str
    count: int
    median_seconds: int | None = None

    def cells(self) -> list:
        return [self.section, self.item, self.label, self.count, "" if self.median_seconds is None else self.median_seconds]


def _median(values: list[float]) -> int | None:
    return round(percentile(sorted(values), 0.5)) if values else None


def report_lines(*, start: date, end: date) -> list[Line]:
    """The report for the days from `start` to `end`, both included (UTC)."""
    since, _ = day_bounds(start)
    _, until = day_bounds(end)
    statements = (StatementOfReasons.objects.filter(action__created_at__gte=since, action__created_at__lt=until)
                  .values_list("action__kind", "action__feed_multiplier", "action__label", "action__ground",
                               "automated_detection", "automated_decision", "transparency"))
    types, grounds, sources, detection, decision = Counter(), Counter(), Counter(), Counter(), Counter()
    total = 0
    for kind, multiplier, label, ground, detected, decided, exported in statements:
        total += 1
        for kind_of in decision_kinds(kind=kind, feed_multiplier=multiplier, label=label):
            if kind_of in (DecisionKind.DEMOTION, DecisionKind.LABEL, DecisionKind.REMOVAL):
                types[kind_of] += 1
        grounds[ground or MISINFORMATION_POLICY] += 1
        sources[exported.get("source_type", tdb.SOURCE_VOLUNTARY)] += 1
        detection["yes" if detected else "no"] += 1
        decision[tdb.AUTOMATED_PARTIALLY if decided else tdb.AUTOMATED_NOT] += 1

    lines = [Line("actions", "total", "Actions taken (each with a statement of reasons)", total)]
    lines += [Line("actions_by_type", k, DecisionKind.LABELS[k], types[k])
              for k in (DecisionKind.DEMOTION, DecisionKind.LABEL, DecisionKind.REMOVAL)]
    lines += [Line("actions_by_ground", k, label, grounds[k]) for k, label in GROUNDS.items()]
    lines += [Line("actions_by_detection_source", k, label, sources[k]) for k, label in SOURCES.items()]
    lines += [Line("actions_by_automated_detection", k, label, detection[k])
              for k, label in (("yes", "Detected by automated means"), ("no", "Detected by people"))]
    lines += [Line("actions_by_automated_decision", k, label, decision[k]) for k, label in AUTOMATED_DECISIONS.items()]
    return lines + _appeal_lines(since, until)


def _appeal_lines(since, until) -> list[Line]:
    received = Counter(Appeal.objects.filter(created_at__gte=since, created_at__lt=until).values_list("kind", flat=True))
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
            lines.append(Line("appeals_by_outcome", f"{kind}:{status}", f"{label}: {AppealStatus(status).label.lower()}",
                              outcomes[(kind, status)]))
    decided = [(k, label) for k, label in kinds] + [("all", "All appeals")]
    lines += [Line("appeals_decided", k, label, len(waits.get(k, [])), _median(waits.get(k, []))) for k, label in decided]
    return lines


def report_csv(*, start: date, end: date) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(HEADER)
    writer.writerow(["period", f"{start.isoformat()}/{end.isoformat()}", "Days covered (UTC), both included", "", ""])
    for line in report_lines(start=start, end=end):
        writer.writerow(line.cells())
    return out.getvalue()
