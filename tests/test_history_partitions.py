"""History in monthly partitions (issue 32; migrations audit 0014 and moderation 0013): audit events, the decisions
feed, statements of reasons and appeal events, as the webhook tables before them. Each is partitioned by range of
the moment its key decides, a statement's widened keys stay exactly as unique (the database holds it to its
action's moment and puid), the periodic job makes every table's coming months (leaving a busy table to its next
run), and the queries that page through history read indexes, of the months they ask for when they name a time.
Rating decisions stay one table."""

from __future__ import annotations

from datetime import timedelta

import psycopg
import pytest
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from audit.jobs import make_history_months
from audit.models import AuditEvent
from core import partitions
from core.history_guard import check
from factcheck.models import Rating
from moderation.feed import changes_after
from moderation.models import AppealEvent, DistributionChange, RatingDecision, StatementOfReasons
from tests.test_history_is_append_only import history  # noqa: F401 - the fixture: a row in every history table

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("history")]

KEYS = {
    "audit_auditevent": "created_at",
    "moderation_appealevent": "created_at",
    "moderation_distributionchange": "created_at",
    "moderation_statementofreasons": "created_at",
}


def partitioned_tables(cursor) -> list[str]:
    """Every table of the test database partitioned by range (the parents, not the partitions)."""
    cursor.execute("SELECT partrelid::regclass::text FROM pg_partitioned_table WHERE partstrat = 'r' AND NOT EXISTS "
                   "(SELECT 1 FROM pg_inherits WHERE inhrelid = partrelid) ORDER BY 1")
    return [row[0] for row in cursor.fetchall()]


def partition_of(table: str, pk: int) -> str:
    with connection.cursor() as cursor:
        cursor.execute(f'SELECT tableoid::regclass::text FROM "{table}" WHERE id = %s', [pk])
        return cursor.fetchone()[0]


def refused(sql: str, params) -> str:
    """Run SQL with every constraint checked at once, in a savepoint; the database's refusal."""
    with pytest.raises(IntegrityError) as caught, transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute(sql, params)
    return str(caught.value)


def other_session() -> psycopg.Connection:
    """A second connection to the test database, outside the test's transaction."""
    params = connection.get_connection_params()
    return psycopg.connect(**{key: value for key, value in params.items() if key not in ("cursor_factory", "context")},
                           autocommit=True)


