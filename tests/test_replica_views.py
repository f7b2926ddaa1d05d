"""Which pages, API operations and exports read from a replica (core.replicas), with a replica that mirrors the
test database: the dashboard, its downloads, the stats API, the owner portal's list and the exports do; what
a user must see of their own doing (the portal after marking notices read, a post's page, the work lists)
does not; a replica that does not answer leaves every page working from the primary.

The tests that show data read from the replica commit it (a transactional test): the replica is a connection
of its own, which sees only committed rows.
"""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.db import DEFAULT_DB_ALIAS, connections

from tests.conftest import bearer_client
from tests.factories import DecisionFactory, FlagFactory, PageFactory, UserFactory
from tests.replica_support import queries_on, reading, replica  # noqa: F401  (the fixture)
from tests.reports.test_dashboard import signed_in, world  # noqa: F401  (the fixture)
from tests.servers import free_port

FIGURES = "reports_dailyfigure"
PRIMARY = DEFAULT_DB_ALIAS
# Rows the replica's connection can see; the flush after such a test empties the roles' groups, which the
# serialized copy of the database puts back.
committed = pytest.mark.django_db(transaction=True, serialized_rollback=True)


def selects(statements: list[str]) -> list[str]:
    return [sql for sql in statements if sql.lstrip().upper().startswith("SELECT")]


def figure_reads(statements: list[str]) -> list[str]:
    """The reads that are not who is asking (the session, the user, their rights: always the primary), nor the
    lag check's question to the primary (where its WAL is)."""
    return [sql for sql in selects(statements) if not any(
        mark in sql for mark in ('"accounts_', '"auth_', '"django_session"', "pg_current_wal_lsn()"))]


@committed
def test_the_dashboard_and_its_downloads_read_the_figures_from_the_replica(world, replica):  # noqa: F811
    client = signed_in(world["staff"])
    with queries_on(PRIMARY, replica) as seen:
        page = client.get("/dashboard/")
    assert page.status_code == 200
    assert page.context["figures"].total("ratings", "false") == 2 and "Alice Archer" in page.content.decode()
    assert reading(FIGURES, seen[replica]) and not reading(FIGURES, seen[PRIMARY])
    assert reading("accounts_user", seen[PRIMARY])  # who is asking: on the primary

    slug = page.context["charts"][0].slug
    for url in (f"/dashboard/{slug}.csv", "/dashboard/transparency-report.csv"):
        with queries_on(PRIMARY, replica) as seen:
            download = client.get(url)
        assert download.status_code == 200 and download["Content-Type"].startswith("text/csv")
        assert figure_reads(seen[replica]) and figure_reads(seen[PRIMARY]) == []


@committed
def test_the_stats_api_reads_the_figures_from_the_replica_and_the_token_from_the_primary(world,  # noqa: F811
                                                                                          replica):  # noqa: F811
    client = bearer_client(world["staff"])  # a token made a moment ago works at once
    with queries_on(PRIMARY, replica) as seen:
        answer = client.get("/api/v1/stats")
    assert answer.status_code == 200
    assert answer.json()["totals"]["ratings_false"] == 2
    assert reading(FIGURES, seen[replica]) and not reading(FIGURES, seen[PRIMARY])
    assert reading("accounts_apitoken", seen[PRIMARY]) and not reading("accounts_apitoken", seen[replica])


