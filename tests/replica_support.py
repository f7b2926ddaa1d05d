"""A read replica for the suite's tests: `replica_0`, a second connection to the test database (a mirror of
`default`, as `TEST: {"MIRROR": "default"}` makes a configured one), with core.replicas' router on; and
`queries_on`, which records the SQL each alias ran, so a test proves where a read went."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

import pytest
from django.conf import settings as django_settings
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.utils import load_backend

from core.replicas import reset_replica_states

REPLICA = "replica_0"


@pytest.fixture
def replica(settings, monkeypatch) -> Iterator[str]:
    config = copy.deepcopy(connections[DEFAULT_DB_ALIAS].settings_dict)
    config["TEST"] = {**config.get("TEST", {}), "MIRROR": DEFAULT_DB_ALIAS}
    # The router finds the replicas in settings.DATABASES. The connection is made here rather than from
    # connections.settings: Django's test case allows a connection made while it runs (the alias is not in the
    # databases it set up, which it would refuse), and closes none of it.
    monkeypatch.setattr(django_settings, "DATABASES", {**django_settings.DATABASES, REPLICA: config})
    connections[REPLICA] = load_backend(config["ENGINE"]).DatabaseWrapper(config, REPLICA)
    settings.DATABASE_ROUTERS = ["core.replicas.ReplicaRouter"]
    # As config/settings.py installs it with replicas: a browser that has just written reads the primary.
    middleware = list(settings.MIDDLEWARE)
    middleware.insert(middleware.index("axes.middleware.AxesMiddleware"), "core.replicas.RecentWriteMiddleware")
    settings.MIDDLEWARE = middleware
    settings.FACTDESK_REPLICA_MAX_LAG = 30
    reset_replica_states()
    yield REPLICA
    connections[REPLICA].close()
    del connections[REPLICA]
    reset_replica_states()


@contextmanager
def queries_on(*aliases: str) -> Iterator[dict[str, list[str]]]:
    """{alias: [sql, ...]} of every statement run on each alias inside the block (without connecting any)."""
    seen: dict[str, list[str]] = {alias: [] for alias in aliases}
    with ExitStack() as stack:
        for alias in aliases:
            def record(execute, sql, params, many, context, alias=alias):
                seen[alias].append(sql)
                return execute(sql, params, many, context)

            stack.enter_context(connections[alias].execute_wrapper(record))
        yield seen


def reading(table: str, statements: list[str]) -> list[str]:
    """The statements among `statements` that read `table` (quoted as Django quotes it)."""
    return [sql for sql in statements if sql.lstrip().upper().startswith("SELECT") and f'"{table}"' in sql]
