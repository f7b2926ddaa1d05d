"""History cannot be emptied (issue 28, finding 7): TRUNCATE is refused on every history table and on each of
its partitions, and the triggers that refuse it (and UPDATE and DELETE) cannot be switched off by ALTER TABLE.

Row triggers never see a TRUNCATE; a statement trigger on each table does. The tests run as the superuser
`postgres`, so the event trigger of audit 0013 is installed, as in a deployment migrated by a superuser.
"""

from __future__ import annotations

import os
import subprocess

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from audit.jobs import make_history_months
from audit.models import AuditEvent
from core import partitions
from core.append_only import AppendOnlyModel, is_history, refuses_truncate
from core.history_guard import EVENT_TRIGGER, EVENT_TRIGGER_SQL, check, history_models
from factcheck.models import Post, Rating
from moderation.models import AppealEvent, DistributionChange, RatingDecision, StatementOfReasons
from tests.test_history_is_append_only import history  # noqa: F401 - the fixture: a row in every history table
from webhooks.models import Delivery, DeliveryAttempt, Event

pytestmark = pytest.mark.django_db

# What the issue names, at least: the enumeration below must find them all (and any new one).
NAMED = {AuditEvent, AppealEvent, DistributionChange, RatingDecision, StatementOfReasons, Rating, Event, Delivery,
         DeliveryAttempt}
HISTORY_TABLES = sorted(model._meta.db_table for model in history_models())


def refused(sql: str) -> str:
    """Run SQL in a savepoint; return the database's refusal (fails the test if it was allowed)."""
    with connection.cursor() as cursor:
        # The test's own rows have deferred foreign-key checks pending, which TRUNCATE would refuse first.
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    with pytest.raises(DatabaseError) as caught, transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql)
    return str(caught.value)


def count(table: str) -> int:
    with connection.cursor() as cursor:
        cursor.execute(f'SELECT count(*) FROM "{table}"')
        return cursor.fetchone()[0]


def test_the_enumeration_finds_every_history_model_and_each_refuses_truncate():
    assert NAMED <= set(history_models())
    # A new append-only model (or a table whose rows are never deleted) without the TRUNCATE trigger fails here.
    from django.apps import apps

    for model in apps.get_models():
        if issubclass(model, AppendOnlyModel) or is_history(model):
            assert refuses_truncate(model), f"{model._meta.label} is history but does not refuse TRUNCATE"


@pytest.mark.parametrize("table", HISTORY_TABLES)
def test_truncate_of_a_history_table_is_refused_and_its_rows_stay(history, table):  # noqa: F811
    before = count(table)  # a row in each (statement submissions aside: none are made here)
    assert "Cannot truncate" in refused(f'TRUNCATE "{table}" RESTART IDENTITY CASCADE')
    assert count(table) == before


def test_truncate_cascading_from_posts_is_refused_and_empties_nothing(history):  # noqa: F811
    posts, decisions = Post.objects.count(), RatingDecision.objects.count()
    assert "Cannot truncate" in refused("TRUNCATE factcheck_post CASCADE")
    assert (Post.objects.count(), RatingDecision.objects.count()) == (posts, decisions)


def test_truncate_of_each_partition_of_a_partitioned_history_table_is_refused(history):  # noqa: F811
    with connection.cursor() as cursor:
        children = {
            table: [partition.name for partition in partitions.partitions(cursor, table)]
            + [partitions.default_name(table)]
            for table in ("webhooks_event", "webhooks_delivery", "webhooks_deliveryattempt")
        }
    for table, names in children.items():
        assert len(names) >= 3, table
        for name in names:
            assert "Cannot truncate" in refused(f'TRUNCATE "{name}" CASCADE'), name
    assert (Event.objects.count(), Delivery.objects.count(), DeliveryAttempt.objects.count()) == (1, 1, 1)


@pytest.mark.parametrize(
    "clause",
    ["DISABLE TRIGGER USER", "DISABLE TRIGGER ALL", "DISABLE TRIGGER {trigger}", "ENABLE REPLICA TRIGGER {trigger}"],
)
@pytest.mark.parametrize("table", HISTORY_TABLES)
def test_the_history_triggers_cannot_be_disabled(table, clause):
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT tgname FROM pg_trigger WHERE tgrelid = to_regclass(%s) AND tgname LIKE 'pgtrigger%%' "
            "ORDER BY tgname LIMIT 1",
            [table],
        )
        trigger = cursor.fetchone()[0]
    message = refused(f'ALTER TABLE "{table}" {clause.format(trigger=trigger)}')
    assert "the triggers that keep history stay enabled" in message
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_trigger WHERE tgrelid = to_regclass(%s) AND tgenabled = 'D'", [table])
        assert cursor.fetchone()[0] == 0


def test_a_partitions_triggers_cannot_be_disabled_either():
    with connection.cursor() as cursor:
        [first, *_] = partitions.partitions(cursor, "webhooks_deliveryattempt")
    assert "stay enabled" in refused(f'ALTER TABLE "{first.name}" DISABLE TRIGGER USER')


def test_other_alter_tables_still_work():
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("ALTER TABLE audit_auditevent ADD COLUMN scratch integer")
        cursor.execute("ALTER TABLE audit_auditevent DROP COLUMN scratch")
        transaction.set_rollback(True)


