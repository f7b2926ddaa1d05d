"""core.replicas' router with a replica that mirrors the test database: where reads and writes go, and what
happens to a replica that lags, does not say how far behind it is, or does not answer.

Where a statement ran is read from the connections themselves (tests.replica_support.queries_on). The
pages and exports that use the scope are tests/test_replica_views.py; a real streaming replica, its lag
included, is tests/test_replica_streaming.py.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import DEFAULT_DB_ALIAS, connections, router, transaction

from accounts.models import User
from core import replicas
from core.replicas import reads_from_replica, replica_reads
from factcheck.models import Organisation
from tests.factories import OrganisationFactory, UserFactory
from tests.replica_support import queries_on, reading, replica  # noqa: F401  (the fixture)
from tests.servers import free_port

pytestmark = pytest.mark.django_db
ORGANISATIONS = "factcheck_organisation"
ROOT = Path(__file__).resolve().parent.parent


def test_reads_in_the_scope_go_to_the_replica_and_reads_outside_it_to_the_primary(replica):  # noqa: F811
    OrganisationFactory(name="Verifact")
    with queries_on(DEFAULT_DB_ALIAS, replica) as seen:
        with replica_reads():
            list(Organisation.objects.all())
        list(Organisation.objects.all())
    assert len(reading(ORGANISATIONS, seen[replica])) == 1
    assert len(reading(ORGANISATIONS, seen[DEFAULT_DB_ALIAS])) == 1


def test_one_replica_is_checked_once_per_scope_however_many_reads(replica):  # noqa: F811
    with queries_on(replica) as seen:
        with replica_reads():
            for _ in range(3):
                list(Organisation.objects.all())
        with replica_reads():
            list(Organisation.objects.all())
    lag_checks = [sql for sql in seen[replica] if "pg_last_wal_replay_lsn" in sql]
    assert len(lag_checks) == 2 and len(reading(ORGANISATIONS, seen[replica])) == 4


def test_a_read_inside_a_transaction_stays_on_the_primary(replica):  # noqa: F811
    with queries_on(DEFAULT_DB_ALIAS, replica) as seen, replica_reads(), transaction.atomic():
        OrganisationFactory(name="Verifact")
        assert Organisation.objects.filter(name="Verifact").exists()  # its own write: only the primary has it
    assert reading(ORGANISATIONS, seen[DEFAULT_DB_ALIAS]) and seen[replica] == []


def test_writes_go_to_the_primary_inside_the_scope_even_for_a_row_read_from_the_replica(replica):  # noqa: F811
    OrganisationFactory(name="Verifact")
    with queries_on(DEFAULT_DB_ALIAS, replica) as seen, replica_reads():
        OrganisationFactory(name="Faktenwerk")
        # The replica is a second connection to the test's database: it sees what the suite committed, not
        # what this test wrote in its transaction. This row is read on the primary, then saved on the primary.
        row = Organisation.objects.using(replica).filter(name="Verifact").first()
        assert row is None
        row = Organisation.objects.using(DEFAULT_DB_ALIAS).get(name="Verifact")
        row._state.db = replica  # as if read from the replica
        row.name = "Verifact (renamed)"
        row.save(update_fields=["name"])
    assert [sql for sql in seen[DEFAULT_DB_ALIAS] if sql.startswith(f'INSERT INTO "{ORGANISATIONS}"')]
    assert [sql for sql in seen[DEFAULT_DB_ALIAS] if sql.startswith(f'UPDATE "{ORGANISATIONS}"')]
    assert not [sql for sql in seen[replica] if sql.lstrip().upper().startswith(("INSERT", "UPDATE", "DELETE"))]
    assert Organisation.objects.filter(name="Verifact (renamed)").exists()


def test_who_is_asking_is_read_on_the_primary_inside_the_scope(replica):  # noqa: F811
    user = UserFactory()
    with queries_on(DEFAULT_DB_ALIAS, replica) as seen, replica_reads():
        assert User.objects.get(pk=user.pk) == user  # a user made a moment ago is found
    assert reading("accounts_user", seen[DEFAULT_DB_ALIAS]) and not reading("accounts_user", seen[replica])


def test_a_decorated_function_reads_from_the_replica_only_while_it_runs(replica):  # noqa: F811
    @reads_from_replica
    def count() -> int:
        return Organisation.objects.count()

    with queries_on(DEFAULT_DB_ALIAS, replica) as seen:
        count()
        Organisation.objects.count()
    assert len(reading(ORGANISATIONS, seen[replica])) == 1
    assert len(reading(ORGANISATIONS, seen[DEFAULT_DB_ALIAS])) == 1


def test_migrations_run_on_the_primary_only_and_rows_of_both_may_be_related(replica):  # noqa: F811
    assert router.allow_migrate(DEFAULT_DB_ALIAS, "factcheck", model_name="organisation") is True
    assert router.allow_migrate(replica, "factcheck", model_name="organisation") is False
    here, there = Organisation(name="a"), Organisation(name="b")
    here._state.db, there._state.db = DEFAULT_DB_ALIAS, replica
    assert router.allow_relation(here, there) is True


def test_a_lagging_replica_is_skipped_for_the_primary_and_logged_once(replica, settings, monkeypatch,  # noqa: F811
                                                                       caplog):
    # The mirror is no standby: its lag is made up here; a real standby's is tests/test_replica_streaming.py.
    monkeypatch.setattr(replicas, "replica_lag", lambda alias, position: 45.5)
    caplog.set_level(logging.INFO, logger="core.replicas")
    with queries_on(DEFAULT_DB_ALIAS, replica) as seen:
        for _ in range(2):
            with replica_reads():
                list(Organisation.objects.all())
    assert len(reading(ORGANISATIONS, seen[DEFAULT_DB_ALIAS])) == 2 and not reading(ORGANISATIONS, seen[replica])
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == ["Read replica replica_0 skipped, its reads go to the primary: it is 45.5 s behind the "
                        "primary (FACTDESK_REPLICA_MAX_LAG is 30 s)."]

    monkeypatch.setattr(replicas, "replica_lag", lambda alias, position: 29.5)  # caught up to within the limit
    with queries_on(replica) as seen, replica_reads():
        list(Organisation.objects.all())
    assert reading(ORGANISATIONS, seen[replica])
    assert "Read replica replica_0 is used again" in caplog.records[-1].getMessage()


def test_a_replica_whose_lag_is_unknown_is_skipped(replica, monkeypatch, caplog):  # noqa: F811
    monkeypatch.setattr(replicas, "replica_lag", lambda alias, position: None)
    with queries_on(DEFAULT_DB_ALIAS, replica) as seen, replica_reads():
        list(Organisation.objects.all())
    assert reading(ORGANISATIONS, seen[DEFAULT_DB_ALIAS]) and not reading(ORGANISATIONS, seen[replica])
    assert "its lag is unknown" in caplog.text


def test_an_unreachable_replica_is_skipped_and_not_asked_again_for_a_while(replica, monkeypatch,  # noqa: F811
                                                                           caplog):
    connections[replica].settings_dict["PORT"] = free_port()  # nothing listens there
    attempts = []
    real_lag = replicas.replica_lag
    monkeypatch.setattr(replicas, "replica_lag",
                        lambda alias, position: attempts.append(alias) or real_lag(alias, position))
    with queries_on(DEFAULT_DB_ALIAS) as seen:
        for _ in range(3):
            with replica_reads():
                assert list(Organisation.objects.all()) == []
    assert len(reading(ORGANISATIONS, seen[DEFAULT_DB_ALIAS])) == 3
    assert attempts == [replica]  # once; the next scopes remember it for UNREACHABLE_FOR_SECONDS
    assert [r.levelno for r in caplog.records if r.name == "core.replicas"] == [logging.WARNING]
    assert "does not answer" in caplog.text


def _settings_in_a_fresh_process(**env: str) -> str:
    script = ("from django.conf import settings as s\n"
              "print(sorted(s.DATABASES), getattr(s, 'DATABASE_ROUTERS', []), s.FACTDESK_REPLICA_MAX_LAG)\n"
              "r = s.DATABASES.get('replica_1')\n"
              "print(r and (r['HOST'], r['CONN_MAX_AGE'], r['CONN_HEALTH_CHECKS'], r['TEST'], r['OPTIONS']))\n"
              "print(s.MIDDLEWARE)\n")
    base = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "DATABASE_REPLICA_URL")}
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60,
                            env={**base, "DJANGO_SETTINGS_MODULE": "config.settings", **env})
    return result.stdout + result.stderr


def test_each_replica_url_becomes_an_alias_and_without_any_nothing_changes():
    url = "postgres://u@primary:5432/factdesk"
    many = _settings_in_a_fresh_process(DATABASE_URL=url, FACTDESK_REPLICA_MAX_LAG="5",
                                        DATABASE_REPLICA_URL="postgres://u@r0/factdesk, postgres://u@r1/factdesk")
    assert "['default', 'replica_0', 'replica_1'] ['core.replicas.ReplicaRouter'] 5.0" in many
    assert ("('r1', 60, True, {'MIRROR': 'default'}, {'connect_timeout': 2, 'tcp_user_timeout': 5000, "
            "'keepalives': 1, 'keepalives_idle': 5, 'keepalives_interval': 2, 'keepalives_count': 2})") in many
    assert "RecentWriteMiddleware" not in _settings_in_a_fresh_process(DATABASE_URL=url, FACTDESK_REPLICA_MAX_LAG="5")
    assert "['default'] [] 30.0" in _settings_in_a_fresh_process(DATABASE_URL=url)
    assert "['default'] [] 30.0" in _settings_in_a_fresh_process(DATABASE_REPLICA_URL="postgres://u@r0/factdesk")
    assert "FACTDESK_REPLICA_MAX_LAG must be a number" in _settings_in_a_fresh_process(FACTDESK_REPLICA_MAX_LAG="x")
    assert "RecentWriteMiddleware" in many


@pytest.mark.parametrize(("urls", "said"), [
    ("postgres://u@r0:5432", "DATABASE_REPLICA_URL: entry 1 names no database"),
    ("postgres://u@r0/factdesk,garbage", "DATABASE_REPLICA_URL: entry 2 is not a database URL"),
    ("mysql://u@r0/factdesk", "DATABASE_REPLICA_URL needs PostgreSQL"),
])
def test_a_replica_url_that_cannot_work_stops_the_start_naming_the_variable(urls, said):
    assert said in _settings_in_a_fresh_process(DATABASE_URL="postgres://u@primary:5432/factdesk",
                                                DATABASE_REPLICA_URL=urls)


def test_a_fact_checkers_organisation_is_read_on_the_primary_inside_the_scope(replica):  # noqa: F811
    from factcheck.models_membership import Membership

    with replica_reads():
        assert router.db_for_read(Membership) == DEFAULT_DB_ALIAS
        assert router.db_for_read(Organisation) == replica
