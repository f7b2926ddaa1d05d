"""Issue 29: the audit log exports as CSV from the admin: the list as filtered and searched, streamed, each cell
safe to open in a spreadsheet, for trust-and-safety staff only."""

from __future__ import annotations

import csv
import io

import pytest
from django.http import StreamingHttpResponse

from audit.models import AuditEvent, AuditVerb
from moderation.models import RemovalGround
from tests.factories import FactCheckerFactory, PlatformUserFactory, PostFactory, UserFactory
from tests.scenarios import removed_post

LOG = "/admin/audit/auditevent/"
EXPORT = "/admin/audit/auditevent/export.csv"


def rows_of(response) -> list[list[str]]:
    assert response.status_code == 200
    assert isinstance(response, StreamingHttpResponse)  # written as it is read, never whole in memory
    assert response["Content-Type"].startswith("text/csv")
    assert response["Content-Disposition"].startswith('attachment; filename="factdesk-audit-log-')
    text = b"".join(response.streaming_content).decode("utf-8-sig")  # Excel's byte-order mark first
    return list(csv.reader(io.StringIO(text)))


@pytest.fixture
def removal(ts_user):
    return removed_post(staff=ts_user, post=PostFactory(external_id="ab-123"), ground=RemovalGround.HATE,
                        reason="Slur against a group.")


def test_staff_export_the_log_as_filtered_with_sentences_in_plain_text(removal, ts_user, staff_client):
    PostFactory.create_batch(3)  # other posts' events, filtered out below
    rows = rows_of(staff_client.get(EXPORT, {"verb__exact": AuditVerb.ACTION_CREATED}))
    header, body = rows[0], rows[1:]
    assert header == ["when (UTC)", "actor", "event", "what happened", "target type", "target id", "post", "reason"]
    assert len(body) == AuditEvent.objects.filter(verb=AuditVerb.ACTION_CREATED).count() >= 1
    row = next(r for r in body if r[6] == "ab-123")
    assert row[1] == ts_user.username and row[2] == "Action created"
    assert row[3] == f"{ts_user.username} removed post ab-123 (Hate)"  # the log's sentence, without its link
    assert row[7] == "Slur against a group."
    assert row[0].endswith("Z")  # UTC


def test_the_export_follows_the_lists_search(removal, staff_client):
    other = removed_post(post=PostFactory(external_id="zz-9"))
    rows = rows_of(staff_client.get(EXPORT, {"q": "ab-123"}))[1:]
    assert rows and {row[6] for row in rows} == {"ab-123"}
    assert other.external_id not in {row[6] for row in rows}


def test_the_list_links_its_export_with_the_same_filters(removal, staff_client):
    body = staff_client.get(LOG, {"verb__exact": AuditVerb.ACTION_CREATED}).content.decode()
    assert f'href="{EXPORT}?verb__exact=action.created"' in body
    assert "Export these events as CSV" in body


@pytest.mark.parametrize("start", ["=", "+", "-", "@", "\t", "\r"])
def test_cells_that_a_spreadsheet_would_run_as_a_formula_are_written_as_text(removal, staff_client, start):
    AuditEvent.objects.create(actor_label=f"{start}cmd", verb=AuditVerb.POLICY_CHANGED, target_type="x.y",
                              target_id="1", reason=f'{start}HYPERLINK("https://evil.example","click")')
    rows = rows_of(staff_client.get(EXPORT, {"verb__exact": AuditVerb.POLICY_CHANGED}))[1:]
    row = next(r for r in rows if r[7].startswith("'"))
    assert row[7] == f"'{start}HYPERLINK(\"https://evil.example\",\"click\")"
    assert row[1] == f"'{start}cmd"
    assert all(not cell.startswith(("=", "+", "-", "@", "\t", "\r")) for r in rows for cell in r)


@pytest.mark.parametrize("who", ["anonymous", "factchecker", "page_owner", "platform"])
def test_only_trust_and_safety_staff_export_the_log(removal, client, who):
    users = {"factchecker": FactCheckerFactory, "page_owner": UserFactory,
             "platform": PlatformUserFactory}
    if who != "anonymous":
        client.force_login(users[who]())
    response = client.get(EXPORT)
    assert response.status_code == 302 and "/admin/login/" in response["Location"]



@pytest.mark.parametrize("query", [{"created_at__gte": "nonsense"}, {"created_at__lt": "2026-13-45"},
                                   {"verb__exact": "action.created", "created_at__gte": "nonsense"}])
def test_a_filter_value_the_list_cannot_read_sends_the_export_back_to_the_list_as_the_list_does(
    removal, staff_client, query
):
    response = staff_client.get(EXPORT, query)
    assert response.status_code == 302 and response["Location"] == f"{LOG}?e=1"
    # The list itself answers the same query the same way, and opens where the export sent it.
    assert staff_client.get(LOG, query)["Location"] == f"{LOG}?e=1"
    assert staff_client.get(f"{LOG}?e=1").status_code == 200
