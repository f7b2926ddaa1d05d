"""core.statements: the hot pages' statements are run as one text with their values written in, prepared the
second time a connection runs them, so that PostgreSQL plans each once per connection and the plan it keeps is
the one made with every value known (the queue's partial indexes, whose condition is a value, stay usable)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from django.db import IntegrityError, connection, transaction
from django.test.utils import CaptureQueriesContext

from core.statements import CompiledRows, Statement
from factcheck.models import Post, QueueState
from factcheck.queue import forget_statements
from tests.factories import PostFactory

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parent.parent
HOSTILE = "it's 100% \\ évident'); DROP TABLE factcheck_post; -- %s %(x)s"


def prepared() -> list[tuple[str, list, int, int]]:
    """This connection's prepared statements: text, parameter types, generic and custom plans so far."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement, parameter_types::text[], generic_plans, custom_plans "
                       "FROM pg_prepared_statements ORDER BY prepare_time")
        return [(text, types, generic, custom) for text, types, generic, custom in cursor.fetchall()]


def prepared_texts() -> list[str]:
    return [text for text, *_ in prepared()]


@pytest.fixture(autouse=True)
def fresh_statements():
    """No statement kept from another test (their texts name its rows' ids), none prepared on this connection."""
    forget_statements()
    with connection.cursor() as cursor:
        cursor.execute("DEALLOCATE ALL")
    connection.connection._prepared.clear()  # psycopg's record of them, which DEALLOCATE ALL leaves
    yield
    forget_statements()


def test_a_statement_is_prepared_the_second_time_a_connection_runs_it_with_its_values_written_in():
    statement = Statement("SELECT %s::text AS said, %s::int AS n", [HOSTILE, 7])
    assert statement.rows() == [{"said": HOSTILE, "n": 7}]
    assert statement.text not in prepared_texts()
    for _ in range(3):
        assert statement.rows() == [{"said": HOSTILE, "n": 7}]
    (text, types, generic, custom), = [entry for entry in prepared() if entry[0] == statement.text]
    # No parameters left: one plan, made once, with the values known.
    assert types == [] and generic >= 1 and custom == 0
    assert "%s" not in statement.text.replace("%s %(x)s", "")  # the value's own text, quoted, is all that is left
    assert Post.objects.exists() is False  # and the table the value names is still there


def test_the_queue_pages_statements_are_prepared_and_keep_their_partial_index(factchecker, client):
    for n in range(30):
        PostFactory(text=f"post {n}", language="en", priority=n)
    with connection.cursor() as cursor:
        # For this test's transaction, plans that read the queue in its order from an index, not a sort of
        # the table: with queue_state a parameter, only a plan that cannot use the partial queue indexes
        # would be kept.
        cursor.execute("SET LOCAL enable_seqscan = off; SET LOCAL enable_sort = off")
    client.force_login(factchecker)
    responses = [client.get("/queue/") for _ in range(3)]
    assert [response.status_code for response in responses] == [200] * 3
    # The rows and the total of each response (the forms' CSRF tokens differ).
    token = re.compile(r'name="csrfmiddlewaretoken" value="[^"]*"')
    shown = [token.sub("", response.content.decode()) for response in responses]
    assert shown[0] == shown[1] == shown[2]
    assert "1–25 of 30" in shown[2] and "post 29" in shown[2]
    queue_statements = [entry for entry in prepared() if '"queue_total"' in entry[0]]
    assert len(queue_statements) == 1
    text, types, generic, custom = queue_statements[0]
    assert types == [] and generic >= 1 and custom == 0
    assert f"\"queue_state\" = '{QueueState.QUEUED}'" in text
    with connection.cursor() as cursor:
        cursor.execute("SELECT name FROM pg_prepared_statements WHERE statement = %s", [text])
        cursor.execute(f"EXPLAIN EXECUTE {cursor.fetchone()[0]}")
        kept = "\n".join(row[0] for row in cursor.fetchall())
        cursor.execute(f"EXPLAIN {text}")
        planned = "\n".join(row[0] for row in cursor.fetchall())
    assert kept == planned
    assert "Index Scan using post_queue_order" in kept or "Index Scan using post_queue_language" in kept
    # The reviewer's claims, the page's other statement of its own, too.
    assert any('"factcheck_claim"' in entry[0] for entry in prepared())


def test_rows_come_back_as_values_gives_them_through_the_same_converters_prepared_or_not():
    post = PostFactory(text="a post", first_flagged_at=datetime(2026, 3, 1, 12, 30, tzinfo=UTC), priority=41.5)
    expected = list(Post.objects.filter(pk=post.pk).values("id", "first_flagged_at", "priority", "page__name"))
    statement = CompiledRows(Post.objects.filter(pk=post.pk).values("id", "first_flagged_at", "priority", "page__name"))
    runs = [statement.rows() for _ in range(3)]
    assert runs == [expected] * 3
    assert runs[2][0]["first_flagged_at"].utcoffset().total_seconds() == 0


def test_the_query_log_and_execute_wrappers_see_the_statement_when_it_runs_prepared():
    statement = Statement("SELECT %s::int AS n", [5])
    seen = []

    def wrapper(execute, sql, params, many, context):
        seen.append(sql)
        return execute(sql, params, many, context)

    with CaptureQueriesContext(connection) as logged, connection.execute_wrapper(wrapper):
        for _ in range(3):
            statement.rows()
    assert statement.text in prepared_texts()
    assert [query["sql"] for query in logged.captured_queries] == [statement.text] * 3
    assert seen == [statement.text] * 3


def test_after_a_rollback_forgets_them_a_statement_runs_and_is_prepared_again():
    statement = Statement("SELECT count(*) AS n FROM factcheck_post WHERE text = %s", ["kept"])
    PostFactory(text="kept")
    statement.rows(), statement.rows()
    assert statement.text in prepared_texts()
    post = PostFactory(text="other")
    with pytest.raises(IntegrityError), transaction.atomic():  # a savepoint rolled back: psycopg drops them all
        PostFactory(external_id=post.external_id, page=post.page)
    assert statement.rows() == [{"n": 1}]
    assert statement.rows() == [{"n": 1}]
    assert statement.rows() == [{"n": 1}]
    assert statement.text in prepared_texts()


def test_without_a_threshold_nothing_is_prepared_and_the_rows_are_the_same():
    raw = connection.connection
    threshold, raw.prepare_threshold = raw.prepare_threshold, None
    try:
        statement = Statement("SELECT %s::text AS said", [HOSTILE])
        assert [statement.rows() for _ in range(3)] == [[{"said": HOSTILE}]] * 3
        assert prepared() == []
    finally:
        raw.prepare_threshold = threshold


@pytest.mark.parametrize(("value", "threshold"), [(None, "1"), ("on", "1"), ("off", "None")])
def test_prepared_statements_can_be_turned_off_for_a_pooler_that_cannot_keep_them(value, threshold):
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings",
           "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/factdesk"}
    env.pop("FACTDESK_PREPARED_STATEMENTS", None)
    if value is not None:
        env["FACTDESK_PREPARED_STATEMENTS"] = value
    shown = subprocess.run(
        [sys.executable, "-c", "import django; django.setup(); from django.conf import settings; "
         "print(settings.DATABASES['default']['OPTIONS']['prepare_threshold'])"],
        cwd=ROOT, env=env, capture_output=True, text=True, check=True, timeout=60,
    ).stdout.strip()
    assert shown == threshold
