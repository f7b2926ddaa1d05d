"""`manage.py transparency_report`: the DSA counts of a date range as CSV, equal to the stored rows.

The history is tests/reports/conftest.py's (13 flags from every source, 13 actions with a statement of
reasons over D0-D4, five appeals of every kind and outcome); each line of the report is compared with
a direct count of the flags, statements, actions and appeals in the range, and the totals with each other.
"""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from datetime import UTC, date, datetime, time, timedelta

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.db.models import Q

from factcheck.ingest import ingest_flags
from factcheck.models import Flag, FlagCategory, FlagSource, ReportOutcome
from moderation.models import (
    Action,
    ActionKind,
    Appeal,
    AppealKind,
    AppealStatus,
    RemovalGround,
    ReportAnswer,
    StatementOfReasons,
)
from moderation.statements import transparency as tdb
from tests.reports.conftest import DAYS, FIRST, LAST, at, flag

pytestmark = pytest.mark.django_db

HEADER = ["section", "item", "label", "count", "median_seconds_to_decide"]
SECTIONS = [
    "period", "flags_received", "notices_by_category", "notices_by_category_and_source", "notices_by_outcome",
    "notices_decided", "notices_corrected", "actions", "actions_by_type", "actions_by_ground",
    "actions_by_detection_source", "actions_by_automated_detection", "actions_by_automated_decision",
    "appeals_received", "appeals_by_outcome", "appeals_decided", "out_of_court_disputes", "suspensions",
]
FLAG_SOURCES = [FlagSource.USER_REPORT, FlagSource.TRUSTED_FLAGGER, FlagSource.CLASSIFIER, FlagSource.PARTNER]
SOURCES = [tdb.SOURCE_ARTICLE_16, tdb.SOURCE_TRUSTED_FLAGGER, tdb.SOURCE_VOLUNTARY]
OUTCOMES = [AppealStatus.UPHELD, AppealStatus.REVERSED, AppealStatus.WITHDRAWN]


def report(start: date, end: date, tmp_path) -> tuple[list[str], dict[str, dict[str, dict[str, str]]], str]:
    """Run the command to a file; returns the header, the rows by section and item, and what it printed."""
    out = tmp_path / "report.csv"
    printed = io.StringIO()
    call_command("transparency_report", "--from", start.isoformat(), "--to", end.isoformat(), "--out", str(out),
                 stdout=printed)
    rows = list(csv.reader(io.StringIO(out.read_text(encoding="utf-8"))))
    by_section: dict[str, dict[str, dict[str, str]]] = defaultdict(dict)
    for row in rows[1:]:
        record = dict(zip(HEADER, row, strict=True))
        assert record["item"] not in by_section[record["section"]], f"{record['item']} twice"
        by_section[record["section"]][record["item"]] = record
    return rows[0], by_section, printed.getvalue()


def counts(section: dict[str, dict[str, str]]) -> dict[str, int]:
    return {item: int(row["count"]) for item, row in section.items()}


def bounds(start: date, end: date) -> tuple[datetime, datetime]:
    return datetime.combine(start, time(), tzinfo=UTC), datetime.combine(end, time(), tzinfo=UTC) + timedelta(days=1)


def pg_median(values: list[float]) -> str:
    """The CSV cell of PostgreSQL's median of the values, in whole seconds ('' for none)."""
    if not values:
        return ""
    with connection.cursor() as cursor:
        cursor.execute("SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY v) FROM unnest(%s::float8[]) AS v",
                       [values])
        return str(round(cursor.fetchone()[0]))


