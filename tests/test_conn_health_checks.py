"""The first request after the database dropped a connection is answered (issue 28, finding 5).

Each web thread keeps its database connection between requests (CONN_MAX_AGE). When the server ends
it (a restart, a failover, an idle timeout), CONN_HEALTH_CHECKS has Django check the connection at the
start of the next request and open a new one, instead of failing that request.

The requests go through Django's WSGI handler in one thread of their own, as a gunicorn thread serves
them (the test client keeps the test's connection and skips the per-request connection handling).
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import psycopg
import pytest
from django.core.handlers.wsgi import WSGIHandler
from django.db import connection
from django.test.client import RequestFactory

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


def get(path: str) -> tuple[str, dict]:
    environ = RequestFactory()._base_environ(PATH_INFO=path, REQUEST_METHOD="GET")
    answer = {}

    def start_response(status, headers, exc_info=None):
        answer["status"] = status

    body = b"".join(WSGIHandler()(environ, start_response))
    return answer["status"], json.loads(body)


def backend_pid() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


def test_a_request_after_the_server_ended_the_threads_connection_is_answered():
    db = connection.settings_dict
    with ThreadPoolExecutor(max_workers=1) as web_thread:  # one thread, one kept connection
        assert web_thread.submit(get, "/healthz").result()[0] == "200 OK"
        pid = web_thread.submit(backend_pid).result()

        # From a second connection, as a database restart would: the thread's connection is gone.
        with psycopg.connect(host=db["HOST"], port=db["PORT"], user=db["USER"], dbname=db["NAME"],
                             password=db["PASSWORD"] or None, autocommit=True) as admin:
            assert admin.execute("SELECT pg_terminate_backend(%s)", [pid]).fetchone()[0] is True

        status, body = web_thread.submit(get, "/healthz").result()
        assert (status, body["database"]) == ("200 OK", "ok")
        assert web_thread.submit(backend_pid).result() != pid
        web_thread.submit(lambda: connection.close()).result()  # the thread's own connection