@committed
def test_the_portal_list_reads_from_the_replica_but_not_whose_pages_nor_right_after_its_owner_wrote(replica,  # noqa: F811
                                                                                         factchecker):
    owner = UserFactory()
    page = PageFactory(name="Daily Wonders")
    page.owners.add(owner)
    post = FlagFactory(source="classifier", post__page=page, post__text="A miracle cure was found.").post
    DecisionFactory(post=post, reviewer=factchecker)
    client = signed_in(owner)

    with queries_on(PRIMARY, replica) as seen:
        listing = client.get("/appeals/")
    assert listing.status_code == 200 and "A miracle cure was found." in listing.content.decode()
    assert reading("factcheck_post", seen[replica]) and not reading("factcheck_post", seen[PRIMARY])

    # Which pages are the owner's is read on the primary: an owner removed a moment ago sees none of it.
    assert reading("factcheck_page_owners", seen[PRIMARY]) and not reading("factcheck_page_owners", seen[replica])
    # A post's page (where they file an appeal, and land after filing or withdrawing one): from the primary.
    with queries_on(PRIMARY, replica) as seen:
        assert client.get(f"/appeals/posts/{post.pk}/").status_code == 200
    assert seen[replica] == [] and reading("factcheck_post", seen[PRIMARY])
    # Having written (notices marked read), the owner reads the list from the primary for as long as a replica
    # may lag, wherever they go next: what they just did shows.
    marked = client.post("/appeals/notifications/read/")
    assert marked.status_code == 302 and marked.cookies["fd_recent_write"]["max-age"] == 30
    for url in ("/appeals/?notifications=open", "/appeals/?state=restricted"):
        with queries_on(PRIMARY, replica) as seen:
            assert client.get(url).status_code == 200
        assert seen[replica] == [] and reading("factcheck_post", seen[PRIMARY])
    # A refused write sets nothing.
    assert "fd_recent_write" not in signed_in(owner).post("/appeals/0/withdraw/").cookies


@pytest.mark.django_db
def test_the_export_commands_read_from_the_replica(replica, tmp_path):  # noqa: F811
    commands = [
        ("export_claimreview", {"since": "2020-01-01"}),
        ("export_statements", {"since": "2020-01-01", "out": str(tmp_path / "statements")}),
        ("transparency_report", {"start": "2025-01-01", "end": "2025-01-31"}),
    ]
    for name, options in commands:
        with queries_on(PRIMARY, replica) as seen:
            call_command(name, stdout=StringIO(), stderr=StringIO(), **options)
        assert figure_reads(seen[replica]), name
        assert figure_reads(seen[PRIMARY]) == [], name


@pytest.mark.django_db
def test_the_audit_log_export_streams_its_rows_from_the_replica(replica, staff_client):  # noqa: F811
    response = staff_client.get("/admin/audit/auditevent/export.csv")
    assert response.status_code == 200
    with queries_on(PRIMARY, replica) as seen:  # the rows are read while the file streams, after the view returned
        body = b"".join(response.streaming_content).decode("utf-8-sig")
    assert body.startswith('"when (UTC)"')
    assert reading("audit_auditevent", seen[replica]) and not reading("audit_auditevent", seen[PRIMARY])


@pytest.mark.django_db
def test_the_work_lists_read_the_primary_and_only_their_csv_downloads_the_replica(replica, factchecker,  # noqa: F811
                                                                                  staff_client, login):
    for client, url, table in ((login(factchecker), "/queue/rated/", "factcheck_rating"),
                               (staff_client, "/staff/appeals/", "moderation_appeal")):
        with queries_on(PRIMARY, replica) as seen:
            assert client.get(url).status_code == 200
        assert seen[replica] == [] and reading(table, seen[PRIMARY])
        with queries_on(PRIMARY, replica) as seen:
            download = client.get(url, {"format": "csv"})
            b"".join(download.streaming_content)
        assert reading(table, seen[replica]) and not reading(table, seen[PRIMARY])


@pytest.mark.django_db
def test_with_the_replica_down_the_stats_api_answers_from_the_primary_and_says_so_once(world, replica,  # noqa: F811
                                                                                        caplog):
    connections[replica].settings_dict["PORT"] = free_port()  # nothing listens there
    client = bearer_client(world["staff"])
    for _ in range(2):
        with queries_on(PRIMARY) as seen:
            answer = client.get("/api/v1/stats")
        assert answer.status_code == 200 and answer.json()["totals"]["ratings_false"] == 2
        assert reading(FIGURES, seen[PRIMARY])
    warnings = [r.getMessage() for r in caplog.records if r.name == "core.replicas"]
    assert len(warnings) == 1 and warnings[0].startswith("Read replica replica_0 skipped") and "does not answer" in \
        warnings[0]
