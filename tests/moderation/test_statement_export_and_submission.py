"""`export_statements` writes files of at most 100; `submit_statements` sends each puid until it is settled.

The submission tests run against a real HTTP server on 127.0.0.1 that behaves as the Transparency
Database's `POST /api/v1/statements` does (tests/moderation/statement_helpers.py): it accepts some
batches, refuses one with a 422 naming a statement, answers 422 `existing_puids` for one it already
has, and fails with a 500 (recovering on retry, or not). Every puid it receives is kept, so the
tests can prove no accepted puid is ever sent twice, across runs and between overlapping runs.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.utils import timezone

from moderation.models import (
    Action,
    ActionKind,
    AttemptOutcome,
    StatementOfReasons,
    StatementSubmission,
    StatementSubmissionAttempt,
    SubmissionOutcome,
)
from moderation.statements.submission import normalised_endpoint, submit_statements
from tests.moderation.statement_helpers import TOKEN, Receiver, ReceiverServer, make_statements

pytestmark = pytest.mark.django_db


@pytest.fixture
def dsa_token(settings):
    settings.FACTDESK_DSA_TOKEN = TOKEN


def submit(url: str, **options) -> tuple[int, str]:
    """Run the command as the shell would: (exit status, output)."""
    out = StringIO()
    try:
        call_command("submit_statements", endpoint=url, backoff=0, attempts=3, stdout=out, stderr=out, **options)
    except CommandError as exc:
        return 1, out.getvalue() + str(exc)
    return 0, out.getvalue()


# --- export -------------------------------------------------------------------------------------


def test_export_writes_files_of_at_most_100_in_created_at_and_puid_order(tmp_path):
    puids = make_statements(205)
    out = StringIO()
    call_command("export_statements", since=str(timezone.now().date() - timedelta(days=1)),
                 out=str(tmp_path / "new" / "dir"), stdout=out)
    files = sorted((tmp_path / "new" / "dir").iterdir())
    assert [f.name for f in files] == ["statements-0001.json", "statements-0002.json", "statements-0003.json"]
    bodies = [json.loads(f.read_text()) for f in files]
    assert [len(b["statements"]) for b in bodies] == [100, 100, 5]
    assert [s["puid"] for b in bodies for s in b["statements"]] == puids
    assert "3 files, 205 statements" in out.getvalue()


def test_export_takes_only_the_days_asked_for(tmp_path):
    old = make_statements(3, start=timezone.now() - timedelta(days=10))[:2]  # the last is the real one, made now
    recent = make_statements(2)
    today = timezone.now().date()

    def export(since, until, into) -> list[str]:
        call_command("export_statements", since=str(since), until=str(until), out=str(into), stdout=StringIO())
        return [s["puid"] for s in json.loads((into / "statements-0001.json").read_text())["statements"]]

    exported_recent = export(today - timedelta(days=2), today, tmp_path / "recent")
    assert set(recent) <= set(exported_recent) and not set(old) & set(exported_recent)
    assert export(today - timedelta(days=10), today - timedelta(days=10), tmp_path / "old") == old


@pytest.mark.parametrize("since", ["2026-13-01", "yesterday", "20260101", "2026-W01-1"])
def test_export_refuses_a_bad_date_clearly(since, tmp_path):
    with pytest.raises(CommandError, match="--since must be a date YYYY-MM-DD"):
        call_command("export_statements", since=since, out=str(tmp_path))


@pytest.mark.parametrize(("option", "day"), [("since", "1999-12-31"), ("since", "9999-12-31"),
                                             ("until", "9999-12-31"), ("until", "0001-01-01")])
def test_export_refuses_a_day_outside_the_history_clearly_and_writes_nothing(option, day, tmp_path):
    # --until 9999-12-31 was an OverflowError traceback (the day after it is no date), with an empty directory left.
    arguments = {"since": "2026-01-01", option: day}
    with pytest.raises(CommandError, match=rf"^--{option} must be a day from 2000-01-01 to \d{{4}}-\d\d-\d\d, "):
        call_command("export_statements", **arguments, out=str(tmp_path / "out"))
    assert not (tmp_path / "out").exists()


def test_export_refuses_until_before_since_and_a_directory_holding_an_export(tmp_path):
    with pytest.raises(CommandError, match="before --since"):
        call_command("export_statements", since="2026-02-02", until="2026-02-01", out=str(tmp_path))
    (tmp_path / "statements-0001.json").write_text("{}")
    with pytest.raises(CommandError, match="empty directory"):
        call_command("export_statements", since="2026-02-02", out=str(tmp_path))


def test_an_invalid_stored_statement_is_reported_never_exported_or_sent(tmp_path, dsa_token):
    (good,) = make_statements(1)
    # A row as an older version of the code might have stored it (rows are append-only, never fixed).
    template = StatementOfReasons.objects.get(puid=good)
    action = Action.objects.create(post=template.action.post, kind=ActionKind.FACT_CHECK, feed_multiplier=0.2,
                                   created_at=timezone.now(), ended_at=timezone.now())
    StatementOfReasons.objects.create(
        action=action, puid=action.puid, created_at=action.created_at, what="-", scope="-", facts="-", ground="-",
        automation="-", automated_detection=False, automated_decision=False, appeal_by=timezone.now(),
        how_to_appeal="-", transparency={**template.transparency, "puid": action.puid, "content_date": "02/12/2026"},
    )
    with pytest.raises(CommandError, match="1 statements break"):
        call_command("export_statements", since="2020-01-01", out=str(tmp_path), stdout=StringIO(), stderr=StringIO())
    assert [s["puid"] for s in json.loads((tmp_path / "statements-0001.json").read_text())["statements"]] == [good]
    receiver = Receiver()
    with ReceiverServer(receiver) as server:
        status, output = submit(server.url)
    assert status == 1 and f"invalid, not sent: {action.puid}: content_date" in output
    assert receiver.received() == [good]


# --- submit -------------------------------------------------------------------------------------


def test_submit_accepts_records_rejects_retries_and_never_resends(dsa_token):
    puids = make_statements(250)
    rejected, held = puids[150], puids[20]
    failures = {"left": 1}

    def fail_third_batch_once(batch: list[str]) -> bool:
        if puids[200] in batch and failures["left"]:
            failures["left"] -= 1
            return True
        return False

    receiver = Receiver(invalid={rejected}, held={held}, fail=fail_third_batch_once)
    with ReceiverServer(receiver) as server:
        status, output = submit(server.url)
        assert status == 1  # one statement was rejected: staff must look
        assert "accepted: 248, already accepted: 1, rejected: 1, failed to send: 0" in output
        assert f"rejected: {rejected}: content_language: The selected content language is invalid." in output
        outcomes = Counter(StatementSubmission.objects.values_list("outcome", flat=True))
        assert outcomes == {SubmissionOutcome.ACCEPTED: 248, SubmissionOutcome.ALREADY_ACCEPTED: 1,
                            SubmissionOutcome.REJECTED: 1}
        assert StatementSubmission.objects.get(puid=rejected).reason.startswith("content_language")
        # 1st batch: 422 existing, then 201; 2nd: 422 statement_50, then 201; 3rd: 500, then 201.
        assert receiver.statuses == [422, 201, 422, 201, 500, 201]
        assert list(StatementSubmissionAttempt.objects.order_by("id").values_list("outcome", "http_status")) == [
            (AttemptOutcome.REJECTED, 422), (AttemptOutcome.ACCEPTED, 201), (AttemptOutcome.REJECTED, 422),
            (AttemptOutcome.ACCEPTED, 201), (AttemptOutcome.FAILED, 500), (AttemptOutcome.ACCEPTED, 201),
        ]
        assert all(len(request) <= 100 for request in receiver.requests)
        first_run = len(receiver.requests)

        status, output = submit(server.url)
    assert status == 0 and "accepted: 0, already accepted: 0, rejected: 0, failed to send: 0" in output
    assert len(receiver.requests) == first_run  # nothing left to send
    accepted_once = Counter(p for request, code in zip(receiver.requests, receiver.statuses, strict=True)
                            if code == 201 for p in request)
    assert set(accepted_once.values()) == {1} and len(accepted_once) == 248
    # No puid was sent again after the request that the database accepted.
    for i, (request, code) in enumerate(zip(receiver.requests, receiver.statuses, strict=True)):
        if code == 201:
            assert not set(request) & set(receiver.received()[sum(map(len, receiver.requests[: i + 1])):])


def test_the_same_endpoint_typed_differently_is_not_sent_accepted_statements_again(dsa_token):
    make_statements(30)
    receiver = Receiver()
    with ReceiverServer(receiver) as server:
        status, output = submit(server.url)
        assert status == 0 and "accepted: 30," in output
        sent = len(receiver.requests)
        # An upper-case scheme and a fragment: the same endpoint.
        shouted = server.url.replace("http://", "HTTP://", 1) + "#again"
        status, output = submit(shouted)
    assert status == 0 and "accepted: 0, already accepted: 0, rejected: 0, failed to send: 0" in output
    assert len(receiver.requests) == sent
    assert set(StatementSubmission.objects.values_list("endpoint", flat=True)) == {server.url}


@pytest.mark.parametrize(("typed", "recorded"), [
    ("HTTPS://TDB.Example:443/api/v1/statements", "https://tdb.example/api/v1/statements"),
    ("https://user:secret@tdb.example:8443/api?x=1#top", "https://tdb.example:8443/api?x=1"),
    ("http://[::1]:80/sor", "http://[::1]/sor"),
])
def test_an_endpoint_is_recorded_in_one_spelling_without_credentials(typed, recorded):
    assert normalised_endpoint(typed) == recorded


@pytest.mark.parametrize("endpoint", ["https://tdb.example:99999/api", "https://tdb.example:abc/api"])
def test_an_endpoint_with_a_port_that_is_no_port_is_refused_before_anything_is_sent(dsa_token, endpoint):
    make_statements(1)
    status, output = submit(endpoint)
    assert status != 0 and "has no valid port" in output
    assert not StatementSubmission.objects.exists()


def test_a_batch_that_keeps_failing_is_left_for_the_next_run(dsa_token):
    puids = make_statements(150)
    down = {"yes": True}
    receiver = Receiver(fail=lambda batch: down["yes"] and puids[100] in batch)
    with ReceiverServer(receiver) as server:
        status, output = submit(server.url)
        assert status == 1 and "failed to send: 50" in output and "HTTP 500" in output
        assert receiver.statuses == [201, 500, 500, 500]  # three attempts, backing off
        assert StatementSubmission.objects.count() == 100
        assert StatementSubmissionAttempt.objects.filter(outcome=AttemptOutcome.FAILED).count() == 3
        down["yes"] = False
        status, output = submit(server.url)
    assert status == 0 and "accepted: 50," in output
    assert receiver.requests[-1] == puids[100:]
    assert Counter(receiver.received())[puids[0]] == 1


def test_the_batch_size_is_honoured_and_the_summary_counts_everything(dsa_token):
    make_statements(7)
    receiver = Receiver()
    with ReceiverServer(receiver) as server:
        status, output = submit(server.url, batch_size=3)
    assert status == 0 and [len(r) for r in receiver.requests] == [3, 3, 1]
    assert "accepted: 7," in output


def test_without_a_token_nothing_is_sent(settings):
    settings.FACTDESK_DSA_TOKEN = ""
    make_statements(1)
    receiver = Receiver()
    with ReceiverServer(receiver) as server:
        status, output = submit(server.url)
    assert status == 1 and "FACTDESK_DSA_TOKEN is not set" in output
    assert receiver.requests == []


def test_a_refused_token_stops_the_run(settings):
    settings.FACTDESK_DSA_TOKEN = "not-the-token"
    make_statements(5)
    receiver = Receiver()
    with ReceiverServer(receiver) as server:
        status, output = submit(server.url, batch_size=2)
    assert status == 1 and "refused the token" in output and "failed to send: 5" in output
    assert receiver.statuses == [401]  # not retried, and the other batches not tried
    assert not StatementSubmission.objects.exists()


def test_the_token_goes_only_over_https_or_to_this_machine(dsa_token):
    status, output = submit("http://tdb.example/api/v1/statements")
    assert status == 1 and "only over HTTPS" in output


# Real commits, so the runs' own connections see each other's records; the policy rows survive.
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_overlapping_runs_never_send_the_same_puid(dsa_token):
    make_statements(230)
    receiver = Receiver(delay=0.02)
    results = []

    def run() -> None:
        try:
            results.append(submit_statements(endpoint=server.url, token=TOKEN, batch_size=50, backoff=0))
        finally:
            connection.close()

    with ReceiverServer(receiver) as server:
        threads = [threading.Thread(target=run) for _ in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert sorted(len(r.accepted) for r in results) == [0, 0, 230]
    assert max(Counter(receiver.received()).values()) == 1
    assert StatementSubmission.objects.filter(outcome=SubmissionOutcome.ACCEPTED).count() == 230


@pytest.mark.parametrize("option", [
    {"backoff": -1}, {"timeout": -1}, {"timeout": 0},
    # Endless or huge waits were a traceback (OverflowError: timestamp out of range).
    {"timeout": float("inf")}, {"backoff": 1e12}, {"attempts": 0}, {"attempts": 1000},
])
def test_a_wait_or_a_number_of_tries_out_of_bounds_is_refused_before_sending(dsa_token, option):
    make_statements(1)
    receiver = Receiver(fail=lambda puids: True)  # a 500: the run would sleep -1 s before retrying
    with ReceiverServer(receiver) as server:
        out = StringIO()
        with pytest.raises(CommandError, match="--"):
            call_command("submit_statements", endpoint=server.url, stdout=out, stderr=out, **{"attempts": 3, **option})
    assert receiver.requests == []


def test_a_2xx_that_names_no_statement_accepts_none_and_the_next_run_sends_them(dsa_token):
    """An endpoint answering 200 with a web page (a proxy, a wrong path) had every statement recorded as accepted,
    the run printing "failed 0", and no later run ever sent them."""
    puids = make_statements(3)
    with ReceiverServer(Receiver(web_page=b"<html><body>Welcome</body></html>")) as server:
        status, output = submit(server.url)
    assert status == 1
    assert "without naming 3 of the 3 statements as stored" in output and "Welcome" in output
    assert not StatementSubmission.objects.filter(outcome=SubmissionOutcome.ACCEPTED).exists()
    assert StatementSubmissionAttempt.objects.get().outcome == AttemptOutcome.FAILED

    receiver = Receiver()
    with ReceiverServer(receiver) as server:
        status, _ = submit(server.url)
    assert status == 0 and sorted(receiver.received()) == sorted(puids)
    assert StatementSubmission.objects.filter(outcome=SubmissionOutcome.ACCEPTED).count() == 3
