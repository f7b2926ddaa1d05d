"""Every index of the project's tables is one a query reads (core.indexes): no foreign key's own index where another
index starts with its column, and no LIKE twin but on the columns searched by prefix."""

import pytest
from django.apps import apps
from django.core.management import call_command
from django.db import connection

from factcheck.models import Flag, Post

pytestmark = [pytest.mark.django_db, pytest.mark.skipif("connection.vendor != 'postgresql'")]

PROJECT_APPS = ("accounts", "audit", "core", "factcheck", "moderation", "reports", "webhooks")

# The columns searched by prefix (LIKE 'ab-12%'), with the twin that serves it.
SEARCHED_BY_PREFIX = {
    ("factcheck_post", "external_id"),  # factcheck.staff_search
    ("factcheck_page", "external_id"),  # factcheck.staff_search
    ("accounts_user", "username"),  # factcheck.members: the importers' accounts
    ("accounts_apitoken", "prefix"),  # the admin's search of tokens
}


def _project_tables() -> set[str]:
    return {model._meta.db_table for label in PROJECT_APPS if label in {c.label for c in apps.get_app_configs()}
            for model in apps.get_app_config(label).get_models() if not model._meta.auto_created}


def _indexes() -> list[tuple[str, str, list[str], list[str], bool, bool]]:
    """(table, index, columns, operator classes, unique, partial) of each btree index of a table (a partitioned
    table's own, not its months')."""
    with connection.cursor() as cursor:
        cursor.execute("""
            SELECT t.relname, c.relname,
                   array(SELECT a.attname FROM unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, n)
                         JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum ORDER BY k.n),
                   array(SELECT o.opcname FROM unnest(i.indclass::oid[]) WITH ORDINALITY AS k(oid, n)
                         JOIN pg_opclass o ON o.oid = k.oid ORDER BY k.n),
                   i.indisunique, i.indpred IS NOT NULL
            FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_class t ON t.oid = i.indrelid
            JOIN pg_am am ON am.oid = c.relam
            WHERE am.amname = 'btree' AND i.indexprs IS NULL AND NOT c.relispartition
              AND t.relnamespace = 'public'::regnamespace
        """)
        return cursor.fetchall()


def test_no_index_is_the_leading_column_of_another_on_the_same_table():
    tables = _project_tables()
    indexes = [row for row in _indexes() if row[0] in tables]
    # Django's index of each foreign key, kept only where no other index starts with the key.
    redundant = sorted(
        (table, name, other)
        for table, name, columns, classes, unique, partial in indexes if not unique and not partial
        for other_table, other, other_columns, other_classes, _, other_partial in indexes
        if other_table == table and other != name and not other_partial and len(other_columns) > len(columns)
        and other_columns[:len(columns)] == columns and other_classes[:len(classes)] == classes
    )
    assert redundant == []


def test_like_twins_are_kept_only_for_the_columns_searched_by_prefix():
    tables = _project_tables()
    twins = {(table, columns[0]) for table, _, columns, classes, _, _ in _indexes()
             if table in tables and any(c.endswith("_pattern_ops") for c in classes)}
    assert twins == SEARCHED_BY_PREFIX


def test_the_lookups_that_lost_their_own_index_still_read_one():
    """The indexes that serve the dropped ones are read where they stood: a page's posts, a post's flags."""
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")  # the test's tables are empty: ask which index serves
        for query, index in ((Post.objects.filter(page_id=1), "post_page_recent"),
                             (Flag.objects.filter(post_id=1), "factcheck_f_post_id_d7f855_idx")):
            sql, params = query.query.sql_with_params()
            cursor.execute(f"EXPLAIN {sql}", params)
            plan = "\n".join(row[0] for row in cursor.fetchall())
            assert index in plan, plan


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_a_key_index_left_invalid_by_a_failed_build_is_built_again_before_the_old_one_goes():
    """factcheck 0028 builds CONCURRENTLY: a build that fails leaves an invalid index under the new name. The next
    run must not take it for done and drop the only working index of the key."""
    call_command("migrate", "factcheck", "0027", verbosity=0)
    try:
        with connection.cursor() as cursor:
            cursor.execute("CREATE INDEX post_text_key ON factcheck_post (text_key)")
            cursor.execute("UPDATE pg_index SET indisvalid = false WHERE indexrelid = 'post_text_key'::regclass")
    finally:
        # Every app, not factcheck alone: going back to 0027 also unapplied the other apps' migrations that depend on
        # a later factcheck one (moderation 0021's report answers), which the tests after this one need.
        call_command("migrate", verbosity=0)
    with connection.cursor() as cursor:
        cursor.execute("""SELECT c.relname, i.indisvalid, pg_get_indexdef(c.oid) FROM pg_index i
                          JOIN pg_class c ON c.oid = i.indexrelid
                          WHERE i.indrelid = 'factcheck_post'::regclass AND c.relname LIKE '%%text_key%%'""")
        found = {name: (valid, definition.split(" USING ")[1]) for name, valid, definition in cursor.fetchall()}
    # post_rated_text_key went in factcheck 0042: rated claims' text keys are RatedKeys' (factcheck.matching.as_rated).
    assert found == {"post_text_key": (True, "btree (text_key, id) WHERE ((text_key)::text <> ''::text)")}