def direct(start: date, end: date) -> dict[str, dict[str, int]]:
    """Every count of the report, from the flags, statements, actions and appeals stored in the range."""
    since, until = bounds(start, end)
    flags = Flag.objects.filter(received_at__gte=since, received_at__lt=until)
    # Each answer a flag was given in the range: its first decision (nothing before it), or a correction.
    answers = ReportAnswer.objects.filter(answered_at__gte=since, answered_at__lt=until)
    answered = answers.filter(replaces__isnull=True).exclude(outcome="")
    corrected = answers.exclude(pk__in=answered.values("pk"))
    statements = StatementOfReasons.objects.filter(action__created_at__gte=since, action__created_at__lt=until)
    # A rating's effect restored by staff counts as a restoration, not again as what it does.
    not_removal = statements.exclude(action__kind=ActionKind.REMOVAL).exclude(action__restored=True)
    received = Appeal.objects.filter(created_at__gte=since, created_at__lt=until)
    closed = Appeal.objects.filter(decided_at__gte=since, decided_at__lt=until)
    decided = closed.exclude(status=AppealStatus.WITHDRAWN)
    return {
        "flags_received": {source: flags.filter(source=source).count() for source in FLAG_SOURCES},
        "notices_by_category": {category: flags.filter(category=category).count() for category in FlagCategory.values},
        "notices_by_category_and_source": {
            f"{category}:{source}": flags.filter(category=category, source=source).count()
            for category in FlagCategory.values for source in FlagSource.values},
        "notices_by_outcome": {
            f"{category}:{outcome}": answered.filter(flag__category=category, outcome=outcome).count()
            for category in FlagCategory.values for outcome in ReportOutcome.values},
        "notices_decided": {category: answered.filter(flag__category=category).count()
                            for category in FlagCategory.values},
        "notices_corrected": {
            f"{category}:{outcome or 'reopened'}": corrected.filter(flag__category=category, outcome=outcome).count()
            for category in FlagCategory.values for outcome in ["", *ReportOutcome.values]},
        "actions": {"total": statements.count()},
        "actions_by_type": {
            "demotion": not_removal.filter(action__feed_multiplier__lt=1).count(),
            "label": not_removal.exclude(action__label="").count(),
            "removal": statements.filter(action__kind=ActionKind.REMOVAL).count(),
            "restoration": statements.filter(action__restored=True).count(),
        },
        "actions_by_ground": {
            "misinformation_policy": statements.filter(action__ground="").count(),
            **{ground: statements.filter(action__ground=ground).count() for ground in RemovalGround.values},
        },
        "actions_by_detection_source": {
            source: statements.filter(transparency__source_type=source).count() for source in SOURCES},
        "actions_by_automated_detection": {
            "yes": statements.filter(automated_detection=True).count(),
            "no": statements.filter(automated_detection=False).count(),
        },
        "actions_by_automated_decision": {
            tdb.AUTOMATED_PARTIALLY: statements.filter(automated_decision=True).count(),
            tdb.AUTOMATED_NOT: statements.filter(automated_decision=False).count(),
        },
        "appeals_received": {kind: received.filter(kind=kind).count() for kind in AppealKind.values},
        "appeals_by_outcome": {f"{kind}:{status}": closed.filter(kind=kind, status=status).count()
                               for kind in AppealKind.values for status in OUTCOMES},
        "appeals_decided": {**{kind: decided.filter(kind=kind).count() for kind in AppealKind.values},
                            "all": decided.count()},
        # What Factdesk never does: always none.
        "out_of_court_disputes": {"submitted": 0},
        "suspensions": {"accounts": 0},
    }


def direct_medians(start: date, end: date) -> dict[str, str]:
    since, until = bounds(start, end)
    decided = Appeal.objects.filter(decided_at__gte=since, decided_at__lt=until,
                                    status__in=[AppealStatus.UPHELD, AppealStatus.REVERSED])
    waits = {kind: [(a.decided_at - a.created_at).total_seconds() for a in decided.filter(kind=kind)]
             for kind in AppealKind.values}
    waits["all"] = [(a.decided_at - a.created_at).total_seconds() for a in decided]
    return {kind: pg_median(values) for kind, values in waits.items()}


@pytest.mark.parametrize("start, end", [(FIRST, LAST), (DAYS[1], DAYS[3]), (DAYS[2], DAYS[2])],
                         ids=["the whole history", "three middle days", "the empty day"])
def test_every_count_equals_a_direct_count_of_the_stored_rows_in_the_range(history, tmp_path, start, end):
    header, sections, printed = report(start, end, tmp_path)
    assert header == HEADER
    assert list(sections) == SECTIONS
    assert sections["period"] == {f"{start}/{end}": {
        "section": "period", "item": f"{start}/{end}", "label": "Days covered (UTC), both included", "count": "",
        "median_seconds_to_decide": ""}}
    expected = direct(start, end)
    assert {section: counts(sections[section]) for section in SECTIONS[1:]} == expected
    assert {item: row["median_seconds_to_decide"] for item, row in sections["appeals_decided"].items()} == (
        direct_medians(start, end))
    assert f"Transparency report for {start} to {end} written to" in printed


@pytest.mark.parametrize("start, end", [(FIRST, LAST), (DAYS[1], DAYS[3])],
                         ids=["the whole history", "three middle days"])
def test_the_breakdowns_of_actions_add_up_to_the_total(history, tmp_path, start, end):
    _, sections, _ = report(start, end, tmp_path)
    total = int(sections["actions"]["total"]["count"])
    since, until = bounds(start, end)
    # Each action that demotes, labels or removes has its statement: the total is theirs.
    restricting = Action.objects.filter(Q(kind=ActionKind.REMOVAL) | Q(feed_multiplier__lt=1) | ~Q(label=""),
                                        created_at__gte=since, created_at__lt=until)
    assert total == restricting.count() > 0
    for section in ("actions_by_ground", "actions_by_detection_source", "actions_by_automated_detection",
                    "actions_by_automated_decision"):
        assert sum(counts(sections[section]).values()) == total, section
    by_type = counts(sections["actions_by_type"])
    assert by_type["removal"] == counts(sections["actions_by_ground"])["hate"] + counts(
        sections["actions_by_ground"])["violence"]
    assert max(by_type.values()) <= total <= sum(by_type.values())  # one action may demote and label