def plan(queryset) -> str:
    """The plan of `queryset` with sequential scans priced out: an index that can serve it is used if one exists."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        return queryset.explain()


def test_every_history_table_is_monthly_partitions_of_its_key_with_the_coming_months():
    now = timezone.now()
    with connection.cursor() as cursor:
        assert set(KEYS) <= set(partitioned_tables(cursor))
        for table, key in KEYS.items():
            assert partitions.partition_key(cursor, table) == key
            names = {partition.name for partition in partitions.partitions(cursor, table)}
            for ahead in range(partitions.MONTHS_AHEAD + 1):
                month = partitions.add_months(partitions.month_start(now), ahead)
                assert partitions.partition_name(table, month) in names
    assert not check().problems  # the append-only triggers on every partition, TRUNCATE copies included
    for table, model in {"audit_auditevent": AuditEvent, "moderation_appealevent": AppealEvent,
                         "moderation_distributionchange": DistributionChange,
                         "moderation_statementofreasons": StatementOfReasons}.items():
        row = model.objects.latest("id")
        assert partition_of(table, row.pk) == partitions.partition_name(table, partitions.month_start(row.created_at))


def test_rating_decisions_stay_one_table_read_by_rating_and_post():
    # Every read of them names a rating or a post, never a time: months would each be probed (docs/history.md).
    with connection.cursor() as cursor:
        assert not partitions.is_partitioned(cursor, "moderation_ratingdecision")
    rating = Rating.objects.get()
    insert = ("INSERT INTO moderation_ratingdecision (rating_id, post_id, outcome, decided_at) "
              "VALUES (%s, %s, 'superseded', now())")
    assert "one_decision_per_rating_and_post" in refused(insert, [rating.pk, rating.post_id])


def test_a_statement_is_kept_in_its_actions_month_under_its_actions_puid():
    statement = StatementOfReasons.objects.select_related("action").latest("id")
    action = statement.action
    assert (statement.puid, statement.created_at) == (action.puid, action.created_at)
    columns = ("action_id, puid, created_at, what, scope, facts, ground, automation, automated_detection, "
               "automated_decision, appeal_kinds, appeal_by, how_to_appeal, transparency")
    insert = (f"INSERT INTO moderation_statementofreasons ({columns}) "
              "VALUES (%s, %s, %s, '-', '-', '-', '-', '-', false, false, '[]', now(), '-', '{}')")
    # A second statement of the action, in any month or under any puid, is refused.
    assert "Key (action_id, created_at)" in refused(insert, [action.pk, "fd-other", action.created_at])
    later = action.created_at + timedelta(days=35)
    assert "action_id_puid_created_at_fk" in refused(insert, [action.pk, action.puid, later])
    assert "action_id_puid_created_at_fk" in refused(insert, [action.pk, "fd-other", later])
    assert StatementOfReasons.objects.filter(action=action).count() == 1


def test_the_periodic_job_makes_the_coming_months_of_every_partitioned_table():
    later = partitions.add_months(partitions.month_start(timezone.now()), 7)
    with connection.cursor() as cursor:
        tables = partitioned_tables(cursor)
    assert {*KEYS, "webhooks_event", "webhooks_delivery", "webhooks_deliveryattempt"} <= set(tables)
    made = partitions.make_months_ahead([*tables, "factcheck_post"], now=later)  # a plain table is left alone
    for table in tables:
        for ahead in range(partitions.MONTHS_AHEAD + 1):
            assert partitions.partition_name(table, partitions.add_months(later, ahead)) in made


def test_the_hourly_job_makes_a_missing_coming_month_of_every_history_table():
    next_month = partitions.add_months(partitions.month_start(timezone.now()), 1)
    with connection.cursor() as cursor:
        # Attempts first: their months refer to the deliveries' (core.partitions.drop_partition).
        tables = sorted(partitioned_tables(cursor), key=lambda table: table != "webhooks_deliveryattempt")
        for table in tables:
            name = partitions.partition_name(table, next_month)
            partitions.drop_partition(cursor, table, partitions.Partition(next_month, next_month, name))
    assert any("no partition for next month" in problem for problem in check().problems)
    assert make_history_months() == len(tables) == len(KEYS) + 3
    assert not check().problems


def test_a_busy_table_is_left_to_the_next_run_within_the_lock_timeout_and_the_others_are_made():
    later = partitions.add_months(partitions.month_start(timezone.now()), 9)
    with other_session() as writer:
        # An open write to the actions (a decision being made): a statement's month must wait for it, to copy its
        # foreign key to the actions; every later write to the actions would queue behind a maker that waited on.
        writer.execute("BEGIN")
        writer.execute("LOCK TABLE moderation_action IN ROW EXCLUSIVE MODE")
        made = partitions.make_months_ahead(["moderation_statementofreasons", "moderation_appealevent"], now=later)
        writer.execute("ROLLBACK")
    assert not [name for name in made if name.startswith("moderation_statementofreasons")]
    assert partitions.partition_name("moderation_appealevent", later) in made
    assert partitions.MAKE_LOCK_TIMEOUT == "200ms"
    made = partitions.make_months_ahead(["moderation_statementofreasons"], now=later)  # the next run, not busy
    assert partitions.partition_name("moderation_statementofreasons", later) in made


def test_paging_through_history_reads_indexes_and_a_time_bound_reads_only_its_months():
    rating = Rating.objects.get()  # the fixture's, rated, decided and appealed
    post = rating.post
    for query in (
        changes_after(cursor=0, limit=100),  # the decisions feed's cursor
        DistributionChange.objects.filter(post=post).order_by("-id")[:50],  # a post's decisions
        AppealEvent.objects.filter(appeal__post=post),  # an owner's timeline of appeals
        RatingDecision.objects.filter(rating=rating),  # the reconciler's lookup (one table)
        AuditEvent.objects.order_by("-id")[:100],  # the audit log in the admin, newest first
        AuditEvent.objects.filter(post_id=post.pk).order_by("-id")[:100],  # a post's story in the log
        StatementOfReasons.objects.filter(puid=StatementOfReasons.objects.latest("id").puid),
    ):
        explained = plan(query)
        assert "Seq Scan on audit_auditevent" not in explained and "Seq Scan on moderation_" not in explained, explained
        assert "Index" in explained, explained

    # The admin's date filter ("this month"): that month's partition only, not the others nor the default one.
    this_month = partitions.month_start(timezone.now())
    next_month = partitions.add_months(this_month, 1)
    explained = plan(AuditEvent.objects.filter(created_at__gte=this_month, created_at__lt=next_month)
                     .order_by("-id")[:100])
    with connection.cursor() as cursor:
        months = [month.name for month in partitions.partitions(cursor, "audit_auditevent")]
    assert [month for month in [*months, "audit_auditevent_pdefault"] if month in explained] == [
        partitions.partition_name("audit_auditevent", this_month)]
