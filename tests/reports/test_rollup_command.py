"""`manage.py rollup_figures`: rebuild a range of days, the last N days, or what the periodic job does."""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from reports.models import DailyFigure, RolledUpDay
from reports.rollup import day_bounds, roll_up_days, settled
from tests.reports.conftest import DAYS, FIRST, LAST

pytestmark = pytest.mark.django_db


def run(*arguments: str) -> str:
    printed = io.StringIO()
    call_command("rollup_figures", *arguments, stdout=printed)
    return printed.getvalue()


def stored_rows() -> list[tuple]:
    return sorted(DailyFigure.objects.values_list("day", "organisation_id", "metric", "key", "value"),
                  key=lambda row: (row[0], row[1] or 0, row[2], row[3]))


def computed_days() -> list:
    return list(RolledUpDay.objects.order_by("day").values_list("day", flat=True))


def today():
    return datetime.now(UTC).date()


def test_from_and_to_rebuild_every_day_of_the_range_from_the_history(history):
    printed = run("--from", FIRST.isoformat(), "--to", LAST.isoformat())
    written = DailyFigure.objects.count()
    assert printed == f"5 days rebuilt, {written} figures written\n" and written > 0
    assert computed_days() == DAYS
    assert all(settled(day) for day in RolledUpDay.objects.all())  # rebuilt long after they ended
    # The same figures as the roll-up computed right after the last day ended.
    by_command = stored_rows()
    DailyFigure.objects.all().delete()
    RolledUpDay.objects.all().delete()
    roll_up_days(start=FIRST, end=LAST, now=history.now)
    assert stored_rows() == by_command


def test_a_rebuild_replaces_what_a_day_held(history):
    run("--from", FIRST.isoformat(), "--to", LAST.isoformat())
    before = stored_rows()
    DailyFigure.objects.filter(day=DAYS[0]).update(value=999)
    DailyFigure.objects.filter(day=DAYS[1]).delete()
    run("--from", DAYS[0].isoformat(), "--to", DAYS[1].isoformat())
    assert stored_rows() == before


def test_from_alone_rebuilds_that_one_day_and_verbosity_two_times_each_day(history):
    printed = run("--from", DAYS[3].isoformat())
    assert computed_days() == [DAYS[3]]
    assert printed.startswith("1 day rebuilt, ")
    printed = run("--from", DAYS[0].isoformat(), "--to", DAYS[1].isoformat(), "--verbosity", "2")
    lines = printed.splitlines()
    assert [line.split(":")[0] for line in lines[:2]] == [DAYS[0].isoformat(), DAYS[1].isoformat()]
    assert all(line.endswith(" ms") for line in lines[:2])


def test_days_rebuilds_the_last_n_days_to_today(db):
    printed = run("--days", "3")
    assert computed_days() == [today() - timedelta(days=n) for n in (2, 1, 0)]
    assert printed.startswith("3 days rebuilt, ")
    # Today is computed up to now, not to its end, and is not settled.
    computed_today = RolledUpDay.objects.get(day=today())
    assert computed_today.through == computed_today.computed_at < day_bounds(today())[1]
    assert not settled(computed_today)


def test_without_arguments_it_does_what_the_periodic_job_does(db):
    printed = run()
    assert printed.endswith(" figures written for the recent days\n")
    # Today, and the three most recent days never computed (yesterday first).
    assert computed_days() == [today() - timedelta(days=n) for n in (3, 2, 1, 0)]
    run()
    # Then the next three (and yesterday again, if the first run was within an hour of midnight).
    assert computed_days() == [today() - timedelta(days=n) for n in (6, 5, 4, 3, 2, 1, 0)]


@pytest.mark.parametrize("arguments, message", [
    (["--days", "3", "--from", "2025-03-03"], "Give either --days or --from/--to."),
    (["--days", "3", "--to", "2025-03-03"], "Give either --days or --from/--to."),
    (["--days", "0"], "--days must be from 1 to 3660."),
    (["--days", "3661"], "--days must be from 1 to 3660."),
    (["--days", "three"], "argument --days: invalid int value: 'three'"),
    (["--to", "2025-03-03"], "--to needs --from."),
    (["--from", "2025-3-3"], "--from must be a date YYYY-MM-DD, not '2025-3-3'."),
    (["--from", "2025-03-03", "--to", "yesterday"], "--to must be a date YYYY-MM-DD, not 'yesterday'."),
    (["--from", "2025-03-07", "--to", "2025-03-03"], "--to (2025-03-03) is before --from (2025-03-07)."),
    (["--from", "2000-01-01", "--to", "2025-03-03"], "At most 3660 days at a time."),
    (["--from", "9999-12-31"], "'--from' must be a day from 2000-01-01 to "),
    (["--from", "1999-12-31"], "'--from' must be a day from 2000-01-01 to "),
    (["--from", "2025-03-03", "--to", "9999-12-31"], "'--to' must be a day from 2000-01-01 to "),
], ids=["days and from", "days and to", "no days", "too many days", "days not a number", "to alone",
        "short date", "to not a date", "to before from", "range too long", "the last day of year 9999",
        "before 2000", "to in year 9999"])
def test_bad_arguments_are_refused_with_a_clear_message_and_nothing_computed(db, arguments, message):
    with pytest.raises(CommandError) as refused:
        run(*arguments)
    assert message in str(refused.value)
    assert not RolledUpDay.objects.exists() and not DailyFigure.objects.exists()


def test_the_allowed_days_run_from_2000_to_tomorrow_and_a_later_day_is_refused_naming_them(db):
    tomorrow = today() + timedelta(days=1)
    with pytest.raises(CommandError) as refused:
        run("--from", (tomorrow + timedelta(days=1)).isoformat())
    assert str(refused.value) == f"'--from' must be a day from 2000-01-01 to {tomorrow.isoformat()}."
    # Tomorrow (a UTC day that has begun somewhere) and 1 January 2000 are allowed.
    # It had said "1 days rebuilt, 0 figures written" of tomorrow.
    assert run("--from", tomorrow.isoformat()) == "0 days rebuilt, 0 figures written; 1 day after today left alone\n"
    assert run("--from", "2000-01-01").startswith("1 day rebuilt, ")
    assert computed_days() == [datetime(2000, 1, 1).date()]  # tomorrow has not begun here: nothing to compute