def test_the_whole_history_reads_as_it_happened(history, tmp_path):
    _, sections, _ = report(FIRST, LAST, tmp_path)
    assert counts(sections["actions"]) == {"total": 13}
    assert counts(sections["actions_by_type"]) == {"demotion": 9, "label": 10, "removal": 2, "restoration": 0}
    assert counts(sections["actions_by_ground"]) == {
        "misinformation_policy": 11, "violence": 1, "hate": 1, "harassment": 0, "imminent_harm_misinformation": 0}
    # fr1 was flagged by a trusted flagger, en1 by a classifier, de1 by a partner; the rest by users.
    assert counts(sections["actions_by_detection_source"]) == {
        tdb.SOURCE_ARTICLE_16: 8, tdb.SOURCE_TRUSTED_FLAGGER: 2, tdb.SOURCE_VOLUNTARY: 3}
    assert counts(sections["actions_by_automated_detection"]) == {"yes": 2, "no": 11}
    assert counts(sections["actions_by_automated_decision"]) == {tdb.AUTOMATED_NOT: 11, tdb.AUTOMATED_PARTIALLY: 2}
    assert counts(sections["appeals_received"]) == {"dispute": 3, "correction": 1, "removal": 1}
    assert {item: count for item, count in counts(sections["appeals_by_outcome"]).items() if count} == {
        "dispute:reversed": 1, "dispute:withdrawn": 1, "correction:reversed": 1, "removal:upheld": 1}
    decided = sections["appeals_decided"]
    assert [(item, row["count"], row["median_seconds_to_decide"]) for item, row in decided.items()] == [
        ("dispute", "1", str(19 * 3600)), ("correction", "1", str(42 * 3600)), ("removal", "1", str(61 * 3600)),
        ("all", "3", str(42 * 3600))]


def test_flags_received_by_source_equal_a_direct_count_of_the_flags_received_in_the_range(history, tmp_path):
    # Flagged late on D4 but received just after midnight: a flag counts on the day it was received.
    ingest_flags(flags=[flag("fr1", flagged_at=at(4, 23, 50), source="trusted_flagger", key="flag-fr1-late")],
                 now=at(5, 0, 20))
    for start, end in ((FIRST, LAST), (DAYS[1], DAYS[3]), (DAYS[2], DAYS[2]), (LAST, LAST + timedelta(days=1))):
        _, sections, _ = report(start, end, tmp_path)
        since, until = bounds(start, end)
        received = Flag.objects.filter(received_at__gte=since, received_at__lt=until)
        assert counts(sections["flags_received"]) == {
            source: received.filter(source=source).count() for source in FLAG_SOURCES}, (start, end)
    # By hand: fr1 by a trusted flagger, en1 by a classifier, de1 by a partner, the ten others by users.
    _, whole, _ = report(FIRST, LAST, tmp_path)
    assert counts(whole["flags_received"]) == {"user_report": 10, "trusted_flagger": 1, "classifier": 1, "partner": 1}
    _, middle, _ = report(DAYS[1], DAYS[3], tmp_path)
    assert counts(middle["flags_received"]) == {"user_report": 3, "trusted_flagger": 0, "classifier": 0, "partner": 0}
    _, after, _ = report(LAST + timedelta(days=1), LAST + timedelta(days=1), tmp_path)
    assert counts(after["flags_received"]) == {"user_report": 0, "trusted_flagger": 1, "classifier": 0, "partner": 0}


def test_the_report_opens_with_flags_received_and_ends_with_what_factdesk_never_does_as_none(history, tmp_path):
    out = tmp_path / "report.csv"
    call_command("transparency_report", "--from", FIRST.isoformat(), "--to", LAST.isoformat(), "--out", str(out),
                 stdout=io.StringIO())
    rows = list(csv.reader(io.StringIO(out.read_text(encoding="utf-8"))))
    assert [row[:2] for row in rows[1:6]] == [["period", f"{FIRST}/{LAST}"], *(
        ["flags_received", source] for source in FLAG_SOURCES)]
    # Then every notice by category (and source, outcome, time to decide), then the actions.
    assert rows[6][:2] == ["notices_by_category", "misinformation"]
    assert [row[0] for row in rows].index("actions") == 6 + 5 + 5 * 4 + 5 * 4 + 5 + 5 * 5
    assert [(row[0], row[1], row[3], row[4]) for row in rows[-2:]] == [
        ("out_of_court_disputes", "submitted", "0", ""), ("suspensions", "accounts", "0", "")]
    assert "Art. 21" in rows[-2][2] and "Art. 23" in rows[-1][2]
    # Present with none in an empty range too.
    _, empty, _ = report(DAYS[2], DAYS[2], tmp_path)
    assert counts(empty["out_of_court_disputes"]) == {"submitted": 0}
    assert counts(empty["suspensions"]) == {"accounts": 0}