def test_check_history_passes_on_a_migrated_database(capsys):
    call_command("check_history", "--strict")
    out = capsys.readouterr().out
    assert "history protected" in out and "PROBLEM" not in out
    assert not check().problems


def test_check_history_reports_a_missing_truncate_trigger_and_the_periodic_job_puts_it_back(capsys):
    table = "webhooks_event"
    with connection.cursor() as cursor:
        [partition, *_] = partitions.partitions(cursor, table)
        cursor.execute(
            "SELECT tgname FROM pg_trigger WHERE tgrelid = to_regclass(%s) AND tgname LIKE '%%no_truncate%%'",
            [partition.name],
        )
        [(trigger,)] = cursor.fetchall()
        cursor.execute(f'DROP TRIGGER "{trigger}" ON "{partition.name}"')  # the owner can; it shows
    with pytest.raises(CommandError):
        call_command("check_history")
    assert f"PROBLEM  {partition.name}: {trigger}" in capsys.readouterr().out
    make_history_months()
    assert not check().problems
    assert "Cannot truncate" in refused(f'TRUNCATE "{partition.name}"')


def test_check_history_warns_when_the_event_trigger_is_absent(capsys):
    with connection.cursor() as cursor:
        cursor.execute(f"DROP EVENT TRIGGER {EVENT_TRIGGER}")  # a superuser can; it shows
    call_command("check_history")
    assert f"warning  event trigger {EVENT_TRIGGER} is absent" in capsys.readouterr().out
    with pytest.raises(CommandError):
        call_command("check_history", "--strict")


def test_check_history_reports_a_disabled_trigger_that_a_superuser_slipped_past(capsys):
    with connection.cursor() as cursor:
        cursor.execute(f"ALTER EVENT TRIGGER {EVENT_TRIGGER} DISABLE")
        cursor.execute("ALTER TABLE moderation_appealevent DISABLE TRIGGER USER")
    found = check()
    assert f"event trigger {EVENT_TRIGGER} is disabled (D)" in found.problems
    assert any(problem.startswith("moderation_appealevent: trigger") and "tgenabled = D" in problem
               for problem in found.problems)


GUARD = "factdesk_guard.factdesk_refuse_disabled_history_triggers()"


def test_the_shipped_sql_run_by_psql_as_it_is_makes_the_event_trigger_that_refuses(capsys):
    """What an administrator does where the app's role migrates (docs/history.md): the file, as it is, by psql."""
    database = connection.settings_dict
    env = {**os.environ, "PGPASSWORD": database["PASSWORD"] or ""}
    server = ["-h", database["HOST"] or "localhost", "-p", str(database["PORT"] or 5432), "-U", database["USER"]]
    ran = subprocess.run(
        ["psql", "-X", *server, "-d", database["NAME"], "-v", "ON_ERROR_STOP=1", "-1", "-f", str(EVENT_TRIGGER_SQL)],
        env=env, capture_output=True, text=True, timeout=60,
    )
    assert ran.returncode == 0, ran.stderr
    assert "stay enabled" in refused("ALTER TABLE audit_auditevent DISABLE TRIGGER USER")
    call_command("check_history", "--strict")
    assert "history protected" in capsys.readouterr().out


def test_check_history_tries_disabling_and_reports_an_event_trigger_whose_function_refuses_nothing():
    """Present and enabled, yet neutered: its owner replaced the function (after a restore with --no-owner, the
    app's role owns it). check_history used to say "history protected" while DISABLE TRIGGER went through."""
    with connection.cursor() as cursor:
        cursor.execute(f"CREATE OR REPLACE FUNCTION {GUARD} RETURNS event_trigger LANGUAGE plpgsql AS $$ BEGIN END; $$")
    [problem] = check().problems
    assert "refuses nothing" in problem and "DISABLE TRIGGER" in problem
    assert "deploy/history_event_trigger.sql" in problem
    with connection.cursor() as cursor:  # the try was rolled back
        cursor.execute("SELECT count(*) FROM pg_trigger WHERE tgenabled = 'D'")
        assert cursor.fetchone()[0] == 0


@pytest.mark.parametrize("what", ["FUNCTION " + GUARD, "SCHEMA factdesk_guard"])
def test_check_history_reports_an_event_trigger_the_apps_role_could_replace_or_drop(what):
    """A restore with --no-owner makes the app's role the function's owner; the role owning its schema could drop it
    with CASCADE, the event trigger with it."""
    with connection.cursor() as cursor:
        cursor.execute("CREATE ROLE factdesk_test_app NOSUPERUSER")  # rolled back with the test
        cursor.execute(f"ALTER {what} OWNER TO factdesk_test_app")
    [problem] = check().problems
    assert "owned by factdesk_test_app, not a superuser" in problem and "deploy/history_event_trigger.sql" in problem


def test_a_missing_next_month_is_reported_with_the_command_that_makes_it(capsys):
    table = "audit_auditevent"
    next_month = partitions.partition_name(table, partitions.add_months(partitions.month_start(timezone.now()), 1))
    with connection.cursor() as cursor:
        cursor.execute(f'DROP TABLE "{next_month}"')  # empty; an owner can drop a month (docs/history.md)
    [problem] = check().problems
    assert problem.startswith(f"{table}: no partition for next month yet ({next_month})")
    assert "run manage.py make_history_months" in problem

    call_command("make_history_months")

    assert "partition(s) made" in capsys.readouterr().out
    assert not check().problems