def test_rows_outside_the_range_are_not_counted(history, tmp_path):
    _, sections, _ = report(DAYS[1], DAYS[3], tmp_path)
    # D0's five actions (and the dispute and removal appeal filed then) and D4's removal are outside.
    assert counts(sections["actions"]) == {"total": 7}
    assert counts(sections["actions_by_type"])["removal"] == 0
    assert counts(sections["appeals_received"]) == {"dispute": 2, "correction": 1, "removal": 0}
    _, empty, _ = report(DAYS[2], DAYS[2], tmp_path)
    assert sum(counts(empty["actions"]).values()) == 0
    assert all(row["count"] == "0" and row["median_seconds_to_decide"] == ""
               for row in empty["appeals_decided"].values())


def test_without_out_the_report_is_printed(history):
    printed = io.StringIO()
    call_command("transparency_report", "--from", FIRST.isoformat(), "--to", LAST.isoformat(), stdout=printed)
    rows = list(csv.reader(io.StringIO(printed.getvalue())))
    assert rows[0] == HEADER and rows[1][:2] == ["period", f"{FIRST}/{LAST}"]
    assert ["actions", "total", "Actions taken (each with a statement of reasons)", "13", ""] in rows


@pytest.mark.parametrize("arguments, message", [
    (["--from", "2025-13-01", "--to", "2025-03-07"], "--from must be a date YYYY-MM-DD, not '2025-13-01'."),
    (["--from", "20250303", "--to", "2025-03-07"], "--from must be a date YYYY-MM-DD, not '20250303'."),
    (["--from", "2025-03-03", "--to", "2025-02-30"], "--to must be a date YYYY-MM-DD, not '2025-02-30'."),
    (["--from", "2025-03-07", "--to", "2025-03-03"], "--to (2025-03-03) is before --from (2025-03-07)."),
    (["--from", "2025-03-03"], "the following arguments are required: --to"),
    (["--from", "9999-12-31", "--to", "9999-12-31"], "'--from' must be a day from 2000-01-01 to "),
    (["--from", "1999-12-31", "--to", "2025-03-07"], "'--from' must be a day from 2000-01-01 to "),
    (["--from", "2025-03-03", "--to", "9999-12-31"], "'--to' must be a day from 2000-01-01 to "),
], ids=["month 13", "no dashes", "30 February", "to before from", "no to", "year 9999", "before 2000",
        "to in year 9999"])
def test_bad_dates_are_refused_with_a_clear_message_and_no_file_written(db, tmp_path, arguments, message):
    out = tmp_path / "report.csv"
    with pytest.raises(CommandError) as refused:
        call_command("transparency_report", *arguments, "--out", str(out))
    assert message in str(refused.value)
    assert list(tmp_path.iterdir()) == []


def test_an_out_file_in_a_missing_directory_is_refused_clearly(db, tmp_path):
    out = tmp_path / "missing" / "report.csv"
    with pytest.raises(CommandError, match=r"Cannot write .*missing/report\.csv: No such file or directory"):
        call_command("transparency_report", "--from", "2025-03-03", "--to", "2025-03-07", "--out", str(out))
    assert list(tmp_path.iterdir()) == []


def test_a_report_replaces_an_older_file_whole(history, tmp_path):
    out = tmp_path / "report.csv"
    out.write_text("an older report\n" * 1000, encoding="utf-8")
    call_command("transparency_report", "--from", FIRST.isoformat(), "--to", LAST.isoformat(), "--out", str(out),
                 stdout=io.StringIO())
    assert out.read_text(encoding="utf-8").startswith(",".join(HEADER) + "\n")
    assert "an older report" not in out.read_text(encoding="utf-8")
    assert [p.name for p in tmp_path.iterdir()] == ["report.csv"]  # no temporary file left beside it


def test_a_failed_write_leaves_no_temporary_file_behind(tmp_path):
    from django.core.management import CommandError, call_command

    target = tmp_path / "report.csv"
    target.mkdir()  # a directory where the file should go: the rename fails
    with pytest.raises(CommandError, match="Cannot write"):
        call_command("transparency_report", "--from", "2025-03-03", "--to", "2025-03-04", "--out", str(target))
    assert [p.name for p in tmp_path.iterdir()] == ["report.csv"]
